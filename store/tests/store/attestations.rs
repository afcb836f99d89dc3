//! Identity attestations in the store, on both backends: creation writes the row, its event
//! and its `attest` work together; journaled fates move it (`active` with its transaction,
//! `revoked`); the one writer refuses moves outside the lifecycle's table; revoking the
//! credential queues the attestation's revoke in the same transaction.

use openrail_domain::AttestationId;
use openrail_store::agentic::Scope;
use openrail_store::attestations::{Attestation, AttestationStatus};
use openrail_store::identity::NewCredential;
use openrail_store::journal::{Intent, TxKind, TxStatus};
use openrail_store::outbox::WorkKind;
use openrail_store::testing::{fresh_postgres, fresh_sqlite};
use openrail_store::{Mode, Store, StoreError, now_ms};

const CHAIN_B: u64 = 31338;

fn row(id: &AttestationId, scope: Scope<'_>, credential: Option<&str>, now: i64) -> Attestation {
    Attestation {
        id: id.clone(),
        account_id: scope.account_id.clone(),
        mode: scope.mode,
        chain_id: CHAIN_B,
        registry: format!("0x{}", "1".repeat(40)),
        schema_uid: format!("0x{}", "2".repeat(64)),
        recipient: format!("0x{}", "3".repeat(40)),
        credential_id: credential.map(str::to_string),
        credential_digest: "4".repeat(64),
        issuer: "did:key:z6Mk".into(),
        credential_type: "ExampleAlumniCredential".into(),
        expires_at: None,
        status_list_credential: Some("http://x/v1/identity/status-lists/sl_1".into()),
        status_list_index: Some(7),
        status: AttestationStatus::Pending,
        uid: None,
        tx_hash: None,
        revoked_at: None,
        mirrored_sequence: None,
        created_at: now,
        updated_at: now,
    }
}

