//! The one end-to-end harness. Every e2e test goes through [`Harness::start`]: two anvil
//! chains on free ports with the full contract set deployed, a fresh database (SQLite, or
//! PostgreSQL when `OPENRAIL_TEST_DB=postgres`), a developer account with a testnet API key,
//! and the server on port 0 in this process. Tests never share chains or databases, so they
//! run in parallel. [`Harness::chains_only`] is the same without the server, for tests that
//! drive the contracts as the operator directly (the server's submitter owns the operator's
//! nonces, so the two never run together). [`Harness::start_processes`] is the same with
//! the server run as child processes of the real command line (`openrail serve`, built with
//! crash points), for tests that kill it with `SIGKILL` ([`ServerProcess`]).

pub mod audit;

use std::time::Duration;

use alloy::primitives::{Address, U256};
use alloy::providers::ext::AnvilApi;
use alloy::providers::{DynProvider, Provider};
use alloy::signers::local::PrivateKeySigner;
use anyhow::Context;

use openrail_api::ApiConfig;
use openrail_chain::bindings::{AllowanceStateMachine, TestStablecoin};
use openrail_chain::deploy::{ChainDeployment, TOKEN_DECIMALS, fund_wallet, signer_provider};
use openrail_chain::devnet::{Devnet, DevnetConfig, dev_operator, dev_treasury};
use openrail_store::{Mode, Store};
use reqwest::{Method, StatusCode};
use serde_json::Value;

/// The webhook retry schedule of every server a harness starts (in process or as a
/// child process): seconds, not days, so retries happen within a test.
pub const TEST_RETRY_SCHEDULE: &str = "300ms,500ms,700ms,1s,1s,2s,2s,3s,3s,5s,5s,5s,5s,5s";

/// The webhook delivery options of the in-process server (see [`TEST_RETRY_SCHEDULE`]).
pub fn test_webhook_options() -> openrail_webhooks::DeliveryOptions {
    openrail_webhooks::DeliveryOptions {
        schedule: openrail_webhooks::RetrySchedule::parse(TEST_RETRY_SCHEDULE)
            .expect("the test schedule parses"),
        poll: Duration::from_millis(50),
        timeout: Duration::from_secs(5),
        ..Default::default()
    }
}

/// The running API server of a harness.
pub struct Server {
    /// `http://127.0.0.1:PORT`
    pub base_url: String,
    /// The account's testnet API key.
    pub api_key: String,
    /// The developer account.
    pub account_id: openrail_domain::AccountId,
    /// The server's database.
    pub store: Store,
    /// Its URL (what a server process is given).
    pub database_url: String,
    /// The in-process server; none when the server runs as child processes.
    pub node: Option<openrail_cli::node::Node>,
    /// The in-process server's tasks when it serves a stand-in mainnet too.
    tasks: Vec<tokio::task::AbortHandle>,
    /// Its configuration (the same node id across [`Harness::restart`]).
    config: ApiConfig,
    _dir: tempfile::TempDir,
}

impl Server {
    fn abort(&self) {
        if let Some(node) = &self.node {
            node.abort();
        }
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// A server running as a child process: `openrail serve` on the harness's chains and
/// database. Dropping it kills the process.
pub struct ServerProcess {
    /// `http://127.0.0.1:PORT`
    pub base_url: String,
    /// Its name in leases (`server-N`, the N-th process this harness started).
    pub node_id: String,
    child: tokio::process::Child,
    stdout: tokio::sync::mpsc::UnboundedReceiver<String>,
    /// Stdout lines read but not yet asked for.
    seen: Vec<String>,
    log: std::path::PathBuf,
}

impl ServerProcess {
    /// Waits until the process reports that it stopped at its crash point; returns the
    /// point's name.
    pub async fn crash_point_reached(&mut self, within: Duration) -> anyhow::Result<String> {
        self.line_after("crash point reached: ", within).await
    }

    /// Waits until the process holds the settlement chain's lease (it sends the chain's
    /// transactions and runs the relayer).
    pub async fn leading(&mut self, within: Duration) -> anyhow::Result<()> {
        self.line_after("holding the lease of chain ", within)
            .await
            .map(|_| ())
    }

    /// The rest of the first stdout line (seen so far or to come) that starts with `prefix`.
    async fn line_after(&mut self, prefix: &str, within: Duration) -> anyhow::Result<String> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(i) = self.seen.iter().position(|l| l.starts_with(prefix)) {
                return Ok(self.seen.remove(i)[prefix.len()..].to_string());
            }
            let line = tokio::time::timeout_at(deadline, self.stdout.recv())
                .await
                .ok()
                .flatten();
            match line {
                Some(line) => self.seen.push(line),
                None => anyhow::bail!(
                    "no {prefix:?} line from the server within {within:?}; log:\n{}",
                    self.log_tail()
                ),
            }
        }
    }

