//! The per-chain submitter: the only writer of the operator's transactions on a chain.
//!
//! - It assigns nonces itself (one task owns the counter) and never waits for a receipt
//!   before sending the next transaction; a separate task collects receipts.
//! - Each transaction is signed locally and handed to the [`Journal`] (persisted) before it
//!   is broadcast, so after a crash the same raw bytes can be rebroadcast: never two
//!   transactions for one intent.
//! - Debit pulls that arrive while a transaction is being sent are batched into one
//!   `pullBatch`; each waiting request is resolved with its own item's outcome, read from
//!   the receipt's `DebitPulled` / `DebitPullDeclined` logs (one per item, in order).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use alloy::consensus::TxEnvelope;
use alloy::eips::eip2718::Encodable2718;
use alloy::network::{EthereumWallet, NetworkTransactionBuilder, TransactionBuilder};
use alloy::primitives::{Address, B256, Bytes, TxHash, U256};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::types::{TransactionReceipt, TransactionRequest};
use alloy::signers::local::PrivateKeySigner;
use alloy::sol_types::{SolCall, SolEvent, SolInterface};
use alloy::transports::http::reqwest::Url;
use openrail_store::crash;
use openrail_store::journal::TxStatus;
use tokio::sync::{mpsc, oneshot};

use crate::ChainError;
use crate::batch;
use crate::bindings::AllowanceStateMachine::{self, AllowanceStateMachineErrors as AsmError};
use openrail_store::agentic::DeclineReason;
use openrail_store::journal::TxKind;

/// Most items in one `pullBatch`.
pub const MAX_BATCH: usize = 128;
/// Gas budget per batch item (a pull costs well under this).
const GAS_PER_PULL: u64 = 90_000;
/// Extra budget of an agent-signed item: hashing and recovery, or a contract wallet's
/// ERC-1271 check (bounded on chain to 100,000).
const GAS_PER_SIGNED_PULL: u64 = 120_000;
/// Gas the contract requires left before a token call (`TOKEN_CALL_RESERVE`, with margin):
/// a batch whose last item found less would revert rather than blame the token.
const GAS_TOKEN_RESERVE: u64 = 110_000;
/// Gas for any other operator transaction (allow-lists are bounded by the API).
const GAS_OTHER: u64 = 1_500_000;

/// How long a fee estimate is used before it is asked for again. The estimate's maximum fee
/// is twice the base fee plus the tip, which covers the base fee's largest rise over
/// several blocks (12.5 % a block), so an estimate a second old is not underpriced; asking
/// anew for every transaction put two RPC round trips on every batch's path.
const FEE_TTL: Duration = Duration::from_secs(1);

/// A signed transaction about to be broadcast.
#[derive(Debug, Clone)]
pub struct SignedTx {
    /// Chain id.
    pub chain_id: u64,
    /// Operator nonce.
    pub nonce: u64,
    /// Transaction hash.
    pub hash: TxHash,
    /// EIP-2718 encoded bytes, ready for `eth_sendRawTransaction`.
    pub raw: Bytes,
    /// What it does.
    pub kind: TxKind,
    /// The intents (API object ids) it carries, in item order.
    pub intents: Vec<String>,
}

/// Error of a [`Journal`].
pub type JournalError = Box<dyn std::error::Error + Send + Sync>;

/// The [`JournalError`] of a journal that refuses a transaction because this process no
/// longer holds the chain's lease (see `openrail_store::lease`); the submitter then sends
/// nothing and answers [`ChainError::LeaseLost`].
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("not the holder of the chain's lease")]
pub struct NotLeaseHolder;
/// A boxed future returned by a [`Journal`].
pub type JournalFuture<'a> = Pin<Box<dyn Future<Output = Result<(), JournalError>> + Send + 'a>>;

/// A journaled transaction whose fate is not known (after a restart).
#[derive(Debug, Clone)]
pub struct JournaledTx {
    /// Operator nonce.
    pub nonce: u64,
    /// Hash.
    pub hash: TxHash,
    /// The exact bytes that were (or were about to be) broadcast.
    pub raw: Bytes,
}

/// A boxed future of [`Journal::unsettled`].
pub type UnsettledFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Vec<JournaledTx>, JournalError>> + Send + 'a>>;

