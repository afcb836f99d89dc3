//! Agent credentials in the store, on both backends: one per session key, recorded only
//! while the key is active and unexpired and its mandate active (else the reserved record
//! is revoked and nothing is recorded); the key's revocation and its mandate's
//! cancellation — here through journaled fates, applied by the group writer — revoke the
//! credential (and queue the revoke of its attestations) in the transaction that moves
//! the key or the mandate.

use openrail_domain::{AttestationId, MandateId, SessionKeyId};
use openrail_store::agentic::{KeyStatus, MandateStatus, Scope, SessionKey};
use openrail_store::attestations::{Attestation, AttestationStatus};
use openrail_store::identity::{AgentCredentialRecord, NewCredential};
use openrail_store::journal::{Intent, TxKind, TxStatus};
use openrail_store::outbox::WorkKind;
use openrail_store::testing::{active_mandate_row, fresh_postgres, fresh_sqlite};
use openrail_store::{Mode, Store, now_ms};

const CHAIN_A: u64 = 31337;
const CHAIN_B: u64 = 31338;

async fn key(
    store: &Store,
    scope: Scope<'_>,
    mandate: &MandateId,
    tag: &str,
    expires_at: i64,
) -> SessionKeyId {
    let id = SessionKeyId::parse(&format!("sk_{tag}")).unwrap();
    store
        .keys()
        .insert(
            &SessionKey {
                id: id.clone(),
                account_id: scope.account_id.clone(),
                mode: scope.mode,
                mandate_id: mandate.clone(),
                expires_at,
                max_amount: None,
                allowed_destinations: vec![],
                status: KeyStatus::Active,
                onchain_id: format!("0x{tag}"),
                tx_hash: None,
                created_at: now_ms(),
                signer: Some(format!("0x{}", "5".repeat(40))),
            },
            &format!("hash-{tag}"),
        )
        .await
        .unwrap();
    id
}

/// Reserves the record of key `k`'s credential and records it.
async fn issue(
    store: &Store,
    scope: Scope<'_>,
    k: &SessionKeyId,
    text: &str,
) -> (String, AgentCredentialRecord) {
    let id = format!("urn:uuid:agent-{k}");
    store
        .identity()
        .reserve_credential(
            scope,
            &NewCredential {
                id: &id,
                credential_type: "AgentCredential",
                subject: Some("did:pkh:eip155:31337:0x5555555555555555555555555555555555555555"),
                valid_until: None,
            },
            now_ms(),
        )
        .await
        .unwrap();
    let r = store
        .identity()
        .record_agent_credential(k, &id, text, now_ms())
        .await
        .unwrap();
    (id, r)
}

async fn revoked(store: &Store, scope: Scope<'_>, id: &str) -> bool {
    store
        .identity()
        .issued_credential(scope, id)
        .await
        .unwrap()
        .revoked_at
        .is_some()
}

/// A fate of `kind` for `intent`, journaled then recorded as succeeded (the group writer
/// applies it).
async fn succeeded(store: &Store, nonce: u64, kind: TxKind, intent: Intent) {
    let hash = format!("0x{nonce:064x}");
    assert!(
        store
            .journal()
            .record(
                CHAIN_A,
                nonce,
                &hash,
                "0x00",
                kind,
                &[intent],
                None,
                now_ms()
            )
            .await
            .unwrap()
    );
    store
        .journal()
        .mark(
            CHAIN_A,
            &hash,
            TxStatus::Succeeded,
            Some(nonce + 1),
            now_ms(),
        )
        .await
        .unwrap();
}

