//! Accounts and API keys on SQLite and, in CI, PostgreSQL.

use openrail_store::now_ms;
use openrail_store::testing::{fresh_postgres, fresh_sqlite};
use openrail_store::{AccountId, ApiKeyId, Mode, Store, StoreError};

async fn accounts_and_keys(store: Store) {
    let account = store.create_account("Acme", now_ms()).await.unwrap();
    assert!(account.id.as_str().starts_with("acct_"));
    assert_eq!(store.account(&account.id).await.unwrap(), account);

    let (key, secret) = store
        .create_api_key(&account.id, Mode::Testnet, now_ms())
        .await
        .unwrap();
    assert!(secret.starts_with("sk_testnet_"));
    assert_eq!(key.last4, secret[secret.len() - 4..]);
    let principal = store
        .authenticate_api_key(&secret)
        .await
        .unwrap()
        .expect("live key authenticates");
    assert_eq!(
        (principal.account_id.as_str(), principal.mode),
        (account.id.as_str(), Mode::Testnet)
    );
    assert_eq!(
        store.authenticate_api_key("sk_testnet_nope").await.unwrap(),
        None
    );

    let (_, live) = store
        .create_api_key(&account.id, Mode::Mainnet, now_ms())
        .await
        .unwrap();
    assert!(live.starts_with("sk_mainnet_"));
    let listed = store.list_api_keys(Some(&account.id)).await.unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(
        store
            .list_api_keys(Some(&AccountId::new()))
            .await
            .unwrap()
            .len(),
        0
    );

    store.revoke_api_key(&key.id, now_ms()).await.unwrap();
    assert_eq!(store.authenticate_api_key(&secret).await.unwrap(), None);
    store.revoke_api_key(&key.id, now_ms()).await.unwrap();
    assert!(matches!(
        store.revoke_api_key(&ApiKeyId::new(), now_ms()).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store
            .create_api_key(&AccountId::new(), Mode::Testnet, now_ms())
            .await,
        Err(StoreError::NotFound)
    ));
}

#[tokio::test]
async fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    accounts_and_keys(fresh_sqlite(dir.path()).await.unwrap()).await;
}

#[tokio::test]
async fn postgres() {
    if let Some(store) = fresh_postgres().await.unwrap() {
        accounts_and_keys(store).await;
    }
}
