//! One serving process (`openrail serve`, `openrail dev`, the test harness): the API, and —
//! while it holds its settlement chain's lease — the chain's submitter, the relayer's
//! watcher and its simulated bank. A mode's attestation chain, when configured, has its own
//! lease, submitter, engine (one-time payments routed there) and watcher; the simulated
//! bank and the webhooks of the mode run with its settlement chain's.
//!
//! Several processes may share one database (PostgreSQL). Each tries to take the chain's
//! lease at start and every third of its length after; the holder renews it. A process
//! that takes it *leads*: it starts the submitter (which settles or rebroadcasts what the
//! journal holds), the engine (which sends the queued work, whoever queued it), the
//! watcher and the simulated bank. The others serve every request and only queue work.
//! When the holder dies its lease expires and another process takes over within a lease
//! length and a renewal period.
//!
//! A holder that cannot renew for a whole lease length, or finds the lease taken, exits at
//! once: its journal writes are fenced by the lease in the database, so it could not send
//! anyway, and a supervisor restarts it as a follower.

use openrail_store::now_ms;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use alloy::signers::local::PrivateKeySigner;
use anyhow::Context;
use openrail_api::{ApiConfig, Network};
use openrail_chain::deploy::ChainDeployment;
use openrail_chain::rpc::Endpoint;
use openrail_chain::submitter::SubmitterOptions;
use openrail_store::lease::chain_lease;
use openrail_store::{Mode, Store};
use tokio::task::AbortHandle;

/// Tunables of a serving process.
#[derive(Debug, Clone)]
pub struct NodeOptions {
    /// How long a lease lasts unless renewed (renewed every third of it).
    pub lease_ttl: Duration,
    /// How often the watcher looks for new blocks.
    pub watcher_poll: Duration,
    /// How often the engine tries driving work (payments, bank-funded pulls' payouts)
    /// that waits for a bank transfer or a confirmation again; also the simulated bank's
    /// step.
    pub drive_poll: Duration,
    /// Confirmation depth of the settlement chain (0 on local chains).
    pub confirmations: u64,
    /// Or the chain's `safe` / `finalized` block as the depth, when given.
    pub depth_tag: Option<openrail_chain::rpc::DepthTag>,
    /// Print a line on stdout when this process takes the lease (`serve` does; tests
    /// that run it as a child process wait for that line).
    pub announce_lead: bool,
    /// Webhook delivery (retry schedule, disabling, timeouts), run by the lease holder.
    pub webhooks: openrail_webhooks::DeliveryOptions,
}

impl Default for NodeOptions {
    fn default() -> Self {
        Self {
            lease_ttl: Duration::from_secs(10),
            watcher_poll: Duration::from_millis(500),
            drive_poll: Duration::from_millis(200),
            confirmations: 0,
            depth_tag: None,
            announce_lead: false,
            webhooks: Default::default(),
        }
    }
}

/// A running serving process.
#[derive(Debug)]
pub struct Node {
    /// `http://127.0.0.1:PORT`
    pub base_url: String,
    /// The testnet settlement network (its submitter is set while this process leads).
    pub network: Arc<Network>,
    /// The mainnet settlement network, when one is configured.
    pub mainnet: Option<Arc<Network>>,
    tasks: Arc<Mutex<Vec<AbortHandle>>>,
    store: Store,
    stopper: openrail_api::server::Stopper,
    http: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// What a graceful stop did (see [`Node::shutdown`]).
#[derive(Debug, Clone, Copy)]
pub struct Stopped {
    /// From the signal to the HTTP server's last answer.
    pub http_drained: Duration,
    /// From the signal to the journal of every chain this process led being settled.
    pub journal_settled: Duration,
    /// Whether the bound ran out first (what was left is the next holder's: the journal
    /// is recovered by whoever takes the lease).
    pub timed_out: bool,
}

impl Node {
    /// Stops every task of this process at once, as a crash would (the lease stays until
    /// it expires).
    pub fn abort(&self) {
        for t in self.tasks.lock().expect("tasks lock").drain(..) {
            t.abort();
        }
    }

