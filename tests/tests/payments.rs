//! One-time payments through HTTP: wallet to wallet through the settlement router.

use openrail_chain::devnet::{dev_demo_payer, dev_spare};
use openrail_tests::{Harness, units};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn wallet_to_wallet_payments() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 100).await?;
    let (from, to) = (payer.address(), dev_spare().address());

    let r = h
        .post(
            "/v1/payments",
            json!({"amount": "12.50", "currency": "usd", "source": {"type": "wallet", "id": from.to_string()},
                   "destination": {"type": "wallet", "address": to.to_string()}}),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::CREATED, "succeeded"),
        "{}",
        r.body
    );
    assert!(r.str("id").starts_with("pay_"));
    assert_eq!(r.str("amount"), "12.50");
    assert_eq!(
        h.balance("USD", to).await?,
        units(12) + alloy::primitives::U256::from(500_000u64)
    );
    assert_eq!(
        h.balance("USD", from).await?,
        units(100) - units(12) - alloy::primitives::U256::from(500_000u64)
    );
    let id = r.str("id").to_string();
    let g = h.get(&format!("/v1/payments/{id}")).await?;
    assert_eq!((g.status, g.str("status")), (StatusCode::OK, "succeeded"));
    assert_eq!(
        g.body["onchain"]["chain_id"],
        openrail_chain::devnet::SETTLEMENT_CHAIN_ID
    );
    let l = h.get("/v1/payments").await?;
    assert_eq!(l.body["data"][0]["id"], id.as_str());

    // More than the payer holds: the router refuses, the payment fails, nothing moves.
    let r = h
        .post(
            "/v1/payments",
            json!({"amount": "1000", "currency": "USD", "source": {"type": "wallet", "id": from.to_string()},
                   "destination": {"type": "wallet", "address": to.to_string()}}),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("status"), r.str("failure_reason")),
        (StatusCode::CREATED, "failed", "insufficient_funds"),
        "{}",
        r.body
    );
    assert_eq!(
        h.balance("USD", to).await?,
        units(12) + alloy::primitives::U256::from(500_000u64)
    );

    for (body, status, code, param) in [
        (
            json!({"amount": "1", "currency": "USD", "source": {"type": "bank_account", "id": "ba_x"}, "destination": {"type": "wallet", "address": to.to_string()}}),
            400,
            "parameter_invalid",
            "source.type",
        ),
        (
            json!({"amount": "1", "currency": "USD", "source": {"type": "wallet", "id": from.to_string(), "memo": "x"}, "destination": {"type": "wallet", "address": to.to_string()}}),
            400,
            "parameter_unknown",
            "source.memo",
        ),
        (
            json!({"amount": "1", "currency": "USD", "source": {"type": "wallet", "id": from.to_string()}}),
            400,
            "parameter_missing",
            "destination",
        ),
        (
            json!({"amount": "1", "currency": "USD", "source": "wallet", "destination": {"type": "wallet", "address": to.to_string()}}),
            400,
            "parameter_invalid",
            "source",
        ),
        (
            json!({"amount": "1", "currency": "USD", "source": {"type": "wallet", "id": from.to_string()}, "destination": {"type": "wallet", "address": from.to_string()}}),
            400,
            "parameter_invalid",
            "destination.address",
        ),
        (
            json!({"amount": "0.001", "currency": "USD", "source": {"type": "wallet", "id": from.to_string()}, "destination": {"type": "wallet", "address": to.to_string()}}),
            400,
            "amount_invalid",
            "amount",
        ),
    ] {
        let r = h.post("/v1/payments", body.clone()).await?;
        assert_eq!(
            (
                r.status.as_u16(),
                r.body["code"].as_str(),
                r.body["param"].as_str()
            ),
            (status, Some(code), Some(param)),
            "{body}"
        );
    }
    assert_eq!(
        h.get("/v1/payments").await?.body["data"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    h.stop().await;
    Ok(())
}
