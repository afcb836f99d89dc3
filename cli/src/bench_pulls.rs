//! `openrail bench pulls`: end-to-end debit pulls per second through HTTP, and in the same
//! run the raw ceiling of the chain alone (unbatched `pull` transactions signed locally and
//! sent to anvil back to back, without waiting for receipts).

use openrail_store::now_ms;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use alloy::eips::eip2718::Encodable2718;
use alloy::network::{EthereumWallet, NetworkTransactionBuilder, TransactionBuilder};
use alloy::primitives::{Address, B256, U256, keccak256};
use alloy::providers::Provider;
use alloy::providers::ext::AnvilApi;
use alloy::rpc::types::TransactionRequest;
use alloy::sol_types::{SolCall, SolEvent};
use anyhow::{Context, bail};
use openrail_chain::bindings::{AllowanceStateMachine, IAllowanceStateMachine};
use openrail_chain::deploy::{TOKEN_DECIMALS, fund_wallet, mined, signer_provider};
use openrail_chain::devnet::{
    Devnet, DevnetConfig, dev_demo_payer, dev_operator, dev_spare, dev_treasury,
};
use serde_json::{Value, json};

/// Window sizes (unmined transactions in flight) the raw phase tries; the best counts.
const RAW_WINDOWS: [usize; 3] = [32, 128, 512];

/// Raw transactions sent per slice: each slice starts from the same chain (see
/// [`send_sliced`]).
const SLICE: usize = 500;

/// The raw rate over `n` pulls, sent as slices of `raws` (at most [`SLICE`]) with at most
/// `window` unmined: before each slice the chain is snapshotted, after it reverted, so every
/// slice runs at the same height with the same signed transactions. Anvil's cost per block
/// grows with its height (measured: 500 pulls take 0.5 s from block 0 and 2.2 s from block
/// 2,500), an artefact of the local node that a real chain does not have and that a
/// batching sender, which makes few blocks, barely meets; without the reset the ceiling
/// would fall with `n` and the ratio rise with it.
///
/// A slice in which anvil stalled (a transaction it kept queued, recovered after
/// [`RESEND_AFTER`]) is slower for a fault of the local node, which would lower the raw
/// figure and flatter the end-to-end ratio: the rate is over the slices that did not stall
/// when any did not, and the count of stalled slices is reported.
async fn send_sliced<P: Provider + Clone + 'static>(
    op: &P,
    raws: &[Vec<u8>],
    n: usize,
    window: usize,
) -> anyhow::Result<RawRun> {
    let (mut slowest, mut fastest) = (f64::MAX, 0.0f64);
    let (mut all, mut clean) = ((0usize, Duration::ZERO), (0usize, Duration::ZERO));
    let (mut slices, mut stalled) = (0usize, 0usize);
    let mut left = n;
    while left > 0 {
        let count = left.min(raws.len());
        let snapshot: U256 = op.raw_request("evm_snapshot".into(), ()).await?;
        let (took, stalls) = send_windowed(op, &raws[..count], window).await?;
        let reverted: bool = op.raw_request("evm_revert".into(), (snapshot,)).await?;
        anyhow::ensure!(reverted, "raw phase: anvil did not revert to its snapshot");
        let rate = count as f64 / took.as_secs_f64();
        (slowest, fastest) = (slowest.min(rate), fastest.max(rate));
        all = (all.0 + count, all.1 + took);
        slices += 1;
        if stalls == 0 {
            clean = (clean.0 + count, clean.1 + took);
        } else {
            stalled += 1;
        }
        left -= count;
    }
    let (sent, took) = if clean.0 > 0 { clean } else { all };
    Ok(RawRun {
        rate: sent as f64 / took.as_secs_f64(),
        slowest,
        fastest,
        slices,
        stalled,
    })
}

/// The raw sender's figures over one window.
#[derive(Debug, Clone, Copy)]
struct RawRun {
    /// Transactions per second over the slices that did not stall (over all when every one
    /// did).
    rate: f64,
    /// The slowest slice's rate, stalled or not.
    slowest: f64,
    /// The fastest slice's rate.
    fastest: f64,
    /// Slices sent.
    slices: usize,
    /// Slices in which anvil stalled and the sender recovered.
    stalled: usize,
}

/// `eth_sendRawTransaction` calls the raw sender keeps in flight at once. One call at a
/// time measured the sender's round trips more than the chain: 835–1,176 tx/s on automine
/// anvil, where 8 in flight reached 2,046–2,231 (measured from outside for issue 25).
const SENDS: usize = 8;

/// How long the raw sender waits on automine for a transaction's receipt before it empties
/// anvil's pool, sends the transaction and those after it again in nonce order, and mines
/// a block: anvil has been seen to keep one queued with its nonce the account's next (sent
/// among others out of nonce order, after a revert), and every later nonce then waits
/// behind it. Measured: 3 of 12 runs stalled so before, 0 of 12 since.
const RESEND_AFTER: Duration = Duration::from_millis(250);

