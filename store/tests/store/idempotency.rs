//! `begin_idempotency` under a claim that is abandoned while another request reads it:
//! never an error, on both backends.

use openrail_store::Store;
use openrail_store::journal::IdempotencyBegin;
use openrail_store::now_ms;
use openrail_store::testing::{fresh_postgres, fresh_sqlite};

/// One task claims and abandons (the 5xx path) in a loop; another begins the same key the
/// whole time. Before the fix, a begin whose insert met the claim and whose read came after
/// the abandon failed with "no rows" (a 500).
async fn abandon_race(store: Store) {
    let rounds = 300;
    let churn = {
        let store = store.clone();
        tokio::spawn(async move {
            for _ in 0..rounds {
                if let Ok(IdempotencyBegin::Started) = store
                    .idempotency()
                    .begin("cred", "k", "fp", "node_a", now_ms())
                    .await
                {
                    store.idempotency().abandon("cred", "k").await.unwrap();
                }
            }
        })
    };
    let mut started = 0;
    for _ in 0..rounds {
        match store
            .idempotency()
            .begin("cred", "k", "fp", "node_b", now_ms())
            .await
        {
            Ok(IdempotencyBegin::Started) => {
                started += 1;
                store.idempotency().abandon("cred", "k").await.unwrap();
            }
            Ok(_) => {}
            Err(e) => panic!("begin_idempotency failed while a claim was abandoned: {e}"),
        }
    }
    churn.await.unwrap();
    assert!(started > 0, "the second claimant never got the key");
}

#[tokio::test]
async fn abandoned_claims_never_fail_a_begin_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    abandon_race(fresh_sqlite(dir.path()).await.unwrap()).await;
}

#[tokio::test]
async fn abandoned_claims_never_fail_a_begin_postgres() {
    match fresh_postgres().await.unwrap() {
        Some(store) => abandon_race(store).await,
        None => eprintln!(
            "SKIPPED: abandoned_claims_never_fail_a_begin_postgres (no PostgreSQL at 127.0.0.1:5432)"
        ),
    }
}
