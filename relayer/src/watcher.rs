//! The event watcher of one chain. It reads the allowance state machine's logs from its
//! persisted cursor up to `head - confirmations`, maps each pull outcome to its intent
//! through the transaction journal (a batch's k-th outcome log is its k-th item, whose
//! intent is the pull's, [`Intent::Pull`]), and
//! commits the outcomes together with the new cursor in one database transaction, so a
//! crash never applies events twice or skips them. Outcomes already recorded by the API
//! are left alone.
//!
//! Reorganisations: the cursor keeps the block's hash; when the chain's block at that
//! height has another hash, the watcher steps back [`REORG_REWIND`] blocks. It undoes what
//! those blocks did, in one database transaction with the cursor's move: the journaled
//! transactions mined there go back to "fate unknown" and the pulls they resolved back to
//! `pending`. Then it redoes: a transaction the new chain still holds gets its fate from
//! its receipt, one the new chain dropped is rebroadcast from its journaled bytes (same
//! nonce, same hash: never a second transaction for an intent, no nonce left jammed), and
//! the ordinary scan from the rewound cursor resolves the pulls again from the logs the
//! new chain carries. Pulls whose bank leg already ran (`settled`, `failed`) are not undone:
//! the bank leg is keyed per pull and never runs twice.

use std::collections::BTreeMap;
use std::time::Duration;

use alloy::primitives::{Address, Bytes, TxHash};
use alloy::providers::{DynProvider, Provider};
use alloy::rpc::types::Filter;
use alloy::sol_types::SolEvent;
use alloy::transports::http::reqwest::Url;
use openrail_chain::bindings::AllowanceStateMachine::{
    DebitPullDeclined, DebitPulled, MandateCanceled, SessionKeyRevoked,
};
use openrail_chain::submitter::{Decline, PullOutcome, TxFate};
use openrail_domain::PullId;
use openrail_domain::journal::Intent;
use openrail_store::agentic::PullResolution;
use openrail_store::journal::ChainCursor;
use openrail_store::journal::OnchainEnds;
use openrail_store::{Currency, Store, StoreError, now_ms};

/// How far back the watcher steps when its cursor's block was reorganised away.
pub const REORG_REWIND: u64 = 64;
/// Most blocks read in one step.
const MAX_RANGE: u64 = 1_000;

/// Errors of the watcher.
#[derive(Debug, thiserror::Error)]
pub enum WatcherError {
    /// The node failed.
    #[error("rpc: {0}")]
    Rpc(#[from] alloy::transports::TransportError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The node does not know a block it just reported.
    #[error("block {0} not found")]
    MissingBlock(u64),
    /// The provider could not be made.
    #[error(transparent)]
    Chain(#[from] openrail_chain::ChainError),
}

impl WatcherError {
    /// Whether the next step may succeed (everything here is retried by `run`).
    pub fn is_transient(&self) -> bool {
        match self {
            WatcherError::Rpc(_) | WatcherError::MissingBlock(_) => true,
            WatcherError::Store(e) => e.is_transient(),
            WatcherError::Chain(e) => e.is_transient(),
        }
    }
}

/// What one step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Step {
    /// Last block applied (unchanged when there was nothing new).
    pub cursor: Option<u64>,
    /// Pulls whose outcome this step recorded.
    pub pulls_resolved: usize,
    /// Whether a reorganisation was noticed.
    pub reorg: bool,
    /// Pulls sent back to `pending` by a reorganisation (resolved again from the new chain).
    pub pulls_undone: usize,
    /// Journaled transactions the new chain had dropped, rebroadcast.
    pub rebroadcast: usize,
}

/// Watches one chain.
#[derive(Debug, Clone)]
pub struct Watcher {
    store: Store,
    provider: DynProvider,
    chain_id: u64,
    asm: Address,
    start_block: u64,
    confirmations: u64,
    /// Applies up to the chain's `safe` or `finalized` block instead of a count.
    tag: Option<openrail_chain::rpc::DepthTag>,
    tokens: BTreeMap<Currency, Address>,
}

impl Watcher {
    /// A watcher of the allowance state machine `asm` on the chain at `rpc_url`, starting at
    /// `start_block` when it has no cursor yet, applying blocks `confirmations` deep; a
    /// pull whose token transfer failed is diagnosed against `tokens` (by currency).
    pub async fn new(
        store: Store,
        rpc_url: &Url,
        asm: Address,
        tokens: BTreeMap<Currency, Address>,
        start_block: u64,
        confirmations: u64,
    ) -> Result<Self, WatcherError> {
        let provider = openrail_chain::tls::reader(rpc_url)?;
        Self::on(store, provider, asm, tokens, start_block, confirmations).await
    }