/// Sends `raws` keeping at most [`SENDS`] calls and `window` unmined transactions in flight;
/// the time until the last is mined, and how many times the sender recovered a stall.
async fn send_windowed<P: Provider + Clone + 'static>(
    op: &P,
    raws: &[Vec<u8>],
    window: usize,
) -> anyhow::Result<(Duration, usize)> {
    let n = raws.len();
    let start = Instant::now();
    // Bounded: a bench finishes or fails with a reason, never hangs.
    let give_up = start + Duration::from_secs(120 + n as u64 / 20);
    // A signed transaction's hash is the hash of its bytes: known before it is sent.
    let hashes: Vec<_> = raws.iter().map(keccak256).collect();
    let mut sends = tokio::task::JoinSet::new();
    let mut stalls = 0;
    for (i, raw) in raws.iter().enumerate() {
        if i >= window {
            stalls += mined_or_resent(
                op,
                &raws[i - window..i],
                &hashes,
                i - window,
                n,
                start,
                give_up,
            )
            .await?;
        }
        while sends.len() >= SENDS {
            sends.join_next().await.context("a send")???;
        }
        let (op, raw) = (op.clone(), raw.clone());
        sends.spawn(async move { op.send_raw_transaction(&raw).await.map(|_| ()) });
    }
    while let Some(sent) = sends.join_next().await {
        sent??;
    }
    // In nonce order: a later transaction is mined only after every earlier one.
    for i in n.saturating_sub(window)..n {
        stalls += mined_or_resent(op, &raws[i..], &hashes, i, n, start, give_up).await?;
    }
    Ok((start.elapsed(), stalls))
}

