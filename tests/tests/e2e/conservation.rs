//! Money is conserved across rails, and hostile input never moves it: destinations that
//! would lose money are refused before any transaction, dead keys are declined off chain,
//! agent secrets are never stored, and a bank balance is spent once.

use alloy::primitives::Address;
use openrail_chain::devnet::{dev_demo_payer, dev_spare};
use openrail_tests::{Harness, Reply};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

async fn active_mandate(h: &Harness) -> anyhow::Result<Reply> {
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let m = h
        .post_authorized(
            "/v1/mandates",
            json!({"payer_account_id": payer.address().to_string(), "max_amount": "100", "currency": "USD", "interval": "daily",
                   "payees": [dev_spare().address().to_string()]}),
        )
        .await?;
    anyhow::ensure!(m.body["status"] == "active", "mandate: {}", m.body);
    Ok(m)
}

async fn key(h: &Harness, mandate: &str) -> anyhow::Result<Reply> {
    let k = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": mandate, "expires_in": 3600}),
        )
        .await?;
    anyhow::ensure!(k.status == StatusCode::CREATED, "key: {}", k.body);
    Ok(k)
}

#[tokio::test]
async fn destinations_that_lose_money_are_refused_before_any_transaction() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let m = active_mandate(&h).await?;
    let k = key(&h, m.str("id")).await?;
    let d = h.settlement_deployment();
    let asm = d.allowance_state_machine.unwrap().to_string();
    let router = d.router.to_string();
    let usd = d.tokens["USD"].to_string();
    let zero = Address::ZERO.to_string();
    let payer = dev_demo_payer().address().to_string();
    let before = h.operator_nonce().await?;

    let mut cases: Vec<(&str, Value, &str)> = Vec::new();
    for bad in [&asm, &router, &usd, &zero] {
        cases.push((
            "/v1/debit-pulls",
            json!({"session_key_id": k.str("id"), "amount": "1", "destination": bad}),
            "destination",
        ));
        cases.push((
            "/v1/session-keys",
            json!({"mandate_id": m.str("id"), "expires_in": 3600, "allowed_destinations": [bad]}),
            "allowed_destinations",
        ));
        cases.push((
            "/v1/payments",
            json!({"amount": "1", "currency": "USD", "source": {"type": "wallet", "id": payer},
                   "destination": {"type": "wallet", "address": bad}}),
            "destination.address",
        ));
    }
    cases.push((
        "/v1/mandates",
        json!({"payer_account_id": zero, "max_amount": "1", "currency": "USD", "interval": "daily"}),
        "payer_account_id",
    ));
    cases.push((
        "/v1/payments",
        json!({"amount": "1", "currency": "USD", "source": {"type": "wallet", "id": zero},
               "destination": {"type": "wallet", "address": dev_spare().address().to_string()}}),
        "source.id",
    ));
    // A pull paying the payer itself.
    cases.push((
        "/v1/debit-pulls",
        json!({"session_key_id": k.str("id"), "amount": "1", "destination": payer}),
        "destination",
    ));
    for (path, body, param) in cases {
        let r = h.post(path, body.clone()).await?;
        assert_eq!(
            r.status,
            StatusCode::BAD_REQUEST,
            "{path} {body}: {}",
            r.body
        );
        assert_eq!(r.code(), "parameter_invalid", "{path} {body}");
        assert_eq!(r.body["param"], param, "{path} {body}");
    }
    assert_eq!(h.operator_nonce().await?, before, "no transaction was sent");
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn dead_keys_are_declined_off_chain_and_their_secrets_are_void() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let m = active_mandate(&h).await?;
    let k = key(&h, m.str("id")).await?;
    let secret = k.str("secret").to_string();
    let id = k.str("id").to_string();
    // The secret works while the key lives.
    let r = h
        .call(
            Method::GET,
            &format!("/v1/session-keys/{id}"),
            None,
            Some(&secret),
            &[],
        )
        .await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = h.delete(&format!("/v1/session-keys/{id}")).await?;
    assert_eq!(r.str("status"), "revoked", "{}", r.body);

    let before = h.operator_nonce().await?;
    let body = json!({"session_key_id": id, "amount": "1", "destination": dev_spare().address().to_string()});
    let r = h.post("/v1/debit-pulls", body.clone()).await?;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(r.code(), "session_key_revoked");
    let pull = r.body["pull_id"]
        .as_str()
        .expect("the declined pull is recorded");
    let p = h.get(&format!("/v1/debit-pulls/{pull}")).await?;
    assert_eq!(p.str("status"), "declined");
    assert_eq!(p.body["onchain"]["tx_hash"], Value::Null);
    assert_eq!(h.operator_nonce().await?, before, "nothing was sent");
    // The revoked key's secret authenticates nothing.
    let r = h
        .call(
            Method::POST,
            "/v1/debit-pulls",
            Some(&body),
            Some(&secret),
            &[],
        )
        .await?;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.body);

    // A canceled mandate's keys likewise.
    let k2 = key(&h, m.str("id")).await?;
    let r = h
        .post(&format!("/v1/mandates/{}/cancel", m.str("id")), json!({}))
        .await?;
    assert_eq!(r.str("status"), "canceled", "{}", r.body);
    let before = h.operator_nonce().await?;
    let r = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": k2.str("id"), "amount": "1", "destination": dev_spare().address().to_string()}),
        )
        .await?;
    assert_eq!(r.code(), "mandate_not_active", "{}", r.body);
    assert_eq!(h.operator_nonce().await?, before, "nothing was sent");
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn a_replayed_key_creation_never_shows_the_secret_again() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let m = active_mandate(&h).await?;
    let body = json!({"mandate_id": m.str("id"), "expires_in": 3600});
    let hdr = [("Idempotency-Key", "key-creation-1")];
    let first = h
        .call(Method::POST, "/v1/session-keys", Some(&body), None, &hdr)
        .await?;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    assert!(first.str("secret").starts_with("sks_testnet_"));
    let replay = h
        .call(Method::POST, "/v1/session-keys", Some(&body), None, &hdr)
        .await?;
    assert_eq!(replay.status, StatusCode::CREATED);
    assert_eq!(replay.headers["idempotent-replayed"], "true");
    assert_eq!(replay.body["id"], first.body["id"]);
    assert_eq!(replay.body["secret"], Value::Null);
    assert_eq!(replay.body["secret_redacted"], true);
    h.stop().await;
    Ok(())
}

