//! Crash safety: the server runs as a child process (`openrail serve`); while pulls and
//! payments are in flight it stops at a named crash point and the test kills it with
//! `SIGKILL`, then starts a new process on the same database and proves that
//! - every request the dead process accepted reaches a final, successful status,
//! - no bank account is debited twice for a pull or a payment,
//! - no intent has two transactions, no journaled transaction is left without a fate, and
//!   the operator's nonce counts exactly the journaled transactions (none jammed, none
//!   unjournaled),
//! - the balances the database implies (its pulls, payments and simulated bank) equal the
//!   balances on chain.

use std::collections::BTreeMap;
use std::time::Duration;

use alloy::primitives::U256;
use alloy::providers::Provider;
use openrail_chain::devnet::{dev_demo_payer, dev_operator, dev_spare, dev_treasury};
use openrail_store::agentic::{KeyStatus, MandateStatus, PullStatus, Scope};
use openrail_store::bank::Direction;
use openrail_store::crash;
use openrail_store::payments::{PartyKind, PaymentStatus};
use openrail_store::{Mode, Store};
use openrail_tests::{Harness, audit, intent_of};
use serde_json::{Value, json};

const SERVER: &str = env!("CARGO_BIN_EXE_openrail-under-test");
/// Longest wait for a process to take the chain's lease.
const LEAD: Duration = Duration::from_secs(30);

#[tokio::test]
async fn sigkill_after_nonce_allocation() -> anyhow::Result<()> {
    crash_and_recover(crash::AFTER_NONCE_ALLOCATION).await
}

#[tokio::test]
async fn sigkill_after_broadcast() -> anyhow::Result<()> {
    // The second broadcast: a batch of pulls or a payment leg is then in flight too.
    crash_and_recover(&format!("{}:2", crash::AFTER_BROADCAST)).await
}

#[tokio::test]
async fn sigkill_after_bank_call() -> anyhow::Result<()> {
    crash_and_recover(crash::AFTER_BANK_CALL).await
}

#[tokio::test]
async fn sigkill_before_cursor_commit() -> anyhow::Result<()> {
    crash_and_recover(crash::BEFORE_CURSOR_COMMIT).await
}

/// The objects the workload created, by kind.
#[derive(Debug, Default)]
struct Accepted {
    /// Pulls of the wallet-funded mandate.
    wallet_pulls: Vec<String>,
    /// Pulls of the bank-funded mandate.
    bank_pulls: Vec<String>,
    /// Payments.
    payments: Vec<String>,
    /// Mandates and session keys.
    setup: Vec<String>,
}