    /// Sends `SIGTERM` (a graceful stop) and waits up to `within` for the process to
    /// exit; returns its exit code (`None`: ended by a signal) and how long it took.
    pub async fn terminate(&mut self, within: Duration) -> anyhow::Result<(Option<i32>, Duration)> {
        let pid = self.child.id().context("the process has exited")?;
        let started = std::time::Instant::now();
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()?;
        anyhow::ensure!(sent.success(), "kill -TERM {pid} failed");
        let status = tokio::time::timeout(within, self.child.wait())
            .await
            .with_context(|| {
                format!(
                    "no exit within {within:?} of SIGTERM; log:\n{}",
                    self.log_tail()
                )
            })??;
        Ok((status.code(), started.elapsed()))
    }

    /// The rest of the first stdout line that starts with `prefix`, waiting up to `within`.
    pub async fn line(&mut self, prefix: &str, within: Duration) -> anyhow::Result<String> {
        self.line_after(prefix, within).await
    }

    /// Kills the process with `SIGKILL` and reaps it; returns the signal that ended it.
    pub async fn kill(&mut self) -> anyhow::Result<Option<i32>> {
        use std::os::unix::process::ExitStatusExt;
        self.child.start_kill()?;
        Ok(self.child.wait().await?.signal())
    }

    /// The end of the process's log (stderr), for failure messages, after what is left
    /// unread on its stdout.
    pub fn log_tail(&mut self) -> String {
        let mut log = String::new();
        while let Ok(line) = self.stdout.try_recv() {
            self.seen.push(line);
        }
        for line in &self.seen {
            log.push_str(&format!("stdout: {line}\n"));
        }
        log.push_str(&std::fs::read_to_string(&self.log).unwrap_or_default());
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

/// A running test environment.
pub struct Harness {
    /// Both chains and the manifest.
    pub devnet: Devnet,
    /// A provider on the settlement chain that signs as the operator.
    pub settlement: DynProvider,
    /// The server, unless started with [`Harness::chains_only`].
    pub server: Option<Server>,
    /// The stand-in mainnet deployment, when started with [`HarnessBuilder::mainnet`].
    pub mainnet: Option<ChainDeployment>,
    http: reqwest::Client,
    /// The command line that [`Harness::spawn_server`] runs.
    binary: Option<std::path::PathBuf>,
    /// The deployment manifest and the server processes' logs.
    files: Option<tempfile::TempDir>,
    spawned: u32,
    /// The keys of the wallets this harness funded, so it can sign for them as their
    /// owners would (payer consent).
    signers: std::sync::Mutex<std::collections::HashMap<Address, PrivateKeySigner>>,
    /// The settlement chain's confirmation depth for the in-process server.
    confirmations: u64,
    /// Or its `safe` / `finalized` block.
    depth_tag: Option<openrail_chain::rpc::DepthTag>,
    /// The in-process server's webhook delivery options (default:
    /// [`test_webhook_options`]).
    webhooks: Option<openrail_webhooks::DeliveryOptions>,
    /// How the in-process server's submitter replaces transactions (see
    /// [`HarnessBuilder::chain`]).
    submitter: openrail_chain::submitter::SubmitterOptions,
    /// The URLs the in-process server reaches the settlement chain by, when not the
    /// chain's own (an RPC proxy that injects faults).
    endpoint: Option<openrail_chain::rpc::Endpoint>,
}

/// A response, read whole.
#[derive(Debug)]
pub struct Reply {
    /// Status.
    pub status: StatusCode,
    /// Headers.
    pub headers: reqwest::header::HeaderMap,
    /// JSON body (`Null` when empty or not JSON).
    pub body: Value,
}

impl Reply {
    /// The problem's `code` (empty when the body has none).
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or_default()
    }

    /// A string member of the body.
    pub fn str(&self, key: &str) -> &str {
        self.body[key]
            .as_str()
            .unwrap_or_else(|| panic!("no string {key:?} in {}", self.body))
    }
}

/// What [`Harness::builder`] sets before the harness starts; unset, the defaults of
/// [`Harness::start`].
#[derive(Default)]
pub struct HarnessBuilder {
    config: ApiConfig,
    mainnet: bool,
    confirmations: Option<u64>,
    webhooks: Option<openrail_webhooks::DeliveryOptions>,
    chain: Option<(
        openrail_chain::submitter::SubmitterOptions,
        Option<openrail_chain::rpc::Endpoint>,
    )>,
}

impl HarnessBuilder {
    /// The API's tunables.
    pub fn config(mut self, config: ApiConfig) -> Self {
        self.config = config;
        self
    }

