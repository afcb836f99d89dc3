//! Scale-out: two `openrail serve` processes on one database. One holds the settlement
//! chain's lease (its engine sends the chain's transactions; it runs the relayer); the
//! other only writes the work of the requests it serves, which the holder sends. Killing
//! the holder with `SIGKILL` while pulls and payments are in flight, the other takes the
//! lease over and finishes them: one transaction per intent, the journal and the operator's nonce in step, the
//! money where the database says it is.

use std::time::{Duration, Instant};

use alloy::primitives::U256;
use alloy::providers::Provider;
use anyhow::Context;
use openrail_chain::devnet::{dev_demo_payer, dev_operator, dev_spare};
use openrail_store::Mode;
use openrail_store::agentic::{PullStatus, Scope};
use openrail_store::lease::chain_lease;
use openrail_store::outbox::WorkKind;
use openrail_store::payments::PaymentStatus;
use openrail_tests::{Harness, audit, intent_of};
use reqwest::StatusCode;
use serde_json::{Value, json};

const SERVER: &str = env!("CARGO_BIN_EXE_openrail-under-test");

#[tokio::test]
async fn a_follower_takes_over_when_the_lease_holder_dies() -> anyhow::Result<()> {
    let Some(mut h) = Harness::start_processes_on_postgres(SERVER).await? else {
        return Ok(());
    };
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let spare = dev_spare().address();
    let nonce_at_start = h
        .settlement
        .get_transaction_count(dev_operator().address())
        .await?;
    let chain_id = h.settlement_deployment().chain_id;
    let (store, account_id) = (h.server().store.clone(), h.server().account_id.clone());

    let mut a = h.spawn_server(None).await?;
    a.leading(Duration::from_secs(30)).await?;
    // The harness talks to the process it started last: the follower.
    let mut b = h.spawn_server(None).await?;
    let lease = store
        .leases()
        .get(&chain_lease(chain_id))
        .await?
        .expect("a lease");
    assert_eq!(lease.holder, a.node_id);

    // Through the follower: mandates and keys are queued, sent by the holder, and come back
    // active; bank accounts are created locally.
    let (_, wallet_key) = audit::mandate_and_key(&h, &payer.address().to_string()).await?;
    // Its transfers settle after 2 s: still in flight when the holder dies.
    let bank = audit::bank_account(&h, "1000.00", 2).await?;
    let (_, bank_key) = audit::mandate_and_key(&h, &bank).await?;

    let s = spare.to_string();
    let pull = |key: &str, amount: String| json!({"session_key_id": key, "amount": amount, "destination": s});
    let mut requests: Vec<(&str, &str, Value)> = Vec::new();
    for i in 0..5 {
        requests.push((
            "pull",
            "/v1/debit-pulls",
            pull(&wallet_key, format!("1.0{i}")),
        ));
    }
    for i in 0..3 {
        requests.push((
            "pull",
            "/v1/debit-pulls",
            pull(&bank_key, format!("2.0{i}")),
        ));
    }
    // Payments: from the bank account, and from the wallet — created first, their
    // payer's authorizations sent in the burst (authorization in flight at the takeover).
    let mut authorizations = Vec::new();
    for i in 0..2 {
        let created = h
            .post(
                "/v1/payments",
                json!({"amount": format!("3.1{i}"), "currency": "USD",
                       "source": {"type": "wallet", "id": payer.address().to_string()},
                       "destination": {"type": "wallet", "address": s}}),
            )
            .await?;
        assert_eq!(
            created.str("status"),
            "requires_authorization",
            "{}",
            created.body
        );
        authorizations.push((
            format!("/v1/payments/{}/authorize", created.str("id")),
            json!({ "signature": Harness::sign_authorization(&created.body, &payer)? }),
        ));
    }
    for i in 0..2 {
        requests.push((
            "payment",
            "/v1/payments",
            json!({"amount": format!("3.0{i}"), "currency": "USD",
                   "source": {"type": "bank_account", "id": bank.clone()},
                   "destination": {"type": "wallet", "address": s}}),
        ));
    }
    for (path, body) in &authorizations {
        requests.push(("payment", path, body.clone()));
    }
    let replies = audit::send_all(&h, &requests).await;
    let mut accepted = Vec::new();
    for r in replies {
        let r = r?;
        assert!(
            matches!(
                r.status,
                StatusCode::OK | StatusCode::ACCEPTED | StatusCode::CREATED
            ),
            "{} {}",
            r.status,
            r.body
        );
        accepted.push(r.str("id").to_string());
    }

    // Kill the holder while work is in flight; the follower takes the lease over and
    // finishes everything.
    let scope = Scope {
        account_id: &account_id,
        mode: Mode::Testnet,
    };
    let open_pulls = store
        .pulls()
        .list(scope, None, 100, None)
        .await?
        .data
        .iter()
        .filter(|p| {
            p.status == PullStatus::Pending
                || (p.status == PullStatus::Authorized && p.session_key_id.as_str() == bank_key)
        })
        .count();
    let open_payments = store
        .payments()
        .list(scope, 100, None)
        .await?
        .data
        .iter()
        .filter(|p| matches!(p.status, PaymentStatus::Pending | PaymentStatus::Processing))
        .count();
    eprintln!("in flight when the holder dies: {open_pulls} pulls, {open_payments} payments");
    assert!(open_pulls + open_payments > 0, "nothing was in flight");
    let killed = Instant::now();
    assert_eq!(a.kill().await?, Some(9));
    b.leading(Duration::from_secs(30)).await?;
    eprintln!(
        "takeover: {} ms after SIGKILL (lease 1500 ms, renewed every 500 ms)",
        killed.elapsed().as_millis()
    );
    let lease = store
        .leases()
        .get(&chain_lease(chain_id))
        .await?
        .expect("a lease");
    assert_eq!(lease.holder, b.node_id);

    let all = audit::wait_all_final(&store, scope, &[&bank_key], &mut b).await?;
    for id in &accepted {
        assert!(
            all.pulls.contains_key(id) || all.payments.contains_key(id),
            "accepted {id} is in the database"
        );
    }
    let mut moved = 0u64;
    for (id, (status, amount, key)) in &all.pulls {
        let want = if *key == bank_key {
            PullStatus::Settled
        } else {
            PullStatus::Authorized
        };
        assert_eq!(*status, want, "pull {id}");
        assert_eq!(
            store.journal().count_for_intent(&intent_of(id)).await?,
            1,
            "one transaction for {id}"
        );
        moved += amount;
    }
    for (id, p) in &all.payments {
        assert_eq!(
            p.status,
            PaymentStatus::Succeeded,
            "payment {id}: {:?}",
            p.failure_reason
        );
        moved += p.amount;
    }
    assert_eq!((all.pulls.len(), all.payments.len()), (8, 4));
    audit::assert_journal_consistent(&h, &store, nonce_at_start).await?;
    assert_eq!(
        h.balance("USD", spare).await?,
        U256::from(moved) * U256::from(10_000u64),
        "the destination holds what the database says it received"
    );

    // The new holder serves transaction-sending requests itself.
    let r = h
        .call(
            reqwest::Method::POST,
            "/v1/debit-pulls",
            Some(&pull(&wallet_key, "1.00".into())),
            None,
            &[],
        )
        .await?;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::CREATED, "authorized"),
        "{}",
        r.body
    );
    b.kill().await?;
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn a_follower_only_queues_work_and_the_holder_sends_it() -> anyhow::Result<()> {
    let mut h = Harness::start_processes(SERVER).await?;
    let store = h.server().store.clone();
    let chain_id = h.settlement_deployment().chain_id;
    // A holder that died a moment ago: its lease still runs for a minute, and nothing
    // answers at its address.
    assert!(
        store
            .leases()
            .acquire(
                &chain_lease(chain_id),
                "ghost",
                "http://127.0.0.1:9",
                Duration::from_secs(60),
                openrail_store::now_ms()
            )
            .await?
    );
    let mut follower = h.spawn_server(None).await?;
    let nonce = h.operator_nonce().await?;
    // The follower accepts what needs a transaction: it writes the object and its work,
    // and answers 202 while nobody sends it.
    let bank = audit::bank_account(&h, "10.00", 0).await?;
    let r = h
        .post(
            "/v1/mandates",
            json!({"payer_account_id": bank, "max_amount": "10", "currency": "USD", "interval": "daily"}),
        )
        .await?;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    assert_eq!(r.str("status"), "pending");
    let id = r.str("id").to_string();
    assert!(
        store
            .outbox()
            .is_open(&intent_of(&id), WorkKind::CreateMandate)
            .await?
    );
    // A payment is driven by the same engine: the follower writes it and its work, and
    // neither debits the bank nor pays out.
    let r = h
        .post(
            "/v1/payments",
            json!({"amount": "2.50", "currency": "USD", "source": {"type": "bank_account", "id": bank},
                   "destination": {"type": "wallet", "address": "0x1111111111111111111111111111111111111111"}}),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::ACCEPTED, "pending"),
        "{}",
        r.body
    );
    let pay = r.str("id").to_string();
    assert!(
        store
            .outbox()
            .is_open(&intent_of(&pay), WorkKind::DrivePayment)
            .await?
    );
    // It never sends: no transaction journaled, the operator's nonce untouched, the bank
    // never asked.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(store.journal().count_for_intent(&intent_of(&id)).await?, 0);
    assert_eq!(store.journal().count_for_intent(&intent_of(&pay)).await?, 0);
    assert!(
        store
            .bank()
            .transfer_by_key(&format!("{pay}:debit"))
            .await?
            .is_none()
    );
    assert_eq!(h.operator_nonce().await?, nonce);
    assert_eq!(
        h.get(&format!("/v1/mandates/{id}")).await?.str("status"),
        "pending"
    );

    // Once the lease is free, a holder (here the follower, promoted) sends the queued work:
    // one transaction, and the mandate is active.
    store
        .leases()
        .release(&chain_lease(chain_id), "ghost")
        .await?;
    follower.leading(Duration::from_secs(30)).await?;
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        let m = h.get(&format!("/v1/mandates/{id}")).await?;
        if m.str("status") != "pending" || Instant::now() > deadline {
            break m.str("status").to_string();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(status, "active");
    assert_eq!(store.journal().count_for_intent(&intent_of(&id)).await?, 1);
    assert!(
        !store
            .outbox()
            .is_open(&intent_of(&id), WorkKind::CreateMandate)
            .await?
    );
    // The payment too: the bank debited once, one payout, and its work closed.
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        let p = h.get(&format!("/v1/payments/{pay}")).await?;
        if p.str("status") == "succeeded" || Instant::now() > deadline {
            break p.str("status").to_string();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(status, "succeeded");
    assert_eq!(store.journal().count_for_intent(&intent_of(&pay)).await?, 1);
    assert!(
        !store
            .outbox()
            .is_open(&intent_of(&pay), WorkKind::DrivePayment)
            .await?
    );
    follower.kill().await?;
    h.stop().await;
    Ok(())
}

/// Runs `openrail deploy` with `args` and the development keys in the environment
/// (owner, operator, treasury); returns its standard output.
async fn deploy(args: &[&str]) -> anyhow::Result<String> {
    let out = tokio::process::Command::new(SERVER)
        .arg("deploy")
        .args(args)
        .env(
            "OPENRAIL_DEPLOYER_KEY",
            openrail_chain::devnet::dev_owner().to_bytes().to_string(),
        )
        .env(
            "OPENRAIL_OPERATOR_KEY",
            dev_operator().to_bytes().to_string(),
        )
        .env(
            "OPENRAIL_TREASURY_KEY",
            openrail_chain::devnet::dev_treasury()
                .to_bytes()
                .to_string(),
        )
        // The explorer stub's key (`--verify etherscan`).
        .env("OPENRAIL_ETHERSCAN_KEY", "stub-key")
        .output()
        .await?;
    anyhow::ensure!(
        out.status.success(),
        "openrail deploy failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8(out.stdout)?)
}

/// `openrail deploy` on fresh chains: every contract through the CREATE2 deployer, the same
/// addresses on two chains, a rerun that sends nothing and keeps the record; then
/// `openrail serve --deployment` on that record runs the agentic flow (a mandate naming its
/// payee, signed by the payer, a key, a pull that moves the payer's tokens).
#[tokio::test]
async fn deploy_then_serve_on_fresh_chains() -> anyhow::Result<()> {
    use openrail_chain::anvil::Anvil;
    use openrail_chain::deploy::DeploymentRecord;
    let dir = tempfile::tempdir()?;
    let (a, b) = (
        Anvil::spawn_with(31_401, 0, false).await?,
        Anvil::spawn_with(31_402, 0, false).await?,
    );
    let treasury = openrail_chain::devnet::dev_treasury().address().to_string();
    let record_a = dir.path().join("a.json");
    let record_b = dir.path().join("b.json");
    let run = |url: String, out: std::path::PathBuf| {
        let treasury = treasury.clone();
        async move {
            deploy(&[
                "--rpc-url",
                &url,
                "--treasury",
                &treasury,
                "--salt",
                "deploy-test",
                "--out",
                out.to_str().unwrap(),
            ])
            .await
        }
    };
    run(a.rpc_url().to_string(), record_a.clone()).await?;
    let first = DeploymentRecord::read(&record_a)?;
    assert!(
        first.contracts.iter().all(|c| c.tx_hash.is_some()),
        "{first:?}"
    );
    assert_eq!(first.deployment.chain_id, 31_401);
    assert_ne!(first.deployment.owner, first.deployment.operator);
    for c in &first.contracts {
        assert_eq!(
            c.address,
            openrail_chain::create2::DEPLOYER.create2(first.salt, c.init_code_hash),
            "{} is not at its CREATE2 address",
            c.name
        );
    }

    // A rerun sends nothing (the owner's nonce stays) and keeps the record.
    let reader = openrail_chain::tls::reader(a.rpc_url())?;
    let owner = first.deployment.owner;
    let nonce = reader.get_transaction_count(owner).await?;
    let again = run(a.rpc_url().to_string(), record_a.clone()).await?;
    assert!(again.contains("nothing to deploy"), "{again}");
    assert_eq!(reader.get_transaction_count(owner).await?, nonce);
    assert_eq!(DeploymentRecord::read(&record_a)?, first);

    // Another chain, the same salt and keys: the same addresses.
    run(b.rpc_url().to_string(), record_b.clone()).await?;
    let other = DeploymentRecord::read(&record_b)?;
    assert_eq!(other.deployment.chain_id, 31_402);
    let addresses =
        |r: &DeploymentRecord| r.contracts.iter().map(|c| c.address).collect::<Vec<_>>();
    assert_eq!(addresses(&other), addresses(&first));

    // Serve on the record, as an operator would, and run the agentic flow.
    let database_url = openrail_tests::fresh_database_url(dir.path()).await?;
    let store = openrail_store::Store::connect(&database_url).await?;
    let account = store
        .accounts()
        .create("Deployed", openrail_store::now_ms())
        .await?;
    let (_, api_key) = store
        .api_keys()
        .create(&account.id, Mode::Testnet, openrail_store::now_ms())
        .await?;
    let mut child = tokio::process::Command::new(SERVER)
        .arg("serve")
        .arg("--deployment")
        .arg(&record_a)
        .env(
            "OPENRAIL_OPERATOR_KEY",
            dev_operator().to_bytes().to_string(),
        )
        .env("OPENRAIL_PORT", "0")
        .env("DATABASE_URL", &database_url)
        .env_remove("OPENRAIL_MANIFEST")
        .env_remove("OPENRAIL_CRASH_AT")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let base_url = {
        use tokio::io::AsyncBufReadExt;
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let line = tokio::time::timeout(Duration::from_secs(60), async {
            loop {
                match lines.next_line().await? {
                    Some(l) if l.starts_with("serving the API on ") => return anyhow::Ok(l),
                    Some(_) => continue,
                    None => anyhow::bail!("serve exited"),
                }
            }
        })
        .await??;
        line["serving the API on ".len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .to_string()
    };
    let payer = dev_demo_payer();
    openrail_chain::deploy::fund_wallet(
        &first.deployment,
        openrail_chain::devnet::dev_treasury(),
        payer.clone(),
        openrail_tests::units(100),
    )
    .await?;
    let http = reqwest::Client::new();
    let post = |path: &str, body: Value| {
        http.post(format!("{base_url}{path}"))
            .bearer_auth(&api_key)
            .json(&body)
            .send()
    };
    let merchant = dev_spare().address();
    let m: Value = post(
        "/v1/mandates",
        json!({"payer_account_id": payer.address().to_string(), "max_amount": "10", "currency": "USD",
               "interval": "daily", "payees": [merchant.to_string()]}),
    )
    .await?
    .json()
    .await?;
    let signature =
        openrail_chain::consent::sign_typed_data_json(&m["authorization"]["typed_data"], &payer)
            .map_err(anyhow::Error::msg)?;
    let id = m["id"].as_str().unwrap();
    let r = post(
        &format!("/v1/mandates/{id}/authorize"),
        json!({"signature": signature}),
    )
    .await?;
    assert_eq!(r.status(), StatusCode::OK);
    let k: Value = post(
        "/v1/session-keys",
        json!({"mandate_id": id, "expires_in": 3600}),
    )
    .await?
    .json()
    .await?;
    let r = post(
        "/v1/debit-pulls",
        json!({"session_key_id": k["id"], "amount": "2.50"}),
    )
    .await?;
    assert_eq!(r.status(), StatusCode::CREATED);
    let pull: Value = r.json().await?;
    assert_eq!(pull["status"], "authorized", "{pull}");
    assert_eq!(
        pull["destination"].as_str().unwrap().to_lowercase(),
        merchant.to_string().to_lowercase()
    );
    let token =
        openrail_chain::bindings::TestStablecoin::new(first.deployment.tokens["USD"], &reader);
    assert_eq!(
        token.balanceOf(merchant).call().await?,
        U256::from(2_500_000u64)
    );
    child.kill().await?;
    Ok(())
}

/// `openrail serve --config` with testnet and mainnet, each on its own fresh chain with its
/// own operator key: a mainnet key's pull moves tokens on the mainnet chain and never on
/// testnet's, a testnet key's the other way round; a configuration naming a key in the file
/// fails at start, naming the field.
#[tokio::test]
async fn a_configuration_serves_testnet_and_mainnet_apart() -> anyhow::Result<()> {
    use alloy::providers::ext::AnvilApi;
    use openrail_chain::anvil::Anvil;
    use openrail_chain::deploy::DeploymentRecord;
    let dir = tempfile::tempdir()?;
    let (test_chain, main_chain) = (
        Anvil::spawn_with(31_411, 0, false).await?,
        Anvil::spawn_with(31_412, 0, false).await?,
    );
    let treasury = openrail_chain::devnet::dev_treasury().address().to_string();
    let main_operator = alloy::signers::local::PrivateKeySigner::random();
    let provider = |a: &Anvil| openrail_chain::tls::reader(a.rpc_url()).expect("a provider");
    provider(&main_chain)
        .anvil_set_balance(
            main_operator.address(),
            U256::from(10u64).pow(U256::from(20u64)),
        )
        .await?;
    let test_record = dir.path().join("test.json");
    let main_record = dir.path().join("main.json");
    deploy(&[
        "--rpc-url",
        test_chain.rpc_url().as_ref(),
        "--treasury",
        &treasury,
        "--out",
        test_record.to_str().unwrap(),
    ])
    .await?;
    deploy(&[
        "--rpc-url",
        main_chain.rpc_url().as_ref(),
        "--treasury",
        &treasury,
        "--operator",
        &main_operator.address().to_string(),
        "--salt",
        "mainnet",
        "--out",
        main_record.to_str().unwrap(),
    ])
    .await?;
    let (test_d, main_d) = (
        DeploymentRecord::read(&test_record)?.deployment,
        DeploymentRecord::read(&main_record)?.deployment,
    );
    let config = dir.path().join("openrail.toml");
    std::fs::write(
        &config,
        "[testnet]\ndeployment = \"test.json\"\noperator_key_env = \"TEST_OPERATOR\"\n\
         [mainnet]\ndeployment = \"main.json\"\noperator_key_env = \"MAIN_OPERATOR\"\n",
    )?;
    let database_url = openrail_tests::fresh_database_url(dir.path()).await?;
    let store = openrail_store::Store::connect(&database_url).await?;
    let account = store
        .accounts()
        .create("Both modes", openrail_store::now_ms())
        .await?;
    let (_, test_key) = store
        .api_keys()
        .create(&account.id, Mode::Testnet, openrail_store::now_ms())
        .await?;
    let (_, main_key) = store
        .api_keys()
        .create(&account.id, Mode::Mainnet, openrail_store::now_ms())
        .await?;
    let serve = |config: &std::path::Path| {
        tokio::process::Command::new(SERVER)
            .arg("serve")
            .arg("--config")
            .arg(config)
            .env("TEST_OPERATOR", dev_operator().to_bytes().to_string())
            .env("MAIN_OPERATOR", main_operator.to_bytes().to_string())
            .env("OPENRAIL_PORT", "0")
            .env("DATABASE_URL", &database_url)
            .env_remove("OPENRAIL_MANIFEST")
            .env_remove("OPENRAIL_OPERATOR_KEY")
            .env_remove("OPENRAIL_CRASH_AT")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
    };
    // A key in the file: refused at start, naming the field and where keys go.
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[testnet]\ndeployment = \"test.json\"\noperator_key = \"0x01\"\n",
    )?;
    let out = serve(&bad)?.wait_with_output().await?;
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        said.contains("operator_key") && said.contains("operator_key_env"),
        "{said}"
    );

    let mut child = serve(&config)?;
    let base_url = {
        use tokio::io::AsyncBufReadExt;
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let line = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(l) = lines.next_line().await? {
                if l.starts_with("serving the API on ") {
                    return anyhow::Ok(l);
                }
            }
            anyhow::bail!("serve exited")
        })
        .await??;
        assert!(line.contains("mainnet keys on chain 31412"), "{line}");
        line["serving the API on ".len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .to_string()
    };
    let http = reqwest::Client::new();
    let payer = dev_demo_payer();
    let merchant = dev_spare().address();
    // The same flow in each mode, with that mode's key; the payer is funded on both chains.
    for (api_key, d, chain) in [
        (&test_key, &test_d, &test_chain),
        (&main_key, &main_d, &main_chain),
    ] {
        openrail_chain::deploy::fund_wallet(
            d,
            openrail_chain::devnet::dev_treasury(),
            payer.clone(),
            openrail_tests::units(100),
        )
        .await?;
        let post = |path: String, body: Value| {
            http.post(format!("{base_url}{path}"))
                .bearer_auth(api_key)
                .json(&body)
                .send()
        };
        let m: Value = post(
            "/v1/mandates".into(),
            json!({"payer_account_id": payer.address().to_string(), "max_amount": "10", "currency": "USD",
                   "interval": "daily", "payees": [merchant.to_string()]}),
        )
        .await?
        .json()
        .await?;
        assert_eq!(m["onchain"]["chain_id"], json!(d.chain_id), "{m}");
        let sig = openrail_chain::consent::sign_typed_data_json(
            &m["authorization"]["typed_data"],
            &payer,
        )
        .map_err(anyhow::Error::msg)?;
        let id = m["id"].as_str().unwrap();
        let r = post(
            format!("/v1/mandates/{id}/authorize"),
            json!({"signature": sig}),
        )
        .await?;
        assert_eq!(r.status(), StatusCode::OK, "{}", r.text().await?);
        let k: Value = post(
            "/v1/session-keys".into(),
            json!({"mandate_id": id, "expires_in": 3600}),
        )
        .await?
        .json()
        .await?;
        let pull: Value = post(
            "/v1/debit-pulls".into(),
            json!({"session_key_id": k["id"], "amount": "1.25"}),
        )
        .await?
        .json()
        .await?;
        assert_eq!(pull["status"], "authorized", "{pull}");
        let token = openrail_chain::bindings::TestStablecoin::new(d.tokens["USD"], provider(chain));
        assert_eq!(
            token.balanceOf(merchant).call().await?,
            U256::from(1_250_000u64)
        );
    }
    // Each chain saw only its own mode's pull: 1.25 each, never 2.50 on one.
    for (d, chain) in [(&test_d, &test_chain), (&main_d, &main_chain)] {
        let token = openrail_chain::bindings::TestStablecoin::new(d.tokens["USD"], provider(chain));
        assert_eq!(
            token.balanceOf(merchant).call().await?,
            U256::from(1_250_000u64)
        );
    }
    child.kill().await?;
    Ok(())
}

