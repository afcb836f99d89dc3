//! The outbox's driving work, on both backends: which chain's engine may claim what, and
//! when it is due.

use openrail_domain::{AccountId, MandateId, PaymentId, PullId, SessionKeyId};
use openrail_store::agentic::{KeyStatus, PullResolution, PullStatus, SessionKey};
use openrail_store::consent::{Authorizable, Authorization};
use openrail_store::journal::{Intent, TxKind, TxStatus};
use openrail_store::outbox::WorkKind;
use openrail_store::payments::{PartyKind, Payment, PaymentStatus};
use openrail_store::testing::{
    active_mandate_row, fresh_postgres, fresh_postgres_url, fresh_sqlite, pending_pull_row,
};
use openrail_store::{Currency, Mode, Store, now_ms};

const CHAIN_A: u64 = 31337;
const CHAIN_B: u64 = 31338;

/// An active mandate on `chain` paid by `payer` (`ba_…` or a wallet), a key on it and a
/// pending pull of 1.00 on that key; returns the pull's id.
async fn pending_pull(
    store: &Store,
    account: &AccountId,
    tag: &str,
    payer: &str,
    chain: u64,
) -> PullId {
    let now = now_ms();
    let mid = MandateId::parse(&format!("man_{tag}")).unwrap();
    let kid = SessionKeyId::parse(&format!("sk_{tag}")).unwrap();
    store
        .mandates()
        .insert(&active_mandate_row(
            &mid,
            account,
            Mode::Testnet,
            payer,
            chain,
            now,
        ))
        .await
        .unwrap();
    store
        .keys()
        .insert(
            &SessionKey {
                id: kid.clone(),
                account_id: account.clone(),
                mode: Mode::Testnet,
                mandate_id: mid.clone(),
                expires_at: now + 3_600_000,
                max_amount: None,
                allowed_destinations: vec![],
                status: KeyStatus::Active,
                onchain_id: format!("0x{tag}k"),
                tx_hash: None,
                created_at: now,
                signer: None,
            },
            &format!("hash-{tag}"),
        )
        .await
        .unwrap();
    let id = PullId::parse(&format!("pull_{tag}")).unwrap();
    store
        .pulls()
        .insert(&pending_pull_row(
            &id,
            account,
            &kid,
            &mid,
            100,
            "0x0303030303030303030303030303030303030303",
        ))
        .await
        .unwrap();
    id
}

fn authorized() -> PullResolution {
    PullResolution {
        status: PullStatus::Authorized,
        decline_code: None,
        remaining_token_units: Some(0),
        resets_at_s: Some(0),
        tx_hash: None,
        authorized_at: Some(now_ms()),
    }
}

/// What the engine of `chain` would claim now (+ `later` ms): (intent as stored, kind)
/// pairs.
async fn claimable(store: &Store, chain: u64, later: i64) -> Vec<(String, WorkKind)> {
    store
        .outbox()
        .queued(chain, Mode::Testnet, now_ms() + later, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|w| (w.intent.to_string(), w.kind))
        .collect()
}

fn payment(
    account: &AccountId,
    id: &str,
    status: PaymentStatus,
    source: (PartyKind, &str),
) -> Payment {
    let now = now_ms();
    Payment {
        id: PaymentId::parse(id).unwrap(),
        account_id: account.clone(),
        mode: Mode::Testnet,
        amount: 250,
        currency: Currency::Usd,
        source_type: source.0,
        source_id: source.1.into(),
        destination_type: PartyKind::Wallet,
        destination_address: "0x0303030303030303030303030303030303030303".into(),
        status,
        failure_reason: None,
        chain_id: CHAIN_A,
        tx_hash: None,
        refund_status: None,
        created_at: now,
        updated_at: now,
    }
}