async fn agent_credentials(store: Store) {
    let now = now_ms();
    let account = store.accounts().create("Agents", now).await.unwrap();
    let scope = Scope {
        account_id: &account.id,
        mode: Mode::Testnet,
    };
    let wallet = "0x0707070707070707070707070707070707070707";
    let m1 = MandateId::parse("man_ac1").unwrap();
    let m2 = MandateId::parse("man_ac2").unwrap();
    for m in [&m1, &m2] {
        store
            .mandates()
            .insert(&active_mandate_row(
                m,
                &account.id,
                Mode::Testnet,
                wallet,
                CHAIN_A,
                now,
            ))
            .await
            .unwrap();
    }
    let hour = now + 3_600_000;
    let k1 = key(&store, scope, &m1, "ac1", hour).await;
    let k2 = key(&store, scope, &m1, "ac2", hour).await;
    let k3 = key(&store, scope, &m1, "ac3", hour).await;
    let k4 = key(&store, scope, &m2, "ac4", hour).await;
    let expired = key(&store, scope, &m2, "ac5", now - 1).await;

    // One per key: the first recording wins, a second answers it.
    assert_eq!(
        store.identity().agent_credential(scope, &k1).await.unwrap(),
        None
    );
    let (c1, first) = issue(&store, scope, &k1, "{\"n\":1}").await;
    let AgentCredentialRecord::New(recorded) = first else {
        panic!("{first:?}")
    };
    assert_eq!(recorded.credential_id, c1);
    let (_, again) = issue(&store, scope, &k1, "{\"n\":2}").await;
    assert_eq!(again, AgentCredentialRecord::Existing(recorded.clone()));
    assert_eq!(
        store.identity().agent_credential(scope, &k1).await.unwrap(),
        Some(recorded)
    );
    // Another account sees none.
    let other = store.accounts().create("Other", now).await.unwrap();
    let other_scope = Scope {
        account_id: &other.id,
        mode: Mode::Testnet,
    };
    assert_eq!(
        store
            .identity()
            .agent_credential(other_scope, &k1)
            .await
            .unwrap(),
        None
    );

    // The key's revocation revokes its credential, and queues its attestations' revoke.
    let att = AttestationId::new();
    store
        .attestations()
        .insert(&Attestation {
            id: att.clone(),
            account_id: account.id.clone(),
            mode: Mode::Testnet,
            chain_id: CHAIN_B,
            registry: format!("0x{}", "1".repeat(40)),
            schema_uid: format!("0x{}", "2".repeat(64)),
            recipient: format!("0x{}", "5".repeat(40)),
            credential_id: Some(c1.clone()),
            credential_digest: "4".repeat(64),
            issuer: "did:key:z6Mk".into(),
            credential_type: "AgentCredential".into(),
            expires_at: None,
            status_list_credential: None,
            status_list_index: None,
            status: AttestationStatus::Pending,
            uid: None,
            tx_hash: None,
            revoked_at: None,
            mirrored_sequence: None,
            created_at: now,
            updated_at: now,
        })
        .await
        .unwrap();
    assert!(
        !store
            .outbox()
            .is_open(
                &Intent::Attestation(att.clone()),
                WorkKind::RevokeAttestation
            )
            .await
            .unwrap()
    );
    assert!(!revoked(&store, scope, &c1).await);
    succeeded(
        &store,
        0,
        TxKind::RevokeSessionKey,
        Intent::SessionKey(k1.clone()),
    )
    .await;
    assert_eq!(
        store.keys().get(scope, &k1).await.unwrap().status,
        KeyStatus::Revoked
    );
    assert!(revoked(&store, scope, &c1).await, "revoked with the key");
    assert!(
        store
            .outbox()
            .is_open(
                &Intent::Attestation(att.clone()),
                WorkKind::RevokeAttestation
            )
            .await
            .unwrap()
    );
    // A revoked key records nothing new (its existing one stays).
    let (_, after) = issue(&store, scope, &k1, "{}").await;
    assert!(
        matches!(after, AgentCredentialRecord::Existing(_)),
        "{after:?}"
    );

    // The mandate's cancellation revokes its keys' credentials, no other mandate's.
    let (c2, r2) = issue(&store, scope, &k2, "{}").await;
    assert!(matches!(r2, AgentCredentialRecord::New(_)));
    let (c4, r4) = issue(&store, scope, &k4, "{}").await;
    assert!(matches!(r4, AgentCredentialRecord::New(_)));
    succeeded(
        &store,
        1,
        TxKind::CancelMandate,
        Intent::Mandate(m1.clone()),
    )
    .await;
    assert_eq!(
        store.mandates().get(scope, &m1).await.unwrap().status,
        MandateStatus::Canceled
    );
    assert!(
        revoked(&store, scope, &c2).await,
        "revoked with its mandate"
    );
    assert!(
        !revoked(&store, scope, &c4).await,
        "another mandate's key keeps its own"
    );

    // A key whose mandate is canceled, or whose time passed, gets none: its reserved
    // record is revoked, nothing is recorded.
    for k in [&k3, &expired] {
        let (c, r) = issue(&store, scope, k, "{}").await;
        assert_eq!(r, AgentCredentialRecord::KeyNotLive, "{k}");
        assert!(revoked(&store, scope, &c).await, "{k}");
        assert_eq!(
            store.identity().agent_credential(scope, k).await.unwrap(),
            None
        );
    }
}

#[tokio::test]
async fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    agent_credentials(fresh_sqlite(dir.path()).await.unwrap()).await;
}

#[tokio::test]
async fn postgres() {
    match fresh_postgres().await.unwrap() {
        Some(store) => agent_credentials(store).await,
        None => eprintln!("SKIPPED: agent credentials postgres (no PostgreSQL at 127.0.0.1:5432)"),
    }
}