/// Durable record of outbound transactions, written before broadcast.
pub trait Journal: Send + Sync + 'static {
    /// Persists a signed transaction before it is broadcast.
    fn record<'a>(&'a self, tx: &'a SignedTx) -> JournalFuture<'a>;
    /// Records what became of a journaled transaction, and its block when it was mined.
    fn finished<'a>(
        &'a self,
        chain_id: u64,
        hash: TxHash,
        fate: TxFate,
        block: Option<u64>,
    ) -> JournalFuture<'a>;
    /// Journaled transactions of `chain_id` whose fate is not known yet, by nonce.
    fn unsettled<'a>(&'a self, chain_id: u64) -> UnsettledFuture<'a>;
}

/// What became of a journaled transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxFate {
    /// Mined and succeeded.
    Succeeded,
    /// Mined and reverted.
    Reverted,
    /// Refused by the node at broadcast; its nonce goes to a later transaction.
    Rejected,
}

impl TxFate {
    /// The journal's status for this fate.
    pub fn status(self) -> TxStatus {
        match self {
            TxFate::Succeeded => TxStatus::Succeeded,
            TxFate::Reverted => TxStatus::Reverted,
            TxFate::Rejected => TxStatus::Rejected,
        }
    }
}

/// A journal that keeps nothing (benchmarks of the chain alone, tests).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoJournal;

impl Journal for NoJournal {
    fn record<'a>(&'a self, _tx: &'a SignedTx) -> JournalFuture<'a> {
        Box::pin(async { Ok(()) })
    }
    fn unsettled<'a>(&'a self, _chain_id: u64) -> UnsettledFuture<'a> {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn finished<'a>(
        &'a self,
        _chain_id: u64,
        _hash: TxHash,
        _fate: TxFate,
        _block: Option<u64>,
    ) -> JournalFuture<'a> {
        Box::pin(async { Ok(()) })
    }
}

/// One debit pull to submit.
#[derive(Debug, Clone)]
pub struct PullRequest {
    /// The API's pull id (the intent).
    pub intent: String,
    /// On-chain session key id.
    pub key_id: B256,
    /// Destination wallet.
    pub destination: Address,
    /// Amount in token units.
    pub amount: U256,
    /// The agent's signature, for a key with a signer.
    pub agent: Option<AgentSignature>,
}

/// A key's agent's EIP-712 `DebitPull` signature of one pull.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSignature {
    /// The agent's nonce (each works once per key).
    pub nonce: U256,
    /// Last second (unix) it is good for.
    pub deadline: U256,
    /// The signature.
    pub signature: Bytes,
}
/// Why the chain declined a pull.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decline {
    /// The key is not on chain.
    UnknownKey,
    /// The key was revoked.
    KeyRevoked,
    /// The key expired.
    KeyExpired {
        /// When it expired (unix seconds).
        expires_at: u64,
    },
    /// The mandate is canceled.
    MandateNotActive,
    /// The destination is not allow-listed.
    DestinationNotAllowed,
    /// Above the key's ceiling this epoch.
    KeyCeilingExceeded {
        /// Token units left.
        remaining: U256,
        /// Unix seconds of the reset.
        resets_at: u64,
    },
    /// Above the mandate's ceiling this epoch.
    MandateCeilingExceeded {
        /// Token units left.
        remaining: U256,
        /// Unix seconds of the reset.
        resets_at: u64,
    },
    /// The token move failed (balance or allowance too low, router paused).
    TransferFailed,
    /// The key names an agent signer and the pull carried no signature.
    SignatureRequired,
    /// The agent's signature is not the key's signer's.
    SignatureInvalid,
    /// The agent's signature is past its deadline.
    SignatureExpired,
    /// The agent's nonce was used already.
    NonceUsed,
    /// The destination is the zero address or the contract itself.
    InvalidDestination,
    /// A reason this version does not know (raw revert data).
    Other(Bytes),
}