/// Waits until transaction `i` of `n` is mined — the first of `sent`, the transactions
/// sent from it on (`hashes` holds every transaction's hash) — sending them again, in nonce
/// order, after each [`RESEND_AFTER`] without a receipt (an error of a resend — "already
/// known", "nonce too low" — only means it is there or mined); fails past `give_up`,
/// saying what the node makes of it. Returns how many times it sent them again.
async fn mined_or_resent<P: Provider>(
    op: &P,
    sent: &[Vec<u8>],
    hashes: &[B256],
    i: usize,
    n: usize,
    start: Instant,
    give_up: Instant,
) -> anyhow::Result<usize> {
    let hash = hashes[i];
    let mut resend_at = Instant::now() + RESEND_AFTER;
    let mut resent = 0;
    while op.get_transaction_receipt(hash).await?.is_none() {
        if Instant::now() >= give_up {
            // What the node says of it, for whoever reads the failure.
            let seen: Value = op
                .raw_request("eth_getTransactionByHash".into(), (hash,))
                .await
                .unwrap_or(Value::Null);
            let pool: Value = op
                .raw_request("txpool_status".into(), ())
                .await
                .unwrap_or(Value::Null);
            let from = seen.get("from").cloned().unwrap_or(Value::Null);
            let (latest, pending): (Value, Value) = if from.is_null() {
                (Value::Null, Value::Null)
            } else {
                (
                    op.raw_request("eth_getTransactionCount".into(), (from.clone(), "latest"))
                        .await
                        .unwrap_or(Value::Null),
                    op.raw_request("eth_getTransactionCount".into(), (from, "pending"))
                        .await
                        .unwrap_or(Value::Null),
                )
            };
            bail!(
                "raw phase: transaction {} of {n} was not mined within {} s, though sent again \
                 every {} ms with a block mined (the node: nonce {}, block {}, account's \
                 latest nonce {latest}, pending {pending}, pool {pool})",
                i + 1,
                (give_up - start).as_secs(),
                RESEND_AFTER.as_millis(),
                seen.get("nonce").unwrap_or(&Value::Null),
                seen.get("blockNumber").unwrap_or(&Value::Null),
            );
        }
        if Instant::now() >= resend_at {
            // Anvil can keep it among its queued transactions with every later one, its
            // nonce the account's next (seen after `evm_revert`: sent again it is "already
            // known", and a block leaves it out). The pool emptied, they are sent again one
            // after another, in nonce order.
            let _: Result<Value, _> = op.raw_request("anvil_dropAllTransactions".into(), ()).await;
            for raw in sent {
                let _ = op.send_raw_transaction(raw).await;
            }
            // A transaction can also sit in anvil's pool, known but never mined, since
            // automine mines when a transaction arrives: a block mines it.
            let _: Result<Value, _> = op.raw_request("evm_mine".into(), ()).await;
            resend_at = Instant::now() + RESEND_AFTER;
            resent += 1;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    Ok(resent)
}

/// A chain with a block time and a block gas limit (as an L2 or mainnet), rather than
/// anvil's automine.
#[derive(Debug, Clone, Copy)]
pub struct RealChain {
    /// Seconds between blocks.
    pub block_time: u64,
    /// Gas per block.
    pub gas_limit: u64,
}

pub async fn run(
    n: usize,
    concurrency: usize,
    postgres: Option<String>,
    real: Option<RealChain>,
    no_raw: bool,
) -> anyhow::Result<()> {
    if n == 0 || concurrency == 0 {
        bail!("--n and --concurrency must be positive");
    }
    if let Some(real) = real {
        return run_real(n, concurrency, postgres, real).await;
    }
    // The raw phase and the end-to-end phase each on a fresh pair of chains: anvil slows as
    // its chain grows, so the phase run second would start at a disadvantage.
    let fresh = || {
        Devnet::start(DevnetConfig {
            prune_history: true,
            ..DevnetConfig::default()
        })
    };
    let by_window = if no_raw {
        Vec::new()
    } else {
        let devnet = fresh().await?;
        let result = measure(&devnet, n, concurrency, &RAW_WINDOWS, None, None).await;
        devnet.stop().await;
        result?.0
    };
    let devnet = fresh().await?;
    let result = measure(
        &devnet,
        n,
        concurrency,
        &[],
        Some(postgres.as_deref()),
        None,
    )
    .await;
    devnet.stop().await;
    let api = result?.1.context("the end-to-end phase gave no figures")?;
    let raw = by_window.iter().map(|(_, r)| r.rate).fold(0.0, f64::max);
    println!(
        "Debit pulls: {n} pulls, {concurrency} concurrent HTTP clients, {}, one anvil (automine)\n",
        database_label(&postgres)
    );
    println!("| measurement | pulls/s | p50 latency | p99 latency |");
    println!("|---|---:|---:|---:|");
    for (window, r) in &by_window {
        let stalled = match r.stalled {
            0 => String::new(),
            s => format!(
                "; anvil stalled in {s} of {} slices, recovered: the rate is over the others",
                r.slices
            ),
        };
        println!(
            "| raw: unbatched `pull` txs straight to anvil, ≤ {SENDS} sends and ≤ {window} unmined at once (slices of ≤ {SLICE}: {:.0}–{:.0}{stalled}) | {:.0} | — | — |",
            r.slowest, r.fastest, r.rate
        );
    }
    if !by_window.is_empty() {
        println!("| raw ceiling: the best window | {raw:.0} | — | — |");
    }
    println!(
        "| end to end: `POST /v1/debit-pulls` (batched on chain) | {:.0} | {:.1} ms | {:.1} ms |",
        api.per_sec,
        ms(api.p50),
        ms(api.p99)
    );
    if by_window.is_empty() {
        println!("\n(raw phase skipped: --no-raw)");
    } else {
        let ratio = api.per_sec / raw;
        println!("\nend-to-end / raw ratio: {ratio:.2}× (target ≥ 2×); p99 target ≤ 100 ms");
    }
    print_cpu(&api);
    let g = &api.groups;
    println!(
        "group commits: {} of {:.1} writes on average, each {:.1} ms (p50; p90 {:.1} ms), \
         {:.0} % of the phase's time",
        g.count,
        g.jobs_mean,
        g.p50,
        g.p90,
        g.busy / api.elapsed.as_secs_f64() * 100.0
    );
    println!(
        "authorized: {} of {n}; transactions used: {}",
        api.authorized, api.transactions
    );
    print_stages(&api);
    Ok(())
}

/// Where a pull's time goes, stage by stage.
fn print_stages(api: &ApiFigures) {
    println!(
        "\nwhere a pull's time goes: from one stage to the next, over the {} pulls that passed \
         every stage (p50 of the request: {:.1} ms; the time before `received` — HTTP, \
         authentication, rate limit — and after `answered` — the answer — is not marked)\n",
        api.staged,
        ms(api.p50)
    );
    println!("| from → to | p50 | p90 | what happens |");
    println!("|---|---:|---:|---|");
    for (from, to, p50, p90) in &api.stages {
        println!(
            "| {from} → {to} | {p50:.1} ms | {p90:.1} ms | {} |",
            stage_meaning(to)
        );
    }
}

/// `bench pulls --block-time --gas-limit`: on a chain that makes a block every
/// `block_time` seconds of at most `gas_limit` gas, throughput is bound by gas per block,
/// not by the node's RPC. Prints settled pulls per second against the two gas ceilings —
/// batched (the gas a pull takes in a 128-item `pullBatch` on one key, measured on this
/// chain) and unbatched (a lone `pull` transaction, measured too) — and the time from the
/// request to its final answer.
async fn run_real(
    n: usize,
    concurrency: usize,
    postgres: Option<String>,
    real: RealChain,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        real.block_time > 0 && real.gas_limit >= 1_000_000,
        "--block-time must be positive and --gas-limit at least 1,000,000"
    );
    let devnet = Devnet::start(DevnetConfig {
        prune_history: true,
        ..DevnetConfig::default()
    })
    .await?;
    let result = measure(
        &devnet,
        n,
        concurrency,
        &[],
        Some(postgres.as_deref()),
        Some(real),
    )
    .await;
    devnet.stop().await;
    let api = result?.1.context("the end-to-end phase gave no figures")?;
    let (lone, batched) = api.gas_per_pull.context("no gas figures")?;
    let per_sec =
        |gas_per_pull: u64| real.gas_limit as f64 / gas_per_pull as f64 / real.block_time as f64;
    let (unbatched_ceiling, batched_ceiling) = (per_sec(lone), per_sec(batched));
    println!(
        "Debit pulls on a chain with {} s blocks of {} gas: {n} pulls, {concurrency} concurrent HTTP clients, {}\n",
        real.block_time,
        real.gas_limit,
        database_label(&postgres)
    );
    println!("| measurement | pulls/s | p50 time to final | p99 time to final |");
    println!("|---|---:|---:|---:|");
    println!(
        "| unbatched gas ceiling: a lone `pull` takes {lone} gas | {unbatched_ceiling:.0} | — | — |"
    );
    println!(
        "| batched gas ceiling: a pull in a 128-item `pullBatch` takes {batched} gas | {batched_ceiling:.0} | — | — |"
    );
    println!(
        "| end to end: `POST /v1/debit-pulls`, settled | {:.0} | {:.0} ms | {:.0} ms |",
        api.per_sec,
        ms(api.p50),
        ms(api.p99)
    );
    println!(
        "\nsettled / batched ceiling: {:.0} % (goal ≥ 80 %); settled / unbatched ceiling: {:.1}×",
        api.per_sec / batched_ceiling * 100.0,
        api.per_sec / unbatched_ceiling
    );
    println!(
        "the clients connected before the run, which started as a block was mined (time from the first request to the last answer)"
    );
    println!(
        "authorized: {} of {n}; transactions used: {} ({:.0} pulls each)",
        api.authorized,
        api.transactions,
        n as f64 / api.transactions.max(1) as f64
    );
    if let Some(f) = &api.block_fill {
        println!(
            "blocks carrying the run: {}; the {} between the first and the last used {} of their gas limit (the first and last hold the run's start and end)",
            f.blocks,
            f.inner,
            f.inner_fill
                .map_or("—".to_string(), |x| format!("{:.0} %", x * 100.0))
        );
        let counts: Vec<String> = f.per_block.iter().map(|c| c.to_string()).collect();
        println!(
            "pulls settled by each of those blocks: {} (the batched ceiling: {:.0} a block)",
            counts.join(", "),
            batched_ceiling * real.block_time as f64
        );
        if f.inner > 0 {
            let pulls: usize = f.per_block[1..f.per_block.len() - 1].iter().sum();
            let per_sec = pulls as f64 / (f.inner as u64 * real.block_time) as f64;
            println!(
                "steady state, those {} blocks: {pulls} pulls settled, {per_sec:.0} pulls/s = {:.0} % of the batched ceiling",
                f.inner,
                per_sec / batched_ceiling * 100.0
            );
        }
    }
    for f in failures().lock().expect("failures lock").iter() {
        println!("not authorized: {f}");
    }
    print_cpu(&api);
    print_stages(&api);
    Ok(())
}

/// The end-to-end phase's CPU per pull: this process (server, and the bench's clients on
/// their own thread), anvil, and this process by thread.
fn print_cpu(api: &ApiFigures) {
    let us = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.0} µs"));
    println!(
        "CPU per pull in the end-to-end phase: {} in this process (server and the bench's HTTP clients), {} in anvil",
        us(api.cpu_per_pull.0),
        us(api.cpu_per_pull.1)
    );
    for (kind, us) in &api.cpu_by_thread {
        println!("  {us:.0} µs: {kind}");
    }
    println!(
        "context switches per pull in this process: {:.1}",
        api.switches_per_pull
    );
    if let Some(n) = api.listen_overflows {
        println!("connections dropped on a full accept queue (the machine's, during the run): {n}");
    }
}

