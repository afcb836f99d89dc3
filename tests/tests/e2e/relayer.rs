//! The relayer's watcher settles pulls whose outcome reached the chain but not the
//! database (the request that sent them died after broadcast), and keeps its cursor.

use std::sync::Arc;

use alloy::primitives::TxHash;
use alloy::primitives::{Address, B256, U256};
use openrail_chain::bindings::AllowanceStateMachine;
use openrail_chain::consent;
use openrail_chain::devnet::{dev_demo_payer, dev_operator, dev_spare};
use openrail_chain::submitter::{
    Journal, JournalFuture, PullRequest, SignedTx, Submitter, TxFate, UnsettledFuture,
};
use openrail_domain::{AccountId, MandateId, PullId, SessionKeyId};
use openrail_engine::StoreJournal;
use openrail_relayer::watcher::Watcher;
use openrail_store::agentic::{KeyStatus, Mandate, MandateStatus, PullStatus, Scope, SessionKey};
use openrail_store::journal::{Intent, TxKind};
use openrail_store::{Currency, Interval, Mode, now_ms};
use openrail_tests::{Harness, intent_of, pending_pull_row, units};

/// Chains, a store, a submitter, and a mandate (100 USD a day, no key ceiling) with one key,
/// in the store and on chain.
struct Fixture {
    h: Harness,
    store: openrail_store::Store,
    _dir: tempfile::TempDir,
    submitter: Submitter,
    url: alloy::transports::http::reqwest::Url,
    asm: alloy::primitives::Address,
    account_id: AccountId,
    mid: MandateId,
    kid: SessionKeyId,
    start_block: u64,
    chain_id: u64,
    tokens: std::collections::BTreeMap<openrail_store::Currency, alloy::primitives::Address>,
}

/// Mandate `mid`'s id on chain: the demo payer's, with the API id's salt.
fn mandate_onchain(mid: &MandateId) -> alloy::primitives::B256 {
    consent::mandate_id(dev_demo_payer().address(), consent::salt(mid.as_str()))
}

/// Key `kid` (of mandate `mid`)'s id on chain.
fn key_onchain(mid: &MandateId, kid: &SessionKeyId) -> alloy::primitives::B256 {
    consent::key_id(mandate_onchain(mid), consent::salt(kid.as_str()))
}

async fn fixture() -> anyhow::Result<Fixture> {
    let h = Harness::chains_only().await?;
    let dir = tempfile::tempdir()?;
    let store = openrail_tests::fresh_store(dir.path()).await?;
    let d = h.settlement_deployment().clone();
    let asm = d.allowance_state_machine.unwrap();
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let url = h.devnet.settlement.rpc_url().clone();
    let submitter = Submitter::start(
        &url,
        dev_operator(),
        asm,
        Arc::new(StoreJournal::new(store.clone(), None)),
    )
    .await?;

    // Rows as the API would have written them, and the mandate and key on chain.
    let account = store.accounts().create("Relayer test", now_ms()).await?;
    let (mid, kid) = (
        MandateId::parse("man_relayer").expect("an id"),
        SessionKeyId::parse("sk_relayer").expect("an id"),
    );
    let now = now_ms();
    store
        .mandates()
        .insert(&Mandate {
            id: mid.clone(),
            account_id: account.id.clone(),
            mode: Mode::Testnet,
            payer_account_id: payer.address().to_string(),
            payer_address: payer.address().to_string(),
            currency: Currency::Usd,
            max_amount: 10_000,
            interval: Interval::Daily,
            purpose: None,
            payees: vec![dev_spare().address().to_checksum(None)],
            agent: None,
            requirements: None,
            status: MandateStatus::Active,
            chain_id: d.chain_id,
            contract: asm.to_string(),
            onchain_id: mandate_onchain(&mid).to_string(),
            tx_hash: None,
            created_at: now,
        })
        .await?;
    store
        .keys()
        .insert(
            &SessionKey {
                id: kid.clone(),
                account_id: account.id.clone(),
                mode: Mode::Testnet,
                mandate_id: mid.clone(),
                expires_at: now + 3_600_000,
                max_amount: None,
                allowed_destinations: vec![],
                status: KeyStatus::Active,
                onchain_id: key_onchain(&mid, &kid).to_string(),
                tx_hash: None,
                created_at: now,
                signer: None,
            },
            "secret-hash",
        )
        .await?;
    // The payer's consent: its EIP-712 signature of the mandate's terms.
    let terms = consent::Mandate {
        mandateId: mandate_onchain(&mid),
        payer: payer.address(),
        token: d.tokens["USD"],
        maxAmount: units(100),
        interval: 0,
        payees: vec![dev_spare().address()],
        agent: alloy::primitives::Address::ZERO,
        purpose: String::new(),
        identityAttester: Address::ZERO,
        payerSchema: B256::ZERO,
        agentSchema: B256::ZERO,
        nonce: U256::from(1u64),
        deadline: U256::from(u64::MAX),
    };
    let signature = consent::sign_with(&terms, d.chain_id, asm, &payer);
    let create = AllowanceStateMachine::createMandateWithSignatureCall {
        terms: terms.terms(consent::salt(mid.as_str())),
        nonce: terms.nonce,
        deadline: terms.deadline,
        signature,
    };
    assert!(
        submitter
            .call_asm(create, TxKind::CreateMandate, &Intent::Mandate(mid.clone()))
            .await?
            .success
    );
    let issue = AllowanceStateMachine::issueSessionKeyCall {
        terms: openrail_chain::bindings::IAllowanceStateMachine::KeyTerms {
            salt: consent::salt(kid.as_str()),
            mandateId: mandate_onchain(&mid),
            expiresAt: (now / 1000 + 3_600) as u64,
            maxAmount: U256::ZERO,
            allowedDestinations: vec![],
            signer: alloy::primitives::Address::ZERO,
        },
        payees: terms.payees.clone(),
    };
    assert!(
        submitter
            .call_asm(
                issue,
                TxKind::IssueSessionKey,
                &Intent::SessionKey(kid.clone())
            )
            .await?
            .success
    );

    Ok(Fixture {
        start_block: d.deployed_at_block,
        tokens: d.currency_tokens(),
        chain_id: d.chain_id,
        h,
        store,
        _dir: dir,
        submitter,
        url,
        asm,
        account_id: account.id,
        mid,
        kid,
    })
}

