//! Accounts and API keys on SQLite and, in CI, PostgreSQL.

use openrail_domain::{AccountId, ApiKeyId};
use openrail_store::now_ms;
use openrail_store::testing::{fresh_postgres, fresh_sqlite};
use openrail_store::{Mode, Store, StoreError};

async fn accounts_and_keys(store: Store) {
    let account = store.accounts().create("Acme", now_ms()).await.unwrap();
    assert!(account.id.as_str().starts_with("acct_"));
    assert_eq!(store.accounts().get(&account.id).await.unwrap(), account);

    let (key, secret) = store
        .api_keys()
        .create(&account.id, Mode::Testnet, now_ms())
        .await
        .unwrap();
    assert!(secret.starts_with("sk_testnet_"));
    assert_eq!(key.last4, secret[secret.len() - 4..]);
    let principal = store
        .api_keys()
        .authenticate(&secret)
        .await
        .unwrap()
        .expect("live key authenticates");
    assert_eq!(
        (principal.account_id.as_str(), principal.mode),
        (account.id.as_str(), Mode::Testnet)
    );
    assert_eq!(
        store
            .api_keys()
            .authenticate("sk_testnet_nope")
            .await
            .unwrap(),
        None
    );

    let (_, live) = store
        .api_keys()
        .create(&account.id, Mode::Mainnet, now_ms())
        .await
        .unwrap();
    assert!(live.starts_with("sk_mainnet_"));
    let listed = store.api_keys().list(Some(&account.id)).await.unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(
        store
            .api_keys()
            .list(Some(&AccountId::new()))
            .await
            .unwrap()
            .len(),
        0
    );

    store.api_keys().revoke(&key.id, now_ms()).await.unwrap();
    assert_eq!(store.api_keys().authenticate(&secret).await.unwrap(), None);
    store.api_keys().revoke(&key.id, now_ms()).await.unwrap();
    assert!(matches!(
        store.api_keys().revoke(&ApiKeyId::new(), now_ms()).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store
            .api_keys()
            .create(&AccountId::new(), Mode::Testnet, now_ms())
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
