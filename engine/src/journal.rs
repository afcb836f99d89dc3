//! The submitter's journal in the database (lease-fenced), and taking the lead of a chain.

use openrail_store::now_ms;
use std::sync::Arc;

use alloy::primitives::TxHash;
use alloy::signers::local::PrivateKeySigner;
use openrail_chain::ChainError;
use openrail_chain::rpc::Endpoint;
use openrail_chain::submitter::{
    Journal, JournalError, JournalFuture, JournaledTx, NotLeaseHolder, SignedTx, Submitter,
    SubmitterOptions, TxFate, UnsettledFuture,
};
use openrail_store::{Mode, Store};

use crate::network::Network;

/// The submitter's journal, in the database. With a fence (lease name, holder), a
/// transaction is journaled (and so sent) only while that lease is held.
#[derive(Debug, Clone)]
pub struct StoreJournal {
    store: Store,
    fence: Option<(String, String)>,
}

impl StoreJournal {
    /// A journal in `store`, fenced by the lease `(name, holder)` when given.
    pub fn new(store: Store, fence: Option<(String, String)>) -> Self {
        Self { store, fence }
    }
}

impl Journal for StoreJournal {
    fn record<'a>(&'a self, tx: &'a SignedTx) -> JournalFuture<'a> {
        Box::pin(async move {
            let recorded = self
                .store
                .journal()
                .record(
                    tx.chain_id,
                    tx.nonce,
                    &tx.hash.to_string(),
                    &tx.raw.to_string(),
                    tx.kind,
                    &tx.intents,
                    self.fence.as_ref().map(|(n, h)| (n.as_str(), h.as_str())),
                    now_ms(),
                )
                .await?;
            if recorded {
                Ok(())
            } else {
                Err(Box::new(NotLeaseHolder) as JournalError)
            }
        })
    }

    fn unsettled<'a>(&'a self, chain_id: u64) -> UnsettledFuture<'a> {
        Box::pin(async move {
            let rows = self.store.journal().unsettled(chain_id).await?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push(JournaledTx {
                    nonce: row.nonce,
                    hash: row.hash.parse()?,
                    raw: row.raw.parse()?,
                    kind: row.kind,
                    intents: row.intents,
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
            self.store
                .journal()
                .mark(chain_id, &hash.to_string(), fate.status(), block, now_ms())
                .await
                .map_err(Into::into)
        })
    }

    fn reorged<'a>(&'a self, chain_id: u64, hash: TxHash) -> JournalFuture<'a> {
        Box::pin(async move {
            self.store
                .journal()
                .unmine(chain_id, &hash.to_string(), now_ms())
                .await
                .map(drop)
                .map_err(Into::into)
        })
    }
}

/// Makes this process the sender of `net`'s transactions: starts its submitter on
/// `endpoint` with `options` (which first settles or rebroadcasts what the journal holds)
/// and its engine (which sends the queued work, whoever queued it). `fence` is the chain's
/// lease (name, holder) that every journaled transaction is checked against; `None` for a
/// single process without leases.
#[allow(clippy::too_many_arguments)]
pub async fn lead(
    store: &Store,
    net: &Arc<Network>,
    endpoint: &Endpoint,
    options: SubmitterOptions,
    operator: PrivateKeySigner,
    fence: Option<(String, String)>,
    mode: Mode,
    drive_poll: std::time::Duration,
) -> Result<tokio::task::AbortHandle, ChainError> {
    let journal = Arc::new(StoreJournal::new(store.clone(), fence));
    let submitter = Submitter::start_with(
        endpoint.provider()?,
        operator,
        // Pull batches and state machine calls go to the state machine; an attestation
        // chain has none and its engine sends none (`Network::state_machine` refuses),
        // only router settlements, which name their contract themselves.
        net.allowance_state_machine.unwrap_or(net.router),
        journal,
        options,
    )
    .await?;
    Ok(lead_with(store, net, submitter, mode, drive_poll))
}

/// [`lead`] with a submitter already started (tests give it a journal that fails on
/// purpose): installs it as `net`'s sender and starts the engine.
pub fn lead_with(
    store: &Store,
    net: &Arc<Network>,
    submitter: Submitter,
    mode: Mode,
    drive_poll: std::time::Duration,
) -> tokio::task::AbortHandle {
    net.set_submitter(submitter);
    // The engine sends what is queued — by this process's requests, by followers', or by
    // a holder that died before journaling it.
    crate::start(store.clone(), net.clone(), mode, drive_poll).abort_handle()
}
