//! Simulated bank accounts of testnet through HTTP.

use openrail_store::Mode;
use openrail_tests::Harness;
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn create_and_read_bank_accounts() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let r = h
        .post(
            "/v1/bank-accounts",
            json!({"owner_name": "Ada Lovelace", "currency": "eur", "balance": "1500.50", "behavior": "fails_late", "delay_seconds": 2}),
        )
        .await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert!(r.str("id").starts_with("ba_"));
    assert_eq!(
        (r.str("currency"), r.str("balance"), r.str("behavior")),
        ("EUR", "1500.50", "fails_late")
    );
    assert_eq!(r.body["delay_seconds"], 2);
    let g = h.get(&format!("/v1/bank-accounts/{}", r.str("id"))).await?;
    assert_eq!((g.status, g.str("balance")), (StatusCode::OK, "1500.50"));
    assert_eq!(g.body["transfers"], json!([]));

    // Defaults: zero balance, behaviour `settles`.
    let d = h
        .post(
            "/v1/bank-accounts",
            json!({"owner_name": "Bob", "currency": "USD", "balance": 0}),
        )
        .await?;
    assert_eq!(
        (d.status, d.str("balance"), d.str("behavior")),
        (StatusCode::CREATED, "0.00", "settles")
    );

    for (body, code) in [
        (json!({"currency": "USD"}), "parameter_missing"),
        (
            json!({"owner_name": "", "currency": "USD"}),
            "parameter_invalid",
        ),
        (
            json!({"owner_name": "X", "currency": "JPY"}),
            "parameter_invalid",
        ),
        (
            json!({"owner_name": "X", "currency": "USD", "behavior": "explodes"}),
            "parameter_invalid",
        ),
        (
            json!({"owner_name": "X", "currency": "USD", "delay_seconds": 3601}),
            "parameter_invalid",
        ),
        (
            json!({"owner_name": "X", "currency": "USD", "balance": "-1"}),
            "amount_invalid",
        ),
        (
            json!({"owner_name": "X", "currency": "USD", "balance": "1.001"}),
            "amount_invalid",
        ),
        (
            json!({"owner_name": "X", "currency": "USD", "iban": "DE00"}),
            "parameter_unknown",
        ),
    ] {
        let r = h.post("/v1/bank-accounts", body.clone()).await?;
        assert_eq!(
            (r.status, r.body["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some(code)),
            "{body}"
        );
    }
    assert_eq!(
        h.get("/v1/bank-accounts/ba_missing").await?.status,
        StatusCode::NOT_FOUND
    );

    // Mainnet has no bank connector: 503, never a silent fallback to the simulator.
    let s = h.server();
    let (_, live) = s
        .store
        .api_keys()
        .create(&s.account_id, Mode::Mainnet, openrail_store::now_ms())
        .await?;
    let r = h
        .call(
            Method::POST,
            "/v1/bank-accounts",
            Some(&json!({"owner_name": "X", "currency": "USD"})),
            Some(&live),
            &[],
        )
        .await?;
    assert_eq!(
        (r.status, r.str("code")),
        (StatusCode::SERVICE_UNAVAILABLE, "mainnet_unavailable")
    );
    h.stop().await;
    Ok(())
}
