//! Scale-out: two `openrail serve` processes on one database. One holds the settlement
//! chain's lease (its engine sends the chain's transactions; it runs the relayer); the
//! other only writes the work of the requests it serves, which the holder sends. Killing
//! the holder with `SIGKILL` while pulls and payments are in flight, the other takes the
//! lease over and finishes them: one transaction per intent, the journal and the operator's nonce in step, the
//! money where the database says it is.

use std::time::{Duration, Instant};

use alloy::primitives::U256;
use alloy::providers::Provider;
use openrail_chain::devnet::{dev_demo_payer, dev_operator, dev_spare};
use openrail_store::Mode;
use openrail_store::agentic::{PullStatus, Scope};
use openrail_store::lease::chain_lease;
use openrail_store::outbox::WorkKind;
use openrail_store::payments::PaymentStatus;
use openrail_tests::{Harness, audit};
use reqwest::StatusCode;
use serde_json::{Value, json};

const SERVER: &str = env!("CARGO_BIN_EXE_openrail-under-test");

#[tokio::test]
async fn a_follower_takes_over_when_the_lease_holder_dies() -> anyhow::Result<()> {
    let Some(mut h) = Harness::start_processes_on_postgres(SERVER).await? else {
        return Ok(());
    };
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let spare = dev_spare().address();
    let nonce_at_start = h
        .settlement
        .get_transaction_count(dev_operator().address())
        .await?;
    let chain_id = h.settlement_deployment().chain_id;
    let (store, account_id) = (h.server().store.clone(), h.server().account_id.clone());

    let mut a = h.spawn_server(None).await?;
    a.leading(Duration::from_secs(30)).await?;
    // The harness talks to the process it started last: the follower.
    let mut b = h.spawn_server(None).await?;
    let lease = store.lease(&chain_lease(chain_id)).await?.expect("a lease");
    assert_eq!(lease.holder, a.node_id);

    // Through the follower: mandates and keys are queued, sent by the holder, and come back
    // active; bank accounts are created locally.
    let (_, wallet_key) = audit::mandate_and_key(&h, &payer.address().to_string()).await?;
    // Its transfers settle after 2 s: still in flight when the holder dies.
    let bank = audit::bank_account(&h, "1000.00", 2).await?;
    let (_, bank_key) = audit::mandate_and_key(&h, &bank).await?;

    let s = spare.to_string();
    let pull = |key: &str, amount: String| json!({"session_key_id": key, "amount": amount, "destination": s});
    let mut requests: Vec<(&str, &str, Value)> = Vec::new();
    for i in 0..5 {
        requests.push((
            "pull",
            "/v1/debit-pulls",
            pull(&wallet_key, format!("1.0{i}")),
        ));
    }
    for i in 0..3 {
        requests.push((
            "pull",
            "/v1/debit-pulls",
            pull(&bank_key, format!("2.0{i}")),
        ));
    }
    // Payments: from the bank account, and from the wallet — created first, their
    // payer's authorizations sent in the burst (authorization in flight at the takeover).
    let mut authorizations = Vec::new();
    for i in 0..2 {
        let created = h
            .post(
                "/v1/payments",
                json!({"amount": format!("3.1{i}"), "currency": "USD",
                       "source": {"type": "wallet", "id": payer.address().to_string()},
                       "destination": {"type": "wallet", "address": s}}),
            )
            .await?;
        assert_eq!(
            created.str("status"),
            "requires_authorization",
            "{}",
            created.body
        );
        authorizations.push((
            format!("/v1/payments/{}/authorize", created.str("id")),
            json!({ "signature": Harness::sign_authorization(&created.body, &payer)? }),
        ));
    }
    for i in 0..2 {
        requests.push((
            "payment",
            "/v1/payments",
            json!({"amount": format!("3.0{i}"), "currency": "USD",
                   "source": {"type": "bank_account", "id": bank.clone()},
                   "destination": {"type": "wallet", "address": s}}),
        ));
    }
    for (path, body) in &authorizations {
        requests.push(("payment", path, body.clone()));
    }
    let replies = audit::send_all(&h, &requests).await;
    let mut accepted = Vec::new();
    for r in replies {
        let r = r?;
        assert!(
            matches!(
                r.status,
                StatusCode::OK | StatusCode::ACCEPTED | StatusCode::CREATED
            ),
            "{} {}",
            r.status,
            r.body
        );
        accepted.push(r.str("id").to_string());
    }

    // Kill the holder while work is in flight; the follower takes the lease over and
    // finishes everything.
    let scope = Scope {
        account_id: &account_id,
        mode: Mode::Testnet,
    };
    let open_pulls = store
        .list_pulls(scope, None, 100, None)
        .await?
        .data
        .iter()
        .filter(|p| {
            p.status == PullStatus::Pending
                || (p.status == PullStatus::Authorized && p.session_key_id.as_str() == bank_key)
        })
        .count();
    let open_payments = store
        .list_payments(scope, 100, None)
        .await?
        .data
        .iter()
        .filter(|p| matches!(p.status, PaymentStatus::Pending | PaymentStatus::Processing))
        .count();
    eprintln!("in flight when the holder dies: {open_pulls} pulls, {open_payments} payments");
    assert!(open_pulls + open_payments > 0, "nothing was in flight");
    let killed = Instant::now();
    assert_eq!(a.kill().await?, Some(9));
    b.leading(Duration::from_secs(30)).await?;
    eprintln!(
        "takeover: {} ms after SIGKILL (lease 1500 ms, renewed every 500 ms)",
        killed.elapsed().as_millis()
    );
    let lease = store.lease(&chain_lease(chain_id)).await?.expect("a lease");
    assert_eq!(lease.holder, b.node_id);

    let all = audit::wait_all_final(&store, scope, &[&bank_key], &mut b).await?;
    for id in &accepted {
        assert!(
            all.pulls.contains_key(id) || all.payments.contains_key(id),
            "accepted {id} is in the database"
        );
    }
    let mut moved = 0u64;
    for (id, (status, amount, key)) in &all.pulls {
        let want = if *key == bank_key {
            PullStatus::Settled
        } else {
            PullStatus::Authorized
        };
        assert_eq!(*status, want, "pull {id}");
        assert_eq!(
            store.txs_for_intent(id).await?,
            1,
            "one transaction for {id}"
        );
        moved += amount;
    }
    for (id, p) in &all.payments {
        assert_eq!(
            p.status,
            PaymentStatus::Succeeded,
            "payment {id}: {:?}",
            p.failure_reason
        );
        moved += p.amount;
    }
    assert_eq!((all.pulls.len(), all.payments.len()), (8, 4));
    audit::assert_journal_consistent(&h, &store, nonce_at_start).await?;
    assert_eq!(
        h.balance("USD", spare).await?,
        U256::from(moved) * U256::from(10_000u64),
        "the destination holds what the database says it received"
    );

    // The new holder serves transaction-sending requests itself.
    let r = h
        .call(
            reqwest::Method::POST,
            "/v1/debit-pulls",
            Some(&pull(&wallet_key, "1.00".into())),
            None,
            &[],
        )
        .await?;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::CREATED, "authorized"),
        "{}",
        r.body
    );
    b.kill().await?;
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn a_follower_only_queues_work_and_the_holder_sends_it() -> anyhow::Result<()> {
    let mut h = Harness::start_processes(SERVER).await?;
    let store = h.server().store.clone();
    let chain_id = h.settlement_deployment().chain_id;
    // A holder that died a moment ago: its lease still runs for a minute, and nothing
    // answers at its address.
    assert!(
        store
            .acquire_lease(
                &chain_lease(chain_id),
                "ghost",
                "http://127.0.0.1:9",
                Duration::from_secs(60),
                openrail_store::now_ms()
            )
            .await?
    );
    let mut follower = h.spawn_server(None).await?;
    let nonce = h.operator_nonce().await?;
    // The follower accepts what needs a transaction: it writes the object and its work,
    // and answers 202 while nobody sends it.
    let bank = audit::bank_account(&h, "10.00", 0).await?;
    let r = h
        .post(
            "/v1/mandates",
            json!({"payer_account_id": bank, "max_amount": "10", "currency": "USD", "interval": "daily"}),
        )
        .await?;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    assert_eq!(r.str("status"), "pending");
    let id = r.str("id").to_string();
    assert!(store.work_open(&id, WorkKind::CreateMandate).await?);
    // A payment is driven by the same engine: the follower writes it and its work, and
    // neither debits the bank nor pays out.
    let r = h
        .post(
            "/v1/payments",
            json!({"amount": "2.50", "currency": "USD", "source": {"type": "bank_account", "id": bank},
                   "destination": {"type": "wallet", "address": "0x1111111111111111111111111111111111111111"}}),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::ACCEPTED, "pending"),
        "{}",
        r.body
    );
    let pay = r.str("id").to_string();
    assert!(store.work_open(&pay, WorkKind::Payment).await?);
    // It never sends: no transaction journaled, the operator's nonce untouched, the bank
    // never asked.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(store.txs_for_intent(&id).await?, 0);
    assert_eq!(store.txs_for_intent(&pay).await?, 0);
    assert!(
        store
            .bank_transfer_by_key(&format!("{pay}:debit"))
            .await?
            .is_none()
    );
    assert_eq!(h.operator_nonce().await?, nonce);
    assert_eq!(
        h.get(&format!("/v1/mandates/{id}")).await?.str("status"),
        "pending"
    );

    // Once the lease is free, a holder (here the follower, promoted) sends the queued work:
    // one transaction, and the mandate is active.
    store.release_lease(&chain_lease(chain_id), "ghost").await?;
    follower.leading(Duration::from_secs(30)).await?;
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        let m = h.get(&format!("/v1/mandates/{id}")).await?;
        if m.str("status") != "pending" || Instant::now() > deadline {
            break m.str("status").to_string();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(status, "active");
    assert_eq!(store.txs_for_intent(&id).await?, 1);
    assert!(!store.work_open(&id, WorkKind::CreateMandate).await?);
    // The payment too: the bank debited once, one payout, and its work closed.
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        let p = h.get(&format!("/v1/payments/{pay}")).await?;
        if p.str("status") == "succeeded" || Instant::now() > deadline {
            break p.str("status").to_string();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(status, "succeeded");
    assert_eq!(store.txs_for_intent(&pay).await?, 1);
    assert!(!store.work_open(&pay, WorkKind::Payment).await?);
    follower.kill().await?;
    h.stop().await;
    Ok(())
}