/// The database the end-to-end phase ran on.
fn database_label(postgres: &Option<String>) -> &'static str {
    if postgres.is_some() {
        "PostgreSQL"
    } else {
        "SQLite"
    }
}

/// The first few answers that were not `201 authorized`, printed after the figures.
fn failures() -> &'static Mutex<Vec<String>> {
    static FAILURES: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    FAILURES.get_or_init(Default::default)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The store's group commits in the end-to-end phase.
struct GroupFigures {
    count: usize,
    jobs_mean: f64,
    p50: f64,
    p90: f64,
    busy: f64,
}

struct ApiFigures {
    /// On a chain with a block time: gas of a lone `pull` transaction and of a pull in a
    /// 128-item batch.
    gas_per_pull: Option<(u64, u64)>,
    groups: GroupFigures,
    elapsed: Duration,
    per_sec: f64,
    p50: Duration,
    p99: Duration,
    authorized: usize,
    transactions: u64,
    /// Pulls that passed every stage of [`STAGES`].
    staged: usize,
    /// (from, to, p50 ms, p90 ms) for consecutive stages.
    stages: Vec<(&'static str, &'static str, f64, f64)>,
    /// CPU time per pull in the end-to-end phase, µs: this process (server and clients),
    /// and the settlement chain's anvil. Unlike rates, it hardly moves when something else
    /// runs on the machine.
    cpu_per_pull: (Option<f64>, Option<f64>),
    /// This process's CPU time per pull by kind of thread, µs, largest first.
    cpu_by_thread: Vec<(&'static str, f64)>,
    /// Context switches of this process's threads per pull in the end-to-end phase (each
    /// hand-off between threads — a database worker, a runtime thread — costs one or two).
    switches_per_pull: f64,
    /// Connections the kernel dropped because the server's accept queue was full (the
    /// machine's count, during the run; `None` where `/proc/net/netstat` is not read).
    listen_overflows: Option<u64>,
    /// On a chain with a block time: how full the run kept its blocks.
    block_fill: Option<BlockFill>,
}

/// CPU time (seconds) of this process's threads alive now, summed by kind of thread: the
/// runtime's workers (HTTP server and clients, handlers, the engine, signing, JSON), the
/// group writer (the hot path's writes on SQLite), sqlx's SQLite workers (every other
/// statement), the rest.
fn cpu_by_thread() -> HashMap<&'static str, f64> {
    let mut out = HashMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for t in tasks.flatten() {
        let Some(name) = t.file_name().to_str().map(String::from) else {
            continue;
        };
        let Some(secs) = cpu_seconds(&format!("self/task/{name}")) else {
            continue;
        };
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        let kind = match comm.trim() {
            c if c.starts_with("tokio-r") => {
                "runtime workers: HTTP server, handlers, engine, signing"
            }
            c if c.starts_with("bench-client") => "the bench's HTTP clients (not the server)",
            // A thread's name is cut to 15 bytes: `openrail-sqlite-writer` reads
            // `openrail-sqlite`; the group writer of builds before it, `openrail-group-`.
            c if c.starts_with("openrail-sqlite") || c.starts_with("openrail-group") => {
                "SQLite writer: every write (the hot path's in groups)"
            }
            c if c.starts_with("sqlx-sqlite") => "sqlx SQLite workers (builds before one writer)",
            _ => "other threads",
        };
        *out.entry(kind).or_default() += secs;
    }
    out
}

/// The machine's count of connections dropped because a listener's accept queue was full
/// (`TcpExt: ListenOverflows`).
fn listen_overflows() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/net/netstat").ok()?;
    let mut lines = text.lines().filter(|l| l.starts_with("TcpExt:"));
    let (names, values) = (lines.next()?, lines.next()?);
    let at = names
        .split_whitespace()
        .position(|n| n == "ListenOverflows")?;
    values.split_whitespace().nth(at)?.parse().ok()
}

