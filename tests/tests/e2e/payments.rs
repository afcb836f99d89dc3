//! One-time payments through HTTP: wallet to wallet through the settlement router.

use alloy::primitives::U256;
use openrail_chain::bindings::TestStablecoin;
use openrail_chain::deploy::signer_provider;
use openrail_chain::devnet::{dev_demo_payer, dev_spare, dev_treasury};
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
        .post_authorized(
            "/v1/payments",
            json!({"amount": "12.50", "currency": "usd", "source": {"type": "wallet", "id": from.to_string()},
                   "destination": {"type": "wallet", "address": to.to_string()}}),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::OK, "succeeded"),
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
        .post_authorized(
            "/v1/payments",
            json!({"amount": "1000", "currency": "USD", "source": {"type": "wallet", "id": from.to_string()},
                   "destination": {"type": "wallet", "address": to.to_string()}}),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("status"), r.str("failure_reason")),
        (StatusCode::OK, "failed", "insufficient_funds"),
        "{}",
        r.body
    );
    assert_eq!(
        h.balance("USD", to).await?,
        units(12) + alloy::primitives::U256::from(500_000u64)
    );

    for (body, status, code, param) in [
        (
            json!({"amount": "1", "currency": "USD", "source": {"type": "wallet", "id": from.to_string()}, "destination": {"type": "cash", "address": "ba_x"}}),
            400,
            "parameter_invalid",
            "destination.type",
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

/// Asserts that a payment failed with `reason` after its source leg, and that its refund
/// then succeeded (polling at most 30 s while it is pending).
async fn assert_refunded(
    h: &Harness,
    r: &openrail_tests::Reply,
    reason: &str,
) -> anyhow::Result<()> {
    assert_refund_ends(h, r, reason, "succeeded").await
}

/// As [`assert_refunded`], with the refund ending `refund_status`.
async fn assert_refund_ends(
    h: &Harness,
    r: &openrail_tests::Reply,
    reason: &str,
    refund_status: &str,
) -> anyhow::Result<()> {
    assert_eq!(
        (r.str("status"), r.str("failure_reason")),
        ("failed", reason),
        "{}",
        r.body
    );
    let id = r.str("id");
    for _ in 0..300 {
        let g = h.get(&format!("/v1/payments/{id}")).await?;
        if g.body["refund_status"] != "pending" {
            assert_eq!(
                (g.str("status"), g.str("refund_status")),
                ("failed", refund_status),
                "{}",
                g.body
            );
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    anyhow::bail!("refund of {id} still pending after 30 s")
}

async fn pay_to_bank(h: &Harness, from: String, to: String, amount: &str) -> openrail_tests::Reply {
    h.post(
        "/v1/payments",
        json!({"amount": amount, "currency": "USD", "source": {"type": "bank_account", "id": from},
               "destination": {"type": "bank_account", "address": to}}),
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn bank_to_wallet_payments() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let to = dev_spare().address();
    let treasury = h.settlement_deployment().treasury;
    let treasury_before = h.balance("USD", treasury).await?;
    let account = |behavior: &'static str, balance: &'static str| {
        let h = &h;
        async move {
            let r = h
                .post(
                    "/v1/bank-accounts",
                    json!({"owner_name": "Ada", "currency": "USD", "balance": balance, "behavior": behavior, "delay_seconds": 0}),
                )
                .await
                .unwrap();
            r.str("id").to_string()
        }
    };
    let pay = |ba: String, amount: &'static str| {
        let h = &h;
        async move {
            h.post(
                "/v1/payments",
                json!({"amount": amount, "currency": "USD", "source": {"type": "bank_account", "id": ba},
                       "destination": {"type": "wallet", "address": to.to_string()}}),
            )
            .await
            .unwrap()
        }
    };

    // Settles: the bank is debited once, the wallet is paid from the treasury.
    let ok = account("settles", "100.00").await;
    let r = pay(ok.clone(), "40.00").await;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::CREATED, "succeeded"),
        "{}",
        r.body
    );
    assert_eq!(h.balance("USD", to).await?, units(40));
    assert_eq!(
        h.balance("USD", treasury).await?,
        treasury_before - units(40)
    );
    let bank = h.get(&format!("/v1/bank-accounts/{ok}")).await?;
    assert_eq!(bank.str("balance"), "60.00");
    assert_eq!(
        bank.body["transfers"].as_array().unwrap().len(),
        1,
        "exactly one debit"
    );

    // The bank's failures end the payment with its reason, and nothing moves on chain.
    for (behavior, balance, reason) in [
        ("settles", "10.00", "insufficient_funds"),
        ("insufficient_funds", "100.00", "insufficient_funds"),
        ("closed", "100.00", "account_closed"),
    ] {
        let ba = account(behavior, balance).await;
        let r = pay(ba, "40.00").await;
        assert_eq!(
            (r.str("status"), r.str("failure_reason")),
            ("failed", reason),
            "{behavior}: {}",
            r.body
        );
        // The source leg failed: no money moved, no refund is owed.
        assert!(r.body["refund_status"].is_null(), "{}", r.body);
    }
    assert_eq!(h.balance("USD", to).await?, units(40));

    // Fails late: the debit looks settled, is returned, and no payout is ever made.
    let late = h
        .post(
            "/v1/bank-accounts",
            json!({"owner_name": "Di", "currency": "USD", "balance": "100.00", "behavior": "fails_late", "delay_seconds": 1}),
        )
        .await?
        .str("id")
        .to_string();
    let r = pay(late.clone(), "5.00").await;
    assert_eq!(
        (r.str("status"), r.str("failure_reason")),
        ("failed", "returned"),
        "{}",
        r.body
    );
    assert_eq!(
        h.get(&format!("/v1/bank-accounts/{late}"))
            .await?
            .str("balance"),
        "100.00"
    );
    assert_eq!(h.balance("USD", to).await?, units(40));

    // Unknown or foreign bank accounts, and a currency mismatch.
    let r = pay("ba_missing".into(), "1").await;
    assert_eq!(
        (r.status, r.str("code")),
        (StatusCode::NOT_FOUND, "resource_missing")
    );
    let eur = h
        .post(
            "/v1/bank-accounts",
            json!({"owner_name": "E", "currency": "EUR", "balance": "5"}),
        )
        .await?;
    let r = pay(eur.str("id").to_string(), "1").await;
    assert_eq!(
        (r.str("code"), r.str("param")),
        ("parameter_invalid", "source.id")
    );

    // Wallet → bank: the wallet pays the treasury on chain, then the account is credited.
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 50).await?;
    let dest_ba = account("settles", "0").await;
    let r = h
        .post_authorized(
            "/v1/payments",
            json!({"amount": "20.00", "currency": "USD", "source": {"type": "wallet", "id": payer.address().to_string()},
                   "destination": {"type": "bank_account", "address": dest_ba}}),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::OK, "succeeded"),
        "{}",
        r.body
    );
    assert_eq!(h.balance("USD", payer.address()).await?, units(30));
    assert_eq!(
        h.get(&format!("/v1/bank-accounts/{dest_ba}"))
            .await?
            .str("balance"),
        "20.00"
    );
    // Bank → bank: debit, then credit.
    let r = pay_to_bank(&h, ok.clone(), dest_ba.clone(), "10.00").await;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::CREATED, "succeeded"),
        "{}",
        r.body
    );
    assert_eq!(
        h.get(&format!("/v1/bank-accounts/{ok}"))
            .await?
            .str("balance"),
        "50.00"
    );
    assert_eq!(
        h.get(&format!("/v1/bank-accounts/{dest_ba}"))
            .await?
            .str("balance"),
        "30.00"
    );
    // Into a closed account: the credit fails after the debit, so the payment fails owing a
    // refund, and the amount goes back to the source account.
    let closed = account("closed", "0").await;
    let r = pay_to_bank(&h, ok.clone(), closed.clone(), "1.00").await;
    assert_refunded(&h, &r, "account_closed").await?;
    assert_eq!(
        h.get(&format!("/v1/bank-accounts/{ok}"))
            .await?
            .str("balance"),
        "50.00",
        "debited 1.00, refunded 1.00"
    );
    // Wallet → closed account: the wallet paid the treasury on chain; the refund pays it back.
    let r = h
        .post_authorized(
            "/v1/payments",
            json!({"amount": "5.00", "currency": "USD", "source": {"type": "wallet", "id": payer.address().to_string()},
                   "destination": {"type": "bank_account", "address": closed}}),
        )
        .await?;
    assert_refunded(&h, &r, "account_closed").await?;
    assert_eq!(h.balance("USD", payer.address()).await?, units(30));
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn a_refund_that_fails_is_recorded_failed() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 100).await?;
    let closed = h
        .post(
            "/v1/bank-accounts",
            json!({"owner_name": "Cy", "currency": "USD", "balance": "0", "behavior": "closed"}),
        )
        .await?
        .str("id")
        .to_string();
    // The treasury withdraws the router's allowance: it can still receive, no longer pay.
    let d = h.settlement_deployment();
    let treasury = signer_provider(h.devnet.settlement.rpc_url(), dev_treasury())?;
    TestStablecoin::new(d.tokens["USD"], treasury)
        .approve(d.router, U256::ZERO)
        .send()
        .await?
        .get_receipt()
        .await?;
    let treasury_before = h.balance("USD", d.treasury).await?;
    // Wallet → closed account: the wallet pays the treasury, the credit fails, and the
    // refund from the treasury fails too: recorded `failed` (and logged for an operator).
    let r = h
        .post_authorized(
            "/v1/payments",
            json!({"amount": "5.00", "currency": "USD", "source": {"type": "wallet", "id": payer.address().to_string()},
                   "destination": {"type": "bank_account", "address": closed}}),
        )
        .await?;
    assert_refund_ends(&h, &r, "account_closed", "failed").await?;
    assert_eq!(h.balance("USD", payer.address()).await?, units(95));
    assert_eq!(
        h.balance("USD", d.treasury).await?,
        treasury_before + units(5)
    );
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn bank_funded_pulls_debit_the_bank_once() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let dest = dev_spare().address();
    let treasury = h.settlement_deployment().treasury;
    let treasury_before = h.balance("USD", treasury).await?;
    let pull_on = |behavior: &'static str| {
        let h = &h;
        async move {
            let ba = h
                .post(
                    "/v1/bank-accounts",
                    json!({"owner_name": "Ada", "currency": "USD", "balance": "100.00", "behavior": behavior, "delay_seconds": 0}),
                )
                .await
                .unwrap()
                .str("id")
                .to_string();
            let m = h
                .post(
                    "/v1/mandates",
                    json!({"payer_account_id": ba, "max_amount": "50", "currency": "USD", "interval": "monthly"}),
                )
                .await
                .unwrap();
            assert_eq!(m.str("payer_account_id"), ba);
            let k = h
                .post(
                    "/v1/session-keys",
                    json!({"mandate_id": m.str("id"), "expires_in": 600}),
                )
                .await
                .unwrap();
            let r = h
                .post("/v1/debit-pulls", json!({"session_key_id": k.str("id"), "amount": "20", "destination": dest.to_string()}))
                .await
                .unwrap();
            assert_eq!(
                (r.status, r.str("status")),
                (StatusCode::CREATED, "authorized"),
                "{}",
                r.body
            );
            // The bank leg finishes after authorization.
            let id = r.str("id").to_string();
            let mut pull = r.body.clone();
            for _ in 0..100 {
                pull = h.get(&format!("/v1/debit-pulls/{id}")).await.unwrap().body;
                if pull["status"] != "authorized" {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            let bank = h
                .get(&format!("/v1/bank-accounts/{ba}"))
                .await
                .unwrap()
                .body;
            (pull, bank)
        }
    };

    let (pull, bank) = pull_on("settles").await;
    assert_eq!(pull["status"], "settled");
    assert_eq!(bank["balance"], "80.00");
    assert_eq!(
        bank["transfers"].as_array().unwrap().len(),
        1,
        "exactly one bank debit"
    );
    // On chain the treasury paid the destination.
    assert_eq!(h.balance("USD", dest).await?, units(20));
    assert_eq!(
        h.balance("USD", treasury).await?,
        treasury_before - units(20)
    );

    let (pull, bank) = pull_on("insufficient_funds").await;
    assert_eq!(
        (pull["status"].as_str(), pull["failure_reason"].as_str()),
        (Some("failed"), Some("insufficient_funds"))
    );
    assert_eq!(bank["balance"], "100.00");
    assert_eq!(bank["transfers"].as_array().unwrap().len(), 1);
    h.stop().await;
    Ok(())
}

