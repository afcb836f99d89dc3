//! The store's group commit: pulls accepted together are written in one transaction, and
//! a batch that fails (here: one pull repeats an id) is written pull by pull, so the bad
//! row fails alone. Store only, no chains (works on both databases, like the rest).

use alloy::primitives::Address;
use openrail_domain::{AccountId, MandateId, PullId, SessionKeyId};
use openrail_store::agentic::{KeyStatus, PullResolution, PullStatus, SessionKey};
use openrail_store::events::EventType;
use openrail_store::journal::{TxKind, TxStatus};
use openrail_store::outbox::WorkKind;
use openrail_store::testing::active_mandate_row;
use openrail_store::{Mode, Store, now_ms};
use openrail_tests::{fresh_store, intent_of, pending_pull_row};

/// An account with a bank-funded mandate (`man_intake`) and one key on it (`sk_intake`);
/// returns the account's id.
async fn account_with_key(store: &Store) -> anyhow::Result<AccountId> {
    let account = store.accounts().create("Intake test", now_ms()).await?;
    let now = now_ms();
    store
        .mandates()
        .insert(&active_mandate_row(
            &MandateId::parse("man_intake").expect("an id"),
            &account.id,
            Mode::Testnet,
            "ba_intake",
            31337,
            now,
        ))
        .await?;
    store
        .keys()
        .insert(
            &SessionKey {
                id: SessionKeyId::parse("sk_intake").expect("an id"),
                account_id: account.id.clone(),
                mode: Mode::Testnet,
                mandate_id: MandateId::parse("man_intake").expect("an id"),
                expires_at: now + 3_600_000,
                max_amount: None,
                allowed_destinations: vec![],
                status: KeyStatus::Active,
                onchain_id: "0x02".into(),
                tx_hash: None,
                created_at: now,
                signer: None,
            },
            "secret-hash",
        )
        .await?;
    Ok(account.id)
}

#[tokio::test]
async fn a_bad_pull_in_a_batch_fails_alone() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let store = fresh_store(dir.path()).await?;
    let account = account_with_key(&store).await?;
    let pull = |id: &str| {
        pending_pull_row(
            id,
            &account,
            "sk_intake",
            "man_intake",
            100,
            Address::repeat_byte(3),
        )
    };
    // Queued before the writer runs (one runtime thread): one batch of three.
    let (a, dup, b) = tokio::join!(
        store.pulls().accept(pull("pull_a")),
        store.pulls().accept(pull("pull_a")),
        store.pulls().accept(pull("pull_b")),
    );
    assert!(a.is_ok(), "{a:?}");
    assert!(dup.is_err(), "a repeated id is refused");
    assert!(b.is_ok(), "{b:?}");
    for id in ["pull_a", "pull_b"] {
        assert_eq!(
            store
                .pulls()
                .get_unscoped(&PullId::parse(id).expect("an id"))
                .await?
                .id,
            id
        );
        assert_eq!(
            store.events().types_of(id).await?,
            [EventType::DebitPullCreated]
        );
        assert!(
            store
                .outbox()
                .is_open(&intent_of(id), WorkKind::PullBatch)
                .await?
        );
    }
    Ok(())
}

/// The other jobs of a failed group — an outcome, a journal fate — are written alone too,
/// each answered with its own result.
#[tokio::test]
async fn outcomes_and_fates_of_a_failed_group_are_written_alone() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let store = fresh_store(dir.path()).await?;
    let account = account_with_key(&store).await?;
    let pull = |id: &str| {
        pending_pull_row(
            id,
            &account,
            "sk_intake",
            "man_intake",
            100,
            Address::repeat_byte(3),
        )
    };
    store.pulls().accept(pull("pull_sent")).await?;
    assert!(
        store
            .journal()
            .record(
                31337,
                0,
                "0xsent",
                "0x00",
                TxKind::PullBatch,
                &[intent_of("pull_sent")],
                None,
                now_ms(),
            )
            .await?
    );
    let authorized = PullResolution {
        status: PullStatus::Authorized,
        decline_code: None,
        remaining_token_units: None,
        resets_at_s: None,
        tx_hash: Some("0xsent".into()),
        authorized_at: Some(now_ms()),
    };
    let sent = PullId::parse("pull_sent").expect("an id");
    // One group (one runtime thread): a repeated id fails it, so each job is written alone.
    let (a, dup, outcome, fate) = tokio::join!(
        store.pulls().accept(pull("pull_a")),
        store.pulls().accept(pull("pull_a")),
        store.pulls().record_outcome(&sent, authorized, now_ms()),
        store
            .journal()
            .mark(31337, "0xsent", TxStatus::Succeeded, Some(5), now_ms()),
    );
    assert!(a.is_ok(), "{a:?}");
    assert!(dup.is_err(), "a repeated id is refused");
    assert_eq!(
        outcome?.map(|p| p.status),
        Some(PullStatus::Authorized),
        "the outcome is recorded, and the recorded pull returned"
    );
    fate?;
    assert_eq!(
        store.pulls().get_unscoped(&sent).await?.status,
        PullStatus::Authorized
    );
    assert_eq!(
        store.events().types_of("pull_sent").await?,
        [EventType::DebitPullCreated, EventType::DebitPullAuthorized]
    );
    assert_eq!(
        store
            .outbox()
            .journaled_status(&intent_of("pull_sent"), TxKind::PullBatch)
            .await?,
        Some(TxStatus::Succeeded)
    );
    Ok(())
}