/// Context switches, voluntary and not, of this process's threads alive now.
fn context_switches() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("status")).ok())
        .flat_map(|status| {
            status
                .lines()
                .filter(|l| l.contains("ctxt_switches:"))
                .filter_map(|l| l.split_whitespace().last()?.parse::<u64>().ok())
                .collect::<Vec<_>>()
        })
        .sum()
}

/// CPU time (user and system, all threads) process `pid` (or `self`) used so far, seconds,
/// from `/proc/<pid>/stat`; `None` where there is no such file.
pub(crate) fn cpu_seconds(pid: &str) -> Option<f64> {
    static TICKS: OnceLock<f64> = OnceLock::new();
    let ticks = *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(100.0)
    });
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces): state is the first, utime
    // the 12th, stime the 13th.
    let rest: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let utime: f64 = rest.get(11)?.parse().ok()?;
    let stime: f64 = rest.get(12)?.parse().ok()?;
    Some((utime + stime) / ticks)
}

/// The stages a pull passes, in order (marked with `openrail_store::stages::mark`).
const STAGES: [&str; 10] = [
    "received",
    "accepted",
    "written",
    "claimed",
    "batched",
    "journaled",
    "broadcast",
    "mined",
    "recorded",
    "answered",
];

fn stage_meaning(to: &str) -> &'static str {
    match to {
        "accepted" => "the handler reads the key with its mandate and checks the request",
        "written" => {
            "the store's group commit: the pull, its event and its work (with the other pulls, outcomes and fates meanwhile)"
        }
        "claimed" => "the request hands the pull to its process's engine, which starts it",
        "batched" => "the pull waits for the submitter, busy with the previous transaction",
        "journaled" => "fee estimate, signing, the journal's write (with the lease check)",
        "broadcast" => "`eth_sendRawTransaction` to anvil",
        "mined" => "receipt polled; the outcome reaches the pull's task",
        "recorded" => {
            "the store's group commit: outcome, event, work closed (with the others meanwhile)"
        }
        "answered" => "the request is woken",
        _ => "",
    }
}

/// Stage marks recorded while the bench runs: a tracing layer for the target of
/// `openrail_store::stages` (installed by `main` for `bench pulls` only).
#[derive(Clone, Default)]
pub struct StageClock {
    marks: Arc<Mutex<Vec<(String, String, Instant)>>>,
    /// Group commits: (writes in the group, microseconds it took).
    groups: Arc<Mutex<Vec<(u64, u64)>>>,
}

/// The bench's clock, once `main` installed it.
pub static CLOCK: OnceLock<StageClock> = OnceLock::new();

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for StageClock {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        #[derive(Default)]
        struct Fields {
            stage: Option<String>,
            id: Option<String>,
            jobs: Option<u64>,
            micros: Option<u64>,
        }
        impl tracing::field::Visit for Fields {
            fn record_u64(&mut self, f: &tracing::field::Field, v: u64) {
                match f.name() {
                    "jobs" => self.jobs = Some(v),
                    "micros" => self.micros = Some(v),
                    _ => {}
                }
            }
            fn record_str(&mut self, f: &tracing::field::Field, v: &str) {
                match f.name() {
                    "stage" => self.stage = Some(v.to_string()),
                    "id" => self.id = Some(v.to_string()),
                    _ => {}
                }
            }
            fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
        }
        let at = Instant::now();
        let mut f = Fields::default();
        event.record(&mut f);
        if let (Some(stage), Some(id)) = (f.stage, f.id) {
            self.marks
                .lock()
                .expect("stage clock")
                .push((stage, id, at));
        }
        if let (Some(jobs), Some(micros)) = (f.jobs, f.micros) {
            self.groups
                .lock()
                .expect("stage clock")
                .push((jobs, micros));
        }
    }
}

impl StageClock {
    fn clear(&self) {
        self.marks.lock().expect("stage clock").clear();
        self.groups.lock().expect("stage clock").clear();
    }

    /// The group commits recorded: how many, writes per group (mean), the time one took
    /// (p50 and p90, ms) and all of them together (s).
    fn groups(&self) -> GroupFigures {
        let groups = std::mem::take(&mut *self.groups.lock().expect("stage clock"));
        let mut took: Vec<u64> = groups.iter().map(|g| g.1).collect();
        took.sort_unstable();
        let at = |v: &[u64], p: f64| {
            v.get(((v.len() as f64 * p) as usize).min(v.len().saturating_sub(1)))
                .map_or(0.0, |us| *us as f64 / 1000.0)
        };
        GroupFigures {
            count: groups.len(),
            jobs_mean: groups.iter().map(|g| g.0 as f64).sum::<f64>() / groups.len().max(1) as f64,
            p50: at(&took, 0.5),
            p90: at(&took, 0.9),
            busy: took.iter().sum::<u64>() as f64 / 1e6,
        }
    }

    /// The pulls that passed every stage, and p50 and p90 (ms) between consecutive stages.
    fn report(&self) -> (usize, Vec<(&'static str, &'static str, f64, f64)>) {
        let marks = std::mem::take(&mut *self.marks.lock().expect("stage clock"));
        let mut by_id: HashMap<String, [Option<Instant>; STAGES.len()]> = HashMap::new();
        for (stage, id, at) in marks {
            if let Some(i) = STAGES.iter().position(|s| *s == stage) {
                // The first time a pull reached a stage.
                by_id.entry(id).or_default()[i].get_or_insert(at);
            }
        }
        let full: Vec<[Instant; STAGES.len()]> = by_id
            .into_values()
            .filter_map(|t| {
                let v: Option<Vec<Instant>> = t.into_iter().collect();
                v.and_then(|v| v.try_into().ok())
            })
            .collect();
        let stages = STAGES
            .windows(2)
            .enumerate()
            .map(|(i, w)| {
                let mut d: Vec<f64> = full
                    .iter()
                    .map(|t| ms(t[i + 1].saturating_duration_since(t[i])))
                    .collect();
                d.sort_by(f64::total_cmp);
                let at = |p: f64| {
                    d.get(((d.len() as f64 * p) as usize).min(d.len().saturating_sub(1)))
                        .copied()
                        .unwrap_or(0.0)
                };
                (w[0], w[1], at(0.5), at(0.9))
            })
            .collect();
        (full.len(), stages)
    }
}

