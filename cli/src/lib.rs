//! The `openrail` command line: `dev` (two local chains, the contracts and the server),
//! `serve` (the server on deployed chains, from `openrail.toml`), `deploy`, `bench`,
//! `accounts`, `keys`, `listen` and `openapi`. Thin: it parses arguments, sets up logging
//! and calls into the library crates; the one composition root of a serving process is
//! `node`.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};

mod admin;
mod bench;
mod bench_pulls;
mod bench_verify;
mod bench_webhooks;
pub mod config;
#[cfg(test)]
mod container_files;
mod deploy;
mod dev;
mod listen;
pub mod mcp;
pub mod node;

/// Openrail: one API for bank rails and EVM chains.
#[derive(Debug, Parser)]
#[command(name = "openrail", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// How log lines (stderr) are written: `text` for people, `json` (one object a line,
    /// with the request's id and the span fields) for a log pipeline.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text, env = "OPENRAIL_LOG_FORMAT")]
    log_format: LogFormat,
}

/// See [`Cli::log_format`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Start two local anvil chains, deploy the contracts and keep them running until Ctrl-C.
    Dev(dev::DevArgs),
    /// Serve the API for testnet keys on a deployed settlement chain (see `dev` for a local
    /// one). Several may share one PostgreSQL database: one at a time holds the chain's lease.
    Serve(ServeArgs),
    /// Deploy the contracts to an EVM chain through the canonical CREATE2 deployer (the
    /// same addresses on every chain; a rerun sends nothing) and write
    /// deployments/<chain-id>.json. Keys from OPENRAIL_DEPLOYER_KEY (the owner) and
    /// OPENRAIL_OPERATOR_KEY, never arguments.
    Deploy(deploy::DeployArgs),
    /// Benchmarks that print figures.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Developer accounts.
    #[command(subcommand)]
    Accounts(admin::AccountsCommand),
    /// API keys of developer accounts.
    #[command(subcommand)]
    Keys(admin::KeysCommand),
    /// Receive the account's webhooks here: a temporary endpoint on 127.0.0.1, each event
    /// printed and forwarded signed to --forward-to (like `stripe listen`).
    Listen(listen::ListenArgs),
    /// A Model Context Protocol server for an agent: its tools read the session key's
    /// allowance and make and read its debit pulls. Holds only the key's secret
    /// (OPENRAIL_API_KEY=sks_…) and, for keys with a signer, the agent's key
    /// (OPENRAIL_AGENT_KEY); stdio unless --http. See docs/agents.md.
    Mcp(mcp::McpArgs),
    /// Print the OpenAPI 3.1 document (what `/v1/openapi.json` serves; `make openapi`
    /// writes it to docs/openapi.json).
    Openapi,
}

/// Where the database is: `DATABASE_URL` (`postgres://…` or `sqlite://…`), else a SQLite
/// file in the data directory.
#[derive(Debug, Clone, clap::Args)]
pub struct DbArgs {
    /// Database URL; defaults to SQLite at DATA_DIR/openrail.db.
    #[arg(long, env = "DATABASE_URL")]
    database_url: Option<String>,
    /// Directory for the SQLite database and the dev deployment manifest.
    #[arg(long, default_value_os_t = default_data_dir(), env = "OPENRAIL_DATA_DIR")]
    data_dir: PathBuf,
}

impl DbArgs {
    /// Opens the store (creating the data directory for SQLite) and applies migrations.
    pub async fn open(&self) -> anyhow::Result<openrail_store::Store> {
        let url = match &self.database_url {
            Some(url) => url.clone(),
            None => {
                std::fs::create_dir_all(&self.data_dir)
                    .with_context(|| format!("creating {}", self.data_dir.display()))?;
                format!("sqlite://{}", self.data_dir.join("openrail.db").display())
            }
        };
        openrail_store::Store::connect(&url)
            .await
            .with_context(|| format!("opening the database {}", redact(&url)))
    }
}

/// The URL without its password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}://…@{}", &url[..s], &url[at + 1..]),
        _ => url.to_string(),
    }
}

