//! Fault injection: the chain misbehaves as real ones do, and every pull still ends in one
//! final state, nothing is paid twice and no nonce is left stuck.
//!
//! Each scenario stops anvil's automatic mining (`anvil_setAutomine(false)`) so that
//! transactions wait in the pool, does something a real network does — drops a
//! transaction, stops producing blocks, raises the base fee, lets an outside transaction
//! take the operator's nonce, restarts the service, answers RPC calls with 429, 502,
//! timeouts and resets — and then lets blocks come again, one a second
//! (`anvil_setIntervalMining(1)`), as on a chain with a block time.

use std::time::{Duration, Instant};

use alloy::network::TransactionBuilder;
use alloy::primitives::{Address, U256};
use alloy::providers::Provider;
use alloy::providers::ext::AnvilApi;
use alloy::rpc::types::TransactionRequest;
use openrail_chain::devnet::{dev_demo_payer, dev_operator, dev_spare};
use openrail_chain::submitter::SubmitterOptions;
use openrail_store::journal::TxStatus;
use openrail_tests::{Harness, intent_of};
use reqwest::{Method, StatusCode};
use serde_json::json;

mod proxy;

/// Replacement quick enough for a test: look every 300 ms, replace after 1.5 s.
fn quick() -> SubmitterOptions {
    SubmitterOptions {
        replace_after: Duration::from_millis(1500),
        check_every: Duration::from_millis(300),
        ..Default::default()
    }
}

/// A funded payer's mandate and a session key on it (mined at once: automine is still
/// on); returns the key's id.
async fn key(h: &Harness) -> anyhow::Result<String> {
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let m = h
        .post_authorized(
            "/v1/mandates",
            json!({"payer_account_id": payer.address().to_string(), "max_amount": "500",
                   "currency": "USD", "interval": "daily",
                   "payees": [dev_spare().address().to_string()]}),
        )
        .await?;
    assert_eq!(m.str("status"), "active", "{}", m.body);
    let k = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": m.str("id"), "expires_in": 3600}),
        )
        .await?;
    assert_eq!(k.status, StatusCode::CREATED, "{}", k.body);
    Ok(k.str("id").to_string())
}

/// Asks for a pull of `amount` dollars without waiting for the chain; returns its id.
async fn pull(h: &Harness, key: &str, amount: &str) -> anyhow::Result<String> {
    let r = h
        .call(
            Method::POST,
            "/v1/debit-pulls",
            Some(&json!({"session_key_id": key, "amount": amount})),
            None,
            &[("prefer", "wait=0")],
        )
        .await?;
    assert!(
        r.status == StatusCode::ACCEPTED || r.status == StatusCode::CREATED,
        "{} {}",
        r.status,
        r.body
    );
    Ok(r.str("id").to_string())
}

/// A server replacing transactions as `options` say, a key, the payee's balance before,
/// and a pull of `amount` journaled and waiting in the pool (automine stopped).
async fn one_waiting_pull(
    options: SubmitterOptions,
    amount: &str,
) -> anyhow::Result<(Harness, U256, String)> {
    let h = Harness::builder().chain(options, None).start().await?;
    let key = key(&h).await?;
    let before = h.balance("USD", dev_spare().address()).await?;
    h.settlement.anvil_set_auto_mine(false).await?;
    let id = pull(&h, &key, amount).await?;
    journaled(&h, &id, 1, Duration::from_secs(10)).await?;
    Ok((h, before, id))
}

