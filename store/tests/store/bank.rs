//! The simulated bank's transfers on SQLite and, in CI, PostgreSQL: started once per
//! idempotency key, due after their account's delay, moved only along `TransferStatus`'s
//! lifecycle (settled from pending; failed from pending, or from settled: a debit returned
//! late), one event per change, and a debit holding its amount so concurrent debits never
//! spend one balance twice.

use openrail_domain::{AccountId, BankAccountId, FailureReason};
use openrail_store::agentic::Scope;
use openrail_store::bank::{BankAccount, BankTransfer, Behavior, Direction, TransferStatus};
use openrail_store::events::{BankTransferSnapshot, EventFilter, EventType, Snapshot};
use openrail_store::testing::{fresh_postgres, fresh_sqlite};
use openrail_store::{Currency, Mode, Store, StoreError};

const NOW: i64 = 1_700_000_000_000;
const DELAY: i64 = 5_000;

/// A fresh simulated account of `account` holding `balance` (nothing held).
async fn bank_account(
    store: &Store,
    account: &AccountId,
    behavior: Behavior,
    balance: i64,
) -> BankAccount {
    let a = BankAccount {
        id: BankAccountId::new(),
        account_id: account.clone(),
        mode: Mode::Testnet,
        owner_name: "Ada".into(),
        currency: Currency::Usd,
        balance,
        held: 0,
        behavior,
        delay_ms: DELAY,
        created_at: NOW,
    };
    store.bank().create_account(&a).await.unwrap();
    a
}

/// `(balance, held)` of a simulated account, as stored.
async fn money(store: &Store, a: &BankAccount) -> (i64, i64) {
    let scope = Scope {
        account_id: &a.account_id,
        mode: a.mode,
    };
    let a = store.bank().account(scope, &a.id).await.unwrap();
    (a.balance, a.held)
}

/// The transfer as stored, found by its key.
async fn by_key(store: &Store, key: &str) -> BankTransfer {
    store.bank().transfer_by_key(key).await.unwrap().unwrap()
}

async fn types(store: &Store, t: &BankTransfer) -> Vec<EventType> {
    store.events().types_of(t.id.as_str()).await.unwrap()
}