    /// [`Watcher::new`] reading through `provider` (several URLs, retries: see
    /// `openrail_chain::rpc`).
    pub async fn on(
        store: Store,
        provider: alloy::providers::DynProvider,
        asm: Address,
        tokens: BTreeMap<Currency, Address>,
        start_block: u64,
        confirmations: u64,
    ) -> Result<Self, WatcherError> {
        let chain_id = provider.get_chain_id().await?;
        Ok(Self {
            store,
            provider,
            chain_id,
            asm,
            start_block,
            confirmations,
            tag: None,
            tokens,
        })
    }

    /// Applies blocks up to the chain's `tag` block (`safe`, `finalized`) rather than
    /// `confirmations` below the head, when given.
    pub fn with_tag(mut self, tag: Option<openrail_chain::rpc::DepthTag>) -> Self {
        self.tag = tag;
        self
    }

    /// Applies what is new since the cursor (at most a bounded range of blocks).
    pub async fn step(&self) -> Result<Step, WatcherError> {
        // A key's expiry changes no row of its own: announce it once (`session_key.expired`).
        self.store.keys().announce_expired(now_ms(), 100).await?;
        let head = self.provider.get_block_number().await?;
        let safe = match self.tag {
            Some(tag) => tag.number(&self.provider).await?.min(head),
            None => head.saturating_sub(self.confirmations),
        };
        let mut step = Step::default();
        let from = match self.store.journal().chain_cursor(self.chain_id).await? {
            None => self.start_block,
            Some(c) => {
                if self.cursor_at(c.block_number).await? == c {
                    c.block_number + 1
                } else {
                    if self.confirmations > 0 || self.tag.is_some() {
                        // Outcomes applied at the configured depth were final: a
                        // reorganisation deeper than it is something an operator must hear of.
                        tracing::error!(
                            chain_id = self.chain_id,
                            block = c.block_number,
                            depth = self.confirmations,
                            "reorganisation deeper than the configured depth: outcomes taken as final are undone and redone from the new chain"
                        );
                    } else {
                        tracing::warn!(
                            chain_id = self.chain_id,
                            block = c.block_number,
                            "reorganisation noticed"
                        );
                    }
                    step.reorg = true;
                    let from = c
                        .block_number
                        .saturating_sub(REORG_REWIND)
                        .max(self.start_block)
                        .max(1);
                    self.rewind(from, &mut step).await?;
                    from
                }
            }
        };
        if from > safe {
            return Ok(step);
        }
        let to = safe.min(from + MAX_RANGE - 1);
        let filter = Filter::new()
            .address(self.asm)
            .from_block(from)
            .to_block(to);
        let logs = self.provider.get_logs(&filter).await?;

        // Pull outcomes per transaction, in log order; every transaction seen succeeded.
        let mut txs: Vec<(alloy::primitives::TxHash, Vec<PullOutcome>)> = Vec::new();
        let mut mined: Vec<(TxHash, u64)> = Vec::new();
        let mut ended = OnchainEnds::default();
        for log in &logs {
            let (Some(tx_hash), Some(topic)) = (log.transaction_hash, log.topics().first()) else {
                continue;
            };
            if mined.last().map(|(h, _)| *h) != Some(tx_hash) {
                mined.push((tx_hash, log.block_number.unwrap_or_default()));
            }
            if *topic == MandateCanceled::SIGNATURE_HASH {
                if let Some(id) = log.topics().get(1) {
                    ended.mandates_canceled.push(id.to_string());
                }
                continue;
            }
            if *topic == SessionKeyRevoked::SIGNATURE_HASH {
                if let Some(id) = log.topics().get(1) {
                    ended.keys_revoked.push(id.to_string());
                }
                continue;
            }
            let outcome = if *topic == DebitPulled::SIGNATURE_HASH {
                PullOutcome::Authorized {
                    tx_hash,
                    block_number: log.block_number.unwrap_or_default(),
                }
            } else if *topic == DebitPullDeclined::SIGNATURE_HASH {
                let reason = DebitPullDeclined::decode_log_data(log.data())
                    .map(|e| Decline::decode(&e.reason))
                    .unwrap_or(Decline::Other(Bytes::new()));
                PullOutcome::Declined { tx_hash, reason }
            } else {
                continue;
            };
            match txs.last_mut() {
                Some((h, outcomes)) if *h == tx_hash => outcomes.push(outcome),
                _ => txs.push((tx_hash, vec![outcome])),
            }
        }
        let mut resolutions: Vec<(PullId, PullResolution)> = Vec::new();
        for (hash, outcomes) in txs {
            // Transactions the service did not journal (a direct operator call) carry no intents.
            let Some((kind, intents)) = self
                .store
                .journal()
                .intents(self.chain_id, &hash.to_string())
                .await?
            else {
                continue;
            };
            // A batch's intents are its pulls, in item order.
            let pulls: Option<Vec<PullId>> = intents
                .into_iter()
                .map(|intent| match intent {
                    Intent::Pull(id) => Some(id),
                    Intent::Mandate(_)
                    | Intent::SessionKey(_)
                    | Intent::Payment(_)
                    | Intent::PaymentSource(_)
                    | Intent::PaymentRefund(_)
                    | Intent::Payout(_)
                    | Intent::Attestation(_) => None,
                })
                .collect();
            let pulls = match pulls {
                Some(pulls)
                    if kind == openrail_store::journal::TxKind::PullBatch
                        && pulls.len() == outcomes.len() =>
                {
                    pulls
                }
                _ => {
                    tracing::error!(%hash, kind = kind.as_str(), "journal and outcome logs disagree; skipping");
                    continue;
                }
            };
            for (id, outcome) in pulls.into_iter().zip(outcomes) {
                let mut r = outcome.resolution(now_ms());
                if let PullOutcome::Declined {
                    reason: Decline::TransferFailed,
                    ..
                } = &outcome
                {
                    let transfer = self.store.pulls().transfer(&id).await.ok();
                    r.decline_code = Some(
                        openrail_chain::diagnose::pull_transfer_failure(
                            &self.provider,
                            &self.tokens,
                            self.asm,
                            &id,
                            transfer,
                        )
                        .await,
                    );
                }
                resolutions.push((id, r));
            }
        }
        let cursor = self.cursor_at(to).await?;
        if !resolutions.is_empty() {
            openrail_store::crash::point(openrail_store::crash::BEFORE_CURSOR_COMMIT);
        }
        step.pulls_resolved = self
            .store
            .journal()
            .commit_chain_events(
                self.chain_id,
                &cursor,
                &resolutions,
                &mined
                    .iter()
                    .map(|(h, b)| (h.to_string(), *b))
                    .collect::<Vec<_>>(),
                &ended,
                now_ms(),
            )
            .await?;
        step.cursor = Some(to);
        Ok(step)
    }

