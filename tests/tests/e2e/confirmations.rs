//! A confirmation depth: bank legs (and the final status of payments) follow a transaction
//! only once the relayer's cursor — the chain's head minus the depth — has passed its block,
//! so the bank never moves money for a transaction a reorganisation could still remove.

use std::time::Duration;

use alloy::providers::ext::AnvilApi;
use openrail_chain::devnet::{dev_demo_payer, dev_spare};
use openrail_tests::{Harness, audit};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn bank_legs_wait_for_confirmations() -> anyhow::Result<()> {
    let h = Harness::builder().confirmations(3).start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 100).await?;
    let payer_bank = audit::bank_account(&h, "100.00", 0).await?;
    let dest_bank = audit::bank_account(&h, "0.00", 0).await?;
    let (_, bank_key) = audit::mandate_and_key(&h, &payer_bank).await?;

    // A pull of the bank-funded mandate: authorized on chain, the bank not yet debited.
    let p = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": bank_key, "amount": "5.00", "destination": dev_spare().address().to_string()}),
        )
        .await?;
    assert_eq!(
        (p.status, p.str("status")),
        (StatusCode::CREATED, "authorized"),
        "{}",
        p.body
    );
    let pull = format!("/v1/debit-pulls/{}", p.str("id"));
    let bank = |id: &str| format!("/v1/bank-accounts/{id}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(h.get(&pull).await?.str("status"), "authorized");
    assert_eq!(h.get(&bank(&payer_bank)).await?.str("balance"), "100.00");

    // Three more blocks: confirmed, the bank leg runs once; then the treasury's payout is
    // sent, and the pull is settled only once that transaction is confirmed too.
    h.settlement.anvil_mine(Some(3), None).await?;
    for _ in 0..150 {
        if h.get(&bank(&payer_bank)).await?.str("balance") == "95.00" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(h.get(&bank(&payer_bank)).await?.str("balance"), "95.00");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        h.get(&pull).await?.str("status"),
        "authorized",
        "payout unconfirmed"
    );
    h.settlement.anvil_mine(Some(3), None).await?;
    let settled = wait_for(&h, &pull, "settled").await?;
    assert_eq!(settled.str("status"), "settled");

    // Wallet to bank: the tokens move to the treasury at once; the bank credit (and the
    // payment's success) waits for the source leg's confirmations.
    let created = h
        .post(
            "/v1/payments",
            json!({"amount": "2.00", "currency": "USD",
                   "source": {"type": "wallet", "id": payer.address().to_string()},
                   "destination": {"type": "bank_account", "address": dest_bank}}),
        )
        .await?;
    let signature = Harness::sign_authorization(&created.body, &payer)?;
    let pay = h
        .call(
            reqwest::Method::POST,
            &format!("/v1/payments/{}/authorize", created.str("id")),
            Some(&json!({ "signature": signature })),
            None,
            &[("prefer", "wait=1")],
        )
        .await?;
    assert_eq!(
        (pay.status, pay.str("status")),
        (StatusCode::ACCEPTED, "processing"),
        "{}",
        pay.body
    );
    let payment = format!("/v1/payments/{}", pay.str("id"));
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(h.get(&payment).await?.str("status"), "processing");
    assert_eq!(h.get(&bank(&dest_bank)).await?.str("balance"), "0.00");
    h.settlement.anvil_mine(Some(3), None).await?;
    wait_for(&h, &payment, "succeeded").await?;
    assert_eq!(h.get(&bank(&dest_bank)).await?.str("balance"), "2.00");
    h.stop().await;
    Ok(())
}

/// GETs `path` until its status is `status` (at most 15 s).
async fn wait_for(h: &Harness, path: &str, status: &str) -> anyhow::Result<openrail_tests::Reply> {
    for _ in 0..150 {
        let r = h.get(path).await?;
        if r.body["status"] == status {
            return Ok(r);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    anyhow::bail!("{path} never became {status}: {}", h.get(path).await?.body)
}