/// The developer withdraws a payment still waiting for its payer's signature: it is
/// `canceled` with its `payment.canceled` event, nothing moves, the payer's signature is
/// refused afterwards, and a payment past that stage cannot be canceled.
#[tokio::test]
async fn a_payment_waiting_for_its_payer_can_be_canceled() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 100).await?;
    let (from, to) = (payer.address(), dev_spare().address());
    let body = json!({"amount": "7", "currency": "USD", "source": {"type": "wallet", "id": from.to_string()},
                      "destination": {"type": "wallet", "address": to.to_string()}});
    let created = h.post("/v1/payments", body.clone()).await?;
    assert_eq!(
        created.str("status"),
        "requires_authorization",
        "{}",
        created.body
    );
    let id = created.str("id").to_string();
    let before = h.balance("USD", from).await?;

    // Canceled, with an idempotency key like any POST: the same answer again.
    let cancel = |key: &'static str| {
        let path = format!("/v1/payments/{id}/cancel");
        let h = &h;
        async move {
            h.call(
                reqwest::Method::POST,
                &path,
                None,
                None,
                &[("idempotency-key", key)],
            )
            .await
        }
    };
    let r = cancel("cancel-1").await?;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::OK, "canceled"),
        "{}",
        r.body
    );
    let replay = cancel("cancel-1").await?;
    assert_eq!(replay.body, r.body);
    // Canceling a canceled payment answers it as it is.
    let again = cancel("cancel-2").await?;
    assert_eq!(
        (again.status, again.str("status")),
        (StatusCode::OK, "canceled")
    );
    assert_eq!(
        h.get(&format!("/v1/payments/{id}")).await?.str("status"),
        "canceled"
    );
    let events = h.get(&format!("/v1/events?object_id={id}")).await?;
    let types: Vec<&str> = events.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "payment.canceled",
            "payment.requires_authorization",
            "payment.created"
        ],
        "exactly its state path, newest first"
    );
    let canceled_event = &events.body["data"][0];
    assert_eq!(canceled_event["data"]["object"]["status"], "canceled");

    // The payer's signature is refused now, and nothing moves.
    let r = h.authorize("/v1/payments", &created.body, &payer).await?;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    assert_eq!(r.code(), "payment_canceled");
    assert_eq!(h.balance("USD", from).await?, before);

    // A payment past its payer's signature: 409 payment_not_cancelable, unchanged.
    let paid = h.post_authorized("/v1/payments", body).await?;
    assert_eq!(paid.str("status"), "succeeded", "{}", paid.body);
    let r = h
        .post(
            &format!("/v1/payments/{}/cancel", paid.str("id")),
            json!({}),
        )
        .await?;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    assert_eq!(r.code(), "payment_not_cancelable");
    assert_eq!(
        h.get(&format!("/v1/payments/{}", paid.str("id")))
            .await?
            .str("status"),
        "succeeded"
    );
    // Unknown and foreign ids.
    let r = h.post("/v1/payments/pay_nope/cancel", json!({})).await?;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::NOT_FOUND, "resource_missing")
    );
    let r = h.post("/v1/payments/man_nope/cancel", json!({})).await?;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    h.stop().await;
    Ok(())
}