impl Decline {
    /// Decodes the custom error a declined item carries.
    pub fn decode(reason: &[u8]) -> Self {
        match AsmError::abi_decode(reason) {
            Ok(AsmError::UnknownKey(_)) => Decline::UnknownKey,
            Ok(AsmError::KeyRevoked(_)) => Decline::KeyRevoked,
            Ok(AsmError::KeyExpired(e)) => Decline::KeyExpired {
                expires_at: e.expiresAt,
            },
            Ok(AsmError::MandateNotActive(_) | AsmError::UnknownMandate(_)) => {
                Decline::MandateNotActive
            }
            Ok(AsmError::DestinationNotAllowed(_)) => Decline::DestinationNotAllowed,
            Ok(AsmError::KeyCeilingExceeded(e)) => Decline::KeyCeilingExceeded {
                remaining: e.remaining,
                resets_at: e.resetsAt,
            },
            Ok(AsmError::MandateCeilingExceeded(e)) => Decline::MandateCeilingExceeded {
                remaining: e.remaining,
                resets_at: e.resetsAt,
            },
            Ok(AsmError::TransferFailed(_)) => Decline::TransferFailed,
            Ok(AsmError::SignatureRequired(_)) => Decline::SignatureRequired,
            Ok(AsmError::InvalidSignature(_)) => Decline::SignatureInvalid,
            Ok(AsmError::SignatureExpired(_)) => Decline::SignatureExpired,
            Ok(AsmError::NonceAlreadyUsed(_)) => Decline::NonceUsed,
            Ok(AsmError::InvalidDestination(_)) => Decline::InvalidDestination,
            _ => Decline::Other(Bytes::copy_from_slice(reason)),
        }
    }
}

impl Decline {
    /// The reason the API records and answers.
    pub fn reason(&self) -> DeclineReason {
        match self {
            Decline::KeyRevoked => DeclineReason::SessionKeyRevoked,
            Decline::KeyExpired { .. } => DeclineReason::SessionKeyExpired,
            Decline::MandateNotActive => DeclineReason::MandateNotActive,
            Decline::DestinationNotAllowed | Decline::InvalidDestination => {
                DeclineReason::DestinationNotAllowed
            }
            Decline::SignatureRequired => DeclineReason::SignatureRequired,
            Decline::SignatureInvalid => DeclineReason::SignatureInvalid,
            Decline::SignatureExpired => DeclineReason::AuthorizationExpired,
            Decline::NonceUsed => DeclineReason::NonceUsed,
            Decline::KeyCeilingExceeded { .. } | Decline::MandateCeilingExceeded { .. } => {
                DeclineReason::AllowanceExceeded
            }
            // The token refused the move; which of balance, allowance or the token itself
            // is told by `diagnose::transfer_failure` where the caller can read the chain.
            Decline::TransferFailed => DeclineReason::TransferFailed,
            Decline::UnknownKey | Decline::Other(_) => DeclineReason::SessionKeyNotActive,
        }
    }
}

/// What happened to one pull.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PullOutcome {
    /// Allowance consumed and tokens moved, in this transaction.
    Authorized {
        /// The transaction.
        tx_hash: TxHash,
        /// Its block.
        block_number: u64,
    },
    /// Declined on chain.
    Declined {
        /// The transaction that carried the attempt.
        tx_hash: TxHash,
        /// Why.
        reason: Decline,
    },
}

impl PullOutcome {
    /// How the store records this outcome; `authorized_at` is when it was observed (unix ms).
    pub fn resolution(&self, authorized_at: i64) -> openrail_store::agentic::PullResolution {
        use openrail_store::agentic::{PullResolution, PullStatus};
        match self {
            PullOutcome::Authorized { tx_hash, .. } => PullResolution {
                status: PullStatus::Authorized,
                decline_code: None,
                remaining_token_units: None,
                resets_at_s: None,
                tx_hash: Some(tx_hash.to_string()),
                authorized_at: Some(authorized_at),
            },
            PullOutcome::Declined { tx_hash, reason } => {
                let (remaining, resets) = match reason {
                    Decline::KeyCeilingExceeded {
                        remaining,
                        resets_at,
                    }
                    | Decline::MandateCeilingExceeded {
                        remaining,
                        resets_at,
                    } => (
                        Some(u128::try_from(*remaining).unwrap_or(u128::MAX)),
                        Some(*resets_at as i64),
                    ),
                    _ => (None, None),
                };
                PullResolution {
                    status: PullStatus::Declined,
                    decline_code: Some(reason.reason()),
                    remaining_token_units: remaining,
                    resets_at_s: resets,
                    tx_hash: Some(tx_hash.to_string()),
                    authorized_at: None,
                }
            }
        }
    }
}