async fn attestations(store: Store) {
    let now = now_ms();
    let account = store.accounts().create("Acme", now).await.unwrap();
    let scope = Scope {
        account_id: &account.id,
        mode: Mode::Testnet,
    };

    // Created pending, with its event and its work on chain B.
    let a = AttestationId::new();
    store
        .attestations()
        .insert(&row(&a, scope, None, now))
        .await
        .unwrap();
    assert!(
        store
            .outbox()
            .is_open(&Intent::Attestation(a.clone()), WorkKind::Attest)
            .await
            .unwrap()
    );
    assert_eq!(
        store
            .outbox()
            .queued(CHAIN_B, Mode::Testnet, now, 10)
            .await
            .unwrap()[0]
            .intent,
        Intent::Attestation(a.clone())
    );
    assert!(
        store
            .outbox()
            .queued(31337, Mode::Testnet, now, 10)
            .await
            .unwrap()
            .is_empty()
    );

    // Illegal moves are refused and write nothing: pending → revoked, and nothing is
    // reached back to pending.
    for to in [AttestationStatus::Revoked, AttestationStatus::Pending] {
        assert!(matches!(
            store.attestations().move_to(&a, to, now).await,
            Err(StoreError::Transition(_))
        ));
    }
    assert_eq!(
        store.attestations().get(scope, &a).await.unwrap().status,
        AttestationStatus::Pending
    );

    // Its `attest` transaction mined: active, with the transaction, and the work closed.
    let hash = format!("0x{}", "a".repeat(64));
    assert!(
        store
            .journal()
            .record(
                CHAIN_B,
                0,
                &hash,
                "0x00",
                TxKind::Attest,
                &[Intent::Attestation(a.clone())],
                None,
                now
            )
            .await
            .unwrap()
    );
    store
        .journal()
        .mark(CHAIN_B, &hash, TxStatus::Succeeded, Some(1), now + 1)
        .await
        .unwrap();
    let got = store.attestations().get(scope, &a).await.unwrap();
    assert_eq!(got.status, AttestationStatus::Active);
    assert_eq!(got.tx_hash.as_deref(), Some(hash.as_str()));
    assert!(
        !store
            .outbox()
            .is_open(&Intent::Attestation(a.clone()), WorkKind::Attest)
            .await
            .unwrap()
    );
    store.attestations().record_uid(&a, "0xuid").await.unwrap();
    assert_eq!(
        store
            .attestations()
            .get(scope, &a)
            .await
            .unwrap()
            .uid
            .as_deref(),
        Some("0xuid")
    );
    // Active → failed is not in the table.
    assert!(matches!(
        store
            .attestations()
            .move_to(&a, AttestationStatus::Failed, now)
            .await,
        Err(StoreError::Transition(_))
    ));

    // Revoke: queued, its transaction's success revokes it (once, however often recorded).
    store
        .attestations()
        .request_revoke(scope, &a, now)
        .await
        .unwrap();
    assert!(
        store
            .outbox()
            .is_open(&Intent::Attestation(a.clone()), WorkKind::RevokeAttestation)
            .await
            .unwrap()
    );
    let revoke = format!("0x{}", "b".repeat(64));
    store
        .journal()
        .record(
            CHAIN_B,
            1,
            &revoke,
            "0x01",
            TxKind::RevokeAttestation,
            &[Intent::Attestation(a.clone())],
            None,
            now,
        )
        .await
        .unwrap();
    for _ in 0..2 {
        store
            .journal()
            .mark(CHAIN_B, &revoke, TxStatus::Succeeded, Some(2), now + 2)
            .await
            .unwrap();
    }
    let got = store.attestations().get(scope, &a).await.unwrap();
    assert_eq!(got.status, AttestationStatus::Revoked);
    assert_eq!(got.revoked_at, Some(now + 2));
    assert!(
        !store
            .outbox()
            .is_open(&Intent::Attestation(a.clone()), WorkKind::RevokeAttestation)
            .await
            .unwrap()
    );
    assert!(matches!(
        store
            .attestations()
            .move_to(&a, AttestationStatus::Active, now)
            .await,
        Err(StoreError::Transition(_))
    ));

    // A reverted `attest` fails it (no other transaction live).
    let f = AttestationId::new();
    store
        .attestations()
        .insert(&row(&f, scope, None, now))
        .await
        .unwrap();
    let reverted = format!("0x{}", "c".repeat(64));
    store
        .journal()
        .record(
            CHAIN_B,
            2,
            &reverted,
            "0x02",
            TxKind::Attest,
            &[Intent::Attestation(f.clone())],
            None,
            now,
        )
        .await
        .unwrap();
    store
        .journal()
        .mark(CHAIN_B, &reverted, TxStatus::Reverted, Some(3), now + 3)
        .await
        .unwrap();
    assert_eq!(
        store.attestations().get(scope, &f).await.unwrap().status,
        AttestationStatus::Failed
    );

    // Revoking a credential queues the revoke of its live attestations, in its transaction.
    store
        .identity()
        .reserve_credential(
            scope,
            &NewCredential {
                id: "urn:uuid:att",
                credential_type: "ExampleAlumniCredential",
                subject: None,
                valid_until: None,
            },
            now,
        )
        .await
        .unwrap()
        .unwrap();
    let c = AttestationId::new();
    store
        .attestations()
        .insert(&row(&c, scope, Some("urn:uuid:att"), now))
        .await
        .unwrap();
    assert!(
        !store
            .outbox()
            .is_open(&Intent::Attestation(c.clone()), WorkKind::RevokeAttestation)
            .await
            .unwrap()
    );
    store
        .identity()
        .revoke_credential(scope, "urn:uuid:att", now)
        .await
        .unwrap();
    assert!(
        store
            .outbox()
            .is_open(&Intent::Attestation(c.clone()), WorkKind::RevokeAttestation)
            .await
            .unwrap()
    );

    // Events, in order, per object.
    let events = store
        .events()
        .list(scope, Default::default(), 100, None)
        .await
        .unwrap();
    let mut of_a: Vec<&str> = events
        .data
        .iter()
        .filter(|e| e.object_id == a.as_str())
        .map(|e| e.kind.as_str())
        .collect();
    of_a.reverse();
    assert_eq!(
        of_a,
        [
            "identity.attestation.pending",
            "identity.attestation.active",
            "identity.attestation.revoked"
        ]
    );
    assert!(
        events
            .data
            .iter()
            .any(|e| e.object_id == f.as_str() && e.kind.as_str() == "identity.attestation.failed")
    );

    // Lists by recipient, scoped.
    let page = store
        .attestations()
        .list(scope, Some(&format!("0x{}", "3".repeat(40))), 10, None)
        .await
        .unwrap();
    assert_eq!(page.data.len(), 3);
    let none = store
        .attestations()
        .list(
            scope,
            Some("0x0000000000000000000000000000000000000000"),
            10,
            None,
        )
        .await
        .unwrap();
    assert!(none.data.is_empty());
}

#[tokio::test]
async fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    attestations(fresh_sqlite(dir.path()).await.unwrap()).await;
}

#[tokio::test]
async fn postgres() {
    if let Some(store) = fresh_postgres().await.unwrap() {
        attestations(store).await;
    }
}
