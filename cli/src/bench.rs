//! `openrail bench …`: benchmarks that start their own chains and print tables.

use alloy::primitives::{Address, B256, U256, keccak256};
use alloy::providers::Provider;
use alloy::providers::ext::AnvilApi;
use alloy::transports::http::reqwest::Url;
use anyhow::Context;
use openrail_chain::bindings::{AllowanceStateMachine, IAllowanceStateMachine, TestStablecoin};
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
    },
}

pub async fn run(cmd: BenchCommand) -> anyhow::Result<()> {
    match cmd {
        BenchCommand::Gas => gas().await,
        BenchCommand::Pulls { n, concurrency } => crate::bench_pulls::run(n, concurrency).await,
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

    // Scenario 1: one key, single pulls.
    let mandate = keccak256("bench-mandate");
    mined(
        asm.createMandate(
            mandate,
            payer.address(),
            usd,
            U256::from(1_000_000u64) * unit,
            0,
        )
        .send()
        .await?,
    )
    .await?;
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
    );
    mined(call.send().await?).await?;
    Ok(key)
}