    /// Stops gracefully within `bound`: `/readyz` turns 503 and new requests get 503
    /// `temporarily_unavailable` (definite: nothing was done); once requests stop arriving
    /// (300 ms without one) the HTTP server stops accepting; the requests in flight get
    /// their answers; then, for each chain this
    /// process leads, it waits until every transaction its submitter journaled is settled
    /// (mined or replaced and recorded), and stops every task. The caller releases the
    /// leases. Past `bound`, whatever is left is aborted (as a crash would: the journal is
    /// recovered by the next holder).
    pub async fn shutdown(&self, bound: Duration) -> Stopped {
        let started = Instant::now();
        tracing::info!(bound = ?bound, "shutting down: readiness 503, new requests 503, answering the requests in flight");
        // Requests still arriving get a definite 503; the listener closes once they stop
        // (a quarter of the bound at most).
        self.stopper
            .drain_then_close(Duration::from_millis(300), bound / 4)
            .await;
        let http = self.http.lock().expect("http lock").take();
        let mut timed_out = false;
        if let Some(http) = http {
            let abort = http.abort_handle();
            let left = bound.saturating_sub(started.elapsed());
            if tokio::time::timeout(left, http).await.is_err() {
                timed_out = true;
                abort.abort();
            }
        }
        let http_drained = started.elapsed();
        let led: Vec<u64> = std::iter::once(&self.network)
            .chain(&self.mainnet)
            .flat_map(|n| n.chains())
            .filter(|c| c.is_leader())
            .map(|c| c.chain_id)
            .collect();
        for chain_id in led {
            loop {
                match self.store.journal().unsettled(chain_id).await {
                    Ok(txs) if txs.is_empty() => break,
                    Ok(txs) => {
                        tracing::debug!(
                            chain_id,
                            unsettled = txs.len(),
                            "waiting for the journal to settle"
                        )
                    }
                    Err(e) => tracing::warn!(error = %e, chain_id, "reading the journal failed"),
                }
                if started.elapsed() >= bound {
                    timed_out = true;
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        let journal_settled = started.elapsed();
        self.abort();
        let stopped = Stopped {
            http_drained,
            journal_settled,
            timed_out,
        };
        tracing::info!(?stopped, "stopped");
        stopped
    }

    /// What this process's metrics endpoint reads (see [`openrail_api::metrics`]).
    pub fn metrics_sources(&self) -> openrail_api::metrics::Sources {
        openrail_api::metrics::Sources {
            store: self.store.clone(),
            networks: std::iter::once(self.network.clone())
                .chain(self.mainnet.clone())
                .collect(),
            lifecycle: self.stopper.lifecycle(),
        }
    }

    /// Whether this process holds the lease of every chain it serves.
    pub fn is_leader(&self) -> bool {
        std::iter::once(&self.network)
            .chain(&self.mainnet)
            .all(|n| n.chains().all(Network::is_leader))
    }
}

/// Starts the API on `127.0.0.1:port` for testnet keys on `deployment`, and the lease loop
/// (see the module docs). Returns once the API serves; a process that can take the lease
/// at once leads before it returns.
pub async fn start(
    store: Store,
    deployment: &ChainDeployment,
    attestation: Option<&ChainDeployment>,
    operator: PrivateKeySigner,
    port: u16,
    config: ApiConfig,
    options: NodeOptions,
) -> anyhow::Result<Node> {
    let confirmations = options.confirmations;
    let chain = |deployment| -> anyhow::Result<ModeChain<'_>> {
        Ok(ModeChain {
            deployment,
            operator: operator.clone(),
            confirmations,
            depth_tag: options.depth_tag,
            endpoint: Endpoint::of(deployment)?,
            submitter: SubmitterOptions::default(),
            attestation: None,
        })
    };
    let mut testnet = chain(deployment)?;
    testnet.attestation = attestation.map(chain).transpose()?.map(Box::new);
    start_networks(store, testnet, None, port, config, options).await
}

/// The settlement chain of one mode as a serving process runs it: its deployment, the
/// operator key that sends its transactions (each mode its own), its confirmation depth,
/// its RPC URLs and how its transactions are replaced.
#[derive(Debug, Clone)]
pub struct ModeChain<'a> {
    /// The contracts.
    pub deployment: &'a ChainDeployment,
    /// The mode's operator.
    pub operator: PrivateKeySigner,
    /// Blocks below the head at which outcomes are applied.
    pub confirmations: u64,
    /// Or the chain's `safe` / `finalized` block, when given.
    pub depth_tag: Option<openrail_chain::rpc::DepthTag>,
    /// Where the chain is reached (every reader, the watcher and the submitter).
    pub endpoint: Endpoint,
    /// Replacement, fee cap and cancellation of the operator's transactions.
    pub submitter: SubmitterOptions,
    /// The mode's attestation chain (its own depth, URLs and operator), when it has one:
    /// one-time payments of the accounts that choose it settle there.
    pub attestation: Option<Box<ModeChain<'a>>>,
}

/// As [`start`], with a mainnet settlement network beside testnet when `mainnet` is
/// given: each network has its own lease, engine, watcher and simulated bank. The one
/// composition root of a serving process (`serve`, `dev` and the harness).
pub async fn start_networks(
    store: Store,
    testnet: ModeChain<'_>,
    mainnet: Option<ModeChain<'_>>,
    port: u16,
    config: ApiConfig,
    options: NodeOptions,
) -> anyhow::Result<Node> {
    let network = Arc::new(mode_network(&testnet)?);
    let main = mainnet
        .as_ref()
        .map(|m| mode_network(m).map(Arc::new))
        .transpose()?;
    let holder = config.node_id.clone();
    let running = openrail_api::server::serve(
        store.clone(),
        Some(network.clone()),
        main.clone(),
        port,
        config,
    )
    .await
    .with_context(|| format!("starting the API on port {port}"))?;
    let tasks = Arc::new(Mutex::new(vec![running.task.abort_handle()]));
    let (stopper, http) = (running.stopper.clone(), running.task);
    let mut networks = vec![(network.clone(), testnet, Mode::Testnet)];
    if let (Some(net), Some(m)) = (&main, mainnet) {
        networks.push((net.clone(), m, Mode::Mainnet));
    }
    // Each chain of each mode: its settlement chain, then its attestation chain.
    let mut chains = Vec::new();
    for (net, mut chain, mode) in networks {
        let attestation = chain.attestation.take();
        if let (Some(a_net), Some(a)) = (net.attestation.clone(), attestation) {
            chains.push((net, chain, mode));
            chains.push((a_net, *a, mode));
        } else {
            chains.push((net, chain, mode));
        }
    }
    for (net, chain, mode) in chains {
        let lead = Leadership {
            store: store.clone(),
            network: net,
            lease: chain_lease(chain.deployment.chain_id),
            deployment: chain.deployment.clone(),
            endpoint: chain.endpoint,
            submitter: chain.submitter,
            operator: chain.operator,
            holder: holder.clone(),
            url: running.base_url.clone(),
            options: NodeOptions {
                confirmations: chain.confirmations,
                depth_tag: chain.depth_tag,
                ..options.clone()
            },
            tasks: tasks.clone(),
            mode,
        };
        let leading = lead.try_take().await;
        let keep = tokio::spawn(lead.keep(leading));
        tasks.lock().expect("tasks lock").push(keep.abort_handle());
    }
    Ok(Node {
        base_url: running.base_url,
        network,
        mainnet: main,
        tasks,
        store,
        stopper,
        http: Mutex::new(Some(http)),
    })
}

/// The settlement network of a mode, with its attestation network when it has one.
fn mode_network(chain: &ModeChain<'_>) -> anyhow::Result<Network> {
    let attestation = chain
        .attestation
        .as_ref()
        .map(|a| {
            Network::attestation_on(a.deployment, &a.endpoint).map(|n| {
                Arc::new(n.relaying_to(
                    chain.deployment.chain_id,
                    chain.deployment.attestation_mirror,
                ))
            })
        })
        .transpose()?;
    Ok(Network::on(chain.deployment, &chain.endpoint)?.with_attestation(attestation))
}

struct Leadership {
    store: Store,
    network: Arc<Network>,
    deployment: ChainDeployment,
    endpoint: Endpoint,
    submitter: SubmitterOptions,
    operator: PrivateKeySigner,
    lease: String,
    holder: String,
    url: String,
    options: NodeOptions,
    tasks: Arc<Mutex<Vec<AbortHandle>>>,
    /// The keys whose objects this network serves.
    mode: Mode,
}

impl Leadership {
    /// Takes the lease if it is free and leads; returns whether this process leads.
    async fn try_take(&self) -> bool {
        match self
            .store
            .leases()
            .acquire(
                &self.lease,
                &self.holder,
                &self.url,
                self.options.lease_ttl,
                now_ms(),
            )
            .await
        {
            Ok(true) => match self.lead().await {
                Ok(()) => true,
                Err(e) if self.network.is_leader() => {
                    // The submitter is installed (it cannot be taken back) but the relayer
                    // did not start: stop, so that no half-leader serves.
                    lost(
                        &self.lease,
                        &format!("taking the lead failed half-way: {e:#}"),
                    )
                }
                Err(e) => {
                    tracing::error!(error = %format!("{e:#}"), lease = %self.lease, "could not take the lead; giving the lease up");
                    if let Err(e) = self.store.leases().release(&self.lease, &self.holder).await {
                        tracing::warn!(error = %e, "releasing the lease failed");
                    }
                    false
                }
            },
            Ok(false) => false,
            Err(e) => {
                tracing::warn!(error = %e, lease = %self.lease, "lease check failed");
                false
            }
        }
    }

