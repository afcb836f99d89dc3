//! The simulated bank through the store, on SQLite and, in CI, PostgreSQL.

use openrail_relayer::bank::{BankRail, SimulatedBank};
use openrail_store::bank::{BankAccount, Behavior, TransferStatus};
use openrail_store::ids::new_id;
use openrail_store::testing::{fresh_postgres, fresh_sqlite};
use openrail_store::{Currency, Mode, Store, now_ms};

async fn account(store: &Store, owner: &str, behavior: Behavior, balance: i64) -> BankAccount {
    let dev = store.create_account("Bank tests").await.unwrap();
    let a = BankAccount {
        id: new_id("ba_"),
        account_id: dev.id,
        mode: Mode::Testnet,
        owner_name: owner.into(),
        currency: Currency::Usd,
        balance,
        behavior,
        delay_ms: behavior.default_delay_ms(),
        created_at: now_ms(),
    };
    store.create_bank_account(&a).await.unwrap();
    a
}

async fn balance(store: &Store, a: &BankAccount) -> i64 {
    let scope = openrail_store::agentic::Scope {
        account_id: &a.account_id,
        mode: a.mode,
    };
    store.bank_account(scope, &a.id).await.unwrap().balance
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
    bank.debit(&poor.id, 500, "k2").await.unwrap();
    bank.credit(&closed.id, 500, "k3").await.unwrap();
    bank.debit(&late.id, 700, "k4").await.unwrap();
    assert!(bank.debit("ba_missing", 1, "k5").await.is_err());

    // Nothing is due before the delay.
    assert_eq!(bank.process_due(now_ms()).await.unwrap(), 0);
    let t = now_ms() + 1_000;
    assert_eq!(bank.process_due(t).await.unwrap(), 3);
    let status = |id: &str| {
        let store = store.clone();
        let id = id.to_string();
        async move { store.bank_transfers(&id).await.unwrap()[0].clone() }
    };
    assert_eq!(
        (status(&ok.id).await.status, balance(&store, &ok).await),
        (TransferStatus::Settled, 7_500)
    );
    let p = status(&poor.id).await;
    assert_eq!(
        (p.status, p.failure_reason.as_deref()),
        (TransferStatus::Failed, Some("insufficient_funds"))
    );
    assert_eq!(balance(&store, &poor).await, 100);
    assert_eq!(
        status(&closed.id).await.failure_reason.as_deref(),
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
        (l.status, l.failure_reason.as_deref()),
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