/// A debit on a `fails_late` account: started once per key, due after the delay, settled,
/// then returned; every refused or stale move writes nothing.
async fn lifecycle(store: Store) {
    let account = store.accounts().create("Bank", NOW).await.unwrap();
    let ba = bank_account(&store, &account.id, Behavior::FailsLate, 1_000).await;

    // Nothing under an unknown key; no transfer on an unknown account.
    assert_eq!(store.bank().transfer_by_key("k1").await.unwrap(), None);
    let unknown = store
        .bank()
        .start_transfer(&BankAccountId::new(), Direction::Debit, 1, "k0", NOW)
        .await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");
    assert_eq!(store.bank().transfer_by_key("k0").await.unwrap(), None);

    let t = store
        .bank()
        .start_transfer(&ba.id, Direction::Debit, 300, "k1", NOW)
        .await
        .unwrap();
    assert_eq!(
        (
            &t.bank_account_id,
            t.direction,
            t.amount,
            t.status,
            t.failure_reason
        ),
        (&ba.id, Direction::Debit, 300, TransferStatus::Pending, None)
    );
    assert_eq!(
        (t.due_at, t.created_at, t.updated_at),
        (NOW + DELAY, NOW, NOW)
    );
    assert_eq!(money(&store, &ba).await, (1_000, 300), "the debit holds");
    assert_eq!(types(&store, &t).await, [EventType::BankTransferCreated]);

    // Idempotent: the same key is the same transfer, whatever else the call asks; no
    // second hold, no second event.
    assert_eq!(
        store.bank().transfer_by_key("k1").await.unwrap(),
        Some(t.clone())
    );
    for (direction, amount, at) in [
        (Direction::Debit, 300, NOW + 10),
        (Direction::Credit, 999, NOW + 20),
    ] {
        let again = store
            .bank()
            .start_transfer(&ba.id, direction, amount, "k1", at)
            .await
            .unwrap();
        assert_eq!(again, t);
    }
    assert_eq!(money(&store, &ba).await, (1_000, 300));
    assert_eq!(types(&store, &t).await, [EventType::BankTransferCreated]);
    let listed: Vec<_> = store.bank().transfers(&ba.id).await.unwrap();
    assert_eq!(listed, std::slice::from_ref(&t));

    // Due at its time, not a millisecond before; listed with its account.
    assert!(
        store
            .bank()
            .due_transfers(NOW + DELAY - 1, 100)
            .await
            .unwrap()
            .is_empty()
    );
    let due = store.bank().due_transfers(NOW + DELAY, 100).await.unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].0, t);
    assert_eq!(
        (
            &due[0].1.id,
            due[0].1.behavior,
            due[0].1.balance,
            due[0].1.held
        ),
        (&ba.id, Behavior::FailsLate, 1_000, 300)
    );

    // Pending → settled (looks settled; returned one delay later).
    let at = NOW + DELAY;
    assert!(
        store
            .bank()
            .apply_transition(
                &t,
                TransferStatus::Settled,
                None,
                (-300, -300),
                at + DELAY,
                at
            )
            .await
            .unwrap()
    );
    let settled = by_key(&store, "k1").await;
    assert_eq!(
        (settled.status, settled.due_at, settled.updated_at),
        (TransferStatus::Settled, at + DELAY, at)
    );
    assert_eq!(settled.created_at, NOW);
    assert_eq!(money(&store, &ba).await, (700, 0));
    assert_eq!(
        types(&store, &t).await,
        [
            EventType::BankTransferCreated,
            EventType::BankTransferSettled
        ]
    );

    // Settled again from the copy read while pending: another worker moved it first
    // (false), nothing written — no second event, no second balance change.
    let stale = store
        .bank()
        .apply_transition(
            &t,
            TransferStatus::Settled,
            None,
            (-300, -300),
            at + DELAY,
            at + 1,
        )
        .await
        .unwrap();
    assert!(!stale, "a stale pending copy moved again");
    assert_eq!(by_key(&store, "k1").await, settled);
    assert_eq!(money(&store, &ba).await, (700, 0));
    assert_eq!(
        types(&store, &t).await,
        [
            EventType::BankTransferCreated,
            EventType::BankTransferSettled
        ]
    );

    // Back to pending is outside the lifecycle: refused, nothing written.
    let back = store
        .bank()
        .apply_transition(
            &settled,
            TransferStatus::Pending,
            None,
            (300, 300),
            at + 2 * DELAY,
            at + 2,
        )
        .await;
    assert!(matches!(back, Err(StoreError::Transition(_))), "{back:?}");
    assert_eq!(by_key(&store, "k1").await, settled);
    assert_eq!(money(&store, &ba).await, (700, 0));
    assert_eq!(
        types(&store, &t).await,
        [
            EventType::BankTransferCreated,
            EventType::BankTransferSettled
        ]
    );

    // The late return is due one delay after it settled.
    assert!(
        store
            .bank()
            .due_transfers(at + DELAY - 1, 100)
            .await
            .unwrap()
            .is_empty()
    );
    let due = store.bank().due_transfers(at + DELAY, 100).await.unwrap();
    assert_eq!(
        due.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>(),
        std::slice::from_ref(&settled)
    );

    // Settled → failed: returned late.
    let late = at + DELAY;
    assert!(
        store
            .bank()
            .apply_transition(
                &settled,
                TransferStatus::Failed,
                Some(FailureReason::Returned),
                (300, 0),
                i64::MAX,
                late
            )
            .await
            .unwrap()
    );
    let failed = by_key(&store, "k1").await;
    assert_eq!(
        (
            failed.status,
            failed.failure_reason,
            failed.due_at,
            failed.updated_at
        ),
        (
            TransferStatus::Failed,
            Some(FailureReason::Returned),
            i64::MAX,
            late
        )
    );
    assert_eq!(money(&store, &ba).await, (1_000, 0));
    assert_eq!(
        types(&store, &t).await,
        [
            EventType::BankTransferCreated,
            EventType::BankTransferSettled,
            EventType::BankTransferFailed
        ]
    );

    // Final: never due again, nothing leaves it.
    assert!(
        store
            .bank()
            .due_transfers(i64::MAX - 1, 100)
            .await
            .unwrap()
            .is_empty()
    );
    for to in [TransferStatus::Pending, TransferStatus::Settled] {
        let r = store
            .bank()
            .apply_transition(&failed, to, None, (-300, 0), i64::MAX, late + 1)
            .await;
        assert!(matches!(r, Err(StoreError::Transition(_))), "{to:?}: {r:?}");
    }
    assert_eq!(by_key(&store, "k1").await, failed);
    assert_eq!(money(&store, &ba).await, (1_000, 0));
    assert_eq!(
        types(&store, &t).await,
        [
            EventType::BankTransferCreated,
            EventType::BankTransferSettled,
            EventType::BankTransferFailed
        ]
    );

    // Each event shows the transfer as that change left it.
    let scope = Scope {
        account_id: &account.id,
        mode: Mode::Testnet,
    };
    let filter = EventFilter {
        object_id: Some(t.id.as_str()),
        ..Default::default()
    };
    let page = store.events().list(scope, filter, 100, None).await.unwrap();
    let seen: Vec<_> = page
        .data
        .iter()
        .rev()
        .map(|e| match &e.snapshot {
            Snapshot::BankTransfer(BankTransferSnapshot {
                bank_transfer,
                currency,
            }) => (e.kind, bank_transfer.status, *currency, e.created_at),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                EventType::BankTransferCreated,
                TransferStatus::Pending,
                Currency::Usd,
                NOW
            ),
            (
                EventType::BankTransferSettled,
                TransferStatus::Settled,
                Currency::Usd,
                at
            ),
            (
                EventType::BankTransferFailed,
                TransferStatus::Failed,
                Currency::Usd,
                late
            ),
        ]
    );
}

