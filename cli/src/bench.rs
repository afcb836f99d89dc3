//! `openrail bench …`: benchmarks that start their own chains and print tables.

use alloy::primitives::{Address, B256, U256, keccak256};
use alloy::providers::Provider;
use alloy::providers::ext::AnvilApi;
use alloy::transports::http::reqwest::Url;
use anyhow::Context;
use openrail_chain::bindings::{AllowanceStateMachine, IAllowanceStateMachine, TestStablecoin};
use openrail_chain::deploy::{TOKEN_DECIMALS, fund_wallet, mined, signer_provider};
use openrail_chain::devnet::{
    Devnet, DevnetConfig, dev_demo_payer, dev_operator, dev_owner, dev_spare, dev_treasury,
};
use openrail_chain::{batch, consent};

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
        /// Seconds between blocks: run on a chain with a block time (with --gas-limit)
        /// instead of automine, and compare with the chain's gas ceilings.
        #[arg(long, requires = "gas_limit")]
        block_time: Option<u64>,
        /// Gas per block of that chain (e.g. 30000000).
        #[arg(long, requires = "block_time")]
        gas_limit: Option<u64>,
        /// On automine, skip the raw phase: only the end-to-end figures (for comparing two
        /// builds of the service, where the raw ceiling is the same chain both times).
        #[arg(long, conflicts_with = "block_time")]
        no_raw: bool,
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
    /// Latency of `POST /v1/identity/credentials/verify` on the W3C eddsa-rdfc-2022 vector
    /// from concurrent HTTP clients (SQLite, no chain), against the same verifications on
    /// the library from as many threads.
    Verify {
        /// Verifications in the measurement.
        #[arg(long, default_value_t = 5000)]
        n: usize,
        /// Concurrent clients (HTTP clients, and threads for the library baseline).
        #[arg(long, default_value_t = 16)]
        concurrency: usize,
    },
}

pub async fn run(cmd: BenchCommand) -> anyhow::Result<()> {
    match cmd {
        BenchCommand::Gas => gas().await,
        BenchCommand::Pulls {
            n,
            concurrency,
            postgres,
            block_time,
            gas_limit,
            no_raw,
        } => {
            let real = block_time.zip(gas_limit).map(|(block_time, gas_limit)| {
                crate::bench_pulls::RealChain {
                    block_time,
                    gas_limit,
                }
            });
            crate::bench_pulls::run(n, concurrency, postgres, real, no_raw).await
        }
        BenchCommand::Webhooks {
            n,
            concurrency,
            postgres,
        } => crate::bench_webhooks::run(n, concurrency, postgres).await,
        BenchCommand::Verify { n, concurrency } => crate::bench_verify::run(n, concurrency).await,
    }
}

/// Target: the service's lone pull (a one-item `pullBatch`), total transaction gas.
const LONE_PULL_TARGET: u64 = 60_000;
/// Target: gas per pull in a 50-item `pullBatch` of distinct payers and destinations.
const DISTINCT_BATCH_TARGET: u64 = 30_000;
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
    println!("Setup: wallet-funded mandates naming their payees, payer and destination balances");
    println!("non-zero, payers approved the state machine for an unlimited amount, measured pulls");
    println!("are not the first of their epoch. Keys pay one destination unless said otherwise.\n");
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

/// An unsigned batch item.
fn item(key_id: B256, destination: Address, amount: U256) -> batch::Item<'static> {
    batch::Item {
        key_id,
        destination,
        amount,
        agent: None,
    }
}