/// Where `openrail` keeps its files unless told otherwise.
pub fn default_data_dir() -> PathBuf {
    PathBuf::from(".openrail")
}

/// The binary's `main`: runs [`main`] and exits 1 after printing an error.
pub fn main_and_exit() {
    if let Err(e) = main() {
        // The error and its causes on one line, without a backtrace: this is a user's tool.
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

/// Entry point of the binary.
pub fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = || {
        tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| "openrail=info,warn".into())
    };
    let (text, json) = match cli.log_format {
        LogFormat::Text => (
            Some(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::stderr)
                    // Colours only on a terminal: a log file or collector gets plain text.
                    .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                    .with_filter(filter()),
            ),
            None,
        ),
        LogFormat::Json => (
            None,
            Some(
                tracing_subscriber::fmt::layer()
                    .json()
                    .with_current_span(false)
                    .with_span_list(true)
                    .with_writer(std::io::stderr)
                    .with_filter(filter()),
            ),
        ),
    };
    // `bench pulls` times the stages a pull passes (nothing else records them).
    let clock = matches!(
        cli.command,
        Command::Bench(bench::BenchCommand::Pulls { .. })
    )
    .then(|| {
        let clock = bench_pulls::StageClock::default();
        let _ = bench_pulls::CLOCK.set(clock.clone());
        clock.with_filter(
            tracing_subscriber::filter::Targets::new()
                .with_target(openrail_store::stages::TARGET, tracing::Level::TRACE)
                .with_target(openrail_store::stages::GROUP_TARGET, tracing::Level::TRACE),
        )
    });
    tracing_subscriber::registry()
        .with(text)
        .with(json)
        .with(clock)
        .init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting tokio")?;
    runtime.block_on(async move {
        match cli.command {
            Command::Dev(args) => dev::run(args).await,
            Command::Serve(args) => serve(args).await,
            Command::Bench(cmd) => bench::run(cmd).await,
            Command::Deploy(args) => deploy::run(args).await,
            Command::Accounts(cmd) => admin::accounts(cmd).await,
            Command::Keys(cmd) => admin::keys(cmd).await,
            Command::Listen(args) => listen::run(args).await,
            Command::Mcp(args) => mcp::run(args).await,
            Command::Openapi => {
                print!("{}", openrail_api::openapi::document_text());
                Ok(())
            }
        }
    })
}

