//! The one end-to-end harness. Every e2e test goes through [`Harness::start`]: two anvil
//! chains on free ports with the full contract set deployed, a fresh database (SQLite, or
//! PostgreSQL when `OPENRAIL_TEST_DB=postgres`), a developer account with a testnet API key,
//! and the server on port 0 in this process. Tests never share chains or databases, so they
//! run in parallel. [`Harness::chains_only`] is the same without the server, for tests that
//! drive the contracts as the operator directly (the server's submitter owns the operator's
//! nonces, so the two never run together).

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

/// The running API server of a harness.
pub struct Server {
    /// `http://127.0.0.1:PORT`
    pub base_url: String,
    /// The account's testnet API key.
    pub api_key: String,
    /// The developer account.
    pub account_id: String,
    /// The server's database.
    pub store: Store,
    task: tokio::task::JoinHandle<()>,
    watcher: tokio::task::JoinHandle<()>,
    payments: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
}

/// A running test environment.
pub struct Harness {
    /// Both chains and the manifest.
    pub devnet: Devnet,
    /// A provider on the settlement chain that signs as the operator.
    pub settlement: DynProvider,
    /// The server, unless started with [`Harness::chains_only`].
    pub server: Option<Server>,
    /// The stand-in mainnet deployment, when started with [`Harness::start_with_mainnet`].
    pub mainnet: Option<ChainDeployment>,
    http: reqwest::Client,
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
    /// A string member of the body.
    pub fn str(&self, key: &str) -> &str {
        self.body[key]
            .as_str()
            .unwrap_or_else(|| panic!("no string {key:?} in {}", self.body))
    }
}

impl Harness {
    /// Chains, contracts, database and server.
    pub async fn start() -> anyhow::Result<Self> {
        Self::start_with(ApiConfig::default()).await
    }

    /// As [`Harness::start`], with API tunables.
    pub async fn start_with(config: ApiConfig) -> anyhow::Result<Self> {
        Self::start_inner(config, false).await
    }

    /// As [`Harness::start`], with "mainnet" configured too: a second settlement contract
    /// set on the other local chain stands in for it, so mode isolation can be tested.
    pub async fn start_with_mainnet() -> anyhow::Result<Self> {
        Self::start_inner(ApiConfig::default(), true).await
    }

    async fn start_inner(config: ApiConfig, with_mainnet: bool) -> anyhow::Result<Self> {
        let mut h = Self::chains_only().await?;
        if with_mainnet {
            let fake = openrail_chain::deploy::deploy_chain(
                h.devnet.attestation.rpc_url(),
                openrail_chain::deploy::ChainRole::Settlement,
                dev_operator(),
                dev_treasury(),
                openrail_chain::devnet::treasury_supply(),
            )
            .await?;
            h.mainnet = Some(fake);
        }
        let dir = tempfile::tempdir()?;
        let store = fresh_store(dir.path()).await?;
        let account = store.create_account("Harness").await?;
        let (_, api_key) = store.create_api_key(&account.id, Mode::Testnet).await?;
        h.server = Some(
            h.start_server(store, dir, account.id, api_key, config)
                .await?,
        );
        Ok(h)
    }

    /// Starts the API server, its payment worker and the watcher on `store`.
    async fn start_server(
        &self,
        store: Store,
        dir: tempfile::TempDir,
        account_id: String,
        api_key: String,
        config: ApiConfig,
    ) -> anyhow::Result<Server> {
        let h = self;
        let running = openrail_api::server::serve(
            store.clone(),
            Some((&h.devnet.manifest.settlement, dev_operator())),
            h.mainnet.as_ref().map(|d| (d, dev_operator())),
            0,
            config,
        )
        .await?;
        let net = running.testnet.clone().context("no testnet network")?;
        let worker = openrail_relayer::payments::PaymentWorker::new(
            store.clone(),
            net.submitter.clone(),
            net.router,
            h.devnet.manifest.settlement.treasury,
            net.tokens.clone(),
        );
        let payments = tokio::spawn(worker.run(std::time::Duration::from_millis(50)));
        let (base_url, task) = (running.base_url, running.task);
        // The relayer's watcher runs beside the server, as in `openrail dev`.
        let d = &h.devnet.manifest.settlement;
        let watcher = openrail_relayer::watcher::Watcher::new(
            store.clone(),
            h.devnet.settlement.rpc_url(),
            d.allowance_state_machine.context("no state machine")?,
            d.deployed_at_block,
            0,
        )
        .await?;
        let watcher = tokio::spawn(watcher.run(std::time::Duration::from_millis(200)));
        Ok(Server {
            base_url,
            api_key,
            account_id,
            store,
            task,
            watcher,
            payments,
            _dir: dir,
        })
    }