/// Waits until the journal holds at least `n` transactions (variants) for `intent`.
async fn journaled(h: &Harness, intent: &str, n: u64, within: Duration) -> anyhow::Result<()> {
    let store = &h.server().store;
    let until = Instant::now() + within;
    while store.journal().count_for_intent(&intent_of(intent)).await? < n {
        anyhow::ensure!(
            Instant::now() < until,
            "{intent} has {} journaled transactions, not {n}, after {within:?}",
            store.journal().count_for_intent(&intent_of(intent)).await?
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

/// The hash of the transaction the journal reads first for `intent`.
async fn journaled_hash(h: &Harness, intent: &str) -> anyhow::Result<alloy::primitives::TxHash> {
    let tx = h
        .server()
        .store
        .payments()
        .tx_status_for_intent(&intent_of(intent))
        .await?
        .ok_or_else(|| anyhow::anyhow!("{intent} has no transaction"))?;
    Ok(tx.hash.parse()?)
}

/// Blocks every second from now on.
async fn resume_blocks(h: &Harness) -> anyhow::Result<()> {
    h.settlement.anvil_set_interval_mining(1).await?;
    Ok(())
}

/// Waits until every pull is final; returns their statuses.
async fn finals(h: &Harness, pulls: &[String], within: Duration) -> anyhow::Result<Vec<String>> {
    let until = Instant::now() + within;
    let mut out = Vec::new();
    for id in pulls {
        loop {
            let g = h.get(&format!("/v1/debit-pulls/{id}")).await?;
            let status = g.str("status").to_string();
            if status != "pending" {
                out.push(status);
                break;
            }
            anyhow::ensure!(
                Instant::now() < until,
                "{id} still pending after {within:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    Ok(out)
}

/// What every scenario ends with: the payee received exactly the authorized pulls'
/// amounts (nothing twice), each authorized pull has exactly one mined transaction and
/// no other live one, and the operator has nothing left in the pool or unsettled in the
/// journal (no nonce stuck).
async fn books_balance(
    h: &Harness,
    pulls: &[(String, u64)],
    statuses: &[String],
    payee_before: U256,
) -> anyhow::Result<()> {
    let store = &h.server().store;
    let mut paid = U256::ZERO;
    for ((id, cents), status) in pulls.iter().zip(statuses) {
        let tx = store
            .payments()
            .tx_status_for_intent(&intent_of(id))
            .await?;
        match status.as_str() {
            "authorized" => {
                paid += U256::from(*cents) * U256::from(10_000u64);
                assert_eq!(
                    tx.map(|t| t.status),
                    Some(TxStatus::Succeeded),
                    "{id}: its transaction"
                );
            }
            other => assert_eq!(other, "failed", "{id}"),
        }
    }
    assert_eq!(
        h.balance("USD", dev_spare().address()).await? - payee_before,
        paid,
        "the payee received exactly the authorized pulls"
    );
    // Every transaction the journal holds reaches a fate; the operator's pool drains.
    let chain_id = h.settlement_deployment().chain_id;
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let summary = store.journal().summary(chain_id).await?;
        let operator = dev_operator().address();
        let pending = h
            .settlement
            .get_transaction_count(operator)
            .pending()
            .await?;
        let mined = h.settlement.get_transaction_count(operator).await?;
        if summary.signed == 0 && pending == mined {
            // One mined transaction per nonce: never two for one.
            assert_eq!(summary.mined, summary.mined_nonces, "{summary:?}");
            break;
        }
        anyhow::ensure!(
            Instant::now() < until,
            "left unsettled: {summary:?}, pool {pending} vs mined {mined}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(())
}

#[tokio::test]
async fn a_transaction_dropped_from_the_pool_is_broadcast_again() -> anyhow::Result<()> {
    let (h, before, id) = one_waiting_pull(quick(), "1.25").await?;
    let hash = journaled_hash(&h, &id).await?;
    // Once the node has it, the node forgets it.
    let until = Instant::now() + Duration::from_secs(5);
    while h.settlement.get_transaction_by_hash(hash).await?.is_none() {
        anyhow::ensure!(Instant::now() < until, "never reached the pool");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    h.settlement.anvil_drop_transaction(hash).await?;
    assert!(h.settlement.get_transaction_by_hash(hash).await?.is_none());
    resume_blocks(&h).await?;
    let statuses = finals(&h, std::slice::from_ref(&id), Duration::from_secs(30)).await?;
    assert_eq!(statuses, ["authorized"]);
    books_balance(&h, &[(id, 125)], &statuses, before).await?;
    // The submitter read the operator's balance (what a floor is checked against).
    let node = h.server().node.as_ref().expect("in-process server");
    let seen = node.network.submitter().and_then(|s| s.operator_balance());
    let now = h.settlement.get_balance(dev_operator().address()).await?;
    assert!(
        seen.is_some_and(|b| b >= now && b > U256::ZERO),
        "{seen:?} vs {now}"
    );
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn blocks_that_stop_and_resume_see_replacements_and_one_of_them_mined() -> anyhow::Result<()>
{
    let h = Harness::builder().chain(quick(), None).start().await?;
    let key = key(&h).await?;
    let before = h.balance("USD", dev_spare().address()).await?;
    h.settlement.anvil_set_auto_mine(false).await?;
    let mut pulls = Vec::new();
    for cents in [100u64, 200, 300] {
        let id = pull(&h, &key, &format!("{}.{:02}", cents / 100, cents % 100)).await?;
        pulls.push((id, cents));
    }
    // No block for a while: each waiting transaction is replaced (same nonce, higher fees).
    for (id, _) in &pulls {
        journaled(&h, id, 2, Duration::from_secs(15)).await?;
    }
    resume_blocks(&h).await?;
    let ids: Vec<String> = pulls.iter().map(|(id, _)| id.clone()).collect();
    let statuses = finals(&h, &ids, Duration::from_secs(40)).await?;
    assert!(statuses.iter().all(|s| s == "authorized"), "{statuses:?}");
    books_balance(&h, &pulls, &statuses, before).await?;
    let summary = h
        .server()
        .store
        .journal()
        .summary(h.settlement_deployment().chain_id)
        .await?;
    assert!(summary.replaced >= 1, "{summary:?}");
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn a_base_fee_spike_is_outbid() -> anyhow::Result<()> {
    let (h, before, id) = one_waiting_pull(quick(), "2.00").await?;
    let first = journaled_hash(&h, &id).await?;
    let sent = h.settlement.get_transaction_by_hash(first).await?.map(|t| {
        use alloy::consensus::Transaction;
        t.max_fee_per_gas()
    });
    // The next block's base fee jumps far above what the transaction offers: it is left
    // out of that block and every one after, until it is replaced.
    let offered = sent.unwrap_or(10_000_000_000);
    h.settlement
        .anvil_set_next_block_base_fee_per_gas(offered * 50)
        .await?;
    h.settlement.anvil_mine(Some(1), None).await?;
    assert!(h.settlement.get_transaction_receipt(first).await?.is_none());
    resume_blocks(&h).await?;
    let statuses = finals(&h, std::slice::from_ref(&id), Duration::from_secs(30)).await?;
    assert_eq!(statuses, ["authorized"]);
    let mined = journaled_hash(&h, &id).await?;
    assert_ne!(
        mined, first,
        "a replacement paying the new base fee was mined"
    );
    books_balance(&h, &[(id, 200)], &statuses, before).await?;
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn past_the_fee_cap_the_transaction_is_cancelled_and_the_pull_fails() -> anyhow::Result<()> {
    let options = SubmitterOptions {
        fee_cap: Some(40_000_000_000),
        ..quick()
    };
    let (h, before, id) = one_waiting_pull(options, "3.00").await?;
    // The base fee passes the cap: the work cannot be sent for what the operator allows.
    h.settlement
        .anvil_set_next_block_base_fee_per_gas(100_000_000_000)
        .await?;
    h.settlement.anvil_mine(Some(1), None).await?;
    resume_blocks(&h).await?;
    let statuses = finals(&h, std::slice::from_ref(&id), Duration::from_secs(30)).await?;
    assert_eq!(statuses, ["failed"], "nothing moved, and the pull says so");
    books_balance(&h, &[(id, 300)], &statuses, before).await?;
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn an_outside_transaction_taking_the_next_nonce_does_not_jam_the_submitter()
-> anyhow::Result<()> {
    let h = Harness::builder().chain(quick(), None).start().await?;
    let key = key(&h).await?;
    let before = h.balance("USD", dev_spare().address()).await?;
    let operator = dev_operator().address();
    // Someone with the operator's key sends a transaction of their own: the submitter's
    // next nonce is gone before it uses it.
    h.settlement
        .send_transaction(
            TransactionRequest::default()
                .with_to(Address::repeat_byte(0x42))
                .with_value(U256::from(1)),
        )
        .await?
        .get_receipt()
        .await?;
    let first = pull(&h, &key, "1.00").await?;
    // And again while a pull waits in the pool: the outside transaction pays more and takes
    // its place, then is mined; the work goes out again under the next nonce.
    h.settlement.anvil_set_auto_mine(false).await?;
    let second = pull(&h, &key, "2.00").await?;
    journaled(&h, &second, 1, Duration::from_secs(10)).await?;
    let waiting = journaled_hash(&h, &second).await?;
    let until = Instant::now() + Duration::from_secs(5);
    let theirs = loop {
        if let Some(t) = h.settlement.get_transaction_by_hash(waiting).await? {
            break t;
        }
        anyhow::ensure!(Instant::now() < until, "never reached the pool");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let nonce = {
        use alloy::consensus::Transaction;
        theirs.nonce()
    };
    h.settlement
        .send_transaction(
            TransactionRequest::default()
                .with_from(operator)
                .with_to(Address::repeat_byte(0x43))
                .with_nonce(nonce)
                .with_gas_limit(21_000)
                .with_max_fee_per_gas(500_000_000_000)
                .with_max_priority_fee_per_gas(100_000_000_000),
        )
        .await?
        .tx_hash();
    h.settlement.anvil_mine(Some(1), None).await?;
    resume_blocks(&h).await?;
    let ids = [first.clone(), second.clone()];
    let statuses = finals(&h, &ids, Duration::from_secs(30)).await?;
    assert_eq!(statuses, ["authorized", "authorized"]);
    books_balance(&h, &[(first, 100), (second, 200)], &statuses, before).await?;
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn a_restart_with_replacements_pending_settles_each_pull_once() -> anyhow::Result<()> {
    let mut h = Harness::builder().chain(quick(), None).start().await?;
    let key = key(&h).await?;
    let before = h.balance("USD", dev_spare().address()).await?;
    h.settlement.anvil_set_auto_mine(false).await?;
    let mut pulls = Vec::new();
    for cents in [110u64, 220] {
        let id = pull(&h, &key, &format!("{}.{:02}", cents / 100, cents % 100)).await?;
        pulls.push((id, cents));
    }
    for (id, _) in &pulls {
        journaled(&h, id, 2, Duration::from_secs(15)).await?;
    }
    // The process dies with several variants of each nonce journaled and none mined.
    h.restart().await?;
    resume_blocks(&h).await?;
    let ids: Vec<String> = pulls.iter().map(|(id, _)| id.clone()).collect();
    let statuses = finals(&h, &ids, Duration::from_secs(40)).await?;
    assert!(statuses.iter().all(|s| s == "authorized"), "{statuses:?}");
    books_balance(&h, &pulls, &statuses, before).await?;
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn rpc_faults_429_502_timeouts_and_resets_are_retried_across_urls() -> anyhow::Result<()> {
    // Two faulty proxies in front of one chain; the server knows only them.
    let mut h = Harness::chains_only().await?;
    let upstream = h.devnet.settlement.rpc_url().clone();
    let a = proxy::Faulty::start(upstream.clone(), 0).await?;
    let b = proxy::Faulty::start(upstream, 3).await?;
    let endpoint = openrail_chain::rpc::Endpoint {
        urls: vec![a.url(), b.url()],
        options: openrail_chain::rpc::RpcOptions {
            attempts: 12,
            backoff: Duration::from_millis(10),
            max_backoff: Duration::from_millis(200),
            timeout: Duration::from_millis(800),
        },
    };
    h.serve_with_chain(quick(), Some(endpoint)).await?;
    let key = key(&h).await?;
    let before = h.balance("USD", dev_spare().address()).await?;
    let mut pulls = Vec::new();
    for i in 0..12u64 {
        let cents = 100 + i;
        pulls.push((
            pull(&h, &key, &format!("1.{:02}", cents % 100)).await?,
            cents,
        ));
    }
    let ids: Vec<String> = pulls.iter().map(|(id, _)| id.clone()).collect();
    let statuses = finals(&h, &ids, Duration::from_secs(60)).await?;
    assert!(statuses.iter().all(|s| s == "authorized"), "{statuses:?}");
    books_balance(&h, &pulls, &statuses, before).await?;
    let (fa, fb) = (a.faults(), b.faults());
    assert!(
        fa.total() + fb.total() >= 10,
        "the proxies injected faults: {fa:?} {fb:?}"
    );
    h.stop().await;
    Ok(())
}

/// A pull through the API that waits for its transaction; returns its id and hash.
async fn mined_pull(h: &Harness, key: &str, amount: &str) -> anyhow::Result<String> {
    let r = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": key, "amount": amount}),
        )
        .await?;
    assert_eq!(r.str("status"), "authorized", "{}", r.body);
    Ok(r.str("id").to_string())
}

/// Replaces the chain's last block (holding `hash`) by an empty one, then waits until the
/// submitter has mined `hash` again.
async fn reorg_out_the_last_block_and_see_it_mined_again(
    h: &Harness,
    hash: alloy::primitives::TxHash,
) -> anyhow::Result<()> {
    h.settlement
        .anvil_reorg(alloy::rpc::types::anvil::ReorgOptions {
            depth: 1,
            tx_block_pairs: vec![],
        })
        .await?;
    assert!(h.settlement.get_transaction_receipt(hash).await?.is_none());
    let until = Instant::now() + Duration::from_secs(15);
    while h.settlement.get_transaction_receipt(hash).await?.is_none() {
        anyhow::ensure!(Instant::now() < until, "never mined again");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

/// How many `debit_pull.reorged` events pull `id` has.
async fn reorged_events(h: &Harness, id: &str) -> anyhow::Result<usize> {
    let events = h
        .get("/v1/events?type=debit_pull.reorged&limit=100")
        .await?;
    Ok(events.body["data"]
        .as_array()
        .map(|a| a.iter().filter(|e| e["data"]["object"]["id"] == id).count())
        .unwrap_or(0))
}

#[tokio::test]
async fn a_reorganisation_shallower_than_the_depth_is_undone_and_redone() -> anyhow::Result<()> {
    let mut h = Harness::chains_only().await?;
    h.set_confirmations(3);
    h.serve_with_chain(quick(), None).await?;
    let key = key(&h).await?;
    let before = h.balance("USD", dev_spare().address()).await?;
    let id = mined_pull(&h, &key, "4.00").await?;
    let hash = journaled_hash(&h, &id).await?;
    // The block holding it is replaced by one without it, before it is three deep.
    // The submitter notices, undoes the pull's outcome and sends the same bytes again.
    reorg_out_the_last_block_and_see_it_mined_again(&h, hash).await?;
    assert_eq!(reorged_events(&h, &id).await?, 1);
    // Three blocks on, the watcher takes the outcome as final.
    h.settlement.anvil_mine(Some(4), None).await?;
    let statuses = finals(&h, std::slice::from_ref(&id), Duration::from_secs(30)).await?;
    assert_eq!(statuses, ["authorized"]);
    assert_eq!(journaled_hash(&h, &id).await?, hash, "the same transaction");
    books_balance(&h, &[(id, 400)], &statuses, before).await?;
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn a_reorganisation_deeper_than_the_depth_is_undone_redone_and_reported() -> anyhow::Result<()>
{
    let mut h = Harness::chains_only().await?;
    h.set_confirmations(1);
    h.serve_with_chain(quick(), None).await?;
    let key = key(&h).await?;
    let before = h.balance("USD", dev_spare().address()).await?;
    let id = mined_pull(&h, &key, "5.00").await?;
    let hash = journaled_hash(&h, &id).await?;
    let mined_in = h
        .settlement
        .get_transaction_receipt(hash)
        .await?
        .and_then(|r| r.block_number)
        .expect("mined");
    // Deep enough for the watcher to take it as final.
    h.settlement.anvil_mine(Some(3), None).await?;
    let chain_id = h.settlement_deployment().chain_id;
    let until = Instant::now() + Duration::from_secs(15);
    while h
        .server()
        .store
        .journal()
        .chain_cursor(chain_id)
        .await?
        .is_none_or(|c| c.block_number < mined_in + 1)
    {
        anyhow::ensure!(
            Instant::now() < until,
            "the watcher never passed the pull's block"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The submitter, too, has let it go (it watches mined transactions only to the depth).
    tokio::time::sleep(quick().check_every * 3).await;
    // Then the chain changes below that depth: the pull's block and those after it.
    h.settlement
        .anvil_reorg(alloy::rpc::types::anvil::ReorgOptions {
            depth: 4,
            tx_block_pairs: vec![],
        })
        .await?;
    assert!(h.settlement.get_transaction_receipt(hash).await?.is_none());
    // The watcher undoes what it had applied and the transaction is sent again; blocks
    // keep coming.
    resume_blocks(&h).await?;
    let until = Instant::now() + Duration::from_secs(20);
    while reorged_events(&h, &id).await? == 0 {
        anyhow::ensure!(Instant::now() < until, "the reorganisation was not undone");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let statuses = finals(&h, std::slice::from_ref(&id), Duration::from_secs(30)).await?;
    assert_eq!(statuses, ["authorized"]);
    assert!(h.settlement.get_transaction_receipt(hash).await?.is_some());
    books_balance(&h, &[(id, 500)], &statuses, before).await?;
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn the_chains_safe_block_as_the_depth() -> anyhow::Result<()> {
    let mut h = Harness::chains_only().await?;
    h.set_depth_tag(openrail_chain::rpc::DepthTag::Safe);
    h.serve_with_chain(quick(), None).await?;
    let key = key(&h).await?;
    let before = h.balance("USD", dev_spare().address()).await?;
    let id = mined_pull(&h, &key, "6.00").await?;
    let hash = journaled_hash(&h, &id).await?;
    // A reorganisation of the last block: above the safe block (anvil's is 32 below the
    // head), so undone and sent again.
    // The submitter notices, undoes the pull's outcome and sends the same bytes again.
    reorg_out_the_last_block_and_see_it_mined_again(&h, hash).await?;
    assert_eq!(reorged_events(&h, &id).await?, 1);
    let mined_in = h
        .settlement
        .get_transaction_receipt(hash)
        .await?
        .and_then(|r| r.block_number)
        .expect("mined");
    // The watcher stays at the safe block: nothing of the pull's block is applied yet.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let chain_id = h.settlement_deployment().chain_id;
    let cursor = |h: &Harness| {
        let store = h.server().store.clone();
        async move {
            Ok::<_, anyhow::Error>(
                store
                    .journal()
                    .chain_cursor(chain_id)
                    .await?
                    .map_or(0, |c| c.block_number),
            )
        }
    };
    assert!(
        cursor(&h).await? < mined_in,
        "applied before the safe block passed it"
    );
    h.settlement.anvil_mine(Some(40), None).await?;
    let statuses = finals(&h, std::slice::from_ref(&id), Duration::from_secs(30)).await?;
    assert_eq!(statuses, ["authorized"]);
    let until = Instant::now() + Duration::from_secs(10);
    while cursor(&h).await? < mined_in {
        anyhow::ensure!(
            Instant::now() < until,
            "the watcher never reached the pull's block"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    books_balance(&h, &[(id, 600)], &statuses, before).await?;
    h.stop().await;
    Ok(())
}