    /// "Mainnet" configured too: a second settlement contract set on the other local chain
    /// stands in for it, so mode isolation can be tested.
    pub fn mainnet(mut self) -> Self {
        self.mainnet = true;
        self
    }

    /// The relayer applies the settlement chain `depth` blocks below its head (local
    /// chains otherwise use 0).
    pub fn confirmations(mut self, depth: u64) -> Self {
        self.confirmations = Some(depth);
        self
    }

    /// These webhook delivery options for the server.
    pub fn webhooks(mut self, options: openrail_webhooks::DeliveryOptions) -> Self {
        self.webhooks = Some(options);
        self
    }

    /// The server's submitter replaces transactions as `submitter` says and, when given,
    /// reaches the settlement chain through `endpoint` (an RPC proxy) rather than directly.
    /// The chain's mining is the test's to set.
    pub fn chain(
        mut self,
        submitter: openrail_chain::submitter::SubmitterOptions,
        endpoint: Option<openrail_chain::rpc::Endpoint>,
    ) -> Self {
        self.chain = Some((submitter, endpoint));
        self
    }

    /// Chains, contracts, database and server, as set.
    pub async fn start(self) -> anyhow::Result<Harness> {
        let mut h = Harness::chains_only().await?;
        if self.mainnet {
            // A second contract set on the other local chain, with its own salt (its own
            // tokens and state machine).
            let fake = openrail_chain::devnet::dev_deployment(
                h.devnet.attestation.rpc_url().clone(),
                openrail_chain::deploy::ChainRole::Settlement,
                alloy::primitives::keccak256("openrail-test-mainnet"),
            )
            .await?;
            h.mainnet = Some(fake);
        }
        if let Some(depth) = self.confirmations {
            h.confirmations = depth;
        }
        h.webhooks = self.webhooks;
        if let Some((submitter, endpoint)) = self.chain {
            h.submitter = submitter;
            h.endpoint = endpoint;
        }
        h.serve(self.config).await?;
        Ok(h)
    }
}

impl Harness {
    /// Chains, contracts, database and server (as [`Harness::builder`] with nothing set).
    pub async fn start() -> anyhow::Result<Self> {
        Self::builder().start().await
    }

    /// A harness to set up before it starts: API tunables, a stand-in mainnet, the
    /// settlement chain's confirmation depth, webhook delivery options, the submitter's
    /// options and RPC endpoint.
    pub fn builder() -> HarnessBuilder {
        HarnessBuilder::default()
    }

    /// Before [`Harness::serve_with_chain`]: the settlement chain's confirmation depth.
    pub fn set_confirmations(&mut self, depth: u64) {
        self.confirmations = depth;
    }

    /// Before [`Harness::serve_with_chain`]: the chain's `safe` or `finalized` block as the
    /// depth.
    pub fn set_depth_tag(&mut self, tag: openrail_chain::rpc::DepthTag) {
        self.depth_tag = Some(tag);
    }

    /// On a harness of [`Harness::chains_only`]: a fresh database and the in-process
    /// server, with the submitter replacing transactions as `submitter` says and, when
    /// given, reaching the settlement chain through `endpoint`.
    pub async fn serve_with_chain(
        &mut self,
        submitter: openrail_chain::submitter::SubmitterOptions,
        endpoint: Option<openrail_chain::rpc::Endpoint>,
    ) -> anyhow::Result<()> {
        self.submitter = submitter;
        self.endpoint = endpoint;
        self.serve(ApiConfig::default()).await
    }

    /// A fresh database and the in-process server on it.
    async fn serve(&mut self, config: ApiConfig) -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let url = fresh_database_url(dir.path()).await?;
        let mut server = self.database(dir, url).await?;
        server.config = config.clone();
        self.server = Some(self.start_server(server, config).await?);
        Ok(())
    }