    /// A crash and a restart in this process: aborts the server's tasks wherever they are
    /// (API, payment worker, watcher) and starts a new server on the same database with the
    /// same API key. The new server recovers what the old one left: journaled transactions,
    /// pulls accepted but never sent, payments in flight.
    pub async fn restart(&mut self) -> anyhow::Result<()> {
        let old = self.server.take().context("no server to restart")?;
        old.task.abort();
        old.watcher.abort();
        old.payments.abort();
        let Server {
            store,
            account_id,
            api_key,
            _dir,
            ..
        } = old;
        self.server = Some(
            self.start_server(store, _dir, account_id, api_key, ApiConfig::default())
                .await?,
        );
        Ok(())
    }

    /// Chains and contracts only.
    pub async fn chains_only() -> anyhow::Result<Self> {
        let devnet = Devnet::start(DevnetConfig::default())
            .await
            .context("starting the devnet")?;
        let settlement = signer_provider(devnet.settlement.rpc_url(), dev_operator());
        Ok(Self {
            devnet,
            settlement,
            server: None,
            mainnet: None,
            http: reqwest::Client::new(),
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

    /// `GET` with the account's API key.
    pub async fn get(&self, path: &str) -> anyhow::Result<Reply> {
        self.call(Method::GET, path, None, None, &[]).await
    }

    /// `DELETE` with the account's API key.
    pub async fn delete(&self, path: &str) -> anyhow::Result<Reply> {
        self.call(Method::DELETE, path, None, None, &[]).await
    }

    /// Stops the server and both chains.
    pub async fn stop(self) {
        if let Some(s) = self.server {
            s.task.abort();
            s.watcher.abort();
            s.payments.abort();
        }
        self.devnet.stop().await;
    }
}

/// `major` whole units of a test stablecoin, in smallest units.
pub fn units(major: u64) -> U256 {
    U256::from(major) * U256::from(10u64).pow(U256::from(TOKEN_DECIMALS))
}

/// A fresh, migrated database: a SQLite file in `dir`, or a new PostgreSQL database when
/// `OPENRAIL_TEST_DB=postgres` (the end-to-end suite's second run).
pub async fn fresh_store(dir: &std::path::Path) -> anyhow::Result<Store> {
    Ok(match std::env::var("OPENRAIL_TEST_DB").as_deref() {
        Ok("postgres") => {
            let url = openrail_store::testing::fresh_postgres_url()
                .await?
                .context("OPENRAIL_TEST_DB=postgres but no PostgreSQL server is reachable")?;
            Store::connect(&url).await?
        }
        _ => openrail_store::testing::fresh_sqlite(dir).await?,
    })
}

/// A `pending` USD pull row, as `POST /v1/debit-pulls` writes it before submitting (tests
/// that play a request which died at some point insert it directly).
pub fn pending_pull_row(
    id: &str,
    account_id: &str,
    key_id: &str,
    mandate_id: &str,
    amount_minor: u64,
    destination: Address,
) -> openrail_store::agentic::DebitPull {
    let now = openrail_store::now_ms();
    let destination = destination.to_checksum(None);
    openrail_store::agentic::DebitPull {
        id: id.to_string(),
        account_id: account_id.to_string(),
        mode: Mode::Testnet,
        session_key_id: key_id.to_string(),
        mandate_id: mandate_id.to_string(),
        amount: amount_minor,
        currency: openrail_store::Currency::Usd,
        destination: destination.clone(),
        destination_address: destination,
        description: None,
        status: openrail_store::agentic::PullStatus::Pending,
        decline_code: None,
        remaining: None,
        resets_at: None,
        tx_hash: None,
        authorized_at: None,
        created_at: now,
        updated_at: now,
        failure_reason: None,
    }
}