/// Ten concurrent payments of 10.00 from a bank account holding 10.00: one succeeds, nine
/// fail `insufficient_funds`, and the balance ends at 0.00, never below.
#[tokio::test]
async fn a_bank_balance_is_spent_once_under_concurrency() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let ba = h
        .post(
            "/v1/bank-accounts",
            json!({"owner_name": "Once", "currency": "USD", "balance": "10.00", "delay_seconds": 0}),
        )
        .await?;
    assert_eq!(ba.status, StatusCode::CREATED, "{}", ba.body);
    let ba_id = ba.str("id").to_string();
    let dest = dev_spare().address().to_string();
    let body = json!({"amount": "10.00", "currency": "USD",
                      "source": {"type": "bank_account", "id": ba_id},
                      "destination": {"type": "wallet", "address": dest}});
    let tasks: Vec<_> = (0..10)
        .map(|_| {
            h.call(
                Method::POST,
                "/v1/payments",
                Some(&body),
                None,
                &[("Prefer", "wait=30")],
            )
        })
        .collect();
    let replies = futures::future::join_all(tasks).await;
    let mut outcomes = std::collections::BTreeMap::new();
    for r in replies {
        let r = r?;
        let key = format!(
            "{} {}",
            r.body["status"].as_str().unwrap_or("?"),
            r.body["failure_reason"].as_str().unwrap_or("-")
        );
        *outcomes.entry(key).or_insert(0) += 1;
    }
    assert_eq!(
        outcomes,
        [
            ("failed insufficient_funds".to_string(), 9),
            ("succeeded -".to_string(), 1)
        ]
        .into_iter()
        .collect(),
    );
    let after = h.get(&format!("/v1/bank-accounts/{ba_id}")).await?;
    assert_eq!(after.str("balance"), "0.00");
    assert_eq!(after.str("available_balance"), "0.00");
    h.stop().await;
    Ok(())
}

