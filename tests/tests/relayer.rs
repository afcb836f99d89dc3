//! The relayer's watcher settles pulls whose outcome reached the chain but not the
//! database (the request that sent them died after broadcast), and keeps its cursor.

use std::sync::Arc;

use alloy::primitives::{U256, keccak256};
use openrail_api::server::StoreJournal;
use openrail_chain::bindings::AllowanceStateMachine;
use openrail_chain::devnet::{dev_demo_payer, dev_operator, dev_spare};
use openrail_chain::submitter::{PullRequest, Submitter};
use openrail_relayer::watcher::Watcher;
use openrail_store::agentic::{
    DebitPull, KeyStatus, Mandate, MandateStatus, PullStatus, Scope, SessionKey,
};
use openrail_store::{Currency, Interval, Mode, now_ms};
use openrail_tests::{Harness, units};

#[tokio::test]
async fn watcher_resolves_pulls_left_pending() -> anyhow::Result<()> {
    let h = Harness::chains_only().await?;
    let dir = tempfile::tempdir()?;
    let store = openrail_store::testing::fresh_sqlite(dir.path()).await?;
    let d = h.settlement_deployment().clone();
    let asm = d.allowance_state_machine.unwrap();
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let url = h.devnet.settlement.rpc_url().clone();
    let submitter = Submitter::start(
        &url,
        dev_operator(),
        asm,
        Arc::new(StoreJournal(store.clone())),
    )
    .await?;

    // Rows as the API would have written them, and the mandate and key on chain.
    let account = store.create_account("Relayer test").await?;
    let scope = Scope {
        account_id: &account.id,
        mode: Mode::Testnet,
    };
    let (mid, kid) = ("man_relayer".to_string(), "sk_relayer".to_string());
    let now = now_ms();
    store
        .insert_mandate(&Mandate {
            id: mid.clone(),
            account_id: account.id.clone(),
            mode: Mode::Testnet,
            payer_account_id: payer.address().to_string(),
            payer_address: payer.address().to_string(),
            currency: Currency::Usd,
            max_amount: 10_000,
            interval: Interval::Daily,
            purpose: None,
            status: MandateStatus::Active,
            chain_id: d.chain_id,
            contract: asm.to_string(),
            onchain_id: keccak256(&mid).to_string(),
            tx_hash: None,
            created_at: now,
        })
        .await?;
    store
        .insert_session_key(
            &SessionKey {
                id: kid.clone(),
                account_id: account.id.clone(),
                mode: Mode::Testnet,
                mandate_id: mid.clone(),
                expires_at: now + 3_600_000,
                max_amount: None,
                allowed_destinations: vec![],
                status: KeyStatus::Active,
                onchain_id: keccak256(&kid).to_string(),
                tx_hash: None,
                created_at: now,
            },
            "secret-hash",
        )
        .await?;
    let create = AllowanceStateMachine::createMandateCall {
        mandateId: keccak256(&mid),
        payer: payer.address(),
        token: d.tokens["USD"],
        maxAmount: units(100),
        interval: 0,
    };
    assert!(
        submitter
            .call_asm(create, "create_mandate", &mid)
            .await?
            .success
    );
    let issue = AllowanceStateMachine::issueSessionKeyCall {
        keyId: keccak256(&kid),
        mandateId: keccak256(&mid),
        expiresAt: (now / 1000 + 3_600) as u64,
        maxAmount: U256::ZERO,
        allowedDestinations: vec![],
    };
    assert!(
        submitter
            .call_asm(issue, "issue_session_key", &kid)
            .await?
            .success
    );

    // Three pulls (60 + 30 + 20 against 100): sent and mined, but nobody records the outcome.
    let mut pulls = Vec::new();
    for (i, amount) in [60u64, 30, 20].into_iter().enumerate() {
        let id = format!("pull_relayer_{i}");
        store
            .insert_pull(&DebitPull {
                id: id.clone(),
                account_id: account.id.clone(),
                mode: Mode::Testnet,
                session_key_id: kid.clone(),
                mandate_id: mid.clone(),
                amount: amount * 100,
                currency: Currency::Usd,
                destination: dev_spare().address().to_string(),
                destination_address: dev_spare().address().to_string(),
                description: None,
                status: PullStatus::Pending,
                decline_code: None,
                remaining: None,
                resets_at: None,
                tx_hash: None,
                authorized_at: None,
                created_at: now,
                updated_at: now,
            })
            .await?;
        let req = PullRequest {
            intent: id.clone(),
            key_id: keccak256(&kid),
            destination: dev_spare().address(),
            amount: units(amount),
        };
        submitter.pull(req).await?;
        pulls.push(id);
    }
    for id in &pulls {
        assert_eq!(store.pull(scope, id).await?.status, PullStatus::Pending);
    }

    let watcher = Watcher::new(store.clone(), &url, asm, d.deployed_at_block, 0).await?;
    let step = watcher.step().await?;
    assert_eq!(step.pulls_resolved, 3);
    let cursor = store
        .chain_cursor(d.chain_id)
        .await?
        .expect("cursor committed");
    assert_eq!(Some(cursor.block_number), step.cursor);
    let status = |i: usize| store.pull(scope, &pulls[i]);
    assert_eq!(status(0).await?.status, PullStatus::Authorized);
    assert_eq!(status(1).await?.status, PullStatus::Authorized);
    let declined = status(2).await?;
    assert_eq!(
        (declined.status, declined.decline_code.as_deref()),
        (PullStatus::Declined, Some("allowance_exceeded"))
    );
    assert_eq!(declined.remaining, Some(1_000)); // 10.00 left of 100.00
    assert_eq!(store.mandate_spend(&mid, 0).await?, 9_000);

    // Nothing new: the cursor stays, nothing is applied twice.
    let again = watcher.step().await?;
    assert_eq!((again.pulls_resolved, again.reorg), (0, false));
    h.stop().await;
    Ok(())
}
