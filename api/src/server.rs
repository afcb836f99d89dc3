//! Wiring: the store-backed transaction journal, a network from a deployment, serving.

use std::collections::BTreeMap;
use std::sync::Arc;

use alloy::signers::local::PrivateKeySigner;
use alloy::transports::http::reqwest::Url;
use openrail_chain::ChainError;
use openrail_chain::deploy::ChainDeployment;
use openrail_chain::submitter::{Journal, JournalFuture, SignedTx, Submitter};
use openrail_store::{Currency, Store};

use crate::network::Network;

/// The submitter's journal, in the database.
#[derive(Debug, Clone)]
pub struct StoreJournal(pub Store);

impl Journal for StoreJournal {
    fn record<'a>(&'a self, tx: &'a SignedTx) -> JournalFuture<'a> {
        Box::pin(async move {
            self.0
                .record_tx(tx.chain_id, tx.nonce, &tx.hash.to_string(), &tx.raw.to_string(), tx.kind, &tx.intents)
                .await
                .map_err(Into::into)
        })
    }

    fn mined<'a>(&'a self, chain_id: u64, hash: alloy::primitives::TxHash, success: bool) -> JournalFuture<'a> {
        Box::pin(async move { self.0.mark_tx_mined(chain_id, &hash.to_string(), success).await.map_err(Into::into) })
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
    let asm = deployment
        .allowance_state_machine
        .ok_or_else(|| ChainError::Deployment("the settlement chain has no allowance state machine".into()))?;
    let submitter = Submitter::start(&url, operator, asm, Arc::new(StoreJournal(store.clone()))).await?;
    let tokens: BTreeMap<Currency, _> =
        deployment.tokens.iter().filter_map(|(code, addr)| Currency::parse(code).map(|c| (c, *addr))).collect();
    Ok(Network {
        submitter,
        chain_id: deployment.chain_id,
        allowance_state_machine: asm,
        tokens,
        default_destination: deployment.treasury,
    })
}
