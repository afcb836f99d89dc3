//! Restart recovery through the harness: what a server accepted before it died reaches a
//! final status after a restart, with one transaction per intent.

use openrail_chain::devnet::{dev_demo_payer, dev_spare};
use openrail_store::Mode;
use openrail_store::agentic::{PullStatus, Scope};
use openrail_tests::{Harness, intent_of, pending_pull_row, units};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn a_pull_accepted_but_never_sent_is_sent_after_a_restart() -> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let m = h
        .post_authorized(
            "/v1/mandates",
            json!({"payer_account_id": payer.address().to_string(), "max_amount": "100", "currency": "USD", "interval": "daily",
                   "payees": [dev_spare().address().to_string()]}),
        )
        .await?;
    assert_eq!(
        (m.status, m.str("status")),
        (StatusCode::OK, "active"),
        "{}",
        m.body
    );
    let k = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": m.str("id"), "expires_in": 3600}),
        )
        .await?;
    assert_eq!(k.status, StatusCode::CREATED, "{}", k.body);

    // A pull and its work as a request writes them, the process having died before its
    // engine journaled (and so before it sent) the transaction.
    h.crash();
    let server = h.server();
    let (store, account_id) = (server.store.clone(), server.account_id.clone());
    store
        .pulls()
        .insert(&pending_pull_row(
            "pull_unsent",
            &account_id,
            k.str("id"),
            m.str("id"),
            1_250,
            dev_spare().address(),
        ))
        .await?;
    assert_eq!(
        store
            .journal()
            .count_for_intent(&intent_of("pull_unsent"))
            .await?,
        0
    );

    h.restart().await?;
    let scope = Scope {
        account_id: &account_id,
        mode: Mode::Testnet,
    };
    let mut pull = store
        .pulls()
        .get(
            scope,
            &openrail_domain::PullId::parse("pull_unsent").expect("a pull id"),
        )
        .await?;
    for _ in 0..100 {
        if pull.status != PullStatus::Pending {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        pull = store
            .pulls()
            .get(
                scope,
                &openrail_domain::PullId::parse("pull_unsent").expect("a pull id"),
            )
            .await?;
    }
    assert_eq!(pull.status, PullStatus::Authorized);
    assert_eq!(
        store
            .journal()
            .count_for_intent(&intent_of("pull_unsent"))
            .await?,
        1
    );
    assert_eq!(
        h.balance("USD", dev_spare().address()).await?,
        units(12) + alloy::primitives::U256::from(500_000u64)
    );
    // Through the API, the pull reads as any other.
    let g = h.get("/v1/debit-pulls/pull_unsent").await?;
    assert_eq!((g.status, g.str("status")), (StatusCode::OK, "authorized"));

    // A second restart finds nothing left to send.
    h.restart().await?;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(
        store
            .journal()
            .count_for_intent(&intent_of("pull_unsent"))
            .await?,
        1
    );
    h.stop().await;
    Ok(())
}

/// Fault injection on the chain and its RPC (in this binary: one more would link the
/// workspace again).
mod faults;