/// What an explorer does to verify a deployment: the standard-JSON input committed beside
/// the artifacts (`chain/artifacts/standard-json/`), compiled again by solc, gives the
/// runtime code `openrail deploy` placed at each address.
#[tokio::test]
async fn the_standard_json_input_recompiles_to_the_deployed_code() -> anyhow::Result<()> {
    use openrail_chain::anvil::Anvil;
    use openrail_chain::deploy::DeploymentRecord;
    let dir = tempfile::tempdir()?;
    let chain = Anvil::spawn_with(31_403, 0, false).await?;
    let record = dir.path().join("record.json");
    let treasury = openrail_chain::devnet::dev_treasury().address().to_string();
    deploy(&[
        "--rpc-url",
        chain.rpc_url().as_str(),
        "--treasury",
        &treasury,
        "--out",
        record.to_str().unwrap(),
    ])
    .await?;
    let record = DeploymentRecord::read(&record)?;
    let reader = openrail_chain::tls::reader(chain.rpc_url())?;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // A record names each placed contract by its artifact, then what it is for
    // ("TestStablecoin USD").
    let artifact = |name: &str| {
        name.split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string()
    };
    let mut names: Vec<String> = record.contracts.iter().map(|c| artifact(&c.name)).collect();
    names.sort();
    names.dedup();
    for name in names {
        let name = name.as_str();
        let path = root.join(format!("chain/artifacts/standard-json/{name}.json"));
        let input = std::fs::read(&path).with_context(|| path.display().to_string())?;
        let mut solc = tokio::process::Command::new(root.join("scripts/solc"))
            .arg("--standard-json")
            .current_dir(&root)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()?;
        {
            use tokio::io::AsyncWriteExt;
            let mut stdin = solc.stdin.take().expect("piped");
            stdin.write_all(&input).await?;
        }
        let out = solc.wait_with_output().await?;
        anyhow::ensure!(out.status.success(), "solc failed on {name}");
        let output: Value = serde_json::from_slice(&out.stdout)?;
        let runtime = &output["contracts"][format!("contracts/src/{name}.sol")][name]["evm"]["deployedBytecode"];
        let compiled = runtime["object"]
            .as_str()
            .unwrap_or_else(|| panic!("{name} is not in solc's output: {}", output["errors"]));
        // Immutables (OpenZeppelin's EIP712 keeps the domain and its address so) are
        // written at deployment where the compiled code has zeros: compared masked, as
        // explorers compare them.
        let mut masks: Vec<(usize, usize)> = Vec::new();
        if let Some(refs) = runtime["immutableReferences"].as_object() {
            for places in refs.values() {
                for p in places.as_array().into_iter().flatten() {
                    let (start, length) = (p["start"].as_u64(), p["length"].as_u64());
                    masks.push((start.unwrap_or(0) as usize, length.unwrap_or(0) as usize));
                }
            }
        }
        for placed in record
            .contracts
            .iter()
            .filter(|c| artifact(&c.name) == name)
        {
            let mut code = reader.get_code_at(placed.address).await?.to_vec();
            for (start, length) in &masks {
                code[*start..start + length].fill(0);
            }
            assert_eq!(
                alloy::hex::encode(&code),
                compiled,
                "{name} at {} is not what its standard-JSON input compiles to",
                placed.address
            );
        }
        assert!(
            name != "AllowanceStateMachine" || !masks.is_empty(),
            "the state machine's EIP-712 immutables were found"
        );
    }
    Ok(())
}