/// Options of `openrail serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The configuration file (`openrail.toml`: testnet and, optionally, mainnet, each with
    /// its deployment, depth and the variable holding its operator's key; see
    /// `openrail_cli::config`).
    #[arg(long, env = "OPENRAIL_CONFIG", conflicts_with_all = ["manifest", "deployment"])]
    config: Option<PathBuf>,
    /// The deployment manifest (as `openrail dev` writes it): testnet only.
    #[arg(long, env = "OPENRAIL_MANIFEST", conflicts_with = "deployment")]
    manifest: Option<PathBuf>,
    /// The settlement chain's record as `openrail deploy` writes it
    /// (`deployments/<chain-id>.json`), instead of a manifest: testnet only.
    #[arg(long, env = "OPENRAIL_DEPLOYMENT")]
    deployment: Option<PathBuf>,
    /// The operator's private key (hex) with --manifest or --deployment (with --config, the
    /// configuration names the variable holding each mode's key).
    #[arg(long, env = "OPENRAIL_OPERATOR_KEY", hide_env_values = true)]
    operator_key: Option<String>,
    /// Port of the HTTP API.
    #[arg(long, default_value_t = 8080, env = "OPENRAIL_PORT")]
    port: u16,
    /// Length of the chain's lease in milliseconds: with several processes on one
    /// PostgreSQL database, another takes over this long (and at most a third more) after
    /// the holder dies. Also the length of this process's liveness lease, after which a
    /// retry of a request it was running when it died is recovered.
    #[arg(long, default_value_t = 10_000, env = "OPENRAIL_LEASE_TTL_MS")]
    lease_ttl_ms: u64,
    /// Confirmation depth of the settlement chain: the relayer applies events, and bank
    /// legs and final payment statuses follow transactions, only this many blocks below
    /// the head (0 suits local chains; public chains need more).
    #[arg(long, default_value_t = 0, env = "OPENRAIL_CONFIRMATIONS")]
    confirmations: u64,
    /// This process's name in leases (default: random, unique per start).
    #[arg(long, env = "OPENRAIL_NODE_ID")]
    node_id: Option<String>,
    /// Address the API binds (0.0.0.0 for every interface).
    #[arg(long, default_value = "127.0.0.1", env = "OPENRAIL_BIND")]
    bind: std::net::IpAddr,
    /// URL this process is known by, recorded in its leases (for operators: which host
    /// holds a chain); default: the bound address.
    #[arg(long, env = "OPENRAIL_ADVERTISE_URL")]
    advertise_url: Option<String>,
    /// A block explorer's transaction URL with `{tx}` for the hash
    /// (`https://explorer.example/tx/{tx}`): the dashboard links each object's transaction
    /// there.
    #[arg(long, env = "OPENRAIL_EXPLORER_TX_URL")]
    explorer_tx_url: Option<String>,
    /// How long a POST waits for the chain before it answers `202` with the object
    /// `pending` (durably queued; its outcome follows by events and webhooks), seconds;
    /// a request's `Prefer: wait=N` overrides it up to 60. On a chain with slow blocks,
    /// lower it so requests do not hold a connection for a block time.
    #[arg(long, default_value_t = 10, env = "OPENRAIL_WAIT_BUDGET_SECS")]
    wait_budget_secs: u64,
    /// The reverse proxies in front of this server, comma-separated addresses or CIDR
    /// blocks (e.g. `10.0.0.0/8`): only their `Forwarded` / `X-Forwarded-For` name the
    /// client's address (for the failed-authentication and sign-up limits), and
    /// `X-Forwarded-Proto: https` marks cookies `Secure` only when some are configured.
    /// Default: none — the peer is the client.
    #[arg(long, default_value = "", env = "OPENRAIL_TRUSTED_PROXIES")]
    trusted_proxies: String,
    /// Let webhook endpoints name loopback, private, link-local, unique-local and
    /// carrier-grade NAT addresses, in every mode (receivers on the deployment's own
    /// network). Off by default: a hosted server refuses them, so that no account can
    /// make it a proxy into its network or a port scanner of its own host.
    #[arg(long, env = "OPENRAIL_ALLOW_INTERNAL_WEBHOOK_TARGETS")]
    allow_internal_webhook_targets: bool,
    /// On SIGTERM or Ctrl-C, how long the graceful stop may take (answering the requests
    /// in flight, letting the journal settle) before what is left is aborted, seconds.
    #[arg(long, default_value_t = 30, env = "OPENRAIL_SHUTDOWN_TIMEOUT_SECS")]
    shutdown_timeout_secs: u64,
    /// Serve Prometheus metrics at `http://ADDR/metrics` (its own listener, never the
    /// API's port; e.g. `127.0.0.1:9464`, port 0 picks a free one). Off unless given.
    #[arg(long, env = "OPENRAIL_METRICS_ADDR")]
    metrics_addr: Option<std::net::SocketAddr>,
    #[command(flatten)]
    webhooks: WebhookArgs,
    #[command(flatten)]
    db: DbArgs,
}

/// Webhook delivery options of a serving process.
#[derive(Debug, Clone, clap::Args)]
pub struct WebhookArgs {
    /// Waits between webhook attempts, comma-separated with units (ms, s, m, h, d); the
    /// delivery fails when they are spent. Default: 5s,5m,30m,2h,5h,10h,14h,20h,20h (ten
    /// attempts over about three days), each ±10 % jitter.
    #[arg(long, env = "OPENRAIL_WEBHOOK_RETRY_SCHEDULE")]
    webhook_retry_schedule: Option<String>,
    /// An endpoint failing without a success for this long is disabled at its next
    /// failure (with a webhook_endpoint.disabled event).
    #[arg(long, default_value = "5d", env = "OPENRAIL_WEBHOOK_DISABLE_AFTER")]
    webhook_disable_after: String,
    /// Timeout of one webhook attempt.
    #[arg(long, default_value = "10s", env = "OPENRAIL_WEBHOOK_TIMEOUT")]
    webhook_timeout: String,
}

