//! The dashboard's people, sessions, failed sign-ins and key use on SQLite and, in CI,
//! PostgreSQL.

use openrail_domain::{AccountId, MandateId, SessionKeyId};
use openrail_store::agentic::{KeyFilter, KeyStatus, Scope, SessionKey};
use openrail_store::testing::{active_mandate_row, fresh_postgres, fresh_sqlite};
use openrail_store::{Mode, Store, StoreError};

async fn dashboard(store: Store) {
    let now = 1_700_000_000_000;
    let openrail_store::dashboard::SignUp::Created(account) = store
        .dashboard()
        .sign_up("a@example.com", "$argon2id$x", Some("Acme Ltd"), now)
        .await
        .unwrap()
    else {
        panic!("first sign-up must create an account");
    };
    assert_eq!(
        store
            .dashboard()
            .sign_up("a@example.com", "$argon2id$y", None, now)
            .await
            .unwrap(),
        openrail_store::dashboard::SignUp::EmailTaken
    );
    let user = store
        .dashboard()
        .user("a@example.com")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(user.account_id, account.id);
    assert_eq!(user.password_hash, "$argon2id$x");
    // The business name, unverified; a new name is unverified again.
    let a = store.accounts().get(&account.id).await.unwrap();
    assert_eq!(
        (a.business_name.as_deref(), a.business_verified),
        (Some("Acme Ltd"), false)
    );
    store
        .accounts()
        .set_business_verified(&account.id, true)
        .await
        .unwrap();
    store
        .accounts()
        .set_business_name(&account.id, Some("Acme Ltd"))
        .await
        .unwrap();
    assert!(
        store
            .accounts()
            .get(&account.id)
            .await
            .unwrap()
            .business_verified
    );
    store
        .accounts()
        .set_business_name(&account.id, Some("Acme Refunds"))
        .await
        .unwrap();
    let a = store.accounts().get(&account.id).await.unwrap();
    assert_eq!(
        (a.business_name.as_deref(), a.business_verified),
        (Some("Acme Refunds"), false)
    );
    store
        .accounts()
        .set_business_name(&account.id, None)
        .await
        .unwrap();
    assert_eq!(
        store
            .accounts()
            .get(&account.id)
            .await
            .unwrap()
            .business_name,
        None
    );
    assert!(matches!(
        store
            .accounts()
            .set_business_name(&AccountId::new(), Some("x"))
            .await,
        Err(StoreError::NotFound)
    ));
    assert!(
        store
            .dashboard()
            .user("b@example.com")
            .await
            .unwrap()
            .is_none()
    );

    store
        .dashboard()
        .create_session("h1", &account.id, "csrf1", now, now + 1000)
        .await
        .unwrap();
    let s = store
        .dashboard()
        .session("h1", now + 999)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (s.account_id.as_str(), s.csrf_token.as_str()),
        (account.id.as_str(), "csrf1")
    );
    assert_eq!(s.email, "a@example.com");
    assert!(
        store
            .dashboard()
            .session("h1", now + 1000)
            .await
            .unwrap()
            .is_none(),
        "expired"
    );
    assert!(
        store
            .dashboard()
            .session("h2", now)
            .await
            .unwrap()
            .is_none()
    );
    store.dashboard().end_session("h1", now).await.unwrap();
    assert!(
        store
            .dashboard()
            .session("h1", now)
            .await
            .unwrap()
            .is_none(),
        "signed out"
    );

    store
        .dashboard()
        .record_login_failure(&["email:a", "ip:1"], now, 0)
        .await
        .unwrap();
    store
        .dashboard()
        .record_login_failure(&["email:a"], now + 10, 0)
        .await
        .unwrap();
    assert_eq!(
        store
            .dashboard()
            .login_failures("email:a", now)
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        store
            .dashboard()
            .login_failures("email:a", now + 5)
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        store.dashboard().login_failures("ip:1", now).await.unwrap(),
        1
    );
    store
        .dashboard()
        .record_login_failure(&[], now + 20, now + 5)
        .await
        .unwrap();
    assert_eq!(
        store
            .dashboard()
            .login_failures("email:a", 0)
            .await
            .unwrap(),
        1,
        "old ones forgotten"
    );
    store
        .dashboard()
        .clear_login_failures("email:a")
        .await
        .unwrap();
    assert_eq!(
        store
            .dashboard()
            .login_failures("email:a", 0)
            .await
            .unwrap(),
        0
    );

    // API keys: last use and revocation scoped to the account.
    let (key, _) = store
        .api_keys()
        .create(&account.id, Mode::Testnet, now)
        .await
        .unwrap();
    store.api_keys().touch(&key.id, now + 60_000).await.unwrap();
    store.api_keys().touch(&key.id, now + 1).await.unwrap();
    let keys = store.api_keys().list(Some(&account.id)).await.unwrap();
    assert_eq!(keys[0].last_used_at, Some(now + 60_000), "never moves back");
    assert!(matches!(
        store
            .api_keys()
            .revoke_of_account(&AccountId::new(), &key.id, now)
            .await,
        Err(StoreError::NotFound)
    ));
    store
        .api_keys()
        .revoke_of_account(&account.id, &key.id, now)
        .await
        .unwrap();
    let keys = store.api_keys().list(Some(&account.id)).await.unwrap();
    assert_eq!(keys[0].revoked_at, Some(now));
}