/// What the explorer stubs received: one JSON object per submission.
type Received = std::sync::Arc<std::sync::Mutex<Vec<Value>>>;

/// Local stand-ins for an Etherscan-compatible API and a Sourcify server, as their
/// documentation describes them: each verification is pending once, then passes.
async fn explorer_stub() -> anyhow::Result<(String, Received)> {
    use axum::extract::{Form, Path, Query, State};
    use axum::routing::{get, post};
    use std::collections::HashMap;
    let received: Received = Default::default();
    let polls: std::sync::Arc<std::sync::Mutex<HashMap<String, u32>>> = Default::default();
    let seen = |polls: &std::sync::Mutex<HashMap<String, u32>>, id: &str| {
        let mut p = polls.lock().unwrap();
        let n = p.entry(id.to_string()).or_default();
        *n += 1;
        *n
    };
    let app = axum::Router::new()
        .route(
            "/api",
            post({
                let received = received.clone();
                move |Query(q): Query<HashMap<String, String>>,
                      Form(f): Form<HashMap<String, String>>| async move {
                    let mut entry = json!({"explorer": "etherscan", "chainid": q.get("chainid")});
                    for (k, v) in &f {
                        entry[k] = json!(v);
                    }
                    let mut r = received.lock().unwrap();
                    r.push(entry);
                    axum::Json(json!({"status": "1", "message": "OK", "result": format!("guid-{}", r.len())}))
                }
            })
            .get({
                let polls = polls.clone();
                move |Query(q): Query<HashMap<String, String>>| async move {
                    let guid = q.get("guid").cloned().unwrap_or_default();
                    let ok = q.get("action").map(String::as_str) == Some("checkverifystatus");
                    axum::Json(if ok && seen(&polls, &guid) > 1 {
                        json!({"status": "1", "message": "OK", "result": "Pass - Verified"})
                    } else {
                        json!({"status": "0", "message": "NOTOK", "result": "Pending in queue"})
                    })
                }
            }),
        )
        .route(
            "/v2/verify/{chain}/{address}",
            post({
                let received = received.clone();
                move |Path((chain, address)): Path<(String, String)>,
                      axum::Json(body): axum::Json<Value>| async move {
                    let mut r = received.lock().unwrap();
                    r.push(json!({"explorer": "sourcify", "chain": chain, "address": address, "body": body}));
                    (
                        StatusCode::ACCEPTED,
                        axum::Json(json!({"verificationId": format!("job-{}", r.len())})),
                    )
                }
            }),
        )
        .route(
            "/v2/verify/{id}",
            get({
                let polls = polls.clone();
                move |Path(id): Path<String>, State(()): State<()>| async move {
                    axum::Json(if seen(&polls, &id) > 1 {
                        json!({"isJobCompleted": true, "contract": {"match": "exact_match"}})
                    } else {
                        json!({"isJobCompleted": false})
                    })
                }
            }),
        )
        .with_state(());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((url, received))
}