/// A pending pull row, as the API writes it before submitting.
async fn pending_pull(f: &Fixture, id: &str, amount_minor: u64) -> anyhow::Result<()> {
    f.store
        .pulls()
        .insert(&pending_pull_row(
            id,
            &f.account_id,
            f.kid.as_str(),
            f.mid.as_str(),
            amount_minor,
            dev_spare().address(),
        ))
        .await?;
    Ok(())
}

#[tokio::test]
async fn watcher_resolves_pulls_left_pending() -> anyhow::Result<()> {
    let f = fixture().await?;
    let (store, submitter) = (&f.store, &f.submitter);
    let scope = Scope {
        account_id: &f.account_id,
        mode: Mode::Testnet,
    };
    let (kid, mid) = (&f.kid, &f.mid);
    // Three pulls (60 + 30 + 20 against 100): sent and mined, but nobody records the outcome.
    let mut pulls = Vec::new();
    for (i, amount) in [60u64, 30, 20].into_iter().enumerate() {
        let id = format!("pull_relayer_{i}");
        pending_pull(&f, &id, amount * 100).await?;
        let req = PullRequest {
            pull: PullId::parse(&id).expect("a pull id"),
            key_id: key_onchain(mid, kid),
            destination: dev_spare().address(),
            amount: units(amount),
            agent: None,
        };
        submitter.pull(req).await?;
        pulls.push(id);
    }
    for id in &pulls {
        let id = PullId::parse(id).expect("a pull id");
        assert_eq!(
            store.pulls().get(scope, &id).await?.status,
            PullStatus::Pending
        );
    }

    let watcher = Watcher::new(
        store.clone(),
        &f.url,
        f.asm,
        f.tokens.clone(),
        f.start_block,
        0,
    )
    .await?;
    let step = watcher.step().await?;
    assert_eq!(step.pulls_resolved, 3);
    let cursor = store
        .journal()
        .chain_cursor(f.chain_id)
        .await?
        .expect("cursor committed");
    assert_eq!(Some(cursor.block_number), step.cursor);
    let ids: Vec<PullId> = pulls
        .iter()
        .map(|p| PullId::parse(p).expect("a pull id"))
        .collect();
    let status = |i: usize| store.pulls().get(scope, &ids[i]);
    assert_eq!(status(0).await?.status, PullStatus::Authorized);
    assert_eq!(status(1).await?.status, PullStatus::Authorized);
    let declined = status(2).await?;
    assert_eq!(
        (declined.status, declined.decline_code.map(|r| r.as_str())),
        (PullStatus::Declined, Some("allowance_exceeded"))
    );
    assert_eq!(declined.remaining, Some(1_000)); // 10.00 left of 100.00
    assert_eq!(store.mandates().spend(mid, 0).await?, 9_000);

    // Nothing new: the cursor stays, nothing is applied twice.
    let again = watcher.step().await?;
    assert_eq!((again.pulls_resolved, again.reorg), (0, false));
    f.h.stop().await;
    Ok(())
}

