//! Leases and the journal's fence, on both backends.

use std::time::Duration;

use openrail_store::{Store, now_ms};

const MINUTE: Duration = Duration::from_secs(60);
use openrail_store::journal::IdempotencyBegin;
use openrail_store::lease::{chain_lease, node_lease};
use openrail_store::testing::{fresh_postgres, fresh_sqlite};

async fn record(store: &Store, nonce: u64, holder: &str) -> bool {
    let lease = chain_lease(7);
    store
        .journal()
        .record(
            7,
            nonce,
            &format!("0xhash{nonce}"),
            "0xraw",
            openrail_store::journal::TxKind::PullBatch,
            &[format!("pull_{nonce}").parse().unwrap()],
            Some((&lease, holder)),
            now_ms(),
        )
        .await
        .unwrap()
}

async fn leases_and_fence(store: Store) {
    let lease = chain_lease(7);
    assert_eq!(store.leases().get(&lease).await.unwrap(), None);
    // Nobody holds it: nothing journals under the fence.
    assert!(!record(&store, 0, "a").await);

    assert!(
        store
            .leases()
            .acquire(&lease, "a", "http://a", MINUTE, now_ms())
            .await
            .unwrap()
    );
    assert!(
        !store
            .leases()
            .acquire(&lease, "b", "http://b", MINUTE, now_ms())
            .await
            .unwrap()
    );
    // The holder renews; the other still cannot take it.
    assert!(
        store
            .leases()
            .acquire(&lease, "a", "http://a", MINUTE, now_ms())
            .await
            .unwrap()
    );
    let held = store.leases().get(&lease).await.unwrap().unwrap();
    assert_eq!((held.holder.as_str(), held.url.as_str()), ("a", "http://a"));
    assert!(held.live_at(openrail_store::now_ms()));
    assert!(record(&store, 0, "a").await);
    assert!(!record(&store, 1, "b").await);

    // Expired (a renewal with no time left): anyone may take it, and the old holder's
    // journal writes are refused from then on.
    assert!(
        store
            .leases()
            .acquire(&lease, "a", "http://a", Duration::ZERO, now_ms())
            .await
            .unwrap()
    );
    assert!(!record(&store, 1, "a").await);
    assert!(
        store
            .leases()
            .acquire(&lease, "b", "http://b", MINUTE, now_ms())
            .await
            .unwrap()
    );
    assert!(
        !store
            .leases()
            .acquire(&lease, "a", "http://a", MINUTE, now_ms())
            .await
            .unwrap()
    );
    assert!(record(&store, 1, "b").await);
    assert!(!record(&store, 2, "a").await);
    assert_eq!(
        store
            .journal()
            .count_for_intent(&"pull_1".parse().unwrap())
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        store
            .journal()
            .count_for_intent(&"pull_2".parse().unwrap())
            .await
            .unwrap(),
        0
    );

    // A clean stop hands it over at once.
    store.leases().release(&lease, "b").await.unwrap();
    assert!(
        store
            .leases()
            .acquire(&lease, "a", "http://a", MINUTE, now_ms())
            .await
            .unwrap()
    );
    // Unfenced journaling (a single process without leases) always records.
    assert!(
        store
            .journal()
            .record(
                7,
                3,
                "0xhash3",
                "0xraw",
                openrail_store::journal::TxKind::Settle,
                &[],
                None,
                now_ms()
            )
            .await
            .unwrap()
    );
}

/// Idempotency claims of dead processes: taken over when they created nothing, recovered
/// to their object when they did, and never by two retries at once.
async fn idempotency_recovery(store: Store) {
    let account = store.accounts().create("Idem", now_ms()).await.unwrap();
    let (key, _) = store
        .api_keys()
        .create(&account.id, openrail_store::Mode::Testnet, now_ms())
        .await
        .unwrap();
    let cred = key.id.as_str();
    let live = |node: &'static str| {
        let store = store.clone();
        async move {
            assert!(
                store
                    .leases()
                    .acquire(&node_lease(node), node, "http://x", MINUTE, now_ms())
                    .await
                    .unwrap()
            );
        }
    };
    live("b").await;
    live("c").await;
    let begin = |node: &'static str, fingerprint: &'static str| {
        let store = store.clone();
        async move {
            store
                .idempotency()
                .begin(cred, "k", fingerprint, node, now_ms())
                .await
                .unwrap()
        }
    };
    // "a" never had a liveness lease: dead. Its claim linked nothing: "b" takes it over.
    assert_eq!(begin("a", "f").await, IdempotencyBegin::Started);
    assert_eq!(begin("b", "f").await, IdempotencyBegin::Started);
    // "b" is alive: its claim is in progress for everyone else.
    assert_eq!(begin("c", "f").await, IdempotencyBegin::InProgress);
    assert_eq!(begin("c", "other").await, IdempotencyBegin::Mismatch);
    // "b" links the object it is about to create, then dies.
    store
        .idempotency()
        .link(cred, "k", "/v1/payments/pay_1")
        .await
        .unwrap();
    assert!(
        store
            .leases()
            .acquire(&node_lease("b"), "b", "http://x", Duration::ZERO, now_ms())
            .await
            .unwrap()
    );
    let recover = IdempotencyBegin::Recover {
        resource: "/v1/payments/pay_1".into(),
    };
    assert_eq!(begin("c", "f").await, recover);
    // The object never came to exist: one retry takes the claim over, not two.
    assert!(
        store
            .idempotency()
            .restart(cred, "k", "/v1/payments/pay_1", "c", now_ms())
            .await
            .unwrap()
    );
    assert!(
        !store
            .idempotency()
            .restart(cred, "k", "/v1/payments/pay_1", "d", now_ms())
            .await
            .unwrap()
    );
    assert_eq!(begin("d", "f").await, IdempotencyBegin::InProgress);
    // Finished: replayed.
    store
        .idempotency()
        .finish(cred, "k", 201, "{}")
        .await
        .unwrap();
    assert_eq!(
        begin("d", "f").await,
        IdempotencyBegin::Replay {
            status: 201,
            body: "{}".into()
        }
    );
}

#[tokio::test]
async fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    leases_and_fence(fresh_sqlite(dir.path()).await.unwrap()).await;
    let dir = tempfile::tempdir().unwrap();
    idempotency_recovery(fresh_sqlite(dir.path()).await.unwrap()).await;
}

#[tokio::test]
async fn postgres() {
    if let Some(store) = fresh_postgres().await.unwrap() {
        leases_and_fence(store).await;
    }
    if let Some(store) = fresh_postgres().await.unwrap() {
        idempotency_recovery(store).await;
    }
}
