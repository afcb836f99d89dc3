//! Identity verification sessions on SQLite and, in CI, PostgreSQL: the lifecycle's one
//! writer (moves outside the table refused, nothing written), its events, the provider's
//! due list, paging.

use openrail_domain::IdentityVerificationId;
use openrail_store::agentic::Scope;
use openrail_store::events::EventType;
use openrail_store::identity::NewCredential;
use openrail_store::testing::{fresh_postgres, fresh_sqlite};
use openrail_store::verifications::{
    NewVerification, Scenario, SimulatedAnswer, VerificationStatus, VerificationType,
};
use openrail_store::{Mode, Store, StoreError, now_ms};

const SUBJECT: &str = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";

async fn verifications(store: Store) {
    let now = now_ms();
    let account = store.accounts().create("Acme", now).await.unwrap();
    let scope = Scope {
        account_id: &account.id,
        mode: Mode::Testnet,
    };
    let new = |scenario, reason| NewVerification {
        kind: VerificationType::Personhood,
        subject: SUBJECT,
        scenario,
        failure_reason: reason,
        issuer_base: "http://127.0.0.1:1",
    };
    use VerificationStatus as S;

    // A failed scenario: created → processing → requires_input (last_error) → processing
    // → verified with its credential.
    let id = IdentityVerificationId::new();
    let v = store
        .verifications()
        .create(scope, &id, &new(Scenario::Failed, Some("expired")), now)
        .await
        .unwrap();
    assert_eq!(v.status, S::RequiresInput);
    assert_eq!(
        (v.submissions, v.due_at, v.last_error.clone()),
        (0, None, None)
    );
    // Nothing is due before submission; cancel and complete are the table's to refuse.
    assert!(
        store
            .verifications()
            .due(Mode::Testnet, now + 60_000, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        store
            .verifications()
            .complete(&v, "urn:uuid:x", "{}", now)
            .await,
        Err(StoreError::Transition(_))
    ));
    let v = store.verifications().submit(scope, &id, now).await.unwrap();
    assert_eq!(v.status, S::Processing);
    assert_eq!(v.due_at, Some(now + Scenario::Failed.delay_ms()));
    // Submitting or canceling a session under check is refused and changes nothing.
    for refused in [
        store.verifications().submit(scope, &id, now).await,
        store.verifications().cancel(scope, &id, now).await,
    ] {
        assert!(
            matches!(refused, Err(StoreError::Transition(_))),
            "{refused:?}"
        );
    }
    assert_eq!(store.verifications().get(scope, &id).await.unwrap(), v);
    // Due only once its time has come, and only in its mode.
    assert!(
        store
            .verifications()
            .due(Mode::Testnet, now, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .verifications()
            .due(Mode::Mainnet, now + 60_000, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let due = store
        .verifications()
        .due(Mode::Testnet, now + 1_000, 10)
        .await
        .unwrap();
    assert_eq!(due, vec![v.clone()]);
    let SimulatedAnswer::Failed { code, reason } = v.simulated_answer() else {
        panic!("the first check of a failed scenario fails");
    };
    assert!(
        store
            .verifications()
            .fail(&v, (code, reason), now + 1)
            .await
            .unwrap()
    );
    // A second worker answering the same read finds it moved.
    assert!(
        !store
            .verifications()
            .fail(&v, (code, reason), now + 1)
            .await
            .unwrap()
    );
    let v = store.verifications().get(scope, &id).await.unwrap();
    assert_eq!(v.status, S::RequiresInput);
    let err = v.last_error.clone().expect("the failed check's error");
    assert_eq!((err.code.as_str(), err.reason.as_str()), (code, "expired"));
    let v = store
        .verifications()
        .submit(scope, &id, now + 2)
        .await
        .unwrap();
    assert_eq!(
        (v.status, v.submissions, v.last_error.clone()),
        (S::Processing, 2, None)
    );
    assert_eq!(v.simulated_answer(), SimulatedAnswer::Verified);
    // Its credential must exist (the column refers to it).
    store
        .identity()
        .reserve_credential(
            scope,
            &NewCredential {
                id: "urn:uuid:v1",
                credential_type: "PersonhoodCredential",
                subject: Some("did:pkh:eip155:1:0x"),
                valid_until: None,
            },
            now,
        )
        .await
        .unwrap()
        .expect("a new credential");
    assert!(
        store
            .verifications()
            .complete(&v, "urn:uuid:v1", "{\"signed\":true}", now + 3)
            .await
            .unwrap()
    );
    let v = store.verifications().get(scope, &id).await.unwrap();
    assert_eq!(v.status, S::Verified);
    assert_eq!(v.credential_id.as_deref(), Some("urn:uuid:v1"));
    assert_eq!(
        store
            .verifications()
            .credential(scope, &id)
            .await
            .unwrap()
            .as_deref(),
        Some("{\"signed\":true}")
    );
    // Verified is final.
    for refused in [
        store.verifications().submit(scope, &id, now).await,
        store.verifications().cancel(scope, &id, now).await,
    ] {
        assert!(
            matches!(refused, Err(StoreError::Transition(_))),
            "{refused:?}"
        );
    }
    assert_eq!(
        store.events().types_of(id.as_str()).await.unwrap(),
        vec![
            EventType::IdentityVerificationCreated,
            EventType::IdentityVerificationProcessing,
            EventType::IdentityVerificationRequiresInput,
            EventType::IdentityVerificationProcessing,
            EventType::IdentityVerificationVerified,
        ]
    );

    // Cancel: from requires_input only, once (a second cancel answers it as it is).
    let other = IdentityVerificationId::new();
    store
        .verifications()
        .create(scope, &other, &new(Scenario::Slow, None), now)
        .await
        .unwrap();
    let c = store
        .verifications()
        .cancel(scope, &other, now)
        .await
        .unwrap();
    assert_eq!(c.status, S::Canceled);
    assert_eq!(
        store
            .verifications()
            .cancel(scope, &other, now)
            .await
            .unwrap(),
        c
    );
    assert!(matches!(
        store.verifications().submit(scope, &other, now).await,
        Err(StoreError::Transition(_))
    ));
    assert_eq!(
        store
            .verifications()
            .credential(scope, &other)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store.events().types_of(other.as_str()).await.unwrap(),
        vec![
            EventType::IdentityVerificationCreated,
            EventType::IdentityVerificationCanceled,
        ]
    );

    // Scoped: another account or mode sees nothing.
    let stranger = store.accounts().create("Other", now).await.unwrap();
    let theirs = Scope {
        account_id: &stranger.id,
        mode: Mode::Testnet,
    };
    assert!(matches!(
        store.verifications().get(theirs, &id).await,
        Err(StoreError::NotFound)
    ));
    let live = Scope {
        account_id: &account.id,
        mode: Mode::Mainnet,
    };
    assert!(matches!(
        store.verifications().cancel(live, &other, now).await,
        Err(StoreError::NotFound)
    ));

    // Paging: newest first.
    let first = store.verifications().list(scope, 1, None).await.unwrap();
    assert!(first.has_more);
    assert_eq!(first.data[0].id, other);
    let second = store
        .verifications()
        .list(scope, 1, Some(first.data[0].id.as_str()))
        .await
        .unwrap();
    assert!(!second.has_more);
    assert_eq!(second.data[0].id, id);
    assert!(matches!(
        store
            .verifications()
            .list(scope, 1, Some("idv_unknown"))
            .await,
        Err(StoreError::UnknownCursor)
    ));
}

#[tokio::test]
async fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    verifications(fresh_sqlite(dir.path()).await.unwrap()).await;
}

#[tokio::test]
async fn postgres() {
    if let Some(store) = fresh_postgres().await.unwrap() {
        verifications(store).await;
    }
}