    /// Starts the submitter and the engine, the watcher and the simulated bank.
    async fn lead(&self) -> anyhow::Result<()> {
        let engine = openrail_engine::lead(
            &self.store,
            &self.network,
            &self.endpoint,
            SubmitterOptions {
                depth: self.options.confirmations,
                depth_tag: self.options.depth_tag,
                ..self.submitter.clone()
            },
            self.operator.clone(),
            Some((self.lease.clone(), self.holder.clone())),
            self.mode,
            self.options.drive_poll,
        )
        .await?;
        // The settlement chain's watcher reads the state machine's logs; an attestation
        // chain's the router's (reorganisations of its payments' blocks).
        let watched = self
            .network
            .allowance_state_machine
            .unwrap_or(self.network.router);
        let watcher = openrail_relayer::watcher::Watcher::on(
            self.store.clone(),
            self.endpoint.provider()?,
            watched,
            self.network.tokens.clone(),
            self.deployment.deployed_at_block,
            self.options.confirmations,
        )
        .await?
        .with_tag(self.options.depth_tag);
        let watcher = tokio::spawn(watcher.run(self.options.watcher_poll));
        let mut tasks = self.tasks.lock().expect("tasks lock");
        tasks.push(engine);
        tasks.push(watcher.abort_handle());
        drop(tasks);
        if self.network.allowance_state_machine.is_some() {
            self.lead_mode()?;
        }
        tracing::info!(lease = %self.lease, holder = %self.holder, "holding the chain's lease: sending its transactions, running its relayer");
        if self.options.announce_lead {
            println!(
                "holding the lease of chain {} (this process sends its transactions)",
                self.deployment.chain_id
            );
        }
        Ok(())
    }

