//! `openrail bench …`: benchmarks that start their own chains and print tables.

use alloy::primitives::{Address, B256, U256, keccak256};
use alloy::providers::Provider;
use alloy::providers::ext::AnvilApi;
use alloy::transports::http::reqwest::Url;
use anyhow::Context;
use openrail_chain::bindings::{AllowanceStateMachine, IAllowanceStateMachine, TestStablecoin};
use openrail_chain::consent;
use openrail_chain::deploy::{TOKEN_DECIMALS, fund_wallet, mined, signer_provider};
use openrail_chain::devnet::{
    Devnet, DevnetConfig, dev_demo_payer, dev_operator, dev_spare, dev_treasury,
};

/// Benchmarks.
#[derive(Debug, clap::Subcommand)]
pub enum BenchCommand {
    /// Total transaction gas of debit pulls (21,000 base and calldata included), measured on
    /// a local anvil chain.
    Gas,
    /// Debit pulls per second through the HTTP API (SQLite, batching submitter) against the
    /// raw ceiling of unbatched `pull` transactions sent straight to anvil, in one run.
    Pulls {
        /// Pulls to send in each measurement.
        #[arg(long, default_value_t = 2000)]
        n: usize,
        /// Concurrent HTTP clients.
        #[arg(long, default_value_t = 64)]
        concurrency: usize,
        /// Run the end-to-end phase on a fresh database of this PostgreSQL server (e.g.
        /// `postgres://postgres@127.0.0.1:5432/test`) instead of a SQLite file.
        #[arg(long, value_name = "SERVER_URL")]
        postgres: Option<String>,
    },
    /// Webhook deliveries per second: events written to a fresh database, fanned out and
    /// delivered signed to a receiver on 127.0.0.1 by the lease holder's deliverer.
    Webhooks {
        /// Events to deliver.
        #[arg(long, default_value_t = 2000)]
        n: usize,
        /// Attempts in flight at once.
        #[arg(long, default_value_t = 32)]
        concurrency: usize,
        /// Use a fresh database of this PostgreSQL server instead of a SQLite file.
        #[arg(long, value_name = "SERVER_URL")]
        postgres: Option<String>,
    },
}

pub async fn run(cmd: BenchCommand) -> anyhow::Result<()> {
    match cmd {
        BenchCommand::Gas => gas().await,
        BenchCommand::Pulls {
            n,
            concurrency,
            postgres,
        } => crate::bench_pulls::run(n, concurrency, postgres).await,
        BenchCommand::Webhooks {
            n,
            concurrency,
            postgres,
        } => crate::bench_webhooks::run(n, concurrency, postgres).await,
    }
}

/// Target: a single pull, total transaction gas.
const SINGLE_PULL_TARGET: u64 = 60_000;
/// Target: gas per pull in a 50-item `pullBatch`.
const BATCH_PULL_TARGET: u64 = 30_000;
/// Items per measured batch.
const BATCH: usize = 50;

struct Row {
    scenario: String,
    total: u64,
    per_pull: u64,
    target: Option<u64>,
}

async fn gas() -> anyhow::Result<()> {
    let devnet = Devnet::start(DevnetConfig::default()).await?;
    let rows = gas_scenarios(&devnet).await;
    devnet.stop().await;
    let rows = rows?;

    println!(
        "Debit-pull gas: total transaction gas from receipts (21,000 base + calldata + execution)"
    );
    println!(
        "Setup: wallet-funded mandate, key with a ceiling and a one-entry allow-list, payer and"
    );
    println!("destination balances non-zero, payer approved the router for an unlimited amount,");
    println!("measured pulls are not the first of their epoch.\n");
    println!("| scenario | total gas | gas per pull | target per pull | within target |");
    println!("|---|---:|---:|---:|---|");
    for r in &rows {
        let (target, ok) = match r.target {
            Some(t) => (format!("≤ {t}"), if r.per_pull <= t { "yes" } else { "NO" }),
            None => ("—".to_string(), "—"),
        };
        println!(
            "| {} | {} | {} | {} | {} |",
            r.scenario, r.total, r.per_pull, target, ok
        );
    }
    println!(
        "\nReference: the best public allowance module measured the same way costs 67,559 gas per pull."
    );
    Ok(())
}