/// A transfer the token refused is told apart by the watcher too (the payer's allowance
/// here), as the engine does from a receipt: which of them records the outcome first never
/// changes the code the pull ends with.
#[tokio::test]
async fn watcher_says_what_stopped_a_refused_transfer() -> anyhow::Result<()> {
    use openrail_chain::bindings::TestStablecoin;
    use openrail_chain::deploy::{mined, signer_provider};
    let f = fixture().await?;
    let d = f.h.settlement_deployment();
    let as_payer = signer_provider(f.h.devnet.settlement.rpc_url(), dev_demo_payer())?;
    mined(
        TestStablecoin::new(d.tokens["USD"], &as_payer)
            .approve(f.asm, U256::ZERO)
            .send()
            .await?,
    )
    .await?;
    pending_pull(&f, "pull_unapproved", 1_000).await?;
    let req = PullRequest {
        pull: PullId::parse("pull_unapproved").expect("a pull id"),
        key_id: key_onchain(&f.mid, &f.kid),
        destination: dev_spare().address(),
        amount: units(10),
        agent: None,
    };
    f.submitter.pull(req).await?; // mined; nobody records the outcome
    let watcher = Watcher::new(
        f.store.clone(),
        &f.url,
        f.asm,
        f.tokens.clone(),
        f.start_block,
        0,
    )
    .await?;
    assert_eq!(watcher.step().await?.pulls_resolved, 1);
    let scope = Scope {
        account_id: &f.account_id,
        mode: Mode::Testnet,
    };
    let pull = f
        .store
        .pulls()
        .get(scope, &PullId::parse("pull_unapproved").expect("a pull id"))
        .await?;
    assert_eq!(
        (pull.status, pull.decline_code.map(|r| r.as_str())),
        (PullStatus::Declined, Some("allowance_insufficient"))
    );
    f.h.stop().await;
    Ok(())
}

/// A journal that persists the transaction, then dies: the process crashed between the
/// journal write and the broadcast.
struct CrashAfterJournal(StoreJournal);

impl Journal for CrashAfterJournal {
    fn record<'a>(&'a self, tx: &'a SignedTx) -> JournalFuture<'a> {
        Box::pin(async move {
            self.0.record(tx).await?;
            panic!("crash after journaling {}", tx.hash);
        })
    }
    fn finished<'a>(
        &'a self,
        chain_id: u64,
        hash: TxHash,
        fate: TxFate,
        block: Option<u64>,
    ) -> JournalFuture<'a> {
        self.0.finished(chain_id, hash, fate, block)
    }
    fn unsettled<'a>(&'a self, chain_id: u64) -> UnsettledFuture<'a> {
        self.0.unsettled(chain_id)
    }
    fn reorged<'a>(&'a self, chain_id: u64, hash: TxHash) -> JournalFuture<'a> {
        self.0.reorged(chain_id, hash)
    }
}