/// The session-key list's status filter: stored statuses, and `active` split by time
/// into `active` and `expired`, with paging inside a filter.
async fn key_filter(store: Store) {
    let now = 1_700_000_000_000;
    let account = store.accounts().create("keys", now).await.unwrap();
    let mid = MandateId::parse("man_keyfilter").unwrap();
    store
        .mandates()
        .insert(&active_mandate_row(
            &mid,
            &account.id,
            Mode::Testnet,
            "ba_payer",
            31337,
            now,
        ))
        .await
        .unwrap();
    // (id, stored status, expires after `now`?, created at)
    let keys = [
        ("sk_pending", KeyStatus::Pending, true),
        ("sk_live1", KeyStatus::Active, true),
        ("sk_live2", KeyStatus::Active, true),
        ("sk_old", KeyStatus::Active, false),
        ("sk_gone", KeyStatus::Revoked, true),
    ];
    for (i, (id, status, future)) in keys.iter().enumerate() {
        let key = SessionKey {
            id: SessionKeyId::parse(id).unwrap(),
            account_id: account.id.clone(),
            mode: Mode::Testnet,
            mandate_id: mid.clone(),
            expires_at: if *future { now + 60_000 } else { now - 1 },
            max_amount: None,
            allowed_destinations: vec![],
            status: *status,
            onchain_id: format!("0x{id}"),
            tx_hash: None,
            created_at: now + i as i64,
            signer: None,
        };
        store
            .keys()
            .insert(&key, &format!("hash-{id}"))
            .await
            .unwrap();
    }
    let scope = Scope {
        account_id: &account.id,
        mode: Mode::Testnet,
    };
    let ids = |filter: Option<KeyFilter>, limit: u32, after: Option<&'static str>| {
        let store = store.clone();
        async move {
            let page = store
                .keys()
                .list_in(scope, None, filter, now, limit, after)
                .await
                .unwrap();
            let ids: Vec<String> = page.data.iter().map(|k| k.id.to_string()).collect();
            (ids, page.has_more)
        }
    };
    assert_eq!(ids(None, 10, None).await.0.len(), 5);
    assert_eq!(
        ids(Some(KeyFilter::Active), 10, None).await,
        (vec!["sk_live2".to_string(), "sk_live1".to_string()], false)
    );
    assert_eq!(
        ids(Some(KeyFilter::Active), 1, None).await,
        (vec!["sk_live2".to_string()], true)
    );
    assert_eq!(
        ids(Some(KeyFilter::Active), 1, Some("sk_live2")).await,
        (vec!["sk_live1".to_string()], false)
    );
    assert_eq!(ids(Some(KeyFilter::Expired), 10, None).await.0, ["sk_old"]);
    assert_eq!(
        ids(Some(KeyFilter::Pending), 10, None).await.0,
        ["sk_pending"]
    );
    assert_eq!(ids(Some(KeyFilter::Revoked), 10, None).await.0, ["sk_gone"]);
    assert!(ids(Some(KeyFilter::Failed), 10, None).await.0.is_empty());
}

#[tokio::test]
async fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    dashboard(fresh_sqlite(dir.path()).await.unwrap()).await;
    let dir = tempfile::tempdir().unwrap();
    key_filter(fresh_sqlite(dir.path()).await.unwrap()).await;
}

#[tokio::test]
async fn postgres() {
    if let Some(store) = fresh_postgres().await.unwrap() {
        dashboard(store).await;
    }
    if let Some(store) = fresh_postgres().await.unwrap() {
        key_filter(store).await;
    }
}