async fn driving_work(store: Store) {
    let account = store
        .accounts()
        .create("Outbox test", now_ms())
        .await
        .unwrap()
        .id;
    // A bank-funded mandate's pull on chain A, a wallet-funded one's on chain B.
    let bank_pull = pending_pull(&store, &account, "bank", "ba_payer", CHAIN_A).await;
    let wallet_pull = pending_pull(
        &store,
        &account,
        "wallet",
        "0x0707070707070707070707070707070707070707",
        CHAIN_B,
    )
    .await;
    // Each pull is sent by its own chain's engine only.
    assert_eq!(
        claimable(&store, CHAIN_A, 0).await,
        vec![(bank_pull.to_string(), WorkKind::PullBatch)]
    );
    assert_eq!(
        claimable(&store, CHAIN_B, 0).await,
        vec![(wallet_pull.to_string(), WorkKind::PullBatch)]
    );

    // Authorized on chain: the bank-funded pull's bank leg and payout are queued in the same
    // transaction, on its chain; the wallet-funded pull moved its money already.
    assert!(
        store
            .pulls()
            .resolve(&bank_pull, &authorized(), now_ms())
            .await
            .unwrap()
    );
    assert!(
        store
            .pulls()
            .resolve(&wallet_pull, &authorized(), now_ms())
            .await
            .unwrap()
    );
    assert_eq!(
        claimable(&store, CHAIN_A, 0).await,
        vec![(bank_pull.to_string(), WorkKind::Payout)]
    );
    assert_eq!(claimable(&store, CHAIN_B, 0).await, vec![]);
    assert!(
        !store
            .outbox()
            .is_open(&Intent::Pull(bank_pull.clone()), WorkKind::PullBatch)
            .await
            .unwrap()
    );
    assert!(
        !store
            .outbox()
            .is_open(&Intent::Pull(wallet_pull.clone()), WorkKind::Payout)
            .await
            .unwrap()
    );

    // Driving work that waits is due again only at its time; closed, it is gone.
    store
        .outbox()
        .defer(
            &Intent::Pull(bank_pull.clone()),
            WorkKind::Payout,
            now_ms() + 60_000,
        )
        .await
        .unwrap();
    assert_eq!(claimable(&store, CHAIN_A, 0).await, vec![]);
    assert_eq!(
        claimable(&store, CHAIN_A, 61_000).await,
        vec![(bank_pull.to_string(), WorkKind::Payout)]
    );
    store
        .outbox()
        .close(&Intent::Pull(bank_pull.clone()), WorkKind::Payout, now_ms())
        .await
        .unwrap();
    assert_eq!(claimable(&store, CHAIN_A, 61_000).await, vec![]);

    // A payment with nothing to sign is queued with its row; one a wallet must sign only
    // once it is authorized.
    store
        .payments()
        .insert(&payment(
            &account,
            "pay_bank",
            PaymentStatus::Pending,
            (PartyKind::BankAccount, "ba_payer"),
        ))
        .await
        .unwrap();
    let wallet = "0x0707070707070707070707070707070707070707";
    store
        .consent()
        .insert(&Authorization {
            object_id: "pay_wallet".into(),
            signer: wallet.into(),
            nonce: "1".into(),
            deadline: now_ms() / 1000 + 600,
            signature: None,
            authorized_at: None,
        })
        .await
        .unwrap();
    store
        .payments()
        .insert(&payment(
            &account,
            "pay_wallet",
            PaymentStatus::RequiresAuthorization,
            (PartyKind::Wallet, wallet),
        ))
        .await
        .unwrap();
    assert_eq!(
        claimable(&store, CHAIN_A, 0).await,
        vec![("pay_bank".to_string(), WorkKind::DrivePayment)]
    );
    assert!(
        store
            .consent()
            .authorize(
                Authorizable::Payment(PaymentId::parse("pay_wallet").unwrap()),
                "0xsig",
                now_ms(),
            )
            .await
            .unwrap()
    );
    assert_eq!(
        claimable(&store, CHAIN_A, 0).await,
        vec![
            ("pay_bank".to_string(), WorkKind::DrivePayment),
            ("pay_wallet".to_string(), WorkKind::DrivePayment)
        ]
    );
}

/// Migration 0016 queues, for a database written by a version without driving work, the
/// work its payment worker would still have done: the open payment and the authorized
/// pull of a bank-funded mandate (not a final payment, not a wallet-funded pull).
async fn backfill(url: &str) {
    use sqlx::{Connection, Executor};
    let store = Store::connect(url).await.unwrap();
    let account = store
        .accounts()
        .create("Backfill test", now_ms())
        .await
        .unwrap()
        .id;
    let bank_pull = pending_pull(&store, &account, "bank", "ba_payer", CHAIN_A).await;
    let wallet_pull = pending_pull(
        &store,
        &account,
        "wallet",
        "0x0707070707070707070707070707070707070707",
        CHAIN_A,
    )
    .await;
    for id in [&bank_pull, &wallet_pull] {
        assert!(
            store
                .pulls()
                .resolve(id, &authorized(), now_ms())
                .await
                .unwrap()
        );
    }
    for (id, status) in [
        ("pay_open", PaymentStatus::Processing),
        ("pay_done", PaymentStatus::Succeeded),
    ] {
        store
            .payments()
            .insert(&payment(
                &account,
                id,
                status,
                (PartyKind::BankAccount, "ba_payer"),
            ))
            .await
            .unwrap();
    }
    // The database as the version before 0016 left it: no driving work, no `due_at`.
    let mut db = sqlx::AnyConnection::connect(url).await.unwrap();
    db.execute("DELETE FROM outbox WHERE kind IN ('payment', 'payout')")
        .await
        .unwrap();
    db.execute("ALTER TABLE outbox DROP COLUMN due_at")
        .await
        .unwrap();
    db.execute("DELETE FROM _sqlx_migrations WHERE version = 16")
        .await
        .unwrap();
    drop(db);
    drop(store);

    let store = Store::connect(url).await.unwrap();
    let mut work = claimable(&store, CHAIN_A, 0).await;
    work.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        work,
        vec![
            ("pay_open".to_string(), WorkKind::DrivePayment),
            (bank_pull.to_string(), WorkKind::Payout),
        ]
    );
}