/// A bank-funded pull pays out only once its bank debit is final: the chain records the
/// authorization (the ceiling is used at once), the treasury pays the destination after the
/// debit settled and its return window passed, and a failed or returned debit ends the pull
/// `failed` with nothing paid.
#[tokio::test]
async fn a_bank_funded_pull_pays_out_only_after_its_debit_is_final() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let treasury = h.settlement_deployment().treasury;
    let cases = [
        ("settles", "100.00", "settled", None),
        ("settles", "0.00", "failed", Some("insufficient_funds")),
        (
            "insufficient_funds",
            "100.00",
            "failed",
            Some("insufficient_funds"),
        ),
        ("closed", "100.00", "failed", Some("account_closed")),
        ("fails_late", "100.00", "failed", Some("returned")),
    ];
    for (i, (behavior, balance, want_status, want_reason)) in cases.into_iter().enumerate() {
        // A fresh destination per case, so its balance tells what this case paid.
        let dest = Address::from_slice(&alloy::primitives::keccak256(format!("payee-{i}"))[12..]);
        let ba = h
            .post(
                "/v1/bank-accounts",
                json!({"owner_name": "Ada", "currency": "USD", "balance": balance, "behavior": behavior, "delay_seconds": 1}),
            )
            .await?;
        let ba = ba.str("id").to_string();
        let m = h
            .post(
                "/v1/mandates",
                json!({"payer_account_id": ba, "max_amount": "50", "currency": "USD", "interval": "monthly"}),
            )
            .await?;
        assert_eq!(m.str("status"), "active", "{}", m.body);
        assert_eq!(m.body["authorization"]["method"], "bank_mandate");
        let k = key(&h, m.str("id")).await?;
        let treasury_before = h.balance("USD", treasury).await?;
        let r = h
            .post(
                "/v1/debit-pulls",
                json!({"session_key_id": k.str("id"), "amount": "20", "destination": dest.to_string()}),
            )
            .await?;
        assert_eq!(
            (r.status, r.str("status")),
            (StatusCode::CREATED, "authorized"),
            "{}",
            r.body
        );
        // Authorized on chain: the ceiling is used, nothing is paid yet.
        assert_eq!(
            h.balance("USD", dest).await?,
            alloy::primitives::U256::ZERO,
            "{behavior}"
        );
        let mm = h.get(&format!("/v1/mandates/{}", m.str("id"))).await?;
        assert_eq!(mm.body["current_epoch"]["spent"], "20.00");
        let id = r.str("id").to_string();
        let mut pull = r.body.clone();
        for _ in 0..300 {
            pull = h.get(&format!("/v1/debit-pulls/{id}")).await?.body;
            if pull["status"] != "authorized" {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_eq!(pull["status"], want_status, "{behavior} {balance}: {pull}");
        assert_eq!(pull["failure_reason"].as_str(), want_reason, "{behavior}");
        let paid = h.balance("USD", dest).await?;
        let treasury_after = h.balance("USD", treasury).await?;
        if want_status == "settled" {
            assert_eq!(paid, openrail_tests::units(20));
            assert_eq!(treasury_before - treasury_after, openrail_tests::units(20));
        } else {
            assert_eq!(
                paid,
                alloy::primitives::U256::ZERO,
                "{behavior}: nothing paid"
            );
            assert_eq!(
                treasury_after, treasury_before,
                "{behavior}: the treasury paid nothing"
            );
        }
    }
    h.stop().await;
    Ok(())
}

/// A transfer the token refuses is reported as what stopped it: the payer's balance
/// (`insufficient_funds`) or its allowance to the router (`allowance_insufficient`), for
/// pulls and wallet payments alike.
#[tokio::test]
async fn a_refused_transfer_says_what_stopped_it() -> anyhow::Result<()> {
    use openrail_chain::bindings::TestStablecoin;
    use openrail_chain::deploy::{mined, signer_provider};
    let h = Harness::start().await?;
    let m = active_mandate(&h).await?; // the demo payer holds 1,000 USD
    let k = key(&h, m.str("id")).await?;
    let payer = dev_demo_payer();
    let dest = dev_spare().address().to_string();
    let pull = |amount: &str| {
        h.post(
            "/v1/debit-pulls",
            json!({"session_key_id": k.str("id"), "amount": amount, "destination": dest}),
        )
    };
    // More than the balance, within the ceiling: the balance stopped it.
    let poor = h
        .post_authorized(
            "/v1/mandates",
            json!({"payer_account_id": payer.address().to_string(), "max_amount": "5000", "currency": "USD", "interval": "daily",
                   "payees": [dest]}),
        )
        .await?;
    let k2 = key(&h, poor.str("id")).await?;
    let r = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": k2.str("id"), "amount": "2000", "destination": dest}),
        )
        .await?;
    assert_eq!(r.code(), "insufficient_funds", "{}", r.body);

    // The payer withdraws its approval: the allowance stopped it.
    let d = h.settlement_deployment();
    let as_payer = signer_provider(h.devnet.settlement.rpc_url(), payer.clone())?;
    mined(
        TestStablecoin::new(d.tokens["USD"], &as_payer)
            .approve(d.router, alloy::primitives::U256::ZERO)
            .send()
            .await?,
    )
    .await?;
    let r = pull("1").await?;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(r.code(), "allowance_insufficient", "{}", r.body);
    let pay = h
        .post_authorized(
            "/v1/payments",
            json!({"amount": "1", "currency": "USD", "source": {"type": "wallet", "id": payer.address().to_string()},
                   "destination": {"type": "wallet", "address": dest}}),
        )
        .await?;
    assert_eq!(pay.str("status"), "failed", "{}", pay.body);
    assert_eq!(pay.str("failure_reason"), "allowance_insufficient");
    h.stop().await;
    Ok(())
}