#[tokio::test]
async fn restart_rebroadcasts_a_journaled_transaction_once() -> anyhow::Result<()> {
    let f = fixture().await?;
    let scope = Scope {
        account_id: &f.account_id,
        mode: Mode::Testnet,
    };
    pending_pull(&f, "pull_crash", 1_500).await?;

    // The first process journals the pull's transaction and dies before broadcasting it.
    let crashing = Submitter::start(
        &f.url,
        dev_operator(),
        f.asm,
        Arc::new(CrashAfterJournal(StoreJournal::new(f.store.clone(), None))),
    )
    .await?;
    let req = PullRequest {
        pull: PullId::parse("pull_crash").expect("a pull id"),
        key_id: key_onchain(&f.mid, &f.kid),
        destination: dev_spare().address(),
        amount: units(15),
        agent: None,
    };
    assert!(
        crashing.pull(req).await.is_err(),
        "the crashed submitter cannot answer"
    );
    assert_eq!(
        f.store
            .journal()
            .count_for_intent(&intent_of("pull_crash"))
            .await?,
        1
    );
    assert_eq!(f.store.journal().unsettled(f.chain_id).await?.len(), 1);

    // A new process rebroadcasts the exact journaled bytes; the watcher records the outcome.
    let restarted = Submitter::start(
        &f.url,
        dev_operator(),
        f.asm,
        Arc::new(StoreJournal::new(f.store.clone(), None)),
    )
    .await?;
    let watcher = Watcher::new(
        f.store.clone(),
        &f.url,
        f.asm,
        f.tokens.clone(),
        f.start_block,
        0,
    )
    .await?;
    let mut status = PullStatus::Pending;
    for _ in 0..50 {
        watcher.step().await?;
        status = f
            .store
            .pulls()
            .get(scope, &PullId::parse("pull_crash").expect("an id"))
            .await?
            .status;
        if status != PullStatus::Pending {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(status, PullStatus::Authorized);
    // Never two transactions for one intent, and the nonce moved on (the next call works).
    assert_eq!(
        f.store
            .journal()
            .count_for_intent(&intent_of("pull_crash"))
            .await?,
        1
    );
    assert_eq!(f.h.balance("USD", dev_spare().address()).await?, units(15));
    let cancel = AllowanceStateMachine::cancelMandateCall {
        mandateId: mandate_onchain(&f.mid),
    };
    assert!(
        restarted
            .call_asm(
                cancel,
                TxKind::CancelMandate,
                &Intent::Mandate(f.mid.clone())
            )
            .await?
            .success
    );
    f.h.stop().await;
    Ok(())
}

#[tokio::test]
async fn reorg_undoes_and_redoes_a_pull() -> anyhow::Result<()> {
    use alloy::providers::Provider;
    use openrail_chain::submitter::PullOutcome;

    let f = fixture().await?;
    let scope = Scope {
        account_id: &f.account_id,
        mode: Mode::Testnet,
    };
    let node = openrail_chain::tls::reader(&f.url)?;
    pending_pull(&f, "pull_reorg", 2_500).await?;
    let req = PullRequest {
        pull: PullId::parse("pull_reorg").expect("a pull id"),
        key_id: key_onchain(&f.mid, &f.kid),
        destination: dev_spare().address(),
        amount: units(25),
        agent: None,
    };
    let PullOutcome::Authorized {
        tx_hash,
        block_number,
    } = f.submitter.pull(req).await?
    else {
        anyhow::bail!("the pull was declined");
    };
    let watcher = Watcher::new(
        f.store.clone(),
        &f.url,
        f.asm,
        f.tokens.clone(),
        f.start_block,
        0,
    )
    .await?;
    assert_eq!(watcher.step().await?.pulls_resolved, 1);
    let before = f
        .store
        .pulls()
        .get(scope, &PullId::parse("pull_reorg").expect("an id"))
        .await?;
    assert_eq!(before.status, PullStatus::Authorized);
    assert_eq!(before.tx_hash, Some(tx_hash.to_string()));
    assert_eq!(f.store.mandates().spend(&f.mid, 0).await?, 2_500);

    // anvil replaces every block from the pull's on with empty ones: the pull's event and
    // its token move are gone from the chain.
    let head = node.get_block_number().await?;
    let _: serde_json::Value = node
        .raw_request(
            "anvil_reorg".into(),
            (head - block_number + 1, Vec::<serde_json::Value>::new()),
        )
        .await?;
    assert!(node.get_transaction_receipt(tx_hash).await?.is_none());
    assert_eq!(f.h.balance("USD", dev_spare().address()).await?, U256::ZERO);

    // The watcher notices, undoes the pull (back to pending, journal fate unknown) and
    // rebroadcasts the journaled transaction; the new chain mines it and the scan resolves
    // the pull again.
    let step = watcher.step().await?;
    assert!(step.reorg);
    assert_eq!((step.pulls_undone, step.rebroadcast), (1, 1));
    let mut after = f
        .store
        .pulls()
        .get(scope, &PullId::parse("pull_reorg").expect("an id"))
        .await?;
    for _ in 0..50 {
        if after.status != PullStatus::Pending {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        watcher.step().await?;
        after = f
            .store
            .pulls()
            .get(scope, &PullId::parse("pull_reorg").expect("an id"))
            .await?;
    }
    assert_eq!(after.status, PullStatus::Authorized);
    assert_eq!(
        after.tx_hash,
        Some(tx_hash.to_string()),
        "the same transaction"
    );
    let receipt = node
        .get_transaction_receipt(tx_hash)
        .await?
        .expect("mined again");
    assert!(receipt.status());
    // Effects once: one transaction for the intent, tokens moved once, spend counted once,
    // the journal settled, and the operator's nonce not jammed (the next call works).
    assert_eq!(
        f.store
            .journal()
            .count_for_intent(&intent_of("pull_reorg"))
            .await?,
        1
    );
    // Its events tell the story: authorized, undone by the reorganisation, authorized again.
    {
        use openrail_store::events::EventType as E;
        assert_eq!(
            f.store.events().types_of("pull_reorg").await?,
            [
                E::DebitPullCreated,
                E::DebitPullAuthorized,
                E::DebitPullReorged,
                E::DebitPullAuthorized
            ]
        );
    }
    assert!(f.store.journal().unsettled(f.chain_id).await?.is_empty());
    assert_eq!(f.h.balance("USD", dev_spare().address()).await?, units(25));
    assert_eq!(f.store.mandates().spend(&f.mid, 0).await?, 2_500);
    let cancel = AllowanceStateMachine::cancelMandateCall {
        mandateId: mandate_onchain(&f.mid),
    };
    assert!(
        f.submitter
            .call_asm(
                cancel,
                TxKind::CancelMandate,
                &Intent::Mandate(f.mid.clone())
            )
            .await?
            .success
    );
    f.h.stop().await;
    Ok(())
}

/// A journal whose every write of a fate fails (the database unreachable just as receipts
/// come back); it journals transactions as usual.
struct FatesFail(StoreJournal);

impl Journal for FatesFail {
    fn record<'a>(&'a self, tx: &'a SignedTx) -> JournalFuture<'a> {
        self.0.record(tx)
    }
    fn finished<'a>(
        &'a self,
        _chain_id: u64,
        _hash: TxHash,
        _fate: TxFate,
        _block: Option<u64>,
    ) -> JournalFuture<'a> {
        Box::pin(async { Err("the database is unreachable".into()) })
    }
    fn unsettled<'a>(&'a self, chain_id: u64) -> UnsettledFuture<'a> {
        self.0.unsettled(chain_id)
    }
    fn reorged<'a>(&'a self, chain_id: u64, hash: TxHash) -> JournalFuture<'a> {
        self.0.reorged(chain_id, hash)
    }
}