async fn crash_and_recover(point: &str) -> anyhow::Result<()> {
    let mut h = Harness::start_processes(SERVER).await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let spare = dev_spare().address();
    let treasury = dev_treasury().address();
    let operator = dev_operator().address();
    let nonce_at_start = h.settlement.get_transaction_count(operator).await?;

    // Set-up on a first process: two mandates (a wallet payer, a bank payer), a key each,
    // a destination bank account.
    let mut first = h.spawn_server(None).await?;
    first.leading(LEAD).await?;
    let payer_bank = audit::bank_account(&h, "1000.00", 0).await?;
    let dest_bank = audit::bank_account(&h, "0.00", 0).await?;
    let (wallet_mandate, wallet_key) =
        audit::mandate_and_key(&h, &payer.address().to_string()).await?;
    let (_, bank_key) = audit::mandate_and_key(&h, &payer_bank).await?;
    // What waits for the payer's signature: a mandate and the four payments from its
    // wallet. Their authorizations are in the burst, so authorization is in flight at the
    // crash.
    let w = payer.address().to_string();
    let s = spare.to_string();
    let pay = |amount: &str, src: (&str, &str), dst: (&str, &str)| {
        json!({"amount": amount, "currency": "USD", "source": {"type": src.0, "id": src.1},
               "destination": {"type": dst.0, "address": dst.1}})
    };
    let mut to_authorize: Vec<(&str, String, String)> = Vec::new(); // (kind, path, signature)
    let m = h
        .post(
            "/v1/mandates",
            json!({"payer_account_id": w, "max_amount": "50", "currency": "USD", "interval": "weekly"}),
        )
        .await?;
    assert_eq!(m.str("status"), "requires_authorization", "{}", m.body);
    to_authorize.push((
        "mandate",
        format!("/v1/mandates/{}/authorize", m.str("id")),
        Harness::sign_authorization(&m.body, &payer)?,
    ));
    for i in 0..2 {
        for body in [
            pay(&format!("3.0{i}"), ("wallet", &w), ("wallet", &s)),
            pay(
                &format!("5.0{i}"),
                ("wallet", &w),
                ("bank_account", &dest_bank),
            ),
        ] {
            let p = h.post("/v1/payments", body).await?;
            assert_eq!(p.str("status"), "requires_authorization", "{}", p.body);
            to_authorize.push((
                "payment",
                format!("/v1/payments/{}/authorize", p.str("id")),
                Harness::sign_authorization(&p.body, &payer)?,
            ));
        }
    }
    first.kill().await?;

    let before = audit::Balances::read(&h, &[payer.address(), spare, treasury]).await?;

    // The workload on a second process, which stops at `point`; the test kills it there.
    let mut doomed = h.spawn_server(Some(point)).await?;
    // It takes the chain over once the first process's lease expires.
    doomed.leading(LEAD).await?;
    let pull = |key: &str, amount: &str| json!({"session_key_id": key, "amount": amount, "destination": s.clone()});
    let mut requests: Vec<(&str, &str, Value)> = Vec::new();
    for i in 0..4 {
        requests.push((
            "wallet_pull",
            "/v1/debit-pulls",
            pull(&wallet_key, &format!("1.0{i}")),
        ));
    }
    for i in 0..3 {
        requests.push((
            "bank_pull",
            "/v1/debit-pulls",
            pull(&bank_key, &format!("2.0{i}")),
        ));
    }
    // The payer's authorizations (a mandate, four wallet payments) and a session key in
    // flight too.
    for (kind, path, signature) in &to_authorize {
        requests.push((kind, path, json!({ "signature": signature })));
    }
    requests.push((
        "key",
        "/v1/session-keys",
        json!({"mandate_id": wallet_mandate, "expires_in": 3600, "max_amount": "5"}),
    ));
    for i in 0..2 {
        let a = format!("4.0{i}");
        requests.push((
            "payment",
            "/v1/payments",
            pay(&a, ("bank_account", &payer_bank), ("wallet", &s)),
        ));
        let a = format!("6.0{i}");
        requests.push((
            "payment",
            "/v1/payments",
            pay(
                &a,
                ("bank_account", &payer_bank),
                ("bank_account", &dest_bank),
            ),
        ));
    }
    let replies = audit::send_all(&h, &requests).await;
    let reached = doomed.crash_point_reached(Duration::from_secs(60)).await?;
    assert_eq!(Some(reached.as_str()), point.split(':').next());
    let sig = doomed.kill().await?;
    assert_eq!(
        sig,
        Some(9),
        "killed with SIGKILL; log: {}",
        doomed.log_tail()
    );

    // What the dead process answered: every 202 names an object it accepted. A request
    // whose connection died got no answer; whatever it left is checked below with the rest.
    let mut accepted = Accepted::default();
    let mut unanswered = 0;
    for ((kind, _, _), reply) in requests.iter().zip(&replies) {
        match reply {
            Ok(r) if r.status.is_success() => {
                let id = r.str("id").to_string();
                match *kind {
                    "wallet_pull" => accepted.wallet_pulls.push(id),
                    "bank_pull" => accepted.bank_pulls.push(id),
                    "mandate" | "key" => accepted.setup.push(id),
                    _ => accepted.payments.push(id),
                }
            }
            Ok(r) => panic!("{kind} refused before the crash: {} {}", r.status, r.body),
            Err(_) => unanswered += 1,
        }
    }
    eprintln!(
        "{point}: {} requests accepted, {unanswered} unanswered before SIGKILL",
        replies.len() - unanswered
    );

    // A new process on the same database finishes everything.
    let mut survivor = h.spawn_server(None).await?;
    let server = h.server();
    let (store, account_id) = (server.store.clone(), server.account_id.clone());
    let scope = Scope {
        account_id: &account_id,
        mode: Mode::Testnet,
    };
    // Clients retry with the same Idempotency-Key: an answered request replays its answer;
    // an unanswered one gets the object the dead process created, or creates it now if it
    // had created nothing. Either way, one object per request.
    let mut ids = std::collections::BTreeSet::new();
    for (i, ((kind, path, body), first)) in requests.iter().zip(&replies).enumerate() {
        let r = audit::retry(&h, i, path, body).await?;
        assert!(
            r.status.is_success(),
            "{kind} retried: {} {}",
            r.status,
            r.body
        );
        if let Ok(first) = first {
            assert_eq!(r.str("id"), first.str("id"), "a retry replays the answer");
        }
        assert!(
            ids.insert(r.str("id").to_string()),
            "one object per request"
        );
    }
    let all = audit::wait_all_final(&store, scope, &[&bank_key], &mut survivor).await?;
    // Exactly the requests' objects exist: 4 + 3 pulls, 8 payments, and besides the set-up
    // (2 mandates, 2 keys) one mandate and one key.
    assert_eq!(
        (
            all.pulls.len(),
            all.payments.len(),
            all.mandates.len(),
            all.keys.len()
        ),
        (7, 8, 3, 3)
    );
    for id in &ids {
        assert!(
            [
                &all.pulls.contains_key(id),
                &all.payments.contains_key(id),
                &all.mandates.contains_key(id),
                &all.keys.contains_key(id)
            ]
            .iter()
            .any(|b| **b),
            "{id} is in the database"
        );
    }
    for id in accepted.wallet_pulls.iter().chain(&accepted.bank_pulls) {
        assert!(
            all.pulls.contains_key(id),
            "accepted pull {id} is in the database"
        );
    }
    for id in &accepted.payments {
        assert!(
            all.payments.contains_key(id),
            "accepted payment {id} is in the database"
        );
    }
    for id in &accepted.setup {
        assert!(
            all.mandates.contains_key(id) || all.keys.contains_key(id),
            "accepted {id} is in the database"
        );
    }
    // Mandates and keys: all on chain and active (2 + 1 mandates, 2 + 1 keys when both
    // requests were answered; an unanswered one may have left nothing).
    for (id, status) in &all.mandates {
        assert_eq!(*status, MandateStatus::Active, "mandate {id}");
        assert_eq!(
            store.journal().count_for_intent(&intent_of(id)).await?,
            1,
            "one transaction for {id}"
        );
    }
    for (id, status) in &all.keys {
        assert_eq!(*status, KeyStatus::Active, "session key {id}");
        assert_eq!(
            store.journal().count_for_intent(&intent_of(id)).await?,
            1,
            "one transaction for {id}"
        );
    }

    // Every object in the database (accepted, or left by an unanswered request) succeeded.
    let mut wallet_pulled = 0u64;
    let mut bank_pulled = 0u64;
    let mut bank_pulls = 0usize;
    for (id, (status, amount, mandate_key)) in &all.pulls {
        if *mandate_key == bank_key {
            assert_eq!(*status, PullStatus::Settled, "bank-funded pull {id}");
            bank_pulled += amount;
            bank_pulls += 1;
        } else {
            assert_eq!(*status, PullStatus::Authorized, "wallet pull {id}");
            wallet_pulled += amount;
        }
        assert_eq!(
            store.journal().count_for_intent(&intent_of(id)).await?,
            1,
            "one transaction for pull {id}"
        );
    }
    let mut flows = BTreeMap::<(&str, &str), (u64, usize)>::new();
    for (id, p) in &all.payments {
        assert_eq!(
            p.status,
            PaymentStatus::Succeeded,
            "payment {id}: {:?}",
            p.failure_reason
        );
        let e = flows
            .entry((leg(p.source_type), leg(p.destination_type)))
            .or_default();
        e.0 += p.amount;
        e.1 += 1;
        for intent in [id.clone(), format!("{id}:source"), format!("{id}:refund")] {
            assert!(
                store
                    .journal()
                    .count_for_intent(&intent_of(&intent))
                    .await?
                    <= 1,
                "one transaction for {intent}"
            );
        }
    }
    let flow = |s, d| flows.get(&(s, d)).copied().unwrap_or_default();
    let (ww, bw, wb, bb) = (
        flow("wallet", "wallet"),
        flow("bank", "wallet"),
        flow("wallet", "bank"),
        flow("bank", "bank"),
    );

    audit::assert_journal_consistent(&h, &store, nonce_at_start).await?;

    // Each state change produced exactly one event across the SIGKILL: none lost, none
    // twice.
    use openrail_store::events::EventType as E;
    for (id, (_, _, key)) in &all.pulls {
        let trail: &[E] = if *key == bank_key {
            &[
                E::DebitPullCreated,
                E::DebitPullAuthorized,
                E::DebitPullSettled,
            ]
        } else {
            &[E::DebitPullCreated, E::DebitPullAuthorized]
        };
        audit::assert_events(&store, id, trail).await?;
    }
    for id in all.mandates.keys() {
        let bank_funded = store
            .mandates()
            .get(
                scope,
                &openrail_domain::MandateId::parse(id).expect("a mandate id"),
            )
            .await?
            .payer_account_id
            .starts_with("ba_");
        let trail: &[E] = if bank_funded {
            &[E::MandateCreated, E::MandateActivated]
        } else {
            &[
                E::MandateCreated,
                E::MandateRequiresAuthorization,
                E::MandateAuthorized,
                E::MandateActivated,
            ]
        };
        audit::assert_events(&store, id, trail).await?;
    }
    for id in all.keys.keys() {
        audit::assert_events(&store, id, &[E::SessionKeyCreated, E::SessionKeyActivated]).await?;
    }
    for (id, p) in &all.payments {
        let trail: &[E] = if p.source_type == PartyKind::Wallet {
            &[
                E::PaymentCreated,
                E::PaymentRequiresAuthorization,
                E::PaymentAuthorized,
                E::PaymentProcessing,
                E::PaymentSucceeded,
            ]
        } else {
            &[E::PaymentCreated, E::PaymentProcessing, E::PaymentSucceeded]
        };
        audit::assert_events(&store, id, trail).await?;
    }
    for bank in [&payer_bank, &dest_bank] {
        let bank = openrail_domain::BankAccountId::parse(bank).expect("a bank account id");
        for t in store.bank().transfers(&bank).await? {
            audit::assert_events(
                &store,
                t.id.as_str(),
                &[E::BankTransferCreated, E::BankTransferSettled],
            )
            .await?;
        }
    }

    // Bank accounts: one debit per bank-funded pull and per bank-sourced payment, one
    // credit per payment to a bank; balances to match.
    let debits = count(&store, &payer_bank, Direction::Debit).await?;
    assert_eq!(
        debits,
        bank_pulls + bw.1 + bb.1,
        "one bank debit per pull and payment"
    );
    assert_eq!(
        count(&store, &dest_bank, Direction::Credit).await?,
        wb.1 + bb.1
    );
    let balance = |id: String| {
        let store = store.clone();
        let account_id = account_id.clone();
        async move {
            let scope = Scope {
                account_id: &account_id,
                mode: Mode::Testnet,
            };
            let id = openrail_domain::BankAccountId::parse(&id).expect("a bank account id");
            anyhow::Ok(store.bank().account(scope, &id).await?.balance)
        }
    };
    let spent = (bank_pulled + bw.0 + bb.0) as i64;
    assert_eq!(balance(payer_bank.clone()).await?, 100_000 - spent);
    assert_eq!(balance(dest_bank.clone()).await?, (wb.0 + bb.0) as i64);

    // Chain balances: what the database says moved, moved.
    let after = audit::Balances::read(&h, &[payer.address(), spare, treasury]).await?;
    let cents = |minor: u64| U256::from(minor) * U256::from(10_000u64);
    assert_eq!(
        after.of(spare),
        before.of(spare) + cents(wallet_pulled + bank_pulled + ww.0 + bw.0),
        "destination wallet"
    );
    assert_eq!(
        after.of(payer.address()),
        before.of(payer.address()) - cents(wallet_pulled + ww.0 + wb.0),
        "payer wallet"
    );
    assert_eq!(
        after.of(treasury) + cents(bank_pulled + bw.0),
        before.of(treasury) + cents(wb.0),
        "treasury"
    );
    survivor.kill().await?;
    h.stop().await;
    Ok(())
}

/// `bank_account` → `bank`, `wallet` → `wallet`.
fn leg(kind: PartyKind) -> &'static str {
    match kind {
        PartyKind::BankAccount => "bank",
        PartyKind::Wallet => "wallet",
    }
}

async fn count(store: &Store, bank_account: &str, direction: Direction) -> anyhow::Result<usize> {
    Ok(store
        .bank()
        .transfers(&openrail_domain::BankAccountId::parse(bank_account).expect("an id"))
        .await?
        .iter()
        .filter(|t| t.direction == direction)
        .count())
}