/// On `devnet`: the raw phase at each of `windows`, then, when `api`, the end-to-end phase.
async fn measure(
    devnet: &Devnet,
    n: usize,
    concurrency: usize,
    windows: &[usize],
    // The end-to-end phase, on PostgreSQL (this server) or SQLite (`None`); no such phase
    // when `None`.
    api: Option<Option<&str>>,
    // Blocks every so often of so much gas, from the end-to-end phase on (automine before).
    real: Option<RealChain>,
) -> anyhow::Result<(Vec<(usize, RawRun)>, Option<ApiFigures>)> {
    let a = &devnet.manifest.settlement;
    let unit = U256::from(10u64).pow(U256::from(TOKEN_DECIMALS));
    let payer = dev_demo_payer();
    fund_wallet(
        a,
        dev_treasury(),
        payer.clone(),
        U256::from(1_000_000_000u64) * unit,
    )
    .await?;
    let dest = dev_spare().address();

    // Raw ceiling, before the server's submitter owns the operator's nonces.
    let op = signer_provider(devnet.settlement.rpc_url(), dev_operator())?;
    let asm_addr = a.allowance_state_machine.context("no state machine")?;
    let asm = AllowanceStateMachine::new(asm_addr, &op);
    let (mandate_salt, key_salt) = (keccak256("raw-mandate"), keccak256("raw-key"));
    let mandate = openrail_chain::consent::mandate_id(payer.address(), mandate_salt);
    let key = openrail_chain::consent::key_id(mandate, key_salt);
    let big = U256::from(1_000_000_000u64) * unit;
    // A mandate on a wallet needs the payer: here the payer sends it itself, naming the
    // destination as its payee.
    let payer_provider = signer_provider(devnet.settlement.rpc_url(), payer.clone())?;
    mined(
        AllowanceStateMachine::new(asm_addr, &payer_provider)
            .createMandate(openrail_chain::consent::own_mandate_terms(
                mandate_salt,
                payer.address(),
                a.tokens["USD"],
                big,
                0,
                vec![dest],
            ))
            .send()
            .await?,
    )
    .await?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    mined(
        asm.issueSessionKey(
            IAllowanceStateMachine::KeyTerms {
                salt: key_salt,
                mandateId: mandate,
                expiresAt: now + 86_400,
                maxAmount: U256::ZERO,
                allowedDestinations: vec![],
                signer: Address::ZERO,
            },
            vec![dest],
        )
        .send()
        .await?,
    )
    .await?;
    let wallet = EthereumWallet::from(dev_operator());
    let fees = op.estimate_eip1559_fees().await?;
    let mut nonce = op.get_transaction_count(a.operator).await?;
    let chain_id = op.get_chain_id().await?;
    // The raw ceiling as the best one-transaction-per-pull sender would reach it: signed
    // transactions sent with a bounded window of unmined ones, at several window sizes;
    // the best counts. (Flooding anvil with all n at once measures its pool, which slows
    // as it fills: 10,000 at once did not finish in minutes.) Slices of the same signed
    // transactions from the same height (see `send_sliced`).
    let mut by_window = Vec::new();
    if !windows.is_empty() {
        let mut raws = Vec::with_capacity(n.min(SLICE));
        for _ in 0..n.min(SLICE) {
            let input = AllowanceStateMachine::pullCall {
                keyId: key,
                destination: dest,
                amount: U256::from(10_000u64),
            }
            .abi_encode();
            let tx = TransactionRequest::default()
                .with_from(a.operator)
                .with_to(asm_addr)
                .with_input(input)
                .with_nonce(nonce)
                .with_chain_id(chain_id)
                .with_gas_limit(200_000)
                .with_max_fee_per_gas(fees.max_fee_per_gas)
                .with_max_priority_fee_per_gas(fees.max_priority_fee_per_gas);
            raws.push(tx.build(&wallet).await?.encoded_2718());
            nonce += 1;
        }
        for &window in windows {
            by_window.push((window, send_sliced(&op, &raws, n, window).await?));
        }
    }

    let Some(postgres) = api else {
        return Ok((by_window, None));
    };

    // On a chain with a block time: the gas of a lone pull and of a pull in a full batch,
    // measured here, then blocks every `block_time` of `gas_limit` gas.
    let mut gas_per_pull = None;
    if let Some(real) = real {
        // The second pull on the key: the first writes slots from zero, as only a key's
        // first pull of an epoch does.
        mined(asm.pull(key, dest, U256::from(10_000u64)).send().await?).await?;
        let lone = mined(asm.pull(key, dest, U256::from(10_000u64)).send().await?)
            .await?
            .gas_used;
        let items: Vec<openrail_chain::batch::Item<'_>> = (0..128)
            .map(|_| openrail_chain::batch::Item {
                key_id: key,
                destination: dest,
                amount: U256::from(10_000u64),
                agent: None,
            })
            .collect();
        let batch = mined(
            asm.pullBatch(openrail_chain::batch::encode(&items))
                .gas(20_000_000)
                .send()
                .await?,
        )
        .await?
        .gas_used;
        gas_per_pull = Some((lone, batch / 128));
        op.anvil_set_block_gas_limit(real.gas_limit).await?;
        op.anvil_set_auto_mine(false).await?;
        op.anvil_set_interval_mining(real.block_time).await?;
    }

    // End to end through HTTP.
    let dir = tempfile::tempdir()?;
    let store = match postgres {
        None => openrail_store::testing::fresh_sqlite(dir.path()).await?,
        Some(server) => {
            let url = openrail_store::testing::fresh_database_on(server).await?;
            openrail_store::Store::connect(&url).await?
        }
    };
    let account = store.accounts().create("Bench", now_ms()).await?;
    let (_, api_key) = store
        .api_keys()
        .create(&account.id, openrail_store::Mode::Testnet, now_ms())
        .await?;
    let config = openrail_api::ApiConfig {
        rate_per_sec: 1e9,
        rate_burst: 1e9,
        ..Default::default()
    };
    let server =
        openrail_api::server::serve_testnet(store.clone(), a, dev_operator(), 0, config).await?;
    let http = reqwest::Client::new();
    let post = |path: &str, body: Value| {
        http.post(format!("{}{path}", server.base_url))
            .bearer_auth(&api_key)
            // Set-up waits for its blocks, however slow the chain.
            .header("prefer", "wait=60")
            .json(&body)
            .send()
    };
    let m: Value = post(
        "/v1/mandates",
        json!({"payer_account_id": payer.address().to_string(), "max_amount": "1000000000", "currency": "USD", "interval": "daily", "payees": [dest]}),
    )
    .await?
    .json()
    .await?;
    // The payer signs the mandate's typed data, as a wallet would.
    let signature =
        openrail_chain::consent::sign_typed_data_json(&m["authorization"]["typed_data"], &payer)
            .map_err(anyhow::Error::msg)?;
    let m: Value = post(
        &format!(
            "/v1/mandates/{}/authorize",
            m["id"].as_str().unwrap_or_default()
        ),
        json!({ "signature": signature }),
    )
    .await?
    .json()
    .await?;
    anyhow::ensure!(m["status"] == "active", "mandate not active: {m}");
    let k: Value = post(
        "/v1/session-keys",
        json!({"mandate_id": m["id"], "expires_in": 86_400}),
    )
    .await?
    .json()
    .await?;
    let key_id = k["id"]
        .as_str()
        .context("session key not created")?
        .to_string();
    let tx_before = op.get_transaction_count(a.operator).await?;

    // The load's HTTP clients run on a runtime of their own, one thread named
    // `bench-client`: its CPU is counted apart from the server's (on another machine a
    // client costs the server nothing), and its connections are its own (a client made
    // here, not the set-up's, whose connections live on the server's runtime).
    let clients = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("bench-client")
        .enable_all()
        .build()?;
    let load = reqwest::Client::new();
    // Each client opens its connection before the clock starts, as an agent holding its
    // connection (keep-alive) would have it: the run measures pulls, not a storm of
    // `concurrency` TCP connects and accepts in its first second, which on two cores
    // delayed the first block's intake (its pulls: 1,404–1,729 with cold connections).
    // All are held open at once, so the pool keeps one per client.
    let opened = Arc::new(tokio::sync::Barrier::new(concurrency));
    let mut warm = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let (http, url, opened) = (
            load.clone(),
            format!("{}/healthz", server.base_url),
            opened.clone(),
        );
        warm.spawn_on(
            async move {
                let answer = http.get(&url).send().await;
                opened.wait().await;
                answer.map(|r| r.status().is_success())
            },
            clients.handle(),
        );
    }
    while let Some(r) = warm.join_next().await {
        if !r?? {
            bail!("the server's /healthz did not answer 200 while the clients connected");
        }
    }
    let clock = CLOCK.get().cloned().unwrap_or_default();
    clock.clear();
    let anvil_pid = devnet.settlement.pid();
    let cpu_before = (
        cpu_seconds("self"),
        anvil_pid.and_then(|p| cpu_seconds(&p.to_string())),
    );
    let switches_before = context_switches();
    let overflows_before = listen_overflows();
    let threads_before = cpu_by_thread();
    let mut block_before = op.get_block_number().await?;
    // On a chain with a block time, the run starts as a block is mined. Where in the block
    // clock a run starts moves its whole-run figure by up to a block: the first block
    // carries what the service took in before it, so a run that starts a moment before a
    // block needs a block more than one that starts just after one, unless the service
    // takes in a block's worth in that moment (at n = 10,000 and 1 s blocks on two cores
    // shared with the clients and anvil: 4 blocks instead of 3, 76-81 % instead of
    // 86-96 %). Left to itself the phase is whatever the set-up took, the same in every
    // run. Starting just after a block fixes it, at the phase most favourable to the
    // first block (it has the run's first second to fill), which the report says.
    if real.is_some() {
        let waited = Instant::now();
        loop {
            let head = op.get_block_number().await?;
            if head > block_before {
                block_before = head;
                break;
            }
            if waited.elapsed() > Duration::from_secs(120) {
                bail!("no block mined in 120 s");
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
    let start = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for c in 0..concurrency {
        let share = n / concurrency + usize::from(c < n % concurrency);
        let (http, url, api_key, key_id) = (
            load.clone(),
            format!("{}/v1/debit-pulls", server.base_url),
            api_key.clone(),
            key_id.clone(),
        );
        let dest = dest.to_string();
        // On a chain with a block time, the request waits for its block (up to the
        // longest wait): its latency is the time to its final answer.
        let wait = if real.is_some() { "wait=60" } else { "wait=10" };
        set.spawn_on(
            async move {
                let mut out = Vec::with_capacity(share);
                for _ in 0..share {
                    let t = Instant::now();
                    let res = http
                    .post(&url)
                    .bearer_auth(&api_key)
                    .header("prefer", wait)
                    .json(&json!({"session_key_id": key_id, "amount": "0.01", "destination": dest}))
                    .send()
                    .await;
                    let ok = matches!(&res, Ok(r) if r.status().as_u16() == 201);
                    if !ok {
                        let what = match res {
                            Ok(r) => {
                                format!("{} {}", r.status(), r.text().await.unwrap_or_default())
                            }
                            Err(e) => format!("{e}"),
                        };
                        let mut seen = failures().lock().expect("failures lock");
                        if seen.len() < 5 {
                            seen.push(what);
                        }
                    }
                    out.push((t.elapsed(), ok));
                }
                out
            },
            clients.handle(),
        );
    }
    let mut samples = Vec::with_capacity(n);
    while let Some(r) = set.join_next().await {
        samples.extend(r?);
    }
    let elapsed = start.elapsed();
    let cpu_after = (
        cpu_seconds("self"),
        anvil_pid.and_then(|p| cpu_seconds(&p.to_string())),
    );
    let per_pull =
        |before: Option<f64>, after: Option<f64>| Some((after? - before?) / n as f64 * 1e6);
    let cpu_per_pull = (
        per_pull(cpu_before.0, cpu_after.0),
        per_pull(cpu_before.1, cpu_after.1),
    );
    let switches_per_pull = context_switches().saturating_sub(switches_before) as f64 / n as f64;
    let listen_overflows = listen_overflows()
        .zip(overflows_before)
        .map(|(after, before)| after.saturating_sub(before));
    let mut cpu_by_thread: Vec<(&'static str, f64)> = cpu_by_thread()
        .into_iter()
        .map(|(kind, after)| {
            let before = threads_before.get(kind).copied().unwrap_or(0.0);
            (kind, (after - before).max(0.0) / n as f64 * 1e6)
        })
        .collect();
    cpu_by_thread.sort_by(|a, b| b.1.total_cmp(&a.1));
    clients.shutdown_background();
    server.task.abort();
    if let Some(engine) = &server.engine {
        engine.abort();
    }
    let transactions = op.get_transaction_count(a.operator).await? - tx_before;
    let block_fill = match real {
        Some(_) => Some(block_fill(&op, block_before, asm_addr).await?),
        None => None,
    };
    let (staged, stages) = clock.report();
    let groups = clock.groups();
    let authorized = samples.iter().filter(|(_, ok)| *ok).count();
    let mut lat: Vec<Duration> = samples.iter().map(|(d, _)| *d).collect();
    lat.sort();
    let pct = |p: f64| lat[((lat.len() as f64 * p).ceil() as usize).clamp(1, lat.len()) - 1];
    Ok((
        by_window,
        Some(ApiFigures {
            gas_per_pull,
            groups,
            elapsed,
            per_sec: n as f64 / elapsed.as_secs_f64(),
            p50: pct(0.50),
            p99: pct(0.99),
            authorized,
            transactions,
            staged,
            stages,
            cpu_per_pull,
            cpu_by_thread,
            switches_per_pull,
            listen_overflows,
            block_fill,
        }),
    ))
}

/// How full the run kept the chain: the blocks after `before` that carry gas, and the
/// share of the gas limit used by those between the first and the last of them (the run
/// starts and ends inside those two; the ones between show what the engine keeps the
/// chain at once it runs).
async fn block_fill<P: Provider>(op: &P, before: u64, asm: Address) -> anyhow::Result<BlockFill> {
    let head = op.get_block_number().await?;
    let mut used = Vec::new();
    for number in before + 1..=head {
        let block = op
            .get_block_by_number(alloy::eips::BlockNumberOrTag::Number(number))
            .await?
            .with_context(|| format!("block {number}"))?;
        used.push((number, block.header.gas_used, block.header.gas_limit));
    }
    let carrying: Vec<(u64, u64, u64)> = used.into_iter().filter(|b| b.1 > 0).collect();
    let inner = carrying
        .get(1..carrying.len().saturating_sub(1))
        .unwrap_or_default();
    let (gas, limit) = inner.iter().fold((0u128, 0u128), |(g, l), (_, bg, bl)| {
        (g + u128::from(*bg), l + u128::from(*bl))
    });
    // The pulls each block settled: their `DebitPulled` logs.
    let mut per_block: Vec<usize> = vec![0; carrying.len()];
    if let (Some(first), Some(last)) = (carrying.first(), carrying.last()) {
        let logs = op
            .get_logs(
                &alloy::rpc::types::Filter::new()
                    .address(asm)
                    .event_signature(AllowanceStateMachine::DebitPulled::SIGNATURE_HASH)
                    .from_block(first.0)
                    .to_block(last.0),
            )
            .await?;
        for log in logs {
            if let Some(i) = carrying.iter().position(|b| Some(b.0) == log.block_number) {
                per_block[i] += 1;
            }
        }
    }
    Ok(BlockFill {
        blocks: carrying.len(),
        inner: inner.len(),
        inner_fill: (limit > 0).then(|| gas as f64 / limit as f64),
        per_block,
    })
}

/// See [`block_fill`].
#[derive(Debug, Clone)]
struct BlockFill {
    /// Blocks that carried the run's transactions.
    blocks: usize,
    /// Those between the first and the last.
    inner: usize,
    /// Their gas used over their gas limit.
    inner_fill: Option<f64>,
    /// The pulls each block that carried the run settled (`DebitPulled` logs), in block
    /// order.
    per_block: Vec<usize>,
}