/// A mined operator transaction.
#[derive(Debug, Clone)]
pub struct Mined {
    /// Hash.
    pub tx_hash: TxHash,
    /// Block.
    pub block_number: u64,
    /// Whether it succeeded.
    pub success: bool,
}

enum Job {
    Pull(
        PullRequest,
        oneshot::Sender<Result<PullOutcome, ChainError>>,
    ),
    Call {
        to: Address,
        input: Bytes,
        kind: TxKind,
        intent: String,
        reply: oneshot::Sender<Result<Mined, ChainError>>,
    },
}

enum Waiters {
    Pulls(Vec<oneshot::Sender<Result<PullOutcome, ChainError>>>),
    Call(oneshot::Sender<Result<Mined, ChainError>>),
    /// Rebroadcast after a restart: nobody waits; the relayer's watcher applies the outcome.
    Nobody,
}

struct InFlight {
    hash: TxHash,
    waiters: Waiters,
}

/// Handle on a chain's submitter task; cheap to clone.
#[derive(Clone)]
pub struct Submitter {
    jobs: mpsc::Sender<Job>,
    asm: Address,
    chain_id: u64,
}

impl std::fmt::Debug for Submitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Submitter")
            .field("chain_id", &self.chain_id)
            .field("asm", &self.asm)
            .finish()
    }
}

impl Submitter {
    /// Starts the submitter of the chain at `rpc_url`, signing as `operator`; `asm` is the
    /// allowance state machine that pulls go to.
    pub async fn start(
        rpc_url: &Url,
        operator: PrivateKeySigner,
        asm: Address,
        journal: Arc<dyn Journal>,
    ) -> Result<Self, ChainError> {
        let provider = ProviderBuilder::new()
            .connect_http(rpc_url.clone())
            .erased();
        let chain_id = provider.get_chain_id().await?;
        let from = operator.address();
        let (jobs_tx, jobs_rx) = mpsc::channel(4096);
        let (flight_tx, flight_rx) = mpsc::unbounded_channel();
        let nonce = recover(&provider, chain_id, from, journal.as_ref(), &flight_tx).await?;
        let sender = Sender {
            fees: None,
            provider: provider.clone(),
            wallet: EthereumWallet::from(operator),
            from,
            chain_id,
            nonce,
            asm,
            journal: journal.clone(),
        };
        tokio::spawn(sender.run(jobs_rx, flight_tx));
        tokio::spawn(collect_receipts(
            provider, asm, chain_id, journal, flight_rx,
        ));
        Ok(Self {
            jobs: jobs_tx,
            asm,
            chain_id,
        })
    }

    /// The chain id.
    pub fn chain_id(&self) -> u64 {
        self.chain_id
    }

    /// Submits a pull and waits for its own outcome (batched with concurrent pulls).
    pub async fn pull(&self, req: PullRequest) -> Result<PullOutcome, ChainError> {
        let (tx, rx) = oneshot::channel();
        self.jobs
            .send(Job::Pull(req, tx))
            .await
            .map_err(|_| ChainError::SubmitterStopped)?;
        rx.await.map_err(|_| ChainError::SubmitterStopped)?
    }

    /// Sends an operator call to the allowance state machine and waits until it is mined.
    pub async fn call_asm<C: SolCall>(
        &self,
        call: C,
        kind: TxKind,
        intent: &str,
    ) -> Result<Mined, ChainError> {
        self.call(self.asm, call, kind, intent).await
    }

    /// Sends an operator call to contract `to` (the router, …) and waits until it is mined.
    pub async fn call<C: SolCall>(
        &self,
        to: Address,
        call: C,
        kind: TxKind,
        intent: &str,
    ) -> Result<Mined, ChainError> {
        self.call_raw(to, call.abi_encode().into(), kind, intent)
            .await
    }