    /// The cursor that says block `number` (as the chain has it now) is applied.
    async fn cursor_at(&self, number: u64) -> Result<ChainCursor, WatcherError> {
        let block = self
            .provider
            .get_block_by_number(number.into())
            .await?
            .ok_or(WatcherError::MissingBlock(number))?;
        Ok(ChainCursor {
            block_number: number,
            block_hash: block.header.hash.to_string(),
        })
    }

    /// Undoes the effects of blocks `from..` (see the module docs) and redoes what can be
    /// redone at once: fates from receipts, rebroadcasts of dropped transactions.
    async fn rewind(&self, from: u64, step: &mut Step) -> Result<(), WatcherError> {
        let cursor = self.cursor_at(from - 1).await?;
        let (txs, pulls) = self
            .store
            .journal()
            .rewind(self.chain_id, from, &cursor, now_ms())
            .await?;
        step.pulls_undone = pulls;
        for (hash, raw) in txs {
            let (Ok(tx_hash), Ok(raw)) = (hash.parse::<TxHash>(), raw.parse::<Bytes>()) else {
                tracing::error!(%hash, "journaled transaction does not parse; left for recovery");
                continue;
            };
            match self.provider.get_transaction_receipt(tx_hash).await? {
                Some(r) => {
                    let fate = if r.status() {
                        TxFate::Succeeded
                    } else {
                        TxFate::Reverted
                    };
                    self.store
                        .journal()
                        .mark(
                            self.chain_id,
                            &hash,
                            fate.status(),
                            r.block_number,
                            now_ms(),
                        )
                        .await?;
                }
                None => {
                    step.rebroadcast += 1;
                    match self.provider.send_raw_transaction(&raw).await {
                        Ok(_) => {
                            tracing::info!(chain_id = self.chain_id, %hash, "rebroadcast a transaction the reorganisation dropped")
                        }
                        Err(e) => {
                            tracing::warn!(chain_id = self.chain_id, %hash, error = %e, "rebroadcast after reorganisation refused")
                        }
                    }
                }
            }
        }
        tracing::warn!(
            chain_id = self.chain_id,
            from,
            pulls_undone = step.pulls_undone,
            rebroadcast = step.rebroadcast,
            "reorganisation: effects undone from this block; re-scanning"
        );
        Ok(())
    }

    /// Steps forever, every `poll`, logging failures.
    pub async fn run(self, poll: Duration) {
        loop {
            match self.step().await {
                Ok(s) if s.cursor.is_some() => continue,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(chain_id = self.chain_id, error = %e, transient = e.is_transient(), "watcher step failed")
                }
            }
            tokio::time::sleep(poll).await;
        }
    }
}