/// The submitter journals a call's fate before answering, and the fate moves the object
/// in the same database transaction. When that write fails, the engine records the fate
/// itself from the answer before it closes the work: a mined `createMandate` still
/// activates its mandate, once, with its transaction.
#[tokio::test]
async fn a_mined_call_whose_fate_was_not_journaled_still_moves_its_object() -> anyhow::Result<()> {
    let h = Harness::chains_only().await?;
    let dir = tempfile::tempdir()?;
    let store = openrail_tests::fresh_store(dir.path()).await?;
    let d = h.settlement_deployment().clone();
    let account = store.accounts().create("Fates", now_ms()).await?;
    let mid = MandateId::parse("man_unjournaledfate").expect("an id");
    // Funded from a bank account: the operator creates it on chain, no payer signature.
    store
        .mandates()
        .insert(&Mandate {
            id: mid.clone(),
            account_id: account.id.clone(),
            mode: Mode::Testnet,
            payer_account_id: "ba_unjournaledfate".into(),
            payer_address: d.treasury.to_string(),
            currency: Currency::Usd,
            max_amount: 10_000,
            interval: Interval::Daily,
            purpose: None,
            payees: vec![],
            agent: None,
            requirements: None,
            status: MandateStatus::Pending,
            chain_id: d.chain_id,
            contract: d.allowance_state_machine.expect("an ASM").to_string(),
            onchain_id: consent::mandate_id(d.treasury, consent::salt(mid.as_str())).to_string(),
            tx_hash: None,
            created_at: now_ms(),
        })
        .await?;
    let net = Arc::new(openrail_engine::network::Network::from_deployment(&d)?);
    let submitter = Submitter::start(
        h.devnet.settlement.rpc_url(),
        dev_operator(),
        net.state_machine()?,
        Arc::new(FatesFail(StoreJournal::new(store.clone(), None))),
    )
    .await?;
    let engine = openrail_engine::lead_with(
        &store,
        &net,
        submitter,
        Mode::Testnet,
        std::time::Duration::from_millis(100),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let m = loop {
        let m = store.mandates().get_unscoped(&mid).await?;
        if m.status != MandateStatus::Pending || std::time::Instant::now() > deadline {
            break m;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    engine.abort();
    assert_eq!(m.status, MandateStatus::Active);
    let tx = m.tx_hash.expect("its creating transaction");
    assert_eq!(
        store
            .outbox()
            .journaled_status(&Intent::Mandate(mid.clone()), TxKind::CreateMandate)
            .await?,
        Some(openrail_store::journal::TxStatus::Succeeded),
        "the fate the submitter could not write ({tx})"
    );
    assert!(
        !store
            .outbox()
            .is_open(
                &Intent::Mandate(mid.clone()),
                openrail_store::outbox::WorkKind::CreateMandate
            )
            .await?
    );
    use openrail_store::events::EventType;
    assert_eq!(
        store.events().types_of(mid.as_str()).await?,
        [EventType::MandateCreated, EventType::MandateActivated]
    );
    h.stop().await;
    Ok(())
}