async fn gas_scenarios(devnet: &Devnet) -> anyhow::Result<Vec<Row>> {
    let a = &devnet.manifest.settlement;
    let url: Url = a.rpc_url.parse()?;
    let op = signer_provider(&url, dev_operator());
    let asm_addr = a.allowance_state_machine.context("no state machine")?;
    let asm = AllowanceStateMachine::new(asm_addr, &op);
    let unit = U256::from(10u64).pow(U256::from(TOKEN_DECIMALS));
    let usd = a.tokens["USD"];
    let payer = dev_demo_payer();
    let destination = dev_spare().address();
    fund_wallet(
        a,
        dev_treasury(),
        payer.clone(),
        U256::from(1_000_000u64) * unit,
    )
    .await?;
    // The destination already holds tokens, as in steady state.
    mined(
        TestStablecoin::new(usd, &op)
            .mint(destination, unit)
            .send()
            .await?,
    )
    .await?;

    // Noon UTC tomorrow: every measured pull falls in the same daily epoch.
    let now = op
        .get_block(alloy::eips::BlockNumberOrTag::Latest.into())
        .await?
        .context("no block")?
        .header
        .timestamp;
    let noon = (now / 86_400 + 1) * 86_400 + 43_200;
    op.anvil_set_next_block_timestamp(noon).await?;
    op.anvil_mine(Some(1), None).await?;

    let mut rows = Vec::new();

    // Scenario 0: the mandate itself, created with the payer's EIP-712 signature.
    let mandate = keccak256("bench-mandate");
    let terms = consent::Mandate {
        mandateId: mandate,
        payer: payer.address(),
        token: usd,
        maxAmount: U256::from(1_000_000u64) * unit,
        interval: 0,
        nonce: U256::from(1u64),
        deadline: U256::from(noon + 86_400),
    };
    let sig = consent::sign_with(&terms, a.chain_id, asm_addr, &payer);
    let created = mined(
        asm.createMandateWithSignature(
            terms.mandateId,
            terms.payer,
            terms.token,
            terms.maxAmount,
            terms.interval,
            terms.nonce,
            terms.deadline,
            sig,
        )
        .send()
        .await?,
    )
    .await?;
    rows.push(Row {
        scenario: "mandate created with the payer's signature (`createMandateWithSignature`)"
            .into(),
        total: created.gas_used,
        per_pull: created.gas_used,
        target: None,
    });

    // Scenario 1: one key, single pulls.
    let key = issue_key(&asm, mandate, "bench-key", noon, unit, destination).await?;
    let amount = unit; // 1 USD
    mined(asm.pull(key, destination, amount).send().await?).await?; // first pull of the epoch
    let second = mined(asm.pull(key, destination, amount).send().await?).await?;
    rows.push(Row {
        scenario: "single `pull`, second in the epoch".into(),
        total: second.gas_used,
        per_pull: second.gas_used,
        target: Some(SINGLE_PULL_TARGET),
    });

    // Scenario 2: a batch of 50 pulls on that key.
    let items: Vec<_> = (0..BATCH)
        .map(|_| IAllowanceStateMachine::PullItem {
            keyId: key,
            destination,
            amount,
            nonce: U256::ZERO,
            deadline: U256::ZERO,
            signature: Default::default(),
        })
        .collect();
    let batch = mined(asm.pullBatch(items).send().await?).await?;
    rows.push(Row {
        scenario: format!("`pullBatch` of {BATCH} pulls, one key"),
        total: batch.gas_used,
        per_pull: batch.gas_used / BATCH as u64,
        target: Some(BATCH_PULL_TARGET),
    });

    // Scenario 3 (for information): 50 pulls on 50 different keys of one mandate, each key
    // already used once this epoch, the shape of a batch built from concurrent agents.
    let mut keys = Vec::new();
    for i in 0..BATCH {
        let k = issue_key(
            &asm,
            mandate,
            &format!("bench-key-{i}"),
            noon,
            unit,
            destination,
        )
        .await?;
        keys.push(k);
    }
    let warm: Vec<_> = keys
        .iter()
        .map(|k| IAllowanceStateMachine::PullItem {
            keyId: *k,
            destination,
            amount,
            nonce: U256::ZERO,
            deadline: U256::ZERO,
            signature: Default::default(),
        })
        .collect();
    mined(asm.pullBatch(warm.clone()).send().await?).await?;
    let spread = mined(asm.pullBatch(warm).send().await?).await?;
    rows.push(Row {
        scenario: format!("`pullBatch` of {BATCH} pulls, {BATCH} keys of one mandate"),
        total: spread.gas_used,
        per_pull: spread.gas_used / BATCH as u64,
        target: None,
    });

    // Scenario 4: an agent-signed pull (a key with a signer; a one-item `pullBatch`, the
    // second pull of the epoch on that key).
    let agent = alloy::signers::local::PrivateKeySigner::random();
    let agent_key = keccak256("bench-agent-key");
    mined(
        asm.issueSessionKey(
            agent_key,
            mandate,
            noon + 30 * 86_400,
            U256::ZERO,
            vec![],
            agent.address(),
        )
        .send()
        .await?,
    )
    .await?;
    let signed_item = |nonce: u64| {
        let msg = consent::DebitPull {
            keyId: agent_key,
            destination,
            amount,
            nonce: U256::from(nonce),
            deadline: U256::from(noon + 86_400),
        };
        IAllowanceStateMachine::PullItem {
            keyId: agent_key,
            destination,
            amount,
            nonce: msg.nonce,
            deadline: msg.deadline,
            signature: consent::sign_with(&msg, a.chain_id, asm_addr, &agent),
        }
    };
    mined(asm.pullBatch(vec![signed_item(1)]).send().await?).await?;
    let agent_pull = mined(asm.pullBatch(vec![signed_item(2)]).send().await?).await?;
    rows.push(Row {
        scenario: "agent-signed pull (one-item `pullBatch`, second in the epoch)".into(),
        total: agent_pull.gas_used,
        per_pull: agent_pull.gas_used,
        target: None,
    });

    // Scenario 5: a one-time wallet payment with the payer's signature.
    let payment = |nonce: u64| consent::Payment {
        token: usd,
        from: payer.address(),
        to: destination,
        amount,
        nonce: U256::from(nonce),
        deadline: U256::from(noon + 86_400),
    };
    let settle = |p: consent::Payment| {
        let sig = consent::sign_with(&p, a.chain_id, asm_addr, &payer);
        asm.settleWithSignature(
            keccak256("bench-payment"),
            p.token,
            p.from,
            p.to,
            p.amount,
            p.nonce,
            p.deadline,
            sig,
        )
    };
    mined(settle(payment(10)).send().await?).await?;
    let paid = mined(settle(payment(11)).send().await?).await?;
    rows.push(Row {
        scenario: "wallet payment with the payer's signature (`settleWithSignature`)".into(),
        total: paid.gas_used,
        per_pull: paid.gas_used,
        target: None,
    });
    Ok(rows)
}

async fn issue_key<P: Provider>(
    asm: &AllowanceStateMachine::AllowanceStateMachineInstance<P>,
    mandate: B256,
    label: &str,
    now: u64,
    unit: U256,
    destination: Address,
) -> anyhow::Result<B256> {
    let key = keccak256(label);
    let call = asm.issueSessionKey(
        key,
        mandate,
        now + 30 * 86_400,
        U256::from(500_000u64) * unit,
        vec![destination],
        Address::ZERO,
    );
    mined(call.send().await?).await?;
    Ok(key)
}