    /// [`Submitter::call`] with the call already ABI-encoded.
    pub async fn call_raw(
        &self,
        to: Address,
        input: Bytes,
        kind: TxKind,
        intent: &str,
    ) -> Result<Mined, ChainError> {
        let (tx, rx) = oneshot::channel();
        let job = Job::Call {
            to,
            input,
            kind,
            intent: intent.to_string(),
            reply: tx,
        };
        self.jobs
            .send(job)
            .await
            .map_err(|_| ChainError::SubmitterStopped)?;
        rx.await.map_err(|_| ChainError::SubmitterStopped)?
    }
}

struct Sender {
    /// The last fee estimate and when it was made (see [`FEE_TTL`]).
    fees: Option<(alloy::eips::eip1559::Eip1559Estimation, std::time::Instant)>,
    provider: DynProvider,
    wallet: EthereumWallet,
    from: Address,
    chain_id: u64,
    nonce: u64,
    asm: Address,
    journal: Arc<dyn Journal>,
}

impl Sender {
    async fn run(
        mut self,
        mut jobs: mpsc::Receiver<Job>,
        flights: mpsc::UnboundedSender<InFlight>,
    ) {
        let mut backlog: VecDeque<Job> = VecDeque::new();
        loop {
            let first = match backlog.pop_front() {
                Some(j) => j,
                None => match jobs.recv().await {
                    Some(j) => j,
                    None => return,
                },
            };
            match first {
                Job::Call {
                    to,
                    input,
                    kind,
                    intent,
                    reply,
                } => {
                    let gas = GAS_OTHER;
                    match self.send(to, input, gas, kind, vec![intent]).await {
                        Ok(hash) => {
                            let _ = flights.send(InFlight {
                                hash,
                                waiters: Waiters::Call(reply),
                            });
                        }
                        Err(e) => {
                            let _ = reply.send(Err(e));
                        }
                    }
                }
                Job::Pull(req, reply) => {
                    // Everything that queued while the previous transaction was sent joins
                    // this batch; other jobs wait their turn.
                    let mut pulls = vec![(req, reply)];
                    while pulls.len() < MAX_BATCH {
                        match jobs.try_recv() {
                            Ok(Job::Pull(r, tx)) => pulls.push((r, tx)),
                            Ok(other) => backlog.push_back(other),
                            Err(_) => break,
                        }
                    }
                    let items: Vec<batch::Item<'_>> = pulls
                        .iter()
                        .map(|(r, _)| batch::Item {
                            key_id: r.key_id,
                            destination: r.destination,
                            amount: r.amount,
                            agent: r.agent.as_ref().map(|a| batch::Signed {
                                nonce: a.nonce,
                                deadline: a.deadline,
                                signature: &a.signature,
                            }),
                        })
                        .collect();
                    let signed = pulls.iter().filter(|(r, _)| r.agent.is_some()).count() as u64;
                    let intents = pulls.iter().map(|(r, _)| r.intent.clone()).collect();
                    let input: Bytes = AllowanceStateMachine::pullBatchCall {
                        items: batch::encode(&items),
                    }
                    .abi_encode()
                    .into();
                    let gas = 60_000
                        + GAS_TOKEN_RESERVE
                        + GAS_PER_PULL * pulls.len() as u64
                        + GAS_PER_SIGNED_PULL * signed;
                    let (_, replies): (Vec<_>, Vec<_>) = pulls.into_iter().unzip();
                    match self
                        .send(self.asm, input, gas, TxKind::PullBatch, intents)
                        .await
                    {
                        Ok(hash) => {
                            let _ = flights.send(InFlight {
                                hash,
                                waiters: Waiters::Pulls(replies),
                            });
                        }
                        Err(e) => {
                            let lease_lost = matches!(e, ChainError::LeaseLost);
                            let msg = e.to_string();
                            for r in replies {
                                let _ = r.send(Err(if lease_lost {
                                    ChainError::LeaseLost
                                } else {
                                    ChainError::Submit(msg.clone())
                                }));
                            }
                        }
                    }
                }
            }
        }
    }

