//! The dashboard's people, sessions, failed sign-ins and key use on SQLite and, in CI,
//! PostgreSQL.

use openrail_store::testing::{fresh_postgres, fresh_sqlite};
use openrail_store::{Mode, Store, StoreError};

async fn dashboard(store: Store) {
    let now = 1_700_000_000_000;
    let openrail_store::dashboard::SignUp::Created(account) = store
        .sign_up("a@example.com", "$argon2id$x", now)
        .await
        .unwrap()
    else {
        panic!("first sign-up must create an account");
    };
    assert_eq!(
        store
            .sign_up("a@example.com", "$argon2id$y", now)
            .await
            .unwrap(),
        openrail_store::dashboard::SignUp::EmailTaken
    );
    let user = store
        .dashboard_user("a@example.com")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(user.account_id, account.id);
    assert_eq!(user.password_hash, "$argon2id$x");
    assert!(
        store
            .dashboard_user("b@example.com")
            .await
            .unwrap()
            .is_none()
    );

    store
        .create_dashboard_session("h1", &account.id, "csrf1", now, now + 1000)
        .await
        .unwrap();
    let s = store
        .dashboard_session("h1", now + 999)
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
            .dashboard_session("h1", now + 1000)
            .await
            .unwrap()
            .is_none(),
        "expired"
    );
    assert!(store.dashboard_session("h2", now).await.unwrap().is_none());
    store.end_dashboard_session("h1", now).await.unwrap();
    assert!(
        store.dashboard_session("h1", now).await.unwrap().is_none(),
        "signed out"
    );

    store
        .record_login_failure(&["email:a", "ip:1"], now, 0)
        .await
        .unwrap();
    store
        .record_login_failure(&["email:a"], now + 10, 0)
        .await
        .unwrap();
    assert_eq!(store.login_failures("email:a", now).await.unwrap(), 2);
    assert_eq!(store.login_failures("email:a", now + 5).await.unwrap(), 1);
    assert_eq!(store.login_failures("ip:1", now).await.unwrap(), 1);
    store
        .record_login_failure(&[], now + 20, now + 5)
        .await
        .unwrap();
    assert_eq!(
        store.login_failures("email:a", 0).await.unwrap(),
        1,
        "old ones forgotten"
    );
    store.clear_login_failures("email:a").await.unwrap();
    assert_eq!(store.login_failures("email:a", 0).await.unwrap(), 0);

    // API keys: last use and revocation scoped to the account.
    let (key, _) = store
        .create_api_key(&account.id, Mode::Testnet, now)
        .await
        .unwrap();
    store.touch_api_key(&key.id, now + 60_000).await.unwrap();
    store.touch_api_key(&key.id, now + 1).await.unwrap();
    let keys = store.list_api_keys(Some(&account.id)).await.unwrap();
    assert_eq!(keys[0].last_used_at, Some(now + 60_000), "never moves back");
    assert!(matches!(
        store
            .revoke_account_api_key("acct_other", &key.id, now)
            .await,
        Err(StoreError::NotFound)
    ));
    store
        .revoke_account_api_key(&account.id, &key.id, now)
        .await
        .unwrap();
    let keys = store.list_api_keys(Some(&account.id)).await.unwrap();
    assert_eq!(keys[0].revoked_at, Some(now));
}

#[tokio::test]
async fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    dashboard(fresh_sqlite(dir.path()).await.unwrap()).await;
}

#[tokio::test]
async fn postgres() {
    if let Some(store) = fresh_postgres().await.unwrap() {
        dashboard(store).await;
    }
}