/// `openrail deploy --verify` submits every contract to an Etherscan-compatible API and to
/// Sourcify with what each needs: the standard-JSON input that holds it, its `path:Name`,
/// the compiler release, and the constructor arguments that, after the artifact's
/// bytecode, hash to the init code the record says was placed.
#[tokio::test]
async fn deploy_verify_submits_each_contract_to_etherscan_and_sourcify() -> anyhow::Result<()> {
    use openrail_chain::anvil::Anvil;
    use openrail_chain::deploy::DeploymentRecord;
    let dir = tempfile::tempdir()?;
    let chain = Anvil::spawn_with(31_404, 0, false).await?;
    let (stub, received) = explorer_stub().await?;
    let out = dir.path().join("record.json");
    let treasury = openrail_chain::devnet::dev_treasury().address().to_string();
    let base = [
        "--rpc-url",
        chain.rpc_url().as_str(),
        "--treasury",
        &treasury,
        "--out",
        out.to_str().unwrap(),
        "--verify-poll-ms",
        "10",
    ];
    let etherscan = format!("{stub}/api");
    let said = deploy(
        &[
            &base[..],
            &["--verify", "etherscan", "--verifier-url", &etherscan],
        ]
        .concat(),
    )
    .await?;
    // The two test tokens, the state machine and the attestation mirror.
    assert_eq!(said.matches("  verified").count(), 4, "{said}");
    // A rerun deploys nothing and verifies on Sourcify.
    let said = deploy(
        &[
            &base[..],
            &["--verify", "sourcify", "--verifier-url", &stub],
        ]
        .concat(),
    )
    .await?;
    assert!(said.contains("nothing to deploy"), "{said}");
    assert_eq!(said.matches("  verified").count(), 4, "{said}");

    let record = DeploymentRecord::read(&out)?;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let received = received.lock().unwrap().clone();
    assert_eq!(received.len(), 2 * record.contracts.len());
    for placed in &record.contracts {
        let name = placed.artifact();
        let identifier = format!("contracts/src/{name}.sol:{name}");
        let artifact: Value = serde_json::from_str(&std::fs::read_to_string(
            root.join(format!("chain/artifacts/{name}.json")),
        )?)?;
        let bytecode = alloy::hex::decode(artifact["bytecode"]["object"].as_str().unwrap())?;
        let address = placed.address.to_string();
        let e = received
            .iter()
            .find(|r| r["explorer"] == "etherscan" && r["contractaddress"] == address.as_str())
            .unwrap_or_else(|| panic!("{name} was not sent to etherscan"));
        assert_eq!(e["chainid"], "31404");
        assert_eq!(e["apikey"], "stub-key");
        assert_eq!(e["codeformat"], "solidity-standard-json-input");
        assert_eq!(e["contractname"], identifier.as_str());
        assert_eq!(e["compilerversion"], "v0.8.30+commit.73712a01");
        let input: Value = serde_json::from_str(e["sourceCode"].as_str().unwrap())?;
        assert!(input["sources"][format!("contracts/src/{name}.sol")].is_object());
        let args = alloy::hex::decode(e["constructorArguements"].as_str().unwrap())?;
        assert_eq!(
            alloy::primitives::keccak256([bytecode.as_slice(), &args].concat()),
            placed.init_code_hash,
            "{name}'s constructor arguments are the ones it was placed with"
        );
        let s = received
            .iter()
            .find(|r| {
                r["explorer"] == "sourcify"
                    && r["address"]
                        .as_str()
                        .unwrap()
                        .eq_ignore_ascii_case(&address)
            })
            .unwrap_or_else(|| panic!("{name} was not sent to sourcify"));
        assert_eq!(s["chain"], "31404");
        assert_eq!(s["body"]["contractIdentifier"], identifier.as_str());
        assert_eq!(s["body"]["compilerVersion"], "0.8.30+commit.73712a01");
        assert_eq!(s["body"]["stdJsonInput"], input);
    }
    // The release named is the one that builds the artifacts.
    let version = tokio::process::Command::new(root.join("scripts/solc"))
        .arg("--version")
        .output()
        .await?;
    assert!(
        String::from_utf8_lossy(&version.stdout)
            .contains(openrail_chain::verify::SOLC_LONG_VERSION)
    );
    Ok(())
}
