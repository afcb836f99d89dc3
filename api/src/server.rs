//! Wiring: the store-backed transaction journal, a network from a deployment, serving.

use std::collections::BTreeMap;
use std::sync::Arc;

use alloy::primitives::TxHash;
use alloy::signers::local::PrivateKeySigner;
use alloy::transports::http::reqwest::Url;
use openrail_chain::ChainError;
use openrail_chain::deploy::ChainDeployment;
use openrail_chain::submitter::{
    Journal, JournalFuture, JournaledTx, SignedTx, Submitter, TxFate, UnsettledFuture,
};
use openrail_store::{Currency, Mode, Store};

use crate::network::Network;

/// The submitter's journal, in the database.
#[derive(Debug, Clone)]
pub struct StoreJournal(pub Store);

impl Journal for StoreJournal {
    fn record<'a>(&'a self, tx: &'a SignedTx) -> JournalFuture<'a> {
        Box::pin(async move {
            self.0
                .record_tx(
                    tx.chain_id,
                    tx.nonce,
                    &tx.hash.to_string(),
                    &tx.raw.to_string(),
                    tx.kind,
                    &tx.intents,
                )
                .await
                .map_err(Into::into)
        })
    }

    fn unsettled<'a>(&'a self, chain_id: u64) -> UnsettledFuture<'a> {
        Box::pin(async move {
            let rows = self.0.unsettled_txs(chain_id).await?;
            let mut out = Vec::with_capacity(rows.len());
            for (nonce, hash, raw) in rows {
                out.push(JournaledTx {
                    nonce,
                    hash: hash.parse()?,
                    raw: raw.parse()?,
                });
            }
            Ok(out)
        })
    }

    fn finished<'a>(
        &'a self,
        chain_id: u64,
        hash: TxHash,
        fate: TxFate,
        block: Option<u64>,
    ) -> JournalFuture<'a> {
        Box::pin(async move {
            self.0
                .mark_tx(chain_id, &hash.to_string(), fate.status(), block)
                .await
                .map_err(Into::into)
        })
    }
}

/// The settlement network of a deployment, with its submitter started.
pub async fn network_from_deployment(
    store: &Store,
    deployment: &ChainDeployment,
    operator: PrivateKeySigner,
) -> Result<Network, ChainError> {
    let url: Url = deployment
        .rpc_url
        .parse()
        .map_err(|e| ChainError::Deployment(format!("bad rpc url {}: {e}", deployment.rpc_url)))?;
    let asm = deployment.allowance_state_machine.ok_or_else(|| {
        ChainError::Deployment("the settlement chain has no allowance state machine".into())
    })?;
    let submitter =
        Submitter::start(&url, operator, asm, Arc::new(StoreJournal(store.clone()))).await?;
    let tokens: BTreeMap<Currency, _> = deployment
        .tokens
        .iter()
        .filter_map(|(code, addr)| Currency::parse(code).map(|c| (c, *addr)))
        .collect();
    Ok(Network {
        submitter,
        chain_id: deployment.chain_id,
        allowance_state_machine: asm,
        router: deployment.router,
        treasury: deployment.treasury,
        tokens,
        default_destination: deployment.treasury,
    })
}

/// A server running in this process.
#[derive(Debug)]
pub struct Running {
    /// `http://127.0.0.1:PORT`
    pub base_url: String,
    /// The serving task.
    pub task: tokio::task::JoinHandle<()>,
    /// The testnet network (its submitter is shared with the relayer's workers).
    pub testnet: Option<Arc<Network>>,
}

/// Serves the API for testnet keys on the settlement chain of `deployment`, on
/// `127.0.0.1:port` (`0` picks a free port), with `operator` signing. Mainnet keys get 503.
pub async fn serve_testnet(
    store: Store,
    deployment: &ChainDeployment,
    operator: PrivateKeySigner,
    port: u16,
    config: crate::ApiConfig,
) -> Result<Running, ServeError> {
    serve(store, Some((deployment, operator)), None, port, config).await
}

/// Serves the API with a settlement network per mode; a mode without one answers 503
/// `mainnet_unavailable` (testnet is always configured in practice).
pub async fn serve(
    store: Store,
    testnet: Option<(&ChainDeployment, PrivateKeySigner)>,
    mainnet: Option<(&ChainDeployment, PrivateKeySigner)>,
    port: u16,
    config: crate::ApiConfig,
) -> Result<Running, ServeError> {
    let mut networks = Vec::with_capacity(2);
    for net in [testnet, mainnet] {
        networks.push(match net {
            Some((deployment, operator)) => Some(Arc::new(
                network_from_deployment(&store, deployment, operator).await?,
            )),
            None => None,
        });
    }
    let mainnet = networks.pop().flatten();
    let testnet = networks.pop().flatten();
    for (net, mode) in [(&testnet, Mode::Testnet), (&mainnet, Mode::Mainnet)] {
        if let Some(net) = net {
            crate::agentic::resume_unsent_pulls(store.clone(), net.clone(), mode).await;
        }
    }
    let state = crate::AppState::new(store, testnet.clone(), mainnet, config);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(ServeError::Bind)?;
    let base_url = format!(
        "http://{}",
        listener.local_addr().map_err(ServeError::Bind)?
    );
    let app = crate::router(state);
    let task = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "the API server stopped");
        }
    });
    Ok(Running {
        base_url,
        task,
        testnet,
    })
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The chain could not be reached or is not deployed as expected.
    #[error(transparent)]
    Chain(#[from] ChainError),
    /// The port could not be bound.
    #[error("binding the API port: {0}")]
    Bind(std::io::Error),
}