/// A pull the engine may send is one no journaled `pull_batch` carries: the engine's last
/// check before it sends (after marking the claimed pulls in flight) and the claim agree.
async fn journaled_pulls_are_not_sent_again(store: Store) {
    let account = store
        .accounts()
        .create("Journal test", now_ms())
        .await
        .unwrap()
        .id;
    let sent = pending_pull(&store, &account, "sent", "ba_payer", CHAIN_A).await;
    let queued = pending_pull(
        &store,
        &account,
        "queued",
        "0x0707070707070707070707070707070707070707",
        CHAIN_A,
    )
    .await;
    // The first pull rides a journaled batch (fate unknown); the second is only queued.
    assert!(
        store
            .journal()
            .record(
                CHAIN_A,
                0,
                "0xbatch",
                "0x00",
                TxKind::PullBatch,
                &[Intent::Pull(sent.clone())],
                None,
                now_ms(),
            )
            .await
            .unwrap()
    );
    let ids = [Intent::Pull(sent.clone()), Intent::Pull(queued.clone())];
    let journaled = store
        .outbox()
        .journaled_intents(&ids, TxKind::PullBatch)
        .await
        .unwrap();
    assert_eq!(
        journaled,
        [Intent::Pull(sent.clone())].into_iter().collect()
    );
    // Another kind of transaction carrying the same id does not count.
    assert!(
        store
            .outbox()
            .journaled_intents(&ids, TxKind::CreateMandate)
            .await
            .unwrap()
            .is_empty()
    );
    // And the claim skips exactly that one.
    assert_eq!(
        claimable(&store, CHAIN_A, 0).await,
        vec![(queued.to_string(), WorkKind::PullBatch)]
    );
}

/// Journals a transaction of `kind` carrying `intents` on chain A.
async fn journal(store: &Store, hash: &str, nonce: u64, kind: TxKind, intents: &[Intent]) {
    assert!(
        store
            .journal()
            .record(CHAIN_A, nonce, hash, "0x00", kind, intents, None, now_ms())
            .await
            .unwrap()
    );
}