impl ServeArgs {
    /// Which non-public addresses webhooks may reach: none, unless the operator allows
    /// internal ones (`openrail dev` allows loopback for testnet instead).
    fn webhook_targets(&self) -> openrail_webhooks::Targets {
        if self.allow_internal_webhook_targets {
            openrail_webhooks::Targets::Internal
        } else {
            openrail_webhooks::Targets::Public
        }
    }
}

impl WebhookArgs {
    /// The delivery options these arguments describe.
    pub fn options(&self) -> anyhow::Result<openrail_webhooks::DeliveryOptions> {
        use openrail_webhooks::{RetrySchedule, parse_duration};
        let mut o = openrail_webhooks::DeliveryOptions::default();
        if let Some(s) = &self.webhook_retry_schedule {
            o.schedule = RetrySchedule::parse(s)
                .map_err(anyhow::Error::msg)
                .context("OPENRAIL_WEBHOOK_RETRY_SCHEDULE")?;
        }
        o.disable_after = parse_duration(&self.webhook_disable_after)
            .map_err(anyhow::Error::msg)
            .context("OPENRAIL_WEBHOOK_DISABLE_AFTER")?;
        o.timeout = parse_duration(&self.webhook_timeout)
            .map_err(anyhow::Error::msg)
            .context("OPENRAIL_WEBHOOK_TIMEOUT")?;
        Ok(o)
    }
}