    /// Signs, journals and broadcasts one transaction with the next nonce.
    async fn send(
        &mut self,
        to: Address,
        input: Bytes,
        gas: u64,
        kind: TxKind,
        intents: Vec<String>,
    ) -> Result<TxHash, ChainError> {
        openrail_store::stages::mark("batched", intents.iter().map(String::as_str));
        let fees = match self.fees {
            Some((fees, at)) if at.elapsed() < FEE_TTL => fees,
            _ => {
                let fees = self.provider.estimate_eip1559_fees().await?;
                self.fees = Some((fees, std::time::Instant::now()));
                fees
            }
        };
        let request = TransactionRequest::default()
            .with_from(self.from)
            .with_to(to)
            .with_input(input)
            .with_nonce(self.nonce)
            .with_chain_id(self.chain_id)
            .with_gas_limit(gas)
            .with_max_fee_per_gas(fees.max_fee_per_gas)
            .with_max_priority_fee_per_gas(fees.max_priority_fee_per_gas);
        let envelope: TxEnvelope = request
            .build(&self.wallet)
            .await
            .map_err(|e| ChainError::Submit(format!("signing: {e}")))?;
        let signed = SignedTx {
            chain_id: self.chain_id,
            nonce: self.nonce,
            hash: *envelope.tx_hash(),
            raw: envelope.encoded_2718().into(),
            kind,
            intents,
        };
        self.journal.record(&signed).await.map_err(|e| {
            if e.downcast_ref::<NotLeaseHolder>().is_some() {
                ChainError::LeaseLost
            } else {
                ChainError::Journal(e.to_string())
            }
        })?;
        // The nonce is spent once the transaction is journaled: a crash from here on
        // rebroadcasts these exact bytes.
        self.nonce += 1;
        openrail_store::stages::mark("journaled", signed.intents.iter().map(String::as_str));
        crash::point(crash::AFTER_NONCE_ALLOCATION);
        if let Err(e) = self.provider.send_raw_transaction(&signed.raw).await {
            if let Err(je) = self
                .journal
                .finished(self.chain_id, signed.hash, TxFate::Rejected, None)
                .await
            {
                tracing::error!(error = %je, hash = %signed.hash, "journaling a rejected transaction failed");
            }
            // A definite rejection (nonce too low after an outside transaction, fee too
            // low, …): resync the nonce from the chain so the next transaction does not
            // jam, and estimate fees anew.
            self.fees = None;
            if let Ok(n) = self
                .provider
                .get_transaction_count(self.from)
                .pending()
                .await
            {
                self.nonce = n;
            }
            return Err(e.into());
        }
        openrail_store::stages::mark("broadcast", signed.intents.iter().map(String::as_str));
        crash::point(crash::AFTER_BROADCAST);
        Ok(signed.hash)
    }
}

/// After a restart: rebroadcasts the exact bytes of every journaled transaction whose fate
/// is unknown (so an intent never gets a second transaction and no nonce stays jammed),
/// settles those already mined, and returns the next nonce to use.
async fn recover(
    provider: &DynProvider,
    chain_id: u64,
    from: Address,
    journal: &dyn Journal,
    flights: &mpsc::UnboundedSender<InFlight>,
) -> Result<u64, ChainError> {
    let journaled = journal
        .unsettled(chain_id)
        .await
        .map_err(|e| ChainError::Journal(e.to_string()))?;
    let mined_count = provider.get_transaction_count(from).await?;
    let mut next = provider.get_transaction_count(from).pending().await?;
    for tx in journaled {
        if let Some(receipt) = provider.get_transaction_receipt(tx.hash).await? {
            let fate = if receipt.status() {
                TxFate::Succeeded
            } else {
                TxFate::Reverted
            };
            journal
                .finished(chain_id, tx.hash, fate, receipt.block_number)
                .await
                .map_err(|e| ChainError::Journal(e.to_string()))?;
            continue;
        }
        if tx.nonce < mined_count {
            // Its nonce went to another transaction: it can never be mined.
            journal
                .finished(chain_id, tx.hash, TxFate::Rejected, None)
                .await
                .map_err(|e| ChainError::Journal(e.to_string()))?;
            continue;
        }
        match provider.send_raw_transaction(&tx.raw).await {
            Ok(_) => {
                tracing::info!(chain_id, nonce = tx.nonce, hash = %tx.hash, "rebroadcast a journaled transaction")
            }
            // "already known": the node has it in its pool; the receipt will come.
            Err(e) => {
                tracing::warn!(chain_id, nonce = tx.nonce, hash = %tx.hash, error = %e, "rebroadcast refused")
            }
        }
        next = next.max(tx.nonce + 1);
        let _ = flights.send(InFlight {
            hash: tx.hash,
            waiters: Waiters::Nobody,
        });
    }
    Ok(next)
}

