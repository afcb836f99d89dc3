//! Where an account's payments settle, and a payment moving only along its lifecycle, on
//! SQLite and, in CI, PostgreSQL.

use openrail_domain::PaymentId;
use openrail_store::accounts::PaymentsChain;
use openrail_store::agentic::Scope;
use openrail_store::payments::{PartyKind, Payment, PaymentStatus};
use openrail_store::testing::{fresh_postgres, fresh_sqlite};
use openrail_store::{Currency, Mode, Store, StoreError, now_ms};

async fn settings_and_lifecycle(store: Store) {
    let account = store.accounts().create("Acme", now_ms()).await.unwrap();
    // The settlement chain until the account chooses, per mode.
    for mode in [Mode::Testnet, Mode::Mainnet] {
        assert_eq!(
            store
                .accounts()
                .payments_chain(&account.id, mode)
                .await
                .unwrap(),
            PaymentsChain::Settlement
        );
    }
    store
        .accounts()
        .set_payments_chain(
            &account.id,
            Mode::Testnet,
            PaymentsChain::Attestation,
            now_ms(),
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .accounts()
            .payments_chain(&account.id, Mode::Testnet)
            .await
            .unwrap(),
        PaymentsChain::Attestation
    );
    assert_eq!(
        store
            .accounts()
            .payments_chain(&account.id, Mode::Mainnet)
            .await
            .unwrap(),
        PaymentsChain::Settlement,
        "the other mode keeps its own"
    );
    store
        .accounts()
        .set_payments_chain(
            &account.id,
            Mode::Testnet,
            PaymentsChain::Settlement,
            now_ms(),
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .accounts()
            .payments_chain(&account.id, Mode::Testnet)
            .await
            .unwrap(),
        PaymentsChain::Settlement
    );

    let now = now_ms();
    let p = Payment {
        id: PaymentId::new(),
        account_id: account.id.clone(),
        mode: Mode::Testnet,
        amount: 100,
        currency: Currency::Usd,
        source_type: PartyKind::Wallet,
        source_id: "0x0000000000000000000000000000000000000001".into(),
        destination_type: PartyKind::Wallet,
        destination_address: "0x0000000000000000000000000000000000000002".into(),
        status: PaymentStatus::Pending,
        failure_reason: None,
        chain_id: 31338,
        tx_hash: None,
        refund_status: None,
        created_at: now,
        updated_at: now,
    };
    store.payments().insert(&p).await.unwrap();
    let scope = Scope {
        account_id: &account.id,
        mode: Mode::Testnet,
    };
    let status = |store: &Store| {
        let (store, id) = (store.clone(), p.id.clone());
        let account = account.id.clone();
        async move {
            let scope = Scope {
                account_id: &account,
                mode: Mode::Testnet,
            };
            store.payments().get(scope, &id).await.unwrap().status
        }
    };
    // Skipping `processing` is outside the lifecycle: refused, nothing written.
    let skipped = store
        .payments()
        .set_status(
            &p.id,
            PaymentStatus::Pending,
            PaymentStatus::Succeeded,
            None,
            None,
            now,
        )
        .await;
    assert!(
        matches!(skipped, Err(StoreError::Transition(_))),
        "{skipped:?}"
    );
    assert_eq!(status(&store).await, PaymentStatus::Pending);
    for (from, to) in [
        (PaymentStatus::Pending, PaymentStatus::Processing),
        // The same status again: a transaction hash learnt later.
        (PaymentStatus::Processing, PaymentStatus::Processing),
        (PaymentStatus::Processing, PaymentStatus::Succeeded),
    ] {
        assert!(
            store
                .payments()
                .set_status(&p.id, from, to, None, Some("0xab"), now)
                .await
                .unwrap(),
            "{from:?} → {to:?}"
        );
    }
    assert_eq!(
        store
            .payments()
            .get(scope, &p.id)
            .await
            .unwrap()
            .tx_hash
            .as_deref(),
        Some("0xab")
    );
    // Nothing leaves a final status.
    let back = store
        .payments()
        .set_status(
            &p.id,
            PaymentStatus::Succeeded,
            PaymentStatus::Pending,
            None,
            None,
            now,
        )
        .await;
    assert!(matches!(back, Err(StoreError::Transition(_))), "{back:?}");
    assert_eq!(status(&store).await, PaymentStatus::Succeeded);
    // A move from a status the payment is no longer in moves nothing.
    assert!(
        !store
            .payments()
            .set_status(
                &p.id,
                PaymentStatus::Pending,
                PaymentStatus::Processing,
                None,
                None,
                now
            )
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    settings_and_lifecycle(fresh_sqlite(dir.path()).await.unwrap()).await;
}

#[tokio::test]
async fn postgres() {
    if let Some(store) = fresh_postgres().await.unwrap() {
        settings_and_lifecycle(store).await;
    }
}