    /// What the holder of a mode's settlement chain runs for the whole mode: the
    /// simulated bank, the webhooks and (testnet) the simulated identity provider.
    fn lead_mode(&self) -> anyhow::Result<()> {
        let bank = openrail_relayer::bank::SimulatedBank::new(self.store.clone());
        let bank = tokio::spawn(bank.run(self.options.drive_poll));
        // The webhooks of this network's mode: fan-out of its events and delivery.
        let (testnet, mainnet) = match self.mode {
            Mode::Testnet => (Some(self.network.clone()), None),
            Mode::Mainnet => (None, Some(self.network.clone())),
        };
        let render = openrail_api::webhook_renderer(self.store.clone(), testnet, mainnet);
        let deliverer = openrail_webhooks::Deliverer::new(
            self.store.clone(),
            render,
            self.mode,
            self.options.webhooks.clone(),
        );
        let webhooks = tokio::spawn(deliverer.run());
        let mut tasks = self.tasks.lock().expect("tasks lock");
        tasks.push(bank.abort_handle());
        tasks.push(webhooks.abort_handle());
        // Testnet's simulated identity provider (identity verification sessions).
        if self.mode == Mode::Testnet {
            let provider = openrail_api::verifications::SimulatedProvider::new(
                self.store.clone(),
                self.deployment.chain_id,
            );
            let provider = tokio::spawn(provider.run(self.options.drive_poll));
            tasks.push(provider.abort_handle());
        }
        Ok(())
    }

    /// Renews (or tries to take) the lease every third of its length, forever.
    async fn keep(self, mut leading: bool) {
        let mut renewed = Instant::now();
        loop {
            tokio::time::sleep(self.options.lease_ttl / 3).await;
            if !leading {
                leading = self.try_take().await;
                renewed = Instant::now();
                continue;
            }
            match self
                .store
                .leases()
                .acquire(
                    &self.lease,
                    &self.holder,
                    &self.url,
                    self.options.lease_ttl,
                    now_ms(),
                )
                .await
            {
                Ok(true) => renewed = Instant::now(),
                Ok(false) => lost(&self.lease, "another process holds it now"),
                Err(e) if renewed.elapsed() >= self.options.lease_ttl => {
                    lost(&self.lease, &format!("not renewed for a whole lease: {e}"))
                }
                Err(e) => {
                    tracing::warn!(error = %e, lease = %self.lease, "renewing the lease failed; retrying")
                }
            }
        }
    }
}

/// A leader that lost its lease stops at once (see the module docs).
fn lost(lease: &str, why: &str) -> ! {
    tracing::error!(%lease, why, "lost the chain's lease; exiting so that only the new holder sends");
    eprintln!("error: lost the lease {lease} ({why}); exiting");
    std::process::exit(75)
}