/// Pending → failed, a credit settling (no hold), and due transfers oldest first within
/// the limit.
async fn failures_credits_and_order(store: Store) {
    let account = store.accounts().create("Bank", NOW).await.unwrap();
    let ba = bank_account(&store, &account.id, Behavior::Closed, 500).await;
    let debit = store
        .bank()
        .start_transfer(&ba.id, Direction::Debit, 200, "d", NOW)
        .await
        .unwrap();
    let credit = store
        .bank()
        .start_transfer(&ba.id, Direction::Credit, 50, "c", NOW + 1)
        .await
        .unwrap();
    assert_eq!(
        money(&store, &ba).await,
        (500, 200),
        "a credit holds nothing"
    );
    assert_eq!(credit.due_at, NOW + 1 + DELAY);

    // Oldest due first; the limit keeps the first.
    let due = store
        .bank()
        .due_transfers(NOW + 2 * DELAY, 100)
        .await
        .unwrap();
    let ids: Vec<_> = due.iter().map(|(t, _)| t.id.clone()).collect();
    assert_eq!(ids, [debit.id.clone(), credit.id.clone()]);
    let first = store
        .bank()
        .due_transfers(NOW + 2 * DELAY, 1)
        .await
        .unwrap();
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].0.id, debit.id);
    // Only the debit is due between the two due times.
    let due = store.bank().due_transfers(NOW + DELAY, 100).await.unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].0.id, debit.id);

    // Pending → failed releases the hold, one event.
    assert!(
        store
            .bank()
            .apply_transition(
                &debit,
                TransferStatus::Failed,
                Some(FailureReason::AccountClosed),
                (0, -200),
                i64::MAX,
                NOW + DELAY
            )
            .await
            .unwrap()
    );
    let d = by_key(&store, "d").await;
    assert_eq!(
        (d.status, d.failure_reason, d.due_at),
        (
            TransferStatus::Failed,
            Some(FailureReason::AccountClosed),
            i64::MAX
        )
    );
    assert_eq!(money(&store, &ba).await, (500, 0));
    assert_eq!(
        types(&store, &debit).await,
        [
            EventType::BankTransferCreated,
            EventType::BankTransferFailed
        ]
    );
    // Failed → settled is outside the lifecycle.
    let r = store
        .bank()
        .apply_transition(
            &d,
            TransferStatus::Settled,
            None,
            (-200, 0),
            i64::MAX,
            NOW + DELAY,
        )
        .await;
    assert!(matches!(r, Err(StoreError::Transition(_))), "{r:?}");
    assert_eq!(by_key(&store, "d").await, d);

    // A credit settles for good.
    assert!(
        store
            .bank()
            .apply_transition(
                &credit,
                TransferStatus::Settled,
                None,
                (50, 0),
                i64::MAX,
                NOW + 1 + DELAY
            )
            .await
            .unwrap()
    );
    assert_eq!(money(&store, &ba).await, (550, 0));
    assert_eq!(
        types(&store, &credit).await,
        [
            EventType::BankTransferCreated,
            EventType::BankTransferSettled
        ]
    );
    assert!(
        store
            .bank()
            .due_transfers(i64::MAX - 1, 100)
            .await
            .unwrap()
            .is_empty()
    );
}