    /// Chains, contracts and database, with the server to be run as child processes
    /// ([`Harness::spawn_server`]) of `binary`: pass
    /// `env!("CARGO_BIN_EXE_openrail-under-test")` (the command line with crash points).
    pub async fn start_processes(binary: &str) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let url = fresh_database_url(dir.path()).await?;
        Self::processes_on(binary, dir, url).await
    }

    /// As [`Harness::start_processes`], on a fresh PostgreSQL database whatever
    /// `OPENRAIL_TEST_DB` says (several processes on one database is what PostgreSQL is
    /// for). `None`, after a visible message, when no PostgreSQL server is reachable
    /// outside CI; in CI that is an error.
    pub async fn start_processes_on_postgres(binary: &str) -> anyhow::Result<Option<Self>> {
        let Some(url) = openrail_store::testing::fresh_postgres_url().await? else {
            return Ok(None);
        };
        Ok(Some(
            Self::processes_on(binary, tempfile::tempdir()?, url).await?,
        ))
    }

    async fn processes_on(
        binary: &str,
        db_dir: tempfile::TempDir,
        database_url: String,
    ) -> anyhow::Result<Self> {
        let mut h = Self::chains_only().await?;
        let files = tempfile::tempdir()?;
        h.devnet
            .manifest
            .write(&files.path().join("deployment.json"))?;
        h.files = Some(files);
        h.binary = Some(binary.into());
        h.server = Some(h.database(db_dir, database_url).await?);
        Ok(h)
    }

    /// Starts `openrail serve` as a child process on this harness's chains and database
    /// (stopping at `crash_at` when given, see `openrail_store::crash`), waits until it
    /// serves, and makes it the server that [`Harness::call`] talks to.
    pub async fn spawn_server(&mut self, crash_at: Option<&str>) -> anyhow::Result<ServerProcess> {
        let binary = self
            .binary
            .clone()
            .context("harness not started with start_processes")?;
        let files = self.files.as_ref().context("no harness directory")?.path();
        self.spawned += 1;
        let log = files.join(format!("server-{}.log", self.spawned));
        let server = self.server.as_ref().context("no database")?;
        let mut cmd = tokio::process::Command::new(binary);
        cmd.arg("serve")
            .env("OPENRAIL_MANIFEST", files.join("deployment.json"))
            .env(
                "OPENRAIL_OPERATOR_KEY",
                dev_operator().to_bytes().to_string(),
            )
            .env("OPENRAIL_PORT", "0")
            .env("DATABASE_URL", &server.database_url)
            // Short leases: a killed holder's successor takes over within ~2 s.
            .env("OPENRAIL_LEASE_TTL_MS", "1500")
            .env("OPENRAIL_NODE_ID", format!("server-{}", self.spawned))
            .env("OPENRAIL_WEBHOOK_RETRY_SCHEDULE", TEST_RETRY_SCHEDULE)
            // Metrics on a free port (the `serving metrics on …` line names it).
            .env("OPENRAIL_METRICS_ADDR", "127.0.0.1:0")
            // The tests' webhook receivers listen on loopback, which `serve` refuses
            // unless told.
            .env("OPENRAIL_ALLOW_INTERNAL_WEBHOOK_TARGETS", "true")
            .env("RUST_LOG", "openrail=debug,info")
            .env_remove("OPENRAIL_CRASH_AT")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(&log)?)
            .kill_on_drop(true);
        if let Some(point) = crash_at {
            cmd.env("OPENRAIL_CRASH_AT", point);
        }
        let mut child = cmd.spawn().context("starting the server process")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let (lines_tx, lines) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            use tokio::io::AsyncBufReadExt;
            let mut reader = tokio::io::BufReader::new(stdout).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut process = ServerProcess {
            base_url: String::new(),
            node_id: format!("server-{}", self.spawned),
            child,
            stdout: lines,
            seen: Vec::new(),
            log,
        };
        let serving = process
            .line_after("serving the API on ", Duration::from_secs(60))
            .await?;
        process.base_url = serving
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string();
        self.use_server(&process);
        Ok(process)
    }

    /// Makes `process` the server that [`Harness::call`] talks to.
    pub fn use_server(&mut self, process: &ServerProcess) {
        if let Some(s) = self.server.as_mut() {
            s.base_url = process.base_url.clone();
        }
    }

    /// The database at `database_url` (fresh) with a developer account and its testnet API
    /// key; no server yet.
    async fn database(
        &self,
        dir: tempfile::TempDir,
        database_url: String,
    ) -> anyhow::Result<Server> {
        let store = Store::connect(&database_url).await?;
        let account = store
            .accounts()
            .create("Harness", openrail_store::now_ms())
            .await?;
        let (_, api_key) = store
            .api_keys()
            .create(&account.id, Mode::Testnet, openrail_store::now_ms())
            .await?;
        Ok(Server {
            base_url: String::new(),
            api_key,
            account_id: account.id,
            store,
            database_url,
            node: None,
            tasks: Vec::new(),
            config: ApiConfig::default(),
            _dir: dir,
        })
    }

    /// Starts the serving process (API, lease, submitter and engine, watcher, simulated bank) in this
    /// process, on the database of `server`, as `openrail serve` does.
    async fn start_server(&self, mut server: Server, config: ApiConfig) -> anyhow::Result<Server> {
        let options = openrail_cli::node::NodeOptions {
            watcher_poll: Duration::from_millis(200),
            drive_poll: Duration::from_millis(50),
            confirmations: self.confirmations,
            webhooks: self.webhooks.clone().unwrap_or_else(test_webhook_options),
            ..Default::default()
        };
        // The one composition root, as `openrail serve` and `dev` start: with a stand-in
        // mainnet (a second contract set on the other local chain) for mode isolation.
        let settlement_endpoint = match &self.endpoint {
            Some(e) => e.clone(),
            None => openrail_chain::rpc::Endpoint::of(self.settlement_deployment())?,
        };
        let mode = |deployment, endpoint| openrail_cli::node::ModeChain {
            deployment,
            operator: dev_operator(),
            confirmations: self.confirmations,
            depth_tag: self.depth_tag,
            endpoint,
            submitter: self.submitter.clone(),
            attestation: None,
        };
        let mainnet = match &self.mainnet {
            Some(m) => Some(mode(m, openrail_chain::rpc::Endpoint::of(m)?)),
            None => None,
        };
        let mut testnet = mode(self.settlement_deployment(), settlement_endpoint);
        // Testnet's attestation chain is the other local chain, unless a stand-in mainnet
        // took it (one operator key sends there; two modes on it would share its nonces).
        if self.mainnet.is_none() {
            let b = &self.devnet.manifest.attestation;
            testnet.attestation =
                Some(Box::new(openrail_chain::rpc::Endpoint::of(b).map(|e| {
                    openrail_cli::node::ModeChain {
                        confirmations: 0,
                        depth_tag: None,
                        ..mode(b, e)
                    }
                })?));
        }
        let node = openrail_cli::node::start_networks(
            server.store.clone(),
            testnet,
            mainnet,
            0,
            config,
            options,
        )
        .await?;
        anyhow::ensure!(
            node.is_leader(),
            "the harness's server did not take the chain's lease"
        );
        server.base_url = node.base_url.clone();
        server.node = Some(node);
        Ok(server)
    }

    /// A crash in this process: aborts the server's tasks wherever they are and leaves the
    /// database as it is; [`Harness::restart`] then starts a new server on it.
    pub fn crash(&mut self) {
        if let Some(s) = self.server.as_mut() {
            s.abort();
            s.node = None;
            s.tasks.clear();
        }
    }

    /// A crash and a restart in this process: aborts the server's tasks wherever they are
    /// (API, engine, watcher) and starts a new server on the same database with the
    /// same API key. The new server recovers what the old one left: journaled transactions,
    /// pulls accepted but never sent, payments in flight.
    pub async fn restart(&mut self) -> anyhow::Result<()> {
        let mut old = self.server.take().context("no server to restart")?;
        old.abort();
        old.node = None;
        old.tasks.clear();
        // The same node id: a restarted process renews its own lease at once.
        let config = old.config.clone();
        self.server = Some(self.start_server(old, config).await?);
        Ok(())
    }

    /// Chains and contracts only.
    pub async fn chains_only() -> anyhow::Result<Self> {
        // The server's logs, when `RUST_LOG` asks for them (with `--nocapture`).
        if std::env::var_os("RUST_LOG").is_some() {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
                .with_test_writer()
                .try_init();
        }
        let devnet = Devnet::start(DevnetConfig::default())
            .await
            .context("starting the devnet")?;
        let settlement = signer_provider(devnet.settlement.rpc_url(), dev_operator())?;
        Ok(Self {
            devnet,
            settlement,
            server: None,
            mainnet: None,
            http: reqwest::Client::new(),
            binary: None,
            files: None,
            spawned: 0,
            signers: Default::default(),
            confirmations: 0,
            depth_tag: None,
            webhooks: None,
            submitter: Default::default(),
            endpoint: None,
        })
    }

    /// The server.
    pub fn server(&self) -> &Server {
        self.server.as_ref().expect("harness started with a server")
    }

    /// What was deployed on the settlement chain.
    pub fn settlement_deployment(&self) -> &ChainDeployment {
        &self.devnet.manifest.settlement
    }

    /// The allowance state machine, called as the operator.
    pub fn allowance_state_machine(
        &self,
    ) -> AllowanceStateMachine::AllowanceStateMachineInstance<DynProvider> {
        let addr = self
            .settlement_deployment()
            .allowance_state_machine
            .expect("settlement chain has a state machine");
        AllowanceStateMachine::new(addr, self.settlement.clone())
    }

    /// The settlement chain's test stablecoin for `currency`.
    pub fn token(&self, currency: &str) -> TestStablecoin::TestStablecoinInstance<DynProvider> {
        TestStablecoin::new(
            self.settlement_deployment().tokens[currency],
            self.settlement.clone(),
        )
    }

    /// Funds `wallet` with `major_units` of every test currency on the settlement chain and
    /// approves the router.
    pub async fn fund(&self, wallet: PrivateKeySigner, major_units: u64) -> anyhow::Result<()> {
        self.remember(&wallet);
        fund_wallet(
            self.settlement_deployment(),
            dev_treasury(),
            wallet,
            units(major_units),
        )
        .await?;
        Ok(())
    }

    /// Token balance of `who` in `currency` on the settlement chain (smallest units).
    pub async fn balance(&self, currency: &str, who: Address) -> anyhow::Result<U256> {
        Ok(self.token(currency).balanceOf(who).call().await?)
    }

    /// Funds `wallet` with `major_units` of every test currency on the attestation chain
    /// and approves its router.
    pub async fn fund_on_attestation(
        &self,
        wallet: PrivateKeySigner,
        major_units: u64,
    ) -> anyhow::Result<()> {
        self.remember(&wallet);
        fund_wallet(
            &self.devnet.manifest.attestation,
            dev_treasury(),
            wallet,
            units(major_units),
        )
        .await?;
        Ok(())
    }

    /// Token balance of `who` in `currency` on the attestation chain (smallest units).
    pub async fn balance_on_attestation(
        &self,
        currency: &str,
        who: Address,
    ) -> anyhow::Result<U256> {
        let b = &self.devnet.manifest.attestation;
        let provider = openrail_chain::tls::reader(&b.rpc_url.parse()?)?;
        Ok(TestStablecoin::new(b.tokens[currency], provider)
            .balanceOf(who)
            .call()
            .await?)
    }

    /// Timestamp of the settlement chain's latest block.
    pub async fn chain_time(&self) -> anyhow::Result<u64> {
        let block = self
            .settlement
            .get_block(alloy::eips::BlockNumberOrTag::Latest.into())
            .await?;
        Ok(block.context("no latest block")?.header.timestamp)
    }

    /// Moves the settlement chain's clock to `timestamp` (never backwards) and mines a block.
    pub async fn warp_to(&self, timestamp: u64) -> anyhow::Result<()> {
        self.settlement
            .anvil_set_next_block_timestamp(timestamp)
            .await?;
        self.settlement.anvil_mine(Some(1), None).await?;
        Ok(())
    }

    /// Sends a request with the account's API key (or `bearer` when given).
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        bearer: Option<&str>,
        headers: &[(&str, &str)],
    ) -> anyhow::Result<Reply> {
        let s = self.server();
        let mut req = self.http.request(method, format!("{}{path}", s.base_url));
        req = req.bearer_auth(bearer.unwrap_or(&s.api_key));
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let res = req.send().await?;
        let status = res.status();
        let headers = res.headers().clone();
        let text = res.text().await?;
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Ok(Reply {
            status,
            headers,
            body,
        })
    }

    /// `POST` JSON with the account's API key.
    pub async fn post(&self, path: &str, body: Value) -> anyhow::Result<Reply> {
        self.call(Method::POST, path, Some(&body), None, &[]).await
    }

    /// The operator's transaction count on the settlement chain: tests compare it around a
    /// request to prove that nothing was sent.
    pub async fn operator_nonce(&self) -> anyhow::Result<u64> {
        Ok(self
            .settlement
            .get_transaction_count(dev_operator().address())
            .await?)
    }

    /// Keeps `wallet`'s key so [`Harness::post_authorized`] can sign for it.
    pub fn remember(&self, wallet: &PrivateKeySigner) {
        self.signers
            .lock()
            .expect("signers lock")
            .insert(wallet.address(), wallet.clone());
    }

    /// The payer's signature of a created object's `authorization.typed_data`, as a wallet
    /// signs it (`eth_signTypedData_v4`), with `signer`'s key.
    pub fn sign_authorization(
        created: &Value,
        signer: &PrivateKeySigner,
    ) -> anyhow::Result<String> {
        openrail_chain::consent::sign_typed_data_json(
            &created["authorization"]["typed_data"],
            signer,
        )
        .map_err(anyhow::Error::msg)
    }

    /// `POST {collection}/{id}/authorize` with `signer`'s signature of `created`'s typed data.
    pub async fn authorize(
        &self,
        collection: &str,
        created: &Value,
        signer: &PrivateKeySigner,
    ) -> anyhow::Result<Reply> {
        let id = created["id"]
            .as_str()
            .context("no id in the created object")?;
        let signature = Self::sign_authorization(created, signer)?;
        self.post(
            &format!("{collection}/{id}/authorize"),
            serde_json::json!({ "signature": signature }),
        )
        .await
    }

    /// `POST` a mandate or a payment and, when it requires the payer's signature, sign it
    /// as the payer (a wallet this harness funded or [`remember`](Harness::remember)ed) and
    /// authorize it; returns the last reply (the creation's when no signature is needed or
    /// the creation failed).
    pub async fn post_authorized(&self, path: &str, body: Value) -> anyhow::Result<Reply> {
        let created = self.post(path, body).await?;
        if created.body["status"] != "requires_authorization" {
            return Ok(created);
        }
        let signer: Address = created.body["authorization"]["signer"]
            .as_str()
            .context("no authorization signer")?
            .parse()?;
        let key = self
            .signers
            .lock()
            .expect("signers lock")
            .get(&signer)
            .cloned()
            .with_context(|| format!("the harness has no key for {signer}"))?;
        self.authorize(path, &created.body, &key).await
    }

    /// `GET` with the account's API key.
    pub async fn get(&self, path: &str) -> anyhow::Result<Reply> {
        self.call(Method::GET, path, None, None, &[]).await
    }

    /// `DELETE` with the account's API key.
    pub async fn delete(&self, path: &str) -> anyhow::Result<Reply> {
        self.call(Method::DELETE, path, None, None, &[]).await
    }

    /// `GET` a browser page (the dashboard, a consent link) with no credential: its
    /// status, headers and HTML.
    pub async fn page(&self, path: &str) -> anyhow::Result<Page> {
        let res = browser_client()?
            .get(format!("{}{path}", self.server().base_url))
            .send()
            .await?;
        Page::read(res).await
    }

    /// Signs up in the dashboard as a browser does (the sign-up form's CSRF cookie and
    /// field), with `business_name` when given; returns the signed-in session.
    pub async fn dashboard_sign_up(
        &self,
        email: &str,
        business_name: Option<&str>,
    ) -> anyhow::Result<DashboardSession> {
        let base = self.server().base_url.clone();
        let http = browser_client()?;
        let form = http.get(format!("{base}/signup")).send().await?;
        let csrf = set_cookie(form.headers(), "openrail_csrf").context("no CSRF cookie")?;
        let mut fields = vec![
            ("csrf", csrf.as_str()),
            ("email", email),
            ("password", "correct horse battery"),
        ];
        if let Some(b) = business_name {
            fields.push(("business_name", b));
        }
        let res = http
            .post(format!("{base}/signup"))
            .header("cookie", format!("openrail_csrf={csrf}"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form_body(&fields))
            .send()
            .await?;
        anyhow::ensure!(
            res.status() == StatusCode::SEE_OTHER,
            "sign-up answered {}",
            res.status()
        );
        // Sign-up answers alike for new and taken emails: the owner then signs in.
        let form = http.get(format!("{base}/login")).send().await?;
        let csrf = set_cookie(form.headers(), "openrail_csrf").context("no CSRF cookie")?;
        let res = http
            .post(format!("{base}/login"))
            .header("cookie", format!("openrail_csrf={csrf}"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form_body(&[
                ("csrf", csrf.as_str()),
                ("email", email),
                ("password", "correct horse battery"),
            ]))
            .send()
            .await?;
        anyhow::ensure!(
            res.status() == StatusCode::SEE_OTHER,
            "sign-in answered {}",
            res.status()
        );
        let session = set_cookie(res.headers(), "openrail_session").context("no session")?;
        let user = self
            .server()
            .store
            .dashboard()
            .user(email)
            .await?
            .context("no user")?;
        let mut s = DashboardSession {
            base,
            http,
            cookie: format!("openrail_session={session}"),
            csrf: String::new(),
            account_id: user.account_id,
        };
        let settings = s.get("/dashboard/settings").await?;
        s.csrf = regex::Regex::new(r#"name="csrf" value="([^"]+)""#)?
            .captures(&settings.text)
            .context("no CSRF field")?[1]
            .to_string();
        Ok(s)
    }

    /// Stops the server and both chains.
    pub async fn stop(self) {
        if let Some(s) = self.server {
            s.abort();
        }
        self.devnet.stop().await;
    }
}

/// A browser page as served: status, headers and HTML.
pub struct Page {
    /// HTTP status.
    pub status: StatusCode,
    /// Response headers.
    pub headers: reqwest::header::HeaderMap,
    /// The HTML.
    pub text: String,
}

impl Page {
    async fn read(res: reqwest::Response) -> anyhow::Result<Self> {
        Ok(Self {
            status: res.status(),
            headers: res.headers().clone(),
            text: res.text().await?,
        })
    }

    /// The value of cookie `name` this answer sets (`""` when it clears it).
    pub fn set_cookie(&self, name: &str) -> Option<String> {
        set_cookie(&self.headers, name)
    }

    /// A header's value (`""` when absent).
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

/// A signed-in dashboard session (see [`Harness::dashboard_sign_up`]).
pub struct DashboardSession {
    base: String,
    http: reqwest::Client,
    cookie: String,
    /// The session's CSRF token, which every form sends.
    pub csrf: String,
    /// The account signed in to.
    pub account_id: openrail_domain::AccountId,
}

impl DashboardSession {
    /// `GET` a dashboard page as this session.
    pub async fn get(&self, path: &str) -> anyhow::Result<Page> {
        let res = self
            .http
            .get(format!("{}{path}", self.base))
            .header("cookie", &self.cookie)
            .send()
            .await?;
        Page::read(res).await
    }

    /// `GET` a dashboard page as this session, sending cookie `extra` (`name=value`) too.
    pub async fn get_with_cookie(&self, path: &str, extra: &str) -> anyhow::Result<Page> {
        let res = self
            .http
            .get(format!("{}{path}", self.base))
            .header("cookie", format!("{}; {extra}", self.cookie))
            .send()
            .await?;
        Page::read(res).await
    }

    /// `POST` a dashboard form (with the session's CSRF token) as this session; redirects
    /// are not followed.
    pub async fn post_form(&self, path: &str, fields: &[(&str, &str)]) -> anyhow::Result<Page> {
        let mut all = vec![("csrf", self.csrf.as_str())];
        all.extend_from_slice(fields);
        let res = self
            .http
            .post(format!("{}{path}", self.base))
            .header("cookie", &self.cookie)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form_body(&all))
            .send()
            .await?;
        Page::read(res).await
    }
}

/// A client as a browser page uses it: no credential, redirects not followed.
fn browser_client() -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?)
}