/// Polls receipts of in-flight transactions and resolves their waiters.
async fn collect_receipts(
    provider: DynProvider,
    asm: Address,
    chain_id: u64,
    journal: Arc<dyn Journal>,
    mut flights: mpsc::UnboundedReceiver<InFlight>,
) {
    let mut pending: VecDeque<InFlight> = VecDeque::new();
    loop {
        if pending.is_empty() {
            match flights.recv().await {
                Some(f) => pending.push_back(f),
                None => return,
            }
        }
        while let Ok(f) = flights.try_recv() {
            pending.push_back(f);
        }
        let mut still = VecDeque::with_capacity(pending.len());
        let mut progressed = false;
        for flight in pending.drain(..) {
            match provider.get_transaction_receipt(flight.hash).await {
                Ok(Some(receipt)) => {
                    progressed = true;
                    let fate = if receipt.status() {
                        TxFate::Succeeded
                    } else {
                        TxFate::Reverted
                    };
                    // Pull outcomes are told first: recording them needs nothing from the
                    // journal's fate, and a crash before the fate is written leaves the
                    // transaction `signed`, settled from its receipt at the next start. A
                    // call's caller may read the fate (a failure is recorded only when no
                    // live transaction is left), so it hears after it is written.
                    let (hash, block) = (flight.hash, receipt.block_number);
                    let finished = {
                        let journal = journal.clone();
                        async move {
                            if let Err(e) = journal.finished(chain_id, hash, fate, block).await {
                                tracing::error!(error = %e, %hash, "journaling a mined transaction failed");
                            }
                        }
                    };
                    match flight.waiters {
                        // Nor does the next receipt wait for this fate's write.
                        w @ Waiters::Pulls(_) => {
                            resolve(w, &receipt, asm);
                            tokio::spawn(finished);
                        }
                        other => {
                            finished.await;
                            resolve(other, &receipt, asm);
                        }
                    }
                }
                Ok(None) => still.push_back(flight),
                Err(e) => {
                    tracing::warn!(error = %e, hash = %flight.hash, "receipt poll failed");
                    still.push_back(flight);
                }
            }
        }
        pending = still;
        if !progressed && !pending.is_empty() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
}

fn resolve(waiters: Waiters, receipt: &TransactionReceipt, asm: Address) {
    let tx_hash = receipt.transaction_hash;
    let block_number = receipt.block_number.unwrap_or_default();
    match waiters {
        Waiters::Nobody => {}
        Waiters::Call(reply) => {
            let _ = reply.send(Ok(Mined {
                tx_hash,
                block_number,
                success: receipt.status(),
            }));
        }
        Waiters::Pulls(replies) => {
            if !receipt.status() {
                for r in replies {
                    let _ = r.send(Err(ChainError::Reverted(tx_hash)));
                }
                return;
            }
            let outcomes: Vec<PullOutcome> = receipt
                .inner
                .logs()
                .iter()
                .filter(|l| l.address() == asm)
                .filter_map(|l| match l.topics().first() {
                    Some(t) if *t == AllowanceStateMachine::DebitPulled::SIGNATURE_HASH => {
                        Some(PullOutcome::Authorized {
                            tx_hash,
                            block_number,
                        })
                    }
                    Some(t) if *t == AllowanceStateMachine::DebitPullDeclined::SIGNATURE_HASH => {
                        let reason =
                            AllowanceStateMachine::DebitPullDeclined::decode_log_data(l.data())
                                .map(|e| Decline::decode(&e.reason))
                                .unwrap_or(Decline::Other(Bytes::new()));
                        Some(PullOutcome::Declined { tx_hash, reason })
                    }
                    _ => None,
                })
                .collect();
            if outcomes.len() != replies.len() {
                for r in replies {
                    let _ = r.send(Err(ChainError::Submit(format!(
                        "batch {tx_hash} has {} outcomes for its items",
                        outcomes.len()
                    ))));
                }
                return;
            }
            for (r, o) in replies.into_iter().zip(outcomes) {
                let _ = r.send(Ok(o));
            }
        }
    }
}
