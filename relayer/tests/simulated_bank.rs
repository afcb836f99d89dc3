//! The simulated bank through the store, on SQLite and, in CI, PostgreSQL.

use openrail_domain::BankAccountId;
use openrail_relayer::bank::{BankRail, SimulatedBank};
use openrail_store::bank::{BankAccount, Behavior, TransferStatus};
use openrail_store::testing::{fresh_postgres, fresh_sqlite};
use openrail_store::{Currency, Mode, Store, now_ms};

async fn account(store: &Store, owner: &str, behavior: Behavior, balance: i64) -> BankAccount {
    let dev = store
        .accounts()
        .create("Bank tests", now_ms())
        .await
        .unwrap();
    let a = BankAccount {
        id: BankAccountId::new(),
        account_id: dev.id,
        mode: Mode::Testnet,
        owner_name: owner.into(),
        currency: Currency::Usd,
        balance,
        behavior,
        delay_ms: behavior.default_delay_ms(),
        created_at: now_ms(),
        held: 0,
    };
    store.bank().create_account(&a).await.unwrap();
    a
}

async fn balance(store: &Store, a: &BankAccount) -> i64 {
    let scope = openrail_store::agentic::Scope {
        account_id: &a.account_id,
        mode: a.mode,
    };
    store.bank().account(scope, &a.id).await.unwrap().balance
}

async fn scenario(store: Store) {
    let bank = SimulatedBank::new(store.clone());
    let ok = account(&store, "Ada", Behavior::Settles, 10_000).await;
    let poor = account(&store, "Bob", Behavior::Settles, 100).await;
    let closed = account(&store, "Cy", Behavior::Closed, 10_000).await;
    let late = account(&store, "Di", Behavior::FailsLate, 10_000).await;

    let t1 = bank.debit(&ok.id, 2_500, "k1").await.unwrap();
    assert_eq!(t1.status, TransferStatus::Pending);
    // The same idempotency key never makes a second transfer.
    assert_eq!(bank.debit(&ok.id, 2_500, "k1").await.unwrap().id, t1.id);
    // More than the available balance: refused at once, nothing held.
    let refused = bank.debit(&poor.id, 500, "k2").await.unwrap();
    assert_eq!(
        (refused.status, refused.failure_reason.map(|r| r.as_str())),
        (TransferStatus::Failed, Some("insufficient_funds"))
    );
    bank.credit(&closed.id, 500, "k3").await.unwrap();
    bank.debit(&late.id, 700, "k4").await.unwrap();
    assert!(
        bank.debit(&BankAccountId::parse("ba_missing").unwrap(), 1, "k5")
            .await
            .is_err()
    );

    // Nothing is due before the delay.
    assert_eq!(bank.process_due(now_ms()).await.unwrap(), 0);
    let t = now_ms() + 1_000;
    assert_eq!(bank.process_due(t).await.unwrap(), 2);
    let status = |id: &BankAccountId| {
        let store = store.clone();
        let id = id.clone();
        async move { store.bank().transfers(&id).await.unwrap()[0].clone() }
    };
    assert_eq!(
        (status(&ok.id).await.status, balance(&store, &ok).await),
        (TransferStatus::Settled, 7_500)
    );
    let p = status(&poor.id).await;
    assert_eq!(
        (p.status, p.failure_reason.map(|r| r.as_str())),
        (TransferStatus::Failed, Some("insufficient_funds"))
    );
    assert_eq!(balance(&store, &poor).await, 100);
    assert_eq!(
        status(&closed.id).await.failure_reason.map(|r| r.as_str()),
        Some("account_closed")
    );
    // A `fails_late` debit (delay 5 s) looks settled first…
    assert_eq!(status(&late.id).await.status, TransferStatus::Pending);
    assert_eq!(bank.process_due(t + 5_000).await.unwrap(), 1);
    assert_eq!(
        (status(&late.id).await.status, balance(&store, &late).await),
        (TransferStatus::Settled, 9_300)
    );
    // …then is returned one delay later, and the money comes back.
    assert_eq!(bank.process_due(t + 10_000).await.unwrap(), 1);
    let l = status(&late.id).await;
    assert_eq!(
        (l.status, l.failure_reason.map(|r| r.as_str())),
        (TransferStatus::Failed, Some("returned"))
    );
    assert_eq!(balance(&store, &late).await, 10_000);
    // Final states stay final.
    assert_eq!(bank.process_due(t + 100_000).await.unwrap(), 0);
}

#[tokio::test]
async fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    scenario(fresh_sqlite(dir.path()).await.unwrap()).await;
}

#[tokio::test]
async fn postgres() {
    if let Some(store) = fresh_postgres().await.unwrap() {
        scenario(store).await;
    }
}

/// Ten concurrent debits of 10.00 on an account holding 10.00: exactly one holds the money,
/// the others fail `insufficient_funds` at once, and the balance ends at zero, never below.
async fn concurrent_debits(store: Store) {
    let bank = SimulatedBank::new(store.clone());
    let a = account(&store, "Eve", Behavior::Settles, 1_000).await;
    let mut set = tokio::task::JoinSet::new();
    for i in 0..10 {
        let (bank, id) = (bank.clone(), a.id.clone());
        set.spawn(async move { bank.debit(&id, 1_000, &format!("c{i}")).await.unwrap() });
    }
    let mut pending = 0;
    let mut refused = 0;
    while let Some(t) = set.join_next().await {
        let t = t.unwrap();
        match (t.status, t.failure_reason.map(|r| r.as_str())) {
            (TransferStatus::Pending, None) => pending += 1,
            (TransferStatus::Failed, Some("insufficient_funds")) => refused += 1,
            other => panic!("unexpected transfer {other:?}"),
        }
    }
    assert_eq!((pending, refused), (1, 9));
    let scope = openrail_store::agentic::Scope {
        account_id: &a.account_id,
        mode: a.mode,
    };
    let held = store.bank().account(scope, &a.id).await.unwrap();
    assert_eq!((held.balance, held.held), (1_000, 1_000));
    bank.process_due(now_ms() + 1_000).await.unwrap();
    let after = store.bank().account(scope, &a.id).await.unwrap();
    assert_eq!((after.balance, after.held), (0, 0));
}

#[tokio::test]
async fn concurrent_debits_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    concurrent_debits(fresh_sqlite(dir.path()).await.unwrap()).await;
}

#[tokio::test]
async fn concurrent_debits_postgres() {
    match fresh_postgres().await.unwrap() {
        Some(store) => concurrent_debits(store).await,
        None => eprintln!("SKIPPED: concurrent_debits_postgres (no PostgreSQL at 127.0.0.1:5432)"),
    }
}