/// A server without an attestation chain for the mode: choosing it is 400, and an account
/// that chose it under another configuration gets 503 `chain_unavailable` (nothing written).
#[tokio::test]
async fn a_chain_the_server_does_not_serve_is_refused() -> anyhow::Result<()> {
    // The stand-in mainnet takes the second local chain, so testnet has no attestation chain.
    let h = Harness::builder().mainnet().start().await?;
    let a = h.get("/v1/account").await?;
    assert_eq!(
        a.body["chains"].as_array().map(Vec::len),
        Some(1),
        "{}",
        a.body
    );
    let r = h
        .post("/v1/account", json!({"payments_chain": "attestation"}))
        .await?;
    assert_eq!(
        (r.status, r.body["code"].as_str(), r.body["param"].as_str()),
        (
            StatusCode::BAD_REQUEST,
            Some("parameter_invalid"),
            Some("payments_chain")
        ),
        "{}",
        r.body
    );
    // Chosen while the server had the chain (written directly: this server never did).
    let server = h.server();
    server
        .store
        .accounts()
        .set_payments_chain(
            &server.account_id,
            openrail_store::Mode::Testnet,
            openrail_store::accounts::PaymentsChain::Attestation,
            openrail_store::now_ms(),
        )
        .await?;
    let r = h
        .post(
            "/v1/payments",
            json!({"amount": "1", "currency": "USD", "source": {"type": "wallet", "id": dev_demo_payer().address().to_string()},
                   "destination": {"type": "wallet", "address": dev_spare().address().to_string()}}),
        )
        .await?;
    assert_eq!(
        (r.status, r.body["code"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("chain_unavailable")),
        "{}",
        r.body
    );
    assert_eq!(h.get("/v1/payments").await?.body["data"], json!([]));
    h.stop().await;
    Ok(())
}

/// The account chooses where its one-time payments settle (`POST /v1/account`); the
/// request never names a chain. On the attestation chain every kind of payment settles
/// there, with that chain's router, tokens and treasury, and nothing moves on the
/// settlement chain; a payment keeps its chain when the account changes its mind, and
/// agentic debits stay on the settlement chain.
#[tokio::test]
async fn payments_settle_on_the_chain_the_account_chose() -> anyhow::Result<()> {
    use openrail_chain::devnet::{ATTESTATION_CHAIN_ID, SETTLEMENT_CHAIN_ID};
    let h = Harness::start().await?;
    let a = h.get("/v1/account").await?;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.str("object"), "account");
    assert_eq!(a.str("payments_chain"), "settlement");
    assert_eq!(
        a.body["chains"],
        json!([{"role": "settlement", "chain_id": SETTLEMENT_CHAIN_ID},
               {"role": "attestation", "chain_id": ATTESTATION_CHAIN_ID}])
    );
    for (body, code) in [
        (json!({"payments_chain": "chain-b"}), "parameter_invalid"),
        (json!({"payments_chain": 31338}), "parameter_invalid"),
        (json!({"chain_id": 31338}), "parameter_unknown"),
    ] {
        let r = h.post("/v1/account", body.clone()).await?;
        assert_eq!(
            (r.status, r.body["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some(code)),
            "{body}: {}",
            r.body
        );
    }
    assert_eq!(
        h.get("/v1/account").await?.str("payments_chain"),
        "settlement"
    );

    // A payment created before the switch, waiting for its payer's signature.
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 100).await?;
    h.fund_on_attestation(payer.clone(), 100).await?;
    let (from, to) = (payer.address(), dev_spare().address());
    let wallet_payment = json!({"amount": "12.50", "currency": "USD", "source": {"type": "wallet", "id": from.to_string()},
                                "destination": {"type": "wallet", "address": to.to_string()}});
    let before = h.post("/v1/payments", wallet_payment.clone()).await?;
    assert_eq!(
        before.str("status"),
        "requires_authorization",
        "{}",
        before.body
    );

    let r = h
        .post("/v1/account", json!({"payments_chain": "attestation"}))
        .await?;
    assert_eq!(
        (r.status, r.str("payments_chain")),
        (StatusCode::OK, "attestation"),
        "{}",
        r.body
    );
    let a_treasury = h.settlement_deployment().treasury;
    let b_treasury = h.devnet.manifest.attestation.treasury;
    let (a_treasury_before, b_treasury_before) = (
        h.balance("USD", a_treasury).await?,
        h.balance_on_attestation("USD", b_treasury).await?,
    );

    // Wallet → wallet: signed for the attestation chain's router, settled there.
    let r = h
        .post_authorized("/v1/payments", wallet_payment.clone())
        .await?;
    assert_eq!(r.str("status"), "succeeded", "{}", r.body);
    assert_eq!(r.body["onchain"]["chain_id"], ATTESTATION_CHAIN_ID);
    assert_eq!(
        r.body["authorization"]["typed_data"]["domain"]["chainId"],
        ATTESTATION_CHAIN_ID
    );
    assert_eq!(
        h.balance_on_attestation("USD", to).await?,
        units(12) + U256::from(500_000u64)
    );
    assert_eq!(
        h.balance("USD", to).await?,
        U256::ZERO,
        "nothing on chain A"
    );

    // Bank → wallet: the attestation chain's treasury pays.
    let ba = h
        .post(
            "/v1/bank-accounts",
            json!({"owner_name": "Ada", "currency": "USD", "balance": "100.00", "delay_seconds": 0}),
        )
        .await?
        .str("id")
        .to_string();
    let r = h
        .post(
            "/v1/payments",
            json!({"amount": "40.00", "currency": "USD", "source": {"type": "bank_account", "id": ba},
                   "destination": {"type": "wallet", "address": to.to_string()}}),
        )
        .await?;
    assert_eq!(r.str("status"), "succeeded", "{}", r.body);
    assert_eq!(r.body["onchain"]["chain_id"], ATTESTATION_CHAIN_ID);
    assert_eq!(
        h.balance_on_attestation("USD", to).await?,
        units(52) + U256::from(500_000u64)
    );
    // Wallet → bank: the wallet pays the attestation chain's treasury.
    let r = h
        .post_authorized(
            "/v1/payments",
            json!({"amount": "15.00", "currency": "USD", "source": {"type": "wallet", "id": from.to_string()},
                   "destination": {"type": "bank_account", "address": ba}}),
        )
        .await?;
    assert_eq!(r.str("status"), "succeeded", "{}", r.body);
    assert_eq!(
        h.get(&format!("/v1/bank-accounts/{ba}"))
            .await?
            .str("balance"),
        "75.00"
    );
    assert_eq!(
        h.balance_on_attestation("USD", b_treasury).await?,
        b_treasury_before - units(40) + units(15)
    );
    assert_eq!(h.balance("USD", a_treasury).await?, a_treasury_before);
    assert_eq!(
        h.balance("USD", from).await?,
        units(100),
        "chain A untouched"
    );

    // The payment created before the switch keeps its chain: signed and settled on A.
    let id = before.str("id");
    let g = h.get(&format!("/v1/payments/{id}")).await?;
    assert_eq!(
        g.body["authorization"]["typed_data"]["domain"]["chainId"],
        SETTLEMENT_CHAIN_ID
    );
    let r = h.authorize("/v1/payments", &g.body, &payer).await?;
    assert_eq!(r.str("status"), "succeeded", "{}", r.body);
    assert_eq!(r.body["onchain"]["chain_id"], SETTLEMENT_CHAIN_ID);
    assert_eq!(
        h.balance("USD", to).await?,
        units(12) + U256::from(500_000u64)
    );

    // Agentic debits stay on the settlement chain, whatever the account chose.
    let m = h
        .post(
            "/v1/mandates",
            json!({"payer_account_id": ba, "max_amount": "10", "currency": "USD", "interval": "daily"}),
        )
        .await?;
    assert_eq!(
        m.body["onchain"]["chain_id"], SETTLEMENT_CHAIN_ID,
        "{}",
        m.body
    );
    h.stop().await;
    Ok(())
}