/// Concurrent calls: one key started eight times at once is one transfer, held once; two
/// debits that each fit the balance but not both get one pending and one failed at once
/// (`insufficient_funds`); two workers moving one transfer move it once.
async fn concurrency(store: Store) {
    let account = store.accounts().create("Bank", NOW).await.unwrap();

    // One key, eight calls at once.
    let ba = bank_account(&store, &account.id, Behavior::Settles, 1_000).await;
    let mut set = tokio::task::JoinSet::new();
    for i in 0..8 {
        let (store, id) = (store.clone(), ba.id.clone());
        set.spawn(async move {
            store
                .bank()
                .start_transfer(&id, Direction::Debit, 100, "same", NOW + i)
                .await
        });
    }
    let started: Vec<BankTransfer> = set
        .join_all()
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let t = by_key(&store, "same").await;
    assert!(started.iter().all(|s| *s == t), "{started:?}");
    assert_eq!(
        store.bank().transfers(&ba.id).await.unwrap(),
        std::slice::from_ref(&t)
    );
    assert_eq!(money(&store, &ba).await, (1_000, 100), "held once");
    assert_eq!(types(&store, &t).await, [EventType::BankTransferCreated]);

    // Two workers move the same pending copy at once: once.
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..2 {
        let (store, t) = (store.clone(), t.clone());
        set.spawn(async move {
            store
                .bank()
                .apply_transition(
                    &t,
                    TransferStatus::Settled,
                    None,
                    (-100, -100),
                    i64::MAX,
                    NOW + DELAY,
                )
                .await
        });
    }
    let moved: Vec<bool> = set
        .join_all()
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(moved.iter().filter(|m| **m).count(), 1, "{moved:?}");
    assert_eq!(money(&store, &ba).await, (900, 0));
    assert_eq!(
        types(&store, &t).await,
        [
            EventType::BankTransferCreated,
            EventType::BankTransferSettled
        ]
    );

    // 100 available; two debits of 60 at once.
    let ba = bank_account(&store, &account.id, Behavior::Settles, 100).await;
    let mut set = tokio::task::JoinSet::new();
    for key in ["a", "b"] {
        let (store, id) = (store.clone(), ba.id.clone());
        set.spawn(async move {
            store
                .bank()
                .start_transfer(&id, Direction::Debit, 60, key, NOW)
                .await
        });
    }
    let mut both: Vec<BankTransfer> = set
        .join_all()
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    both.sort_by_key(|t| t.status != TransferStatus::Pending);
    let [pending, failed] = &both[..] else {
        panic!("{both:?}")
    };
    assert_eq!(pending.status, TransferStatus::Pending, "{both:?}");
    assert_eq!(
        (failed.status, failed.failure_reason, failed.due_at),
        (
            TransferStatus::Failed,
            Some(FailureReason::InsufficientFunds),
            i64::MAX
        ),
        "{both:?}"
    );
    assert_eq!(
        money(&store, &ba).await,
        (100, 60),
        "one balance spent once"
    );
    assert_eq!(
        types(&store, pending).await,
        [EventType::BankTransferCreated]
    );
    assert_eq!(
        types(&store, failed).await,
        [
            EventType::BankTransferCreated,
            EventType::BankTransferFailed
        ]
    );
    let due = store.bank().due_transfers(i64::MAX - 1, 100).await.unwrap();
    let ids: Vec<_> = due.iter().map(|(t, _)| t.id.clone()).collect();
    assert_eq!(
        ids,
        std::slice::from_ref(&pending.id),
        "a failed debit is never due"
    );
}