async fn serve(mut args: ServeArgs) -> anyhow::Result<()> {
    let (testnet, mainnet, config_db) = match &args.config {
        Some(path) => {
            let c = config::load(Some(path), &|k| std::env::var(k).ok())
                .with_context(|| format!("configuration {}", path.display()))?;
            (c.testnet, c.mainnet, c.database_url)
        }
        None => {
            let deployment = match (&args.manifest, &args.deployment) {
                (Some(m), _) => openrail_chain::deploy::Manifest::read(m)?.settlement,
                (None, Some(d)) => {
                    let record = openrail_chain::deploy::DeploymentRecord::read(d)?;
                    anyhow::ensure!(
                        record.deployment.role == openrail_chain::deploy::ChainRole::Settlement,
                        "{} is an attestation chain's record: serve needs the settlement chain's",
                        d.display()
                    );
                    record.deployment
                }
                (None, None) => anyhow::bail!("name --config, --manifest or --deployment"),
            };
            let operator: alloy::signers::local::PrivateKeySigner = args
                .operator_key
                .as_deref()
                .context("OPENRAIL_OPERATOR_KEY is not set")?
                .trim()
                .parse()
                .context("OPENRAIL_OPERATOR_KEY is not a private key")?;
            let mode = config::ModeConfig::new(deployment, operator, args.confirmations)?;
            (mode, None, None)
        }
    };
    if args.db.database_url.is_none() {
        args.db.database_url = config_db;
    }
    let store = args.db.open().await?;
    let targets = args.webhook_targets();
    let mut config = openrail_api::ApiConfig::default();
    if let Some(id) = args.node_id {
        config.node_id = id;
    }
    config.node_ttl = std::time::Duration::from_millis(args.lease_ttl_ms);
    config.bind = args.bind;
    config.advertise_url = args
        .advertise_url
        .map(|u| u.trim_end_matches('/').to_string());
    config.explorer_tx_url = args.explorer_tx_url;
    config.default_wait =
        std::time::Duration::from_secs(args.wait_budget_secs).min(config.max_wait);
    config.trusted_proxies = openrail_api::hardening::TrustedProxies::parse(&args.trusted_proxies)
        .map_err(anyhow::Error::msg)
        .context("OPENRAIL_TRUSTED_PROXIES")?;
    config.webhook_targets = targets;
    let node_id = config.node_id.clone();
    let mut webhooks = args.webhooks.options()?;
    webhooks.targets = targets;
    let options = node::NodeOptions {
        lease_ttl: std::time::Duration::from_millis(args.lease_ttl_ms),
        announce_lead: true,
        confirmations: testnet.confirmations,
        depth_tag: testnet.depth_tag,
        webhooks,
        ..Default::default()
    };
    fn chain(m: &config::ModeConfig) -> node::ModeChain<'_> {
        node::ModeChain {
            deployment: &m.deployment,
            operator: m.operator.clone(),
            confirmations: m.confirmations,
            depth_tag: m.depth_tag,
            endpoint: m.endpoint.clone(),
            submitter: m.submitter.clone(),
            attestation: m.attestation.as_deref().map(|a| Box::new(chain(a))),
        }
    }
    let node = node::start_networks(
        store.clone(),
        chain(&testnet),
        mainnet.as_ref().map(chain),
        args.port,
        config,
        options,
    )
    .await?;
    if let Some(addr) = args.metrics_addr {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the metrics address {addr}"))?;
        let bound = listener.local_addr()?;
        openrail_api::metrics::serve(listener, node.metrics_sources());
        println!("serving metrics on http://{bound}/metrics");
    }
    println!(
        "serving the API on {} ({})",
        node.base_url,
        match &mainnet {
            Some(m) => format!(
                "testnet keys on chain {}, mainnet keys on chain {}",
                testnet.deployment.chain_id, m.deployment.chain_id
            ),
            None => "testnet keys; mainnet keys get 503 mainnet_unavailable".into(),
        }
    );
    stop_signal().await?;
    // Graceful: readiness 503, no new connections, the requests in flight answered, the
    // journal of each chain led settled; bounded.
    let stopped = node
        .shutdown(std::time::Duration::from_secs(args.shutdown_timeout_secs))
        .await;
    println!(
        "stopped: HTTP drained in {} ms, journal settled in {} ms{}",
        stopped.http_drained.as_millis(),
        stopped.journal_settled.as_millis(),
        if stopped.timed_out {
            " (the bound ran out: the next holder recovers the rest)"
        } else {
            ""
        }
    );
    // A clean stop hands the chains over at once instead of after the leases expire.
    // Each mode's settlement chain and its attestation chain.
    for m in std::iter::once(&testnet).chain(mainnet.as_ref()) {
        for d in std::iter::once(m).chain(m.attestation.as_deref()) {
            let lease = openrail_store::lease::chain_lease(d.deployment.chain_id);
            store.leases().release(&lease, &node_id).await?;
        }
    }
    Ok(())
}

/// Ctrl-C or SIGTERM (what `kill` and process supervisors send): either stops `dev` and
/// `serve` cleanly — `dev` stops its chains, `serve` hands its lease over.
pub(crate) async fn stop_signal() -> std::io::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r,
        _ = term.recv() => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serve_args(extra: &[&str]) -> ServeArgs {
        let mut argv = vec!["openrail", "serve", "--manifest", "m.json"];
        argv.extend_from_slice(extra);
        match Cli::try_parse_from(argv).expect("parses").command {
            Command::Serve(a) => a,
            other => panic!("{other:?}"),
        }
    }

    /// `serve` refuses every non-public webhook target unless the operator allows
    /// internal ones; `dev` (the library default) keeps loopback for testnet.
    #[test]
    fn serve_refuses_internal_webhook_targets_unless_told() {
        use openrail_webhooks::Targets;
        assert_eq!(serve_args(&[]).webhook_targets(), Targets::Public);
        assert_eq!(
            serve_args(&["--allow-internal-webhook-targets"]).webhook_targets(),
            Targets::Internal
        );
        assert_eq!(
            openrail_api::ApiConfig::default().webhook_targets,
            Targets::LoopbackOnTestnet
        );
    }
}
