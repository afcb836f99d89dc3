//! Leases and the journal's fence, on both backends.

use openrail_store::Store;
use openrail_store::lease::chain_lease;
use openrail_store::testing::{fresh_postgres, fresh_sqlite};

async fn record(store: &Store, nonce: u64, holder: &str) -> bool {
    let lease = chain_lease(7);
    store
        .record_tx_fenced(
            7,
            nonce,
            &format!("0xhash{nonce}"),
            "0xraw",
            "pull_batch",
            &[format!("pull_{nonce}")],
            Some((&lease, holder)),
        )
        .await
        .unwrap()
}

async fn leases_and_fence(store: Store) {
    let lease = chain_lease(7);
    assert_eq!(store.lease(&lease).await.unwrap(), None);
    // Nobody holds it: nothing journals under the fence.
    assert!(!record(&store, 0, "a").await);

    assert!(
        store
            .acquire_lease(&lease, "a", "http://a", 60_000)
            .await
            .unwrap()
    );
    assert!(
        !store
            .acquire_lease(&lease, "b", "http://b", 60_000)
            .await
            .unwrap()
    );
    // The holder renews; the other still cannot take it.
    assert!(
        store
            .acquire_lease(&lease, "a", "http://a", 60_000)
            .await
            .unwrap()
    );
    let held = store.lease(&lease).await.unwrap().unwrap();
    assert_eq!((held.holder.as_str(), held.url.as_str()), ("a", "http://a"));
    assert!(held.live_at(openrail_store::now_ms()));
    assert!(record(&store, 0, "a").await);
    assert!(!record(&store, 1, "b").await);

    // Expired (a renewal with no time left): anyone may take it, and the old holder's
    // journal writes are refused from then on.
    assert!(
        store
            .acquire_lease(&lease, "a", "http://a", -1)
            .await
            .unwrap()
    );
    assert!(!record(&store, 1, "a").await);
    assert!(
        store
            .acquire_lease(&lease, "b", "http://b", 60_000)
            .await
            .unwrap()
    );
    assert!(
        !store
            .acquire_lease(&lease, "a", "http://a", 60_000)
            .await
            .unwrap()
    );
    assert!(record(&store, 1, "b").await);
    assert!(!record(&store, 2, "a").await);
    assert_eq!(store.txs_for_intent("pull_1").await.unwrap(), 1);
    assert_eq!(store.txs_for_intent("pull_2").await.unwrap(), 0);

    // A clean stop hands it over at once.
    store.release_lease(&lease, "b").await.unwrap();
    assert!(
        store
            .acquire_lease(&lease, "a", "http://a", 60_000)
            .await
            .unwrap()
    );
    // Unfenced journaling (a single process without leases) always records.
    assert!(
        store
            .record_tx_fenced(7, 3, "0xhash3", "0xraw", "settle", &[], None)
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    leases_and_fence(fresh_sqlite(dir.path()).await.unwrap()).await;
}

#[tokio::test]
async fn postgres() {
    if let Some(store) = fresh_postgres().await.unwrap() {
        leases_and_fence(store).await;
    }
}
