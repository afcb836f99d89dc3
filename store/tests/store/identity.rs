//! The identity records (issuer keys, issued credentials in status lists, challenges) on
//! SQLite and, in CI, PostgreSQL.

use openrail_store::agentic::Scope;
use openrail_store::identity::{Issuer, NewCredential, STATUS_LIST_LENGTH};
use openrail_store::testing::{fresh_postgres, fresh_sqlite};
use openrail_store::{Mode, Store, StoreError, now_ms};

async fn identity(store: Store) {
    let now = now_ms();
    let made = |n: &str| Issuer {
        secret_key: n.repeat(64),
        did: format!("did:key:{n}"),
    };
    // The first issuer of a mode stays; the other mode has its own.
    let first = store
        .identity()
        .issuer(Mode::Testnet, || made("a"), now)
        .await
        .unwrap();
    assert_eq!(first, made("a"));
    let again = store
        .identity()
        .issuer(Mode::Testnet, || made("b"), now)
        .await
        .unwrap();
    assert_eq!(again, first);
    let live = store
        .identity()
        .issuer(Mode::Mainnet, || made("c"), now)
        .await
        .unwrap();
    assert_eq!(live, made("c"));

    let account = store.accounts().create("Acme", now).await.unwrap();
    let scope = Scope {
        account_id: &account.id,
        mode: Mode::Testnet,
    };
    let mut indexes = std::collections::BTreeSet::new();
    let mut list = None;
    for i in 0..20 {
        let id = format!("urn:uuid:{i}");
        let c = store
            .identity()
            .reserve_credential(
                scope,
                &NewCredential {
                    id: &id,
                    credential_type: "AgentCredential",
                    subject: Some("did:example:agent"),
                    valid_until: Some(now + 1000),
                },
                now,
            )
            .await
            .unwrap()
            .expect("a new id");
        assert!(c.status_index < STATUS_LIST_LENGTH);
        assert!(indexes.insert(c.status_index), "an index given twice");
        assert_eq!(c.digest, "");
        list.get_or_insert(c.status_list_id.clone());
        assert_eq!(
            Some(&c.status_list_id),
            list.as_ref(),
            "one list until half full"
        );
    }
    let list = list.unwrap();
    // An id is issued once, whoever asks.
    let again = NewCredential {
        id: "urn:uuid:3",
        credential_type: "AgentCredential",
        subject: None,
        valid_until: None,
    };
    assert_eq!(
        store
            .identity()
            .reserve_credential(scope, &again, now)
            .await
            .unwrap(),
        None
    );
    store
        .identity()
        .seal_credential("urn:uuid:3", "abcd")
        .await
        .unwrap();
    // Sealed once: a second digest does not replace it.
    store
        .identity()
        .seal_credential("urn:uuid:3", "ffff")
        .await
        .unwrap();
    let c = store
        .identity()
        .issued_credential(scope, "urn:uuid:3")
        .await
        .unwrap();
    assert_eq!(c.digest, "abcd");

    assert!(
        store
            .identity()
            .status_list(&list)
            .await
            .unwrap()
            .set
            .is_empty()
    );
    let revoked = store
        .identity()
        .revoke_credential(scope, "urn:uuid:3", now + 5)
        .await
        .unwrap();
    assert_eq!(revoked.revoked_at, Some(now + 5));
    // Final: revoking again keeps the first time.
    let again = store
        .identity()
        .revoke_credential(scope, "urn:uuid:3", now + 9)
        .await
        .unwrap();
    assert_eq!(again.revoked_at, Some(now + 5));
    let l = store.identity().status_list(&list).await.unwrap();
    assert_eq!(l.set, vec![c.status_index]);
    assert_eq!((l.mode, l.length), (Mode::Testnet, STATUS_LIST_LENGTH));

    // Another account, or the other mode, sees none of it.
    let other = store.accounts().create("Other", now).await.unwrap();
    let theirs = Scope {
        account_id: &other.id,
        mode: Mode::Testnet,
    };
    assert!(matches!(
        store
            .identity()
            .revoke_credential(theirs, "urn:uuid:4", now)
            .await,
        Err(StoreError::NotFound)
    ));
    let mainnet = Scope {
        account_id: &account.id,
        mode: Mode::Mainnet,
    };
    assert!(matches!(
        store
            .identity()
            .issued_credential(mainnet, "urn:uuid:4")
            .await,
        Err(StoreError::NotFound)
    ));
    assert!(store.identity().status_list(&list).await.unwrap().set.len() == 1);

    // Challenges: single use, before they expire, in their mode.
    let ch = store
        .identity()
        .create_challenge(Mode::Testnet, Some("example.com"), now + 1000, now)
        .await
        .unwrap();
    assert_eq!(
        store
            .identity()
            .use_challenge(Mode::Mainnet, &ch, now)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .identity()
            .use_challenge(Mode::Testnet, &ch, now)
            .await
            .unwrap(),
        Some(Some("example.com".into()))
    );
    assert_eq!(
        store
            .identity()
            .use_challenge(Mode::Testnet, &ch, now)
            .await
            .unwrap(),
        None
    );
    let late = store
        .identity()
        .create_challenge(Mode::Testnet, None, now + 10, now)
        .await
        .unwrap();
    assert_eq!(
        store
            .identity()
            .use_challenge(Mode::Testnet, &late, now + 10)
            .await
            .unwrap(),
        None
    );
    let open = store
        .identity()
        .create_challenge(Mode::Testnet, None, now + 10, now)
        .await
        .unwrap();
    assert_eq!(
        store
            .identity()
            .use_challenge(Mode::Testnet, &open, now + 9)
            .await
            .unwrap(),
        Some(None)
    );
}

#[tokio::test]
async fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    identity(fresh_sqlite(dir.path()).await.unwrap()).await;
}

#[tokio::test]
async fn postgres() {
    if let Some(store) = fresh_postgres().await.unwrap() {
        identity(store).await;
    }
}