/// An expired key is declined off chain, and its secret authenticates nothing (the key's
/// row is written with a past expiry, as a key issued long ago would be).
#[tokio::test]
async fn an_expired_key_is_declined_off_chain() -> anyhow::Result<()> {
    use openrail_store::agentic::{KeyStatus, SessionKey};
    let h = Harness::start().await?;
    let m = active_mandate(&h).await?;
    let server = h.server();
    let now = openrail_store::now_ms();
    let id = "sk_expiredlongago".to_string();
    let secret = "sks_testnet_expiredlongago";
    server
        .store
        .keys()
        .insert(
            &SessionKey {
                onchain_id: alloy::primitives::keccak256(&id).to_string(),
                id: openrail_domain::SessionKeyId::parse(&id).expect("a session key id"),
                account_id: server.account_id.clone(),
                mode: openrail_store::Mode::Testnet,
                mandate_id: openrail_domain::MandateId::parse(m.str("id")).expect("a mandate id"),
                expires_at: now - 1_000,
                max_amount: None,
                allowed_destinations: vec![],
                status: KeyStatus::Active,
                tx_hash: None,
                created_at: now - 3_600_000,
                signer: None,
            },
            &openrail_store::ids::hash_secret(secret),
        )
        .await?;
    let before = h.operator_nonce().await?;
    let body = json!({"session_key_id": id, "amount": "1", "destination": dev_spare().address().to_string()});
    let r = h.post("/v1/debit-pulls", body.clone()).await?;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::UNPROCESSABLE_ENTITY, "session_key_expired"),
        "{}",
        r.body
    );
    assert_eq!(h.operator_nonce().await?, before, "nothing was sent");
    let r = h
        .call(
            Method::POST,
            "/v1/debit-pulls",
            Some(&body),
            Some(secret),
            &[],
        )
        .await?;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.body);
    h.stop().await;
    Ok(())
}

/// A bank-funded pull whose payout the chain refuses (here: the treasury withdrew its
/// approval of the router) ends `failed` with `payout_failed`, and the bank debit is
/// credited back: the payer's bank balance is whole again and nobody was paid.
#[tokio::test]
async fn a_refused_payout_credits_the_bank_debit_back() -> anyhow::Result<()> {
    use openrail_chain::bindings::TestStablecoin;
    use openrail_chain::deploy::signer_provider;
    use openrail_chain::devnet::dev_treasury;
    let h = Harness::start().await?;
    let d = h.settlement_deployment().clone();
    let ba = h
        .post(
            "/v1/bank-accounts",
            json!({"owner_name": "Ada", "currency": "USD", "balance": "100.00", "delay_seconds": 0}),
        )
        .await?;
    let ba = ba.str("id").to_string();
    let m = h
        .post(
            "/v1/mandates",
            json!({"payer_account_id": ba, "max_amount": "50", "currency": "USD", "interval": "monthly"}),
        )
        .await?;
    let k = key(&h, m.str("id")).await?;
    let treasury = signer_provider(h.devnet.settlement.rpc_url(), dev_treasury())?;
    TestStablecoin::new(d.tokens["USD"], treasury)
        .approve(d.router, alloy::primitives::U256::ZERO)
        .send()
        .await?
        .get_receipt()
        .await?;
    let dest = Address::from_slice(&alloy::primitives::keccak256("unpaid payee")[12..]);
    let r = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": k.str("id"), "amount": "20", "destination": dest.to_string()}),
        )
        .await?;
    assert_eq!(r.str("status"), "authorized", "{}", r.body);
    let id = r.str("id").to_string();
    let mut pull = r.body.clone();
    for _ in 0..300 {
        pull = h.get(&format!("/v1/debit-pulls/{id}")).await?.body;
        if pull["status"] != "authorized" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        (pull["status"].as_str(), pull["failure_reason"].as_str()),
        (Some("failed"), Some("payout_failed")),
        "{pull}"
    );
    assert_eq!(h.balance("USD", dest).await?, alloy::primitives::U256::ZERO);
    let bank = h.get(&format!("/v1/bank-accounts/{ba}")).await?;
    assert_eq!(bank.str("balance"), "100.00", "{}", bank.body);
    assert_eq!(bank.str("available_balance"), "100.00");
    h.stop().await;
    Ok(())
}