async fn gas_scenarios(devnet: &Devnet) -> anyhow::Result<Vec<Row>> {
    let a = &devnet.manifest.settlement;
    let url: Url = a.rpc_url.parse()?;
    let op = signer_provider(&url, dev_operator())?;
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
    // The destination already holds tokens, as in steady state (the test tokens' minter
    // is the contracts' owner).
    let owner = signer_provider(&url, dev_owner())?;
    mined(
        TestStablecoin::new(usd, &owner)
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
    let batch_of = |items: &[batch::Item<'_>]| asm.pullBatch(batch::encode(items));

    // The mandate itself, created with the payer's EIP-712 signature, naming its one payee.
    let salt = keccak256("bench-mandate");
    let mandate = consent::mandate_id(payer.address(), salt);
    let terms = consent::Mandate {
        mandateId: mandate,
        payer: payer.address(),
        token: usd,
        maxAmount: U256::from(1_000_000u64) * unit,
        interval: 0,
        payees: vec![destination],
        agent: Address::ZERO,
        purpose: "bench".into(),
        identityAttester: Address::ZERO,
        payerSchema: B256::ZERO,
        agentSchema: B256::ZERO,
        nonce: U256::from(1u64),
        deadline: U256::from(noon + 86_400),
    };
    let sig = consent::sign_with(&terms, a.chain_id, asm_addr, &payer);
    let created = mined(
        asm.createMandateWithSignature(terms.terms(salt), terms.nonce, terms.deadline, sig)
            .send()
            .await?,
    )
    .await?;
    rows.push(Row {
        scenario:
            "mandate created with the payer's signature (`createMandateWithSignature`, one payee)"
                .into(),
        total: created.gas_used,
        per_pull: created.gas_used,
        target: None,
    });

    // The service's lone pull: a one-item `pullBatch`, on a key as the API issues it by
    // default (no ceiling of its own) and on one with its own ceiling.
    let amount = unit; // 1 USD
    for (label, ceiling) in [
        ("without", U256::ZERO),
        ("with", U256::from(500_000u64) * unit),
    ] {
        let key = issue_key(
            &asm,
            mandate,
            &format!("bench-lone-{label}"),
            noon,
            ceiling,
            destination,
        )
        .await?;
        let one = [item(key, destination, amount)];
        mined(batch_of(&one).send().await?).await?; // the key's first pull of the epoch
        let lone = mined(batch_of(&one).send().await?).await?;
        rows.push(Row {
            scenario: format!(
                "lone pull: one-item `pullBatch` (what the service sends), key {label} its own ceiling"
            ),
            total: lone.gas_used,
            per_pull: lone.gas_used,
            target: Some(LONE_PULL_TARGET),
        });
    }

    // `pull`, the single-item entry point (for information: the service sends batches).
    let key = issue_key(&asm, mandate, "bench-single", noon, U256::ZERO, destination).await?;
    mined(asm.pull(key, destination, amount).send().await?).await?;
    let single = mined(asm.pull(key, destination, amount).send().await?).await?;
    rows.push(Row {
        scenario: "single `pull`, key without its own ceiling".into(),
        total: single.gas_used,
        per_pull: single.gas_used,
        target: None,
    });

    // A batch of 50 pulls from 50 payers to 50 destinations: nothing shared but the token,
    // every slot cold, the shape of concurrent agents of different payers.
    rows.extend(distinct_batches(devnet, &asm, noon, unit).await?);

    // For information: 50 pulls on one key, and on 50 keys of one mandate.
    let items: Vec<_> = (0..BATCH).map(|_| item(key, destination, amount)).collect();
    let one_key = mined(batch_of(&items).send().await?).await?;
    rows.push(Row {
        scenario: format!("`pullBatch` of {BATCH} pulls, one key"),
        total: one_key.gas_used,
        per_pull: one_key.gas_used / BATCH as u64,
        target: None,
    });
    let mut items = Vec::new();
    for i in 0..BATCH {
        let k = issue_key(
            &asm,
            mandate,
            &format!("bench-key-{i}"),
            noon,
            U256::ZERO,
            destination,
        )
        .await?;
        items.push(item(k, destination, amount));
    }
    let spread = mined(batch_of(&items).send().await?).await?;
    rows.push(Row {
        scenario: format!("`pullBatch` of {BATCH} pulls, {BATCH} keys of one mandate"),
        total: spread.gas_used,
        per_pull: spread.gas_used / BATCH as u64,
        target: None,
    });

    // An agent-signed pull (a key with a signer; a one-item `pullBatch`, the second pull of
    // the epoch on that key).
    let agent = alloy::signers::local::PrivateKeySigner::random();
    let agent_salt = keccak256("bench-agent-key");
    let agent_key = consent::key_id(mandate, agent_salt);
    mined(
        asm.issueSessionKey(
            IAllowanceStateMachine::KeyTerms {
                salt: agent_salt,
                mandateId: mandate,
                expiresAt: noon + 30 * 86_400,
                maxAmount: U256::ZERO,
                allowedDestinations: vec![],
                signer: agent.address(),
            },
            vec![destination],
        )
        .send()
        .await?,
    )
    .await?;
    let signed_pull = |nonce: u64| {
        let msg = consent::DebitPull {
            keyId: agent_key,
            destination,
            amount,
            nonce: U256::from(nonce),
            deadline: U256::from(noon + 86_400),
        };
        let sig = consent::sign_with(&msg, a.chain_id, asm_addr, &agent);
        batch::encode(&[batch::Item {
            key_id: agent_key,
            destination,
            amount,
            agent: Some(batch::Signed {
                nonce: msg.nonce,
                deadline: msg.deadline,
                signature: &sig,
            }),
        }])
    };
    mined(asm.pullBatch(signed_pull(1)).send().await?).await?;
    let agent_pull = mined(asm.pullBatch(signed_pull(2)).send().await?).await?;
    rows.push(Row {
        scenario: "agent-signed pull (one-item `pullBatch`, second in the epoch)".into(),
        total: agent_pull.gas_used,
        per_pull: agent_pull.gas_used,
        target: None,
    });

    // A one-time wallet payment with the payer's signature.
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

/// The "distinct batch" rows: 50 payers, each with its own mandate naming its own payee
/// (50 destinations, each already holding tokens), one key each, a warm-up batch (every
/// mandate's first pull of the epoch) and the measured one; once with keys without their
/// own ceiling (the API's default) and once with.
async fn distinct_batches<P: Provider>(
    devnet: &Devnet,
    asm: &AllowanceStateMachine::AllowanceStateMachineInstance<P>,
    noon: u64,
    unit: U256,
) -> anyhow::Result<Vec<Row>> {
    let a = &devnet.manifest.settlement;
    let url: Url = a.rpc_url.parse()?;
    let op = signer_provider(&url, dev_operator())?;
    let usd = a.tokens["USD"];
    let owner = signer_provider(&url, dev_owner())?;
    let mut mandates = Vec::with_capacity(BATCH);
    for i in 0..BATCH {
        let payer = alloy::signers::local::PrivateKeySigner::random();
        let dest = Address::from_slice(&keccak256(format!("bench-distinct-dest-{i}"))[12..]);
        op.anvil_set_balance(payer.address(), U256::from(10u64).pow(U256::from(18u64)))
            .await?;
        fund_wallet(
            a,
            dev_treasury(),
            payer.clone(),
            U256::from(1_000u64) * unit,
        )
        .await?;
        mined(
            TestStablecoin::new(usd, &owner)
                .mint(dest, unit)
                .send()
                .await?,
        )
        .await?;
        let salt = keccak256(format!("bench-distinct-{i}"));
        let as_payer = signer_provider(&url, payer.clone())?;
        mined(
            AllowanceStateMachine::new(*asm.address(), &as_payer)
                .createMandate(consent::own_mandate_terms(
                    salt,
                    payer.address(),
                    usd,
                    U256::from(1_000u64) * unit,
                    0,
                    vec![dest],
                ))
                .send()
                .await?,
        )
        .await?;
        mandates.push((consent::mandate_id(payer.address(), salt), dest));
    }
    let mut rows = Vec::new();
    for (label, ceiling) in [("without", U256::ZERO), ("with", U256::from(500u64) * unit)] {
        let mut items = Vec::with_capacity(BATCH);
        for (i, (mandate, dest)) in mandates.iter().enumerate() {
            let key = issue_key(
                asm,
                *mandate,
                &format!("bench-distinct-{label}-{i}"),
                noon,
                ceiling,
                *dest,
            )
            .await?;
            items.push(item(key, *dest, unit));
        }
        let input = batch::encode(&items);
        mined(asm.pullBatch(input.clone()).send().await?).await?; // warm-up
        let measured = mined(asm.pullBatch(input).send().await?).await?;
        rows.push(Row {
            scenario: format!(
                "distinct batch: `pullBatch` of {BATCH} pulls, {BATCH} payers, {BATCH} destinations, keys {label} their own ceiling"
            ),
            total: measured.gas_used,
            per_pull: measured.gas_used / BATCH as u64,
            target: Some(DISTINCT_BATCH_TARGET),
        });
    }
    Ok(rows)
}

async fn issue_key<P: Provider>(
    asm: &AllowanceStateMachine::AllowanceStateMachineInstance<P>,
    mandate: B256,
    label: &str,
    now: u64,
    ceiling: U256,
    destination: Address,
) -> anyhow::Result<B256> {
    let salt = keccak256(label);
    let key = consent::key_id(mandate, salt);
    let call = asm.issueSessionKey(
        IAllowanceStateMachine::KeyTerms {
            salt,
            mandateId: mandate,
            expiresAt: now + 30 * 86_400,
            maxAmount: ceiling,
            allowedDestinations: vec![destination],
            signer: Address::ZERO,
        },
        vec![destination],
    );
    mined(call.send().await?).await?;
    Ok(key)
}