/// A move to the status a transfer already has is outside its lifecycle
/// (`TransferStatus::sources` never lists a status as its own source, and
/// `move_transfer_in`'s doc says a move the lifecycle does not allow is
/// `StoreError::Transition` with nothing written). It once let `from == to` through (a
/// condition copied from payments, where the same status records a transaction hash
/// learnt later): a settled credit "moved" to settled was credited again, with no event.
async fn no_move_to_the_same_status(store: Store) {
    let account = store.accounts().create("Bank", NOW).await.unwrap();
    let ba = bank_account(&store, &account.id, Behavior::Settles, 500).await;
    let credit = store
        .bank()
        .start_transfer(&ba.id, Direction::Credit, 50, "same-c", NOW)
        .await
        .unwrap();
    let debit = store
        .bank()
        .start_transfer(&ba.id, Direction::Debit, 100, "same-d", NOW)
        .await
        .unwrap();
    let at = NOW + DELAY;
    for (t, to, reason, deltas) in [
        (&credit, TransferStatus::Settled, None, (50, 0)),
        (
            &debit,
            TransferStatus::Failed,
            Some(FailureReason::AccountClosed),
            (0, -100),
        ),
    ] {
        assert!(
            store
                .bank()
                .apply_transition(t, to, reason, deltas, i64::MAX, at)
                .await
                .unwrap()
        );
    }
    assert_eq!(money(&store, &ba).await, (550, 0));
    let (settled, failed) = (
        by_key(&store, "same-c").await,
        by_key(&store, "same-d").await,
    );

    for (key, t, reason, deltas) in [
        ("same-c", &settled, None, (50, 0)),
        ("same-d", &failed, Some(FailureReason::Returned), (100, 0)),
    ] {
        let again = store
            .bank()
            .apply_transition(t, t.status, reason, deltas, at, at + 1)
            .await;
        assert!(
            matches!(again, Err(StoreError::Transition(_))),
            "{} {:?} → itself: {again:?}",
            t.id,
            t.status
        );
        assert_eq!(by_key(&store, key).await, *t);
    }
    assert_eq!(money(&store, &ba).await, (550, 0));
    assert!(
        store
            .bank()
            .due_transfers(at + 1, 100)
            .await
            .unwrap()
            .is_empty(),
        "a final transfer is due again"
    );
}

async fn scenario(store: Store) {
    lifecycle(store.clone()).await;
    failures_credits_and_order(store.clone()).await;
    no_move_to_the_same_status(store.clone()).await;
    concurrency(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    scenario(fresh_sqlite(dir.path()).await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres() {
    if let Some(store) = fresh_postgres().await.unwrap() {
        scenario(store).await;
    }
}