/// The value of cookie `name` a response sets.
fn set_cookie(headers: &reqwest::header::HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|v| {
            let (k, rest) = v.split_once('=')?;
            (k == name).then(|| rest.split(';').next().unwrap_or("").to_string())
        })
}

/// `application/x-www-form-urlencoded` of `fields`.
fn form_body(fields: &[(&str, &str)]) -> String {
    let enc = |s: &str| {
        s.bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect::<String>()
    };
    fields
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// The PostgreSQL pool of each server a test starts. The suite runs many tests at once
/// (`make test`: eight), some with two servers, against one PostgreSQL whose default
/// `max_connections` is 100; at the production default of 16 a busy moment refused
/// connections ("too many clients").
pub const PG_CONNECTIONS_PER_SERVER: u32 = 5;

/// `major` whole units of a test stablecoin, in smallest units.
pub fn units(major: u64) -> U256 {
    U256::from(major) * U256::from(10u64).pow(U256::from(TOKEN_DECIMALS))
}

/// A fresh, migrated database: a SQLite file in `dir`, or a new PostgreSQL database when
/// `OPENRAIL_TEST_DB=postgres` (the end-to-end suite's second run).
pub async fn fresh_store(dir: &std::path::Path) -> anyhow::Result<Store> {
    Ok(Store::connect(&fresh_database_url(dir).await?).await?)
}

/// The URL of a fresh database (see [`fresh_store`]), not yet migrated. On PostgreSQL each
/// process the test starts keeps at most [`PG_CONNECTIONS_PER_SERVER`] connections.
pub async fn fresh_database_url(dir: &std::path::Path) -> anyhow::Result<String> {
    Ok(match std::env::var("OPENRAIL_TEST_DB").as_deref() {
        Ok("postgres") => format!(
            "{}?max_connections={PG_CONNECTIONS_PER_SERVER}",
            openrail_store::testing::fresh_postgres_url()
                .await?
                .context("OPENRAIL_TEST_DB=postgres but no PostgreSQL server is reachable")?
        ),
        _ => format!("sqlite://{}", dir.join("openrail.db").display()),
    })
}

/// The intent whose stored text is `text` (an object id, or a payment's or payout's leg:
/// `pay_…:source`); panics on any other text.
pub fn intent_of(text: &str) -> openrail_store::journal::Intent {
    text.parse().expect("an intent")
}

/// A `pending` USD pull row, as `POST /v1/debit-pulls` writes it before submitting (tests
/// that play a request which died at some point insert it directly).
pub fn pending_pull_row(
    id: &str,
    account_id: &openrail_domain::AccountId,
    key_id: &str,
    mandate_id: &str,
    amount_minor: u64,
    destination: Address,
) -> openrail_store::agentic::DebitPull {
    openrail_store::testing::pending_pull_row(
        &openrail_domain::PullId::parse(id).expect("a pull id"),
        account_id,
        &openrail_domain::SessionKeyId::parse(key_id).expect("a session key id"),
        &openrail_domain::MandateId::parse(mandate_id).expect("a mandate id"),
        amount_minor,
        &destination.to_checksum(None),
    )
}