/// A fate takes effect in the transaction that records it, whichever path records it (the
/// group writer here; the watcher's `commit_chain_events` in the e2e suites), and once: a
/// successful batch closes the work of every pull it carries (their outcomes are its
/// logs); a reverted batch fails its pulls; a mandate's creating transaction activates it,
/// or fails it only when no other transaction of it is live; recording a fate again
/// changes nothing and writes no second event. No other pass is left to apply them.
async fn a_fate_takes_effect_where_it_is_recorded(store: Store) {
    use openrail_store::agentic::MandateStatus;
    use openrail_store::events::EventType;
    let account = store.accounts().create("Fates", now_ms()).await.unwrap().id;
    let wallet = "0x0707070707070707070707070707070707070707";
    let a = pending_pull(&store, &account, "fa", wallet, CHAIN_A).await;
    let b = pending_pull(&store, &account, "fb", wallet, CHAIN_A).await;
    let c = pending_pull(&store, &account, "fc", wallet, CHAIN_A).await;
    journal(
        &store,
        "0xsettled",
        0,
        TxKind::PullBatch,
        &[Intent::Pull(a.clone()), Intent::Pull(b.clone())],
    )
    .await;
    journal(
        &store,
        "0xreverted",
        1,
        TxKind::PullBatch,
        &[Intent::Pull(c.clone())],
    )
    .await;
    let open = |id: String, kind: WorkKind| {
        let store = store.clone();
        async move {
            let intent: Intent = id.parse().unwrap();
            store.outbox().is_open(&intent, kind).await.unwrap()
        }
    };
    store
        .journal()
        .mark(CHAIN_A, "0xsettled", TxStatus::Succeeded, Some(7), now_ms())
        .await
        .unwrap();
    store
        .journal()
        .mark(CHAIN_A, "0xreverted", TxStatus::Reverted, Some(8), now_ms())
        .await
        .unwrap();
    for id in [&a, &b, &c] {
        assert!(
            !open(id.to_string(), WorkKind::PullBatch).await,
            "closed with the fate"
        );
    }
    assert_eq!(
        store.pulls().get_unscoped(&c).await.unwrap().status,
        PullStatus::Failed,
        "a reverted batch fails its pull (its only transaction) as the fate is recorded"
    );
    for id in [&a, &b] {
        assert_eq!(
            store.pulls().get_unscoped(id).await.unwrap().status,
            PullStatus::Pending,
            "a batch's success says nothing of its pulls' outcomes (its logs do)"
        );
    }
    // Recorded again (a receipt read twice): nothing changes, no second event.
    store
        .journal()
        .mark(CHAIN_A, "0xreverted", TxStatus::Reverted, Some(8), now_ms())
        .await
        .unwrap();
    assert_eq!(
        store.events().types_of(c.as_str()).await.unwrap(),
        [EventType::DebitPullCreated, EventType::DebitPullFailed]
    );

    // A pending mandate with two creating transactions: the first's revert fails nothing
    // while the second is live; the second's success activates it, with its hash.
    let now = now_ms();
    let mid = MandateId::parse("man_fates").unwrap();
    let mut m = active_mandate_row(&mid, &account, Mode::Testnet, wallet, CHAIN_A, now);
    m.status = MandateStatus::Pending;
    store.mandates().insert(&m).await.unwrap();
    let intents = [Intent::Mandate(mid.clone())];
    journal(&store, "0xfirst", 2, TxKind::CreateMandate, &intents).await;
    journal(&store, "0xsecond", 3, TxKind::CreateMandate, &intents).await;
    store
        .journal()
        .mark(CHAIN_A, "0xfirst", TxStatus::Reverted, Some(9), now_ms())
        .await
        .unwrap();
    assert_eq!(
        store.mandates().get_unscoped(&mid).await.unwrap().status,
        MandateStatus::Pending,
        "another transaction of it is still live"
    );
    assert!(!open(mid.to_string(), WorkKind::CreateMandate).await);
    store
        .journal()
        .mark(CHAIN_A, "0xsecond", TxStatus::Succeeded, Some(10), now_ms())
        .await
        .unwrap();
    let activated = store.mandates().get_unscoped(&mid).await.unwrap();
    assert_eq!(activated.status, MandateStatus::Active);
    assert_eq!(activated.tx_hash.as_deref(), Some("0xsecond"));
    store
        .journal()
        .mark(CHAIN_A, "0xsecond", TxStatus::Succeeded, Some(10), now_ms())
        .await
        .unwrap();
    assert_eq!(
        store.events().types_of(mid.as_str()).await.unwrap(),
        [EventType::MandateCreated, EventType::MandateActivated]
    );
}

#[tokio::test]
async fn a_fate_takes_effect_where_it_is_recorded_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    a_fate_takes_effect_where_it_is_recorded(fresh_sqlite(dir.path()).await.unwrap()).await;
}

#[tokio::test]
async fn a_fate_takes_effect_where_it_is_recorded_postgres() {
    match fresh_postgres().await.unwrap() {
        Some(store) => a_fate_takes_effect_where_it_is_recorded(store).await,
        None => eprintln!("SKIPPED: fates postgres (no PostgreSQL at 127.0.0.1:5432)"),
    }
}

#[tokio::test]
async fn journaled_pulls_are_not_sent_again_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    journaled_pulls_are_not_sent_again(fresh_sqlite(dir.path()).await.unwrap()).await;
}

#[tokio::test]
async fn journaled_pulls_are_not_sent_again_postgres() {
    match fresh_postgres().await.unwrap() {
        Some(store) => journaled_pulls_are_not_sent_again(store).await,
        None => eprintln!("SKIPPED: journaled pulls postgres (no PostgreSQL at 127.0.0.1:5432)"),
    }
}

#[tokio::test]
async fn migration_backfills_driving_work_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("openrail.db").display());
    backfill(&url).await;
}

#[tokio::test]
async fn migration_backfills_driving_work_postgres() {
    match fresh_postgres_url().await.unwrap() {
        Some(url) => backfill(&url).await,
        None => eprintln!("SKIPPED: outbox backfill postgres (no PostgreSQL at 127.0.0.1:5432)"),
    }
}

#[tokio::test]
async fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    driving_work(fresh_sqlite(dir.path()).await.unwrap()).await;
}

#[tokio::test]
async fn postgres() {
    match fresh_postgres().await.unwrap() {
        Some(store) => driving_work(store).await,
        None => eprintln!("SKIPPED: outbox postgres (no PostgreSQL at 127.0.0.1:5432)"),
    }
}
