//! The per-chain submitter: the only writer of the operator's transactions on a chain.
//!
//! - It assigns nonces itself (one task owns the counter) and never waits for a receipt
//!   before sending the next transaction; a separate task collects receipts.
//! - Each transaction is signed locally and handed to the [`Journal`] (persisted) before it
//!   is broadcast, so after a crash the same raw bytes can be rebroadcast: never two
//!   transactions for one intent.
//! - A transaction carries its intents ([`Intent`]: the objects, or a payment's or payout's
//!   leg, it acts on), which the journal stores with it.
//! - Debit pulls that arrive while a transaction is being sent are batched into one
//!   `pullBatch`; each waiting request is resolved with its own item's outcome, read from
//!   the receipt's `DebitPulled` / `DebitPullDeclined` logs (one per item, in order).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use alloy::consensus::TxEnvelope;
use alloy::eips::eip2718::Encodable2718;
use alloy::network::{EthereumWallet, NetworkTransactionBuilder, TransactionBuilder};
use alloy::primitives::{Address, B256, Bytes, TxHash, U256};
use alloy::providers::{DynProvider, Provider};
use alloy::rpc::types::{TransactionReceipt, TransactionRequest};
use alloy::signers::local::PrivateKeySigner;
use alloy::sol_types::{SolCall, SolEvent, SolInterface};
use alloy::transports::http::reqwest::Url;
use openrail_domain::crash;
use openrail_domain::journal::TxStatus;
use tokio::sync::{mpsc, oneshot};

use crate::batch;
use crate::bindings::AllowanceStateMachine::{self, AllowanceStateMachineErrors as AsmError};
use crate::fees::{self, Fees};
use crate::packing::{self, InFlight, Packing};
use crate::{ChainError, Refusal};
use openrail_domain::PullId;
use openrail_domain::journal::{Intent, TxKind};
use openrail_domain::pulls::DeclineReason;

/// Most items in one `pullBatch` (its calldata, 61 bytes an item, stays well under the
/// 128 KiB a node's pool takes).
pub const MAX_BATCH: usize = 1024;
/// Gas budget per batch item (a pull costs well under this): the limit of a batch whose
/// estimate failed, and the bound on any estimate.
const GAS_PER_PULL: u64 = 90_000;
/// Extra budget of an agent-signed item: hashing and recovery, or a contract wallet's
/// ERC-1271 check (bounded on chain to 100,000).
const GAS_PER_SIGNED_PULL: u64 = 120_000;
/// Gas the contract requires left before a token call (`TOKEN_CALL_RESERVE`, with margin):
/// a batch whose last item found less would revert rather than blame the token.
const GAS_TOKEN_RESERVE: u64 = 110_000;
/// Gas for any other operator transaction (allow-lists are bounded by the API).
const GAS_OTHER: u64 = 1_500_000;

/// Batches sized by the refund bound after a batch needed more than [`tight_limit`].
const GUESS_PAUSE: u32 = 16;

/// The fewest items of a batch whose gas an item is learnt from (see `Sender::learn`).
const LEARN_FROM: u64 = 16;

/// A limit that covers any execution that used `used` gas after refunds: refunds pay back
/// at most a fifth of what was spent, so the execution needed at most a quarter more, and
/// the reserve the contract keeps before each token call.
fn refund_bound(used: u64) -> u64 {
    used.saturating_add(used / 4)
        .saturating_add(GAS_TOKEN_RESERVE + 10_000)
}

/// The limit a batch of `items` is tried at first: what an item of the last batch used,
/// a tenth more (the node's trial runs with the access list it built, which makes each
/// first touch of an address or slot 100 gas cheaper than the transaction sent without
/// it), the transaction's own overhead ([`GAS_BATCH_OVERHEAD`]), and the reserve the
/// contract keeps before each token call. A block is filled by
/// limits: at the refund bound (a quarter more than the use) a block held at most four
/// fifths of the pulls its gas could settle.
fn tight_limit(item_gas: u64, items: u64) -> u64 {
    item_gas.saturating_mul(items).saturating_mul(11) / 10
        + GAS_BATCH_OVERHEAD
        + GAS_TOKEN_RESERVE
        + 10_000
}

/// A batch transaction's own gas, which an item learnt from a full batch barely carries:
/// 21,000, the calldata's and the batch's first touches of the contract, the token and
/// the key. A lone pull uses ~57,000, ~48,500 more than an item of a full batch (`bench
/// gas`); without it the guess for a batch of 16–22 items ran short (the contract's
/// `InsufficientGas` before the last token call, seen in `bench pulls`) and sent the
/// batches after it at the refund bound.
const GAS_BATCH_OVERHEAD: u64 = 50_000;

/// Gas a batch that closes a block leaves free beyond its own limit: what the prediction
/// of the transactions in flight may be short by (see [`packing`]).
const CLOSING_MARGIN: u64 = 60_000;

/// The fewest pulls a batch that closes a block carries: below that, what is left of the
/// block stays empty and the batch starts the next.
const CLOSING_FEWEST: usize = 4;

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
    /// The intents it carries, in item order.
    pub intents: Vec<Intent>,
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
    /// What it does.
    pub kind: TxKind,
    /// The intents it carries.
    pub intents: Vec<Intent>,
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
    /// A mined transaction left the chain (a reorganisation shallower than the depth):
    /// its fate is unknown again and what it did is undone until it is mined anew.
    fn reorged<'a>(&'a self, chain_id: u64, hash: TxHash) -> JournalFuture<'a>;
}

/// What became of a journaled transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxFate {
    /// Mined and succeeded.
    Succeeded,
    /// Mined and reverted.
    Reverted,
    /// Never mined and nothing else carries its work: refused by the node at broadcast
    /// (its nonce goes to a later transaction), or its nonce taken by a cancellation or an
    /// outside transaction.
    Rejected,
    /// Never mined, and another journaled transaction carries its work (a variant of its
    /// nonce with other fees, or the work re-sent under a new nonce).
    Replaced,
}

impl TxFate {
    /// The journal's status for this fate.
    pub fn status(self) -> TxStatus {
        match self {
            TxFate::Succeeded => TxStatus::Succeeded,
            TxFate::Reverted => TxStatus::Reverted,
            TxFate::Rejected => TxStatus::Rejected,
            TxFate::Replaced => TxStatus::Replaced,
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
    fn reorged<'a>(&'a self, _chain_id: u64, _hash: TxHash) -> JournalFuture<'a> {
        Box::pin(async { Ok(()) })
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
    /// The API's pull (its item's intent is [`Intent::Pull`]).
    pub pull: PullId,
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
    /// The payer or the key's signer (`subject`) holds no valid attestation the mandate
    /// requires.
    IdentityRequirementUnmet {
        /// Who lacks it.
        subject: Address,
    },
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
            Ok(AsmError::IdentityRequirementUnmet(e)) => {
                Decline::IdentityRequirementUnmet { subject: e.subject }
            }
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
            Decline::IdentityRequirementUnmet { .. } => DeclineReason::IdentityRequirementUnmet,
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
    pub fn resolution(&self, authorized_at: i64) -> openrail_domain::pulls::PullResolution {
        use openrail_domain::{PullResolution, PullStatus};
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

/// How the submitter treats transactions that are not mined.
#[derive(Debug, Clone)]
pub struct SubmitterOptions {
    /// A transaction with no receipt this long after its newest variant was sent is
    /// replaced with higher fees (a few of the chain's block times).
    pub replace_after: Duration,
    /// The highest `maxFeePerGas` (wei) the submitter signs for work; a transaction that
    /// would need more is cancelled. `None`: no cap.
    pub fee_cap: Option<u128>,
    /// A transaction with no receipt this long after it was first sent is cancelled.
    /// `None`: never for time alone.
    pub cancel_after: Option<Duration>,
    /// How often transactions older than this are looked at: known to the node (else
    /// rebroadcast), their nonce taken by another transaction, underpriced.
    pub check_every: Duration,
    /// Longest pause between receipt polls while transactions are in flight (the pause
    /// starts at a millisecond and doubles while nothing is mined).
    pub max_poll: Duration,
    /// Below this balance (wei) the operator's account is reported (a warning each look,
    /// every [`BALANCE_EVERY`]); [`Submitter::operator_balance`] tells the last one seen.
    pub balance_floor: Option<u128>,
    /// Most gas one `pullBatch` may use: batches are sized by it (from the gas an item
    /// took in the last estimate), not by a fixed count, so that several fit a block. The
    /// submitter lowers it to a sixteenth of the latest block's gas limit when it starts.
    pub max_batch_gas: u64,
    /// The chain's confirmation depth: a mined transaction is watched until it is this
    /// many blocks deep, and one a reorganisation takes out before then is undone
    /// ([`Journal::reorged`]) and sent again (the same bytes; replaced as any other).
    pub depth: u64,
    /// Watched until the chain's `safe` or `finalized` block passes them instead, when
    /// given.
    pub depth_tag: Option<crate::rpc::DepthTag>,
}

impl Default for SubmitterOptions {
    fn default() -> Self {
        Self {
            replace_after: Duration::from_secs(36),
            fee_cap: None,
            cancel_after: None,
            check_every: Duration::from_secs(2),
            max_poll: Duration::from_millis(100),
            max_batch_gas: 12_000_000,
            balance_floor: None,
            depth: 0,
            depth_tag: None,
        }
    }
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
        intent: Intent,
        reply: oneshot::Sender<Result<Mined, ChainError>>,
    },
    /// Work whose nonce an outside transaction took: sent again under a new nonce, then
    /// its old variants are marked replaced.
    Resend {
        payload: Payload,
        waiters: Waiters,
        old: Vec<TxHash>,
    },
}

enum Waiters {
    Pulls(Vec<oneshot::Sender<Result<PullOutcome, ChainError>>>),
    Call(oneshot::Sender<Result<Mined, ChainError>>),
    /// Rebroadcast after a restart: nobody waits; the relayer's watcher applies the outcome.
    Nobody,
}

impl Waiters {
    fn fail(self, error: impl Fn() -> ChainError) {
        match self {
            Waiters::Pulls(replies) => {
                for r in replies {
                    let _ = r.send(Err(error()));
                }
            }
            Waiters::Call(reply) => {
                let _ = reply.send(Err(error()));
            }
            Waiters::Nobody => {}
        }
    }
}

/// What a transaction does, unsigned: enough to sign it again with other fees or under
/// another nonce.
#[derive(Debug, Clone)]
struct Payload {
    to: Address,
    input: Bytes,
    gas: u64,
    kind: TxKind,
    intents: Vec<Intent>,
}

/// One signed variant of a nonce.
#[derive(Debug, Clone)]
struct Variant {
    hash: TxHash,
    raw: Bytes,
    fees: Fees,
    /// A zero-value self-send taking the nonce from the work.
    cancel: bool,
    /// Refused by the node at broadcast: never the one rebroadcast. Still polled, and left
    /// `signed` in the journal until its nonce resolves: with several RPC URLs, a variant
    /// one node refused may have reached another and be mined.
    refused: bool,
}

/// A nonce in flight: its work, every variant signed for it, who waits.
struct Flight {
    nonce: u64,
    payload: Payload,
    variants: Vec<Variant>,
    first_sent: Instant,
    last_sent: Instant,
    waiters: Waiters,
    /// What its trial run used, when it had one (see [`Core::trial_excess`]).
    trial: Option<u64>,
}

impl Flight {
    fn newest(&self) -> &Variant {
        self.variants
            .iter()
            .rev()
            .find(|v| !v.refused)
            .unwrap_or_else(|| self.variants.last().expect("a flight has a variant"))
    }
    /// The highest fees signed for this nonce (a replacement must beat them all).
    fn floor(&self) -> Fees {
        self.variants
            .iter()
            .fold(Fees { max_fee: 0, tip: 0 }, |a, v| Fees {
                max_fee: a.max_fee.max(v.fees.max_fee),
                tip: a.tip.max(v.fees.tip),
            })
    }
    fn canceling(&self) -> bool {
        self.variants.iter().any(|v| v.cancel)
    }
}

/// How often the operator's balance is read.
pub const BALANCE_EVERY: Duration = Duration::from_secs(30);

/// Handle on a chain's submitter task; cheap to clone.
#[derive(Clone)]
pub struct Submitter {
    jobs: mpsc::Sender<Job>,
    asm: Address,
    chain_id: u64,
    /// The operator's key, for what the operator signs besides its transactions (an
    /// attester's receipts for the settlement chain's attestation mirror).
    signer: PrivateKeySigner,
    balance: Arc<std::sync::Mutex<Option<U256>>>,
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
    /// allowance state machine that pulls go to. Default [`SubmitterOptions`].
    pub async fn start(
        rpc_url: &Url,
        operator: PrivateKeySigner,
        asm: Address,
        journal: Arc<dyn Journal>,
    ) -> Result<Self, ChainError> {
        let provider = crate::rpc::connect(std::slice::from_ref(rpc_url), &Default::default())?;
        Self::start_with(
            provider,
            operator,
            asm,
            journal,
            SubmitterOptions::default(),
        )
        .await
    }

    /// [`Submitter::start`] on `provider` with `options`.
    pub async fn start_with(
        provider: DynProvider,
        operator: PrivateKeySigner,
        asm: Address,
        journal: Arc<dyn Journal>,
        options: SubmitterOptions,
    ) -> Result<Self, ChainError> {
        let chain_id = provider.get_chain_id().await?;
        let from = operator.address();
        let signer = operator.clone();
        let (jobs_tx, jobs_rx) = mpsc::channel(4096);
        let (flight_tx, flight_rx) = mpsc::unbounded_channel();
        let core = Arc::new(Core {
            provider,
            wallet: EthereumWallet::from(operator),
            from,
            chain_id,
            journal,
            mined_below: Default::default(),
            others_gas: Default::default(),
            trial_excess: Default::default(),
        });
        let nonce = recover(&core, &flight_tx).await?;
        // A block holds a prefix of the operator's nonces: the first batch that does not
        // fit (a node admits a transaction while the gas used so far plus its limit stays
        // within the block's) waits for the next block with every later one behind it, and
        // what it left of the block stays empty: up to one batch's limit. Measured at 1 s
        // blocks of 30M gas, the blocks between a run's first and last used 72 % of their
        // gas with batches of 1,024 pulls, 85-90 % with batches of an eighth of the block
        // (~437 pulls) and 94-97 % with a sixteenth (~218; a pull costs ~1 % more gas in
        // them): 30,000 pulls settled at 88 % of the batched ceiling instead of 80 %.
        let block_gas = core
            .provider
            .get_block_by_number(alloy::eips::BlockNumberOrTag::Latest)
            .await?
            .map(|b| b.header.gas_limit);
        let max_batch_gas = match block_gas {
            Some(g) => options.max_batch_gas.min(g / 16),
            None => options.max_batch_gas,
        };
        let sender = Sender {
            fees: None,
            core: core.clone(),
            nonce,
            asm,
            fee_cap: options.fee_cap,
            learnt_item_gas: None,
            guess_after: 0,
            max_batch_gas,
            block_gas,
            packing: Packing::default(),
        };
        tokio::spawn(sender.run(jobs_rx, flight_tx));
        let balance: Arc<std::sync::Mutex<Option<U256>>> = Default::default();
        tokio::spawn(watch_balance(
            core.clone(),
            options.balance_floor,
            balance.clone(),
            jobs_tx.downgrade(),
        ));
        tokio::spawn(track(core, asm, options, flight_rx, jobs_tx.clone()));
        Ok(Self {
            jobs: jobs_tx,
            asm,
            chain_id,
            signer,
            balance,
        })
    }

    /// The operator's balance (wei) when last read (every [`BALANCE_EVERY`]); `None` before
    /// the first read succeeds.
    pub fn operator_balance(&self) -> Option<U256> {
        *self.balance.lock().expect("balance lock")
    }

    /// The chain id.
    pub fn chain_id(&self) -> u64 {
        self.chain_id
    }

    /// The operator's address.
    pub fn operator(&self) -> Address {
        self.signer.address()
    }

    /// The operator's signature of `receipt` for the attestation mirror at `mirror` on chain
    /// `mirror_chain_id` (the operator is the attester of the attestations it sends).
    pub async fn sign_receipt(
        &self,
        receipt: &crate::attestations::AttestationReceipt,
        mirror_chain_id: u64,
        mirror: Address,
    ) -> Result<Bytes, ChainError> {
        crate::attestations::sign_receipt(&self.signer, receipt, mirror_chain_id, mirror).await
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
        intent: &Intent,
    ) -> Result<Mined, ChainError> {
        self.call(self.asm, call, kind, intent).await
    }

    /// Sends an operator call to contract `to` (the router, …) and waits until it is mined.
    pub async fn call<C: SolCall>(
        &self,
        to: Address,
        call: C,
        kind: TxKind,
        intent: &Intent,
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
        intent: &Intent,
    ) -> Result<Mined, ChainError> {
        let (tx, rx) = oneshot::channel();
        let job = Job::Call {
            to,
            input,
            kind,
            intent: intent.clone(),
            reply: tx,
        };
        self.jobs
            .send(job)
            .await
            .map_err(|_| ChainError::SubmitterStopped)?;
        rx.await.map_err(|_| ChainError::SubmitterStopped)?
    }
}

/// What the sender and the tracker share: the chain, the operator's key, the journal.
struct Core {
    provider: DynProvider,
    wallet: EthereumWallet,
    from: Address,
    chain_id: u64,
    journal: Arc<dyn Journal>,
    /// Every nonce below this is known mined (the tracker raises it; the sender's
    /// [`Packing`] drops what is below).
    mined_below: std::sync::atomic::AtomicU64,
    /// Gas that others' transactions used in the last block the tracker read: what a block
    /// is predicted to leave the operator is the rest.
    others_gas: std::sync::atomic::AtomicU64,
    /// What the last mined batch's trial run used beyond what the batch itself used. The
    /// trial (`eth_createAccessList`) runs with the access list it built, which changes
    /// what first touches cost; on anvil the bench's batches used 5,331 gas less than their
    /// trials said, whatever their size.
    trial_excess: std::sync::atomic::AtomicI64,
}

impl Core {
    /// Signs `payload` at `nonce` with `fees` and journals it (before any broadcast).
    async fn sign_and_record(
        &self,
        payload: &Payload,
        nonce: u64,
        fees: Fees,
        cancel: bool,
    ) -> Result<Variant, ChainError> {
        let mut request = TransactionRequest::default()
            .with_from(self.from)
            .with_nonce(nonce)
            .with_chain_id(self.chain_id)
            .with_max_fee_per_gas(fees.max_fee)
            .with_max_priority_fee_per_gas(fees.tip);
        request = if cancel {
            request
                .with_to(self.from)
                .with_value(U256::ZERO)
                .with_gas_limit(21_000)
        } else {
            request
                .with_to(payload.to)
                .with_input(payload.input.clone())
                .with_gas_limit(payload.gas)
        };
        let envelope: TxEnvelope = request
            .build(&self.wallet)
            .await
            .map_err(|e| ChainError::Submit(format!("signing: {e}")))?;
        let signed = SignedTx {
            chain_id: self.chain_id,
            nonce,
            hash: *envelope.tx_hash(),
            raw: envelope.encoded_2718().into(),
            kind: if cancel {
                TxKind::CancelNonce
            } else {
                payload.kind
            },
            intents: if cancel {
                Vec::new()
            } else {
                payload.intents.clone()
            },
        };
        self.journal.record(&signed).await.map_err(|e| {
            if e.downcast_ref::<NotLeaseHolder>().is_some() {
                ChainError::LeaseLost
            } else {
                ChainError::Journal(e.to_string())
            }
        })?;
        Ok(Variant {
            hash: signed.hash,
            raw: signed.raw,
            fees,
            cancel,
            refused: false,
        })
    }

    /// Broadcasts `raw`; what an error means for it.
    async fn broadcast(&self, raw: &Bytes) -> Result<(), Refusal> {
        match self.provider.send_raw_transaction(raw).await {
            Ok(_) => Ok(()),
            Err(e) => Err(Refusal::classify(&e)),
        }
    }

    /// Whether the node has `hash`, pending or mined (a failed lookup says no).
    async fn knows(&self, hash: TxHash) -> bool {
        matches!(
            self.provider.get_transaction_by_hash(hash).await,
            Ok(Some(_))
        )
    }

    /// Records `fate` for `hash`, logging a failure (the transaction stays `signed` and is
    /// settled at the next start).
    async fn finished(&self, hash: TxHash, fate: TxFate, block: Option<u64>) {
        if let Err(e) = self
            .journal
            .finished(self.chain_id, hash, fate, block)
            .await
        {
            tracing::error!(error = %e, %hash, ?fate, "journaling a transaction's fate failed");
        }
    }

    /// The receipt of whichever variant of `variants` was mined, with its index (refused
    /// ones too: see [`Variant::refused`]).
    async fn mined_variant(
        &self,
        variants: &[Variant],
    ) -> Result<Option<(usize, TransactionReceipt)>, ChainError> {
        for (i, v) in variants.iter().enumerate() {
            if let Some(r) = self.provider.get_transaction_receipt(v.hash).await? {
                return Ok(Some((i, r)));
            }
        }
        Ok(None)
    }
}

struct Sender {
    /// The last fee estimate and when it was made (see [`FEE_TTL`]).
    fees: Option<(Fees, Instant)>,
    core: Arc<Core>,
    nonce: u64,
    asm: Address,
    fee_cap: Option<u128>,
    /// Gas an item of the last estimated batch took (with the batch's overhead shared);
    /// none before the first estimate (see [`Sender::item_gas`]).
    learnt_item_gas: Option<u64>,
    /// Batches to size by the refund bound before trying [`tight_limit`] again (0: try it).
    guess_after: u32,
    max_batch_gas: u64,
    /// The chain's block gas limit when the submitter started.
    block_gas: Option<u64>,
    /// The operator's transactions in flight, to cut the batch that would straddle two
    /// blocks (see [`packing`]).
    packing: Packing,
}

impl Sender {
    async fn run(mut self, mut jobs: mpsc::Receiver<Job>, flights: mpsc::UnboundedSender<Flight>) {
        let mut backlog: VecDeque<Job> = VecDeque::new();
        loop {
            let first = match backlog.pop_front() {
                Some(j) => j,
                None => match jobs.recv().await {
                    Some(j) => j,
                    None => return,
                },
            };
            let (payload, waiters, old) = match first {
                Job::Call {
                    to,
                    input,
                    kind,
                    intent,
                    reply,
                } => (
                    Payload {
                        to,
                        input,
                        gas: GAS_OTHER,
                        kind,
                        intents: vec![intent],
                    },
                    Waiters::Call(reply),
                    Vec::new(),
                ),
                Job::Resend {
                    payload,
                    waiters,
                    old,
                } => (payload, waiters, old),
                Job::Pull(req, reply) => {
                    // Everything that queued while the previous transaction was sent joins
                    // this batch; other jobs wait their turn.
                    let mut pulls = vec![(req, reply)];
                    let most = self.closing(
                        ((self.max_batch_gas / self.item_gas().max(1)) as usize)
                            .clamp(1, MAX_BATCH),
                    );
                    while pulls.len() < most {
                        match jobs.try_recv() {
                            Ok(Job::Pull(r, tx)) => pulls.push((r, tx)),
                            Ok(other) => backlog.push_back(other),
                            Err(_) => break,
                        }
                    }
                    let (requests, replies): (Vec<_>, Vec<_>) = pulls.into_iter().unzip();
                    (
                        batch_payload(self.asm, &requests),
                        Waiters::Pulls(replies),
                        Vec::new(),
                    )
                }
            };
            let mut payload = payload;
            // What its trial run used, when it had one.
            let mut trial = None;
            if payload.kind == TxKind::PullBatch {
                (payload.gas, trial) = self.estimate(&payload).await;
            }
            match self.send(&payload).await {
                Ok(flight) => {
                    let excess = self.core.trial_excess.load(Ordering::Relaxed);
                    self.packing.sent(InFlight {
                        nonce: flight.nonce,
                        used: trial.map_or(payload.gas, |t| t.saturating_add_signed(-excess)),
                        limit: payload.gas,
                    });
                    // A re-sent work's old variants are dead only now that another
                    // transaction carries it.
                    for hash in old {
                        self.core.finished(hash, TxFate::Replaced, None).await;
                    }
                    let _ = flights.send(Flight {
                        payload,
                        waiters,
                        trial,
                        ..flight
                    });
                }
                Err(e) => {
                    if !old.is_empty() {
                        // Nothing carries the work any more.
                        for hash in old {
                            self.core.finished(hash, TxFate::Rejected, None).await;
                        }
                    }
                    let lease_lost = matches!(e, ChainError::LeaseLost);
                    let msg = e.to_string();
                    waiters.fail(|| {
                        if lease_lost {
                            ChainError::LeaseLost
                        } else {
                            ChainError::Submit(msg.clone())
                        }
                    });
                }
            }
        }
    }

    /// The gas limit of a batch, close to what it uses: a block is filled by limits, not by
    /// use, so the static budget (90,000 an item, the worst case of fresh slots) would let
    /// a 30M-gas block hold 333 pulls where it can settle thousands. One execution of the
    /// batch (`eth_createAccessList`, which reports the gas it used; `eth_estimateGas`
    /// binary-searches with a dozen executions, and on a busy node that stalled the
    /// sender) gives its use; the limit adds a quarter (the refund cap: an execution needs
    /// up to 5/4 of the gas it is charged) and the reserve the contract keeps before each
    /// token call, and never passes the static budget, which it falls back to when the
    /// execution fails. The state changing under batches in flight before it makes later
    /// items cheaper (slots already written, ceilings reached), not dearer.
    async fn estimate(&mut self, payload: &Payload) -> (u64, Option<u64>) {
        let items = payload.intents.len().max(1) as u64;
        // A batch of fewer than `LEARN_FROM` items is not guessed: its guess rests mostly on
        // the transaction's own overhead, which the item gas learnt from full batches barely
        // carries, and a guess that ran short sends the next `GUESS_PAUSE` full batches at
        // the refund bound (seen in `bench pulls` before `GAS_BATCH_OVERHEAD`: a one-pull
        // batch sent when the queue ran dry, then sixteen full batches at 11,416 gas a pull
        // instead of 10,127). Its own limit wastes little of a block either way.
        if items >= LEARN_FROM {
            let guess = tight_limit(self.item_gas(), items);
            if self.guess_after == 0 && guess < payload.gas {
                if let Some(used) = self.runs_within(payload, guess).await {
                    self.learn(used, items);
                    // Enough, as the run proved; and never above the refund bound of what
                    // it used.
                    return (guess.min(refund_bound(used)), Some(used));
                }
                // It needed more (refunds it earns back, or dearer items): the bound below
                // for the next batches, then the guess again.
                self.guess_after = GUESS_PAUSE;
            } else {
                self.guess_after = self.guess_after.saturating_sub(1);
            }
        }
        let request = TransactionRequest::default()
            .with_from(self.core.from)
            .with_to(payload.to)
            .with_input(payload.input.clone())
            .with_gas_limit(payload.gas);
        match self.core.provider.create_access_list(&request).await {
            Ok(r) if r.error.is_none() => {
                let used = u64::try_from(r.gas_used).unwrap_or(u64::MAX);
                self.learn(used, items);
                (refund_bound(used).min(payload.gas), Some(used))
            }
            Ok(r) => {
                tracing::warn!(chain_id = self.core.chain_id, error = ?r.error, "a batch's trial execution failed; using the static budget");
                (payload.gas, None)
            }
            Err(e) => {
                tracing::warn!(chain_id = self.core.chain_id, error = %e, "a batch's trial execution failed; using the static budget");
                (payload.gas, None)
            }
        }
    }

    /// Learns an item's gas from a batch of `items` that used `used`: from batches of
    /// [`LEARN_FROM`] items or more, whose transaction's own overhead (21,000 and the
    /// batch's) is spread thin; the first batch teaches whatever its size.
    fn learn(&mut self, used: u64, items: u64) {
        if items >= LEARN_FROM || self.learnt_item_gas.is_none() {
            self.learnt_item_gas = Some((used / items).max(1));
        }
    }

    /// Gas an item is reckoned to take: what the last estimate taught, else the static
    /// budget.
    fn item_gas(&self) -> u64 {
        self.learnt_item_gas.unwrap_or(GAS_PER_PULL)
    }

    /// The limit a batch of `items` pulls will be sent with, as [`Sender::estimate`]
    /// will set it (at most; a guess is lowered to the refund bound of what it used).
    fn limit_of(&self, items: u64) -> u64 {
        if items >= LEARN_FROM && self.guess_after == 0 {
            tight_limit(self.item_gas(), items)
        } else {
            let used = self
                .item_gas()
                .saturating_mul(items)
                .saturating_add(GAS_BATCH_OVERHEAD);
            // Unsigned items: a signed one's budget is larger, and the batch's use is what
            // the trial then reports.
            refund_bound(used).min(static_budget(items, 0))
        }
    }

    /// How many pulls the next batch may take, at most `most`: fewer when a batch of
    /// `most` would not fit what the transactions in flight are predicted to leave of
    /// their last block, so that it closes that block instead of waiting for the next with
    /// what it left empty (see [`packing`]).
    fn closing(&mut self, most: usize) -> usize {
        let Some(block_gas) = self.block_gas else {
            return most;
        };
        self.packing
            .mined_below(self.core.mined_below.load(Ordering::Relaxed));
        let others = self.core.others_gas.load(Ordering::Relaxed);
        let room = self.packing.room(block_gas.saturating_sub(others));
        let n = packing::closing_size(most, room, CLOSING_MARGIN, CLOSING_FEWEST, |n| {
            self.limit_of(n as u64)
        });
        if n < most {
            tracing::debug!(
                chain_id = self.core.chain_id,
                room,
                most,
                items = n,
                in_flight = self.packing.len(),
                "a batch closes the block"
            );
        }
        n
    }

    /// Whether `payload` runs to its end within `limit` gas (one execution, at that
    /// limit, against the latest block); the gas it used when it does. An execution that
    /// completes within a limit needed no more than it, refunds included (they are paid
    /// back only after the execution). The contract reverts the whole batch rather than
    /// start a token call with less than its reserve left, so completing means no item was
    /// starved.
    async fn runs_within(&self, payload: &Payload, limit: u64) -> Option<u64> {
        let request = TransactionRequest::default()
            .with_from(self.core.from)
            .with_to(payload.to)
            .with_input(payload.input.clone())
            .with_gas_limit(limit);
        match self.core.provider.create_access_list(&request).await {
            Ok(r) if r.error.is_none() => u64::try_from(r.gas_used).ok(),
            Ok(r) => {
                tracing::info!(chain_id = self.core.chain_id, limit, items = payload.intents.len(), gas_used = %r.gas_used, error = ?r.error, "a batch's guessed limit did not run it");
                None
            }
            Err(e) => {
                tracing::info!(chain_id = self.core.chain_id, limit, items = payload.intents.len(), error = %e, "a batch's guessed limit was not tried");
                None
            }
        }
    }

    /// The fees to sign new transactions with (an estimate at most [`FEE_TTL`] old).
    async fn fees(&mut self) -> Result<Fees, ChainError> {
        if let Some((fees, at)) = self.fees
            && at.elapsed() < FEE_TTL
        {
            return Ok(fees);
        }
        let mut fees = market(&self.core.provider).await?;
        if let Some(cap) = self.fee_cap {
            // Never above the cap; a transaction the market then leaves behind is
            // replaced and, past the cap, cancelled by the tracker.
            fees.max_fee = fees.max_fee.min(cap);
            fees.tip = fees.tip.min(fees.max_fee);
        }
        self.fees = Some((fees, Instant::now()));
        Ok(fees)
    }

    /// Signs, journals and broadcasts `payload` with the next nonce. An answer that means
    /// "look again" (already known, underpriced, no definite answer) leaves it in flight
    /// for the tracker; "nonce too low" means an outside transaction took the nonce: the
    /// work is signed again under the chain's next one.
    async fn send(&mut self, payload: &Payload) -> Result<Flight, ChainError> {
        openrail_domain::stages::mark("batched", payload.intents.iter().map(Intent::text));
        // Variants refused because an outside transaction held their nonce.
        let mut taken: Vec<TxHash> = Vec::new();
        let result = loop {
            let fees = match self.fees().await {
                Ok(f) => f,
                Err(e) => break Err(e),
            };
            let nonce = self.nonce;
            let variant = match self.core.sign_and_record(payload, nonce, fees, false).await {
                Ok(v) => v,
                Err(e) => break Err(e),
            };
            // The nonce is spent once the transaction is journaled: a crash from here on
            // rebroadcasts these exact bytes.
            self.nonce += 1;
            openrail_domain::stages::mark("journaled", payload.intents.iter().map(Intent::text));
            crash::point(crash::AFTER_NONCE_ALLOCATION);
            let mut refusal = self.core.broadcast(&variant.raw).await.err();
            if refusal == Some(Refusal::NonceTooLow) && self.core.knows(variant.hash).await {
                // Our own transaction took the nonce: an earlier try of this broadcast
                // arrived (and was mined) though its answer was lost.
                refusal = Some(Refusal::AlreadyKnown);
            }
            match refusal {
                None | Some(Refusal::AlreadyKnown | Refusal::Underpriced | Refusal::Unknown(_)) => {
                    if let Some(r) = refusal {
                        tracing::warn!(chain_id = self.core.chain_id, nonce, hash = %variant.hash, refusal = ?r, "broadcast not confirmed; the tracker looks again");
                    }
                    tracing::info!(
                        chain_id = self.core.chain_id,
                        nonce,
                        hash = %variant.hash,
                        gas = payload.gas,
                        max_fee = variant.fees.max_fee,
                        objects = payload.intents.len(),
                        object_ids = %object_ids(&payload.intents),
                        "sent"
                    );
                    openrail_domain::stages::mark(
                        "broadcast",
                        payload.intents.iter().map(Intent::text),
                    );
                    crash::point(crash::AFTER_BROADCAST);
                    let now = Instant::now();
                    break Ok(Flight {
                        nonce,
                        payload: payload.clone(),
                        variants: vec![variant],
                        first_sent: now,
                        last_sent: now,
                        waiters: Waiters::Nobody,
                        trial: None,
                    });
                }
                Some(Refusal::NonceTooLow) if taken.len() < 3 => {
                    // Another transaction of the operator's key (sent from outside) holds
                    // this nonce: this one can never be mined, and the work goes on under
                    // the chain's next free nonce.
                    let chain = match self
                        .core
                        .provider
                        .get_transaction_count(self.core.from)
                        .pending()
                        .await
                    {
                        Ok(n) => n,
                        Err(e) => {
                            taken.push(variant.hash);
                            break Err(e.into());
                        }
                    };
                    tracing::warn!(chain_id = self.core.chain_id, nonce, next = chain, hash = %variant.hash, "nonce taken by an outside transaction; signing the work again");
                    self.nonce = self.nonce.max(chain);
                    taken.push(variant.hash);
                }
                Some(refusal) => {
                    // A definite refusal (funds, gas, …): the nonce was not used; the next
                    // transaction takes it.
                    self.core
                        .finished(variant.hash, TxFate::Rejected, None)
                        .await;
                    self.fees = None;
                    if !matches!(refusal, Refusal::NonceTooLow) {
                        self.nonce = nonce;
                    }
                    break Err(ChainError::Refused(refusal.describe()));
                }
            }
        };
        // Dead variants are marked once another carries the work (replaced), or as
        // rejected when none does.
        let fate = if result.is_ok() {
            TxFate::Replaced
        } else {
            TxFate::Rejected
        };
        for hash in taken {
            self.core.finished(hash, fate, None).await;
        }
        result
    }
}

/// Reads the operator's balance every [`BALANCE_EVERY`] while the submitter lives, and
/// warns when it is below `floor`: a key that cannot pay for gas stops every transaction.
async fn watch_balance(
    core: Arc<Core>,
    floor: Option<u128>,
    last: Arc<std::sync::Mutex<Option<U256>>>,
    alive: mpsc::WeakSender<Job>,
) {
    while alive.upgrade().is_some() {
        match core.provider.get_balance(core.from).await {
            Ok(b) => {
                *last.lock().expect("balance lock") = Some(b);
                if let Some(floor) = floor
                    && b < U256::from(floor)
                {
                    tracing::warn!(chain_id = core.chain_id, operator = %core.from, balance = %b, floor, "the operator's balance is below its floor: fund it before transactions stop");
                }
            }
            Err(e) => {
                tracing::warn!(chain_id = core.chain_id, error = %e, "reading the operator's balance failed")
            }
        }
        tokio::time::sleep(BALANCE_EVERY).await;
    }
}

/// The calldata and gas of one `pullBatch` of `pulls`.
fn batch_payload(asm: Address, pulls: &[PullRequest]) -> Payload {
    let items: Vec<batch::Item<'_>> = pulls
        .iter()
        .map(|r| batch::Item {
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
    let signed = pulls.iter().filter(|r| r.agent.is_some()).count() as u64;
    let input: Bytes = AllowanceStateMachine::pullBatchCall {
        items: batch::encode(&items),
    }
    .abi_encode()
    .into();
    Payload {
        to: asm,
        input,
        gas: static_budget(pulls.len() as u64, signed),
        kind: TxKind::PullBatch,
        intents: pulls.iter().map(|r| Intent::Pull(r.pull.clone())).collect(),
    }
}

/// The static gas budget of a batch of `items` pulls, `signed` of them agent-signed: the
/// limit of a batch whose trial failed, and the bound on any trial.
fn static_budget(items: u64, signed: u64) -> u64 {
    60_000 + GAS_TOKEN_RESERVE + GAS_PER_PULL * items + GAS_PER_SIGNED_PULL * signed
}

/// What the market asks for a transaction now.
async fn market(provider: &DynProvider) -> Result<Fees, ChainError> {
    let e = provider.estimate_eip1559_fees().await?;
    Ok(Fees {
        max_fee: e.max_fee_per_gas,
        tip: e.max_priority_fee_per_gas,
    })
}

/// After a restart: settles each journaled nonce whose fate is unknown by looking up the
/// receipts of all its variants; rebroadcasts the newest variant of a nonce still open
/// (so an intent never gets a second transaction and no nonce stays jammed) and hands it
/// to the tracker, which replaces it as it would any other; returns the next nonce.
async fn recover(core: &Core, flights: &mpsc::UnboundedSender<Flight>) -> Result<u64, ChainError> {
    let journaled = core
        .journal
        .unsettled(core.chain_id)
        .await
        .map_err(|e| ChainError::Journal(e.to_string()))?;
    let mined_count = core.provider.get_transaction_count(core.from).await?;
    let mut next = core
        .provider
        .get_transaction_count(core.from)
        .pending()
        .await?;
    let mut by_nonce: std::collections::BTreeMap<u64, Vec<JournaledTx>> = Default::default();
    for tx in journaled {
        by_nonce.entry(tx.nonce).or_default().push(tx);
    }
    for (nonce, group) in by_nonce {
        let mut variants = Vec::with_capacity(group.len());
        let mut payload = None;
        for tx in &group {
            let Some(v) = decode_variant(tx) else {
                tracing::error!(chain_id = core.chain_id, nonce, hash = %tx.hash, "a journaled transaction does not decode; left as it is");
                continue;
            };
            if !v.0.cancel {
                payload.get_or_insert(v.1);
            }
            variants.push(v.0);
        }
        if let Some((i, receipt)) = core.mined_variant(&variants).await? {
            settle_siblings(core, &variants, i).await;
            core.finished(variants[i].hash, fate_of(&receipt), receipt.block_number)
                .await;
            continue;
        }
        if nonce < mined_count {
            // Its nonce went to another transaction: none of them can ever be mined.
            for v in &variants {
                core.finished(v.hash, TxFate::Rejected, None).await;
            }
            continue;
        }
        let Some(payload) = payload else {
            continue;
        };
        variants.sort_by_key(|v| v.fees.max_fee);
        let newest = variants.last().expect("decoded variants");
        match core.broadcast(&newest.raw).await {
            Ok(()) => {
                tracing::info!(chain_id = core.chain_id, nonce, hash = %newest.hash, "rebroadcast a journaled transaction")
            }
            Err(r) => {
                tracing::warn!(chain_id = core.chain_id, nonce, hash = %newest.hash, refusal = ?r, "rebroadcast refused; the tracker looks again")
            }
        }
        next = next.max(nonce + 1);
        let now = Instant::now();
        let _ = flights.send(Flight {
            nonce,
            payload,
            variants,
            first_sent: now,
            last_sent: now,
            waiters: Waiters::Nobody,
            trial: None,
        });
    }
    Ok(next)
}

/// A journaled transaction as a variant, with the work it carries.
fn decode_variant(tx: &JournaledTx) -> Option<(Variant, Payload)> {
    use alloy::consensus::Transaction;
    use alloy::eips::eip2718::Decodable2718;
    let envelope = TxEnvelope::decode_2718(&mut tx.raw.as_ref()).ok()?;
    let cancel = tx.kind == TxKind::CancelNonce;
    let payload = Payload {
        to: envelope.to()?,
        input: envelope.input().clone(),
        gas: envelope.gas_limit(),
        kind: tx.kind,
        intents: tx.intents.clone(),
    };
    let variant = Variant {
        hash: tx.hash,
        raw: tx.raw.clone(),
        fees: Fees {
            max_fee: envelope.max_fee_per_gas(),
            tip: envelope.max_priority_fee_per_gas().unwrap_or_default(),
        },
        cancel,
        refused: false,
    };
    Some((variant, payload))
}

fn fate_of(receipt: &TransactionReceipt) -> TxFate {
    if receipt.status() {
        TxFate::Succeeded
    } else {
        TxFate::Reverted
    }
}

/// Records what became of the variants of a nonce other than the mined one (`winner`):
/// replaced when the work was mined; when a cancellation took the nonce, the work's
/// variants are rejected (nothing carries it any more).
async fn settle_siblings(core: &Core, variants: &[Variant], winner: usize) {
    let canceled = variants[winner].cancel;
    for (i, v) in variants.iter().enumerate() {
        if i == winner {
            continue;
        }
        let fate = if canceled && !v.cancel {
            TxFate::Rejected
        } else {
            TxFate::Replaced
        };
        core.finished(v.hash, fate, None).await;
    }
}

/// Follows the nonces in flight: polls the receipts of all their variants and resolves
/// their waiters; every [`SubmitterOptions::check_every`], looks at the ones still open
/// (rebroadcasts one the node forgot, re-sends the work of a nonce an outside transaction
/// took, replaces one that waited too long or pays less than the base fee, cancels one past
/// the fee cap or its deadline).
async fn track(
    core: Arc<Core>,
    asm: Address,
    options: SubmitterOptions,
    mut incoming: mpsc::UnboundedReceiver<Flight>,
    resend: mpsc::Sender<Job>,
) {
    let mut pending: Vec<Flight> = Vec::new();
    // Mined transactions not yet `depth` deep (the mined variant alone), with their block.
    let mut shallow: Vec<(Flight, B256)> = Vec::new();
    let mut last_check = Instant::now();
    let mut pause = Duration::from_millis(1);
    let mut scan = BlockScan::default();
    loop {
        // Flights from here on joined since the last pass: their transactions may be in a
        // block a pass already read before they were handed over (on automine, every
        // transaction is mined as it is sent), so each is looked up once on its own.
        let known = pending.len();
        if pending.is_empty() {
            if shallow.is_empty() {
                match incoming.recv().await {
                    Some(f) => pending.push(f),
                    None => return,
                }
            } else {
                // Nothing in flight, mined ones to look at again in a while.
                match tokio::time::timeout(options.check_every, incoming.recv()).await {
                    Ok(Some(f)) => pending.push(f),
                    Ok(None) => return,
                    Err(_) => {}
                }
            }
        }
        while let Ok(f) = incoming.try_recv() {
            pending.push(f);
        }
        let mut still = Vec::with_capacity(pending.len());
        let mut progressed = false;
        // The new blocks' receipts, one call a block; each flight's own receipts on the
        // periodic check (the safety net for a block the scan did not see) or when the
        // node does not serve a block's receipts.
        let full = last_check.elapsed() >= options.check_every;
        let found = scan.new_receipts(&core, full).await;
        for (at, flight) in pending.drain(..).enumerate() {
            let in_blocks = found.as_ref().and_then(|receipts| {
                flight
                    .variants
                    .iter()
                    .enumerate()
                    .find_map(|(i, v)| receipts.get(&v.hash).map(|r| (i, r.clone())))
            });
            let mined = match (in_blocks, &found) {
                (Some(m), _) => Ok(Some(m)),
                (None, Some(_)) if at < known => Ok(None),
                (None, _) => core.mined_variant(&flight.variants).await,
            };
            match mined {
                Ok(Some((i, receipt))) => {
                    progressed = true;
                    core.mined_below
                        .fetch_max(flight.nonce + 1, Ordering::Relaxed);
                    if let Some(watched) = settle(&core, flight, i, receipt, asm, &options).await {
                        shallow.push(watched);
                    }
                }
                Ok(None) => still.push(flight),
                Err(e) => {
                    tracing::warn!(error = %e, nonce = flight.nonce, "receipt poll failed");
                    still.push(flight);
                }
            }
        }
        pending = still;
        if progressed && !pending.is_empty() {
            revive_dropped(&core, &mut pending).await;
        }
        if (!pending.is_empty() || !shallow.is_empty())
            && last_check.elapsed() >= options.check_every
        {
            last_check = Instant::now();
            if let Err(e) = recheck_shallow(&core, &options, &mut shallow, &mut pending).await {
                tracing::warn!(chain_id = core.chain_id, error = %e, "checking mined transactions failed");
            }
            if let Err(e) = check(&core, &options, &mut pending, &resend).await {
                tracing::warn!(chain_id = core.chain_id, error = %e, "checking transactions in flight failed");
            }
        }
        if progressed {
            pause = Duration::from_millis(1);
        } else if !pending.is_empty() {
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(options.max_poll);
        }
    }
}

/// The tracker's view of the chain's new blocks: their receipts, read once a block
/// (`eth_getBlockReceipts`) instead of each transaction in flight's on every poll. On a
/// chain of 1 s blocks with thirty batches in flight, polling each one's receipt took the
/// tracker half a second after every block (one round trip each, one after another), and
/// the pulls of the last batches heard of their block too late to send the next ones in
/// time for the next block.
#[derive(Debug, Default)]
struct BlockScan {
    /// The last block whose receipts were read, or before which every flight's own
    /// receipts were looked up.
    last: Option<u64>,
    /// Calls that failed in a row; past [`BlockScan::GIVE_UP`] the node is taken not to
    /// serve block receipts.
    failures: u32,
}

impl BlockScan {
    const GIVE_UP: u32 = 3;
    /// Most blocks read in one pass; further behind, each flight is looked up instead.
    const MOST: u64 = 16;

    /// The receipts of the blocks mined since the last pass, by transaction hash; `None`
    /// when the caller must look up each flight's receipts instead (on `full`, on the first
    /// pass, when too far behind, or when the node does not serve them).
    async fn new_receipts(
        &mut self,
        core: &Core,
        full: bool,
    ) -> Option<std::collections::HashMap<TxHash, TransactionReceipt>> {
        let head = core.provider.get_block_number().await.ok()?;
        let last = match self.last {
            Some(last) if !full && self.failures < Self::GIVE_UP && head <= last + Self::MOST => {
                last
            }
            // Each flight is looked up now: what was mined up to `head` is found by that.
            _ => {
                self.last = Some(head);
                return None;
            }
        };
        let mut receipts = std::collections::HashMap::new();
        for number in last + 1..=head {
            match core
                .provider
                .get_block_receipts(alloy::eips::BlockId::number(number))
                .await
            {
                Ok(Some(block)) => {
                    let others: u64 = block
                        .iter()
                        .filter(|r| r.from != core.from)
                        .map(|r| r.gas_used)
                        .sum();
                    core.others_gas.store(others, Ordering::Relaxed);
                    receipts.extend(block.into_iter().map(|r| (r.transaction_hash, r)))
                }
                Ok(None) | Err(_) => {
                    self.failures += 1;
                    if self.failures == Self::GIVE_UP {
                        tracing::warn!(
                            chain_id = core.chain_id,
                            "the node does not serve block receipts; polling each transaction's"
                        );
                    }
                    // Each flight is looked up now instead.
                    self.last = Some(head);
                    return None;
                }
            }
        }
        self.failures = 0;
        self.last = Some(head);
        Some(receipts)
    }
}

/// How long a transaction is in flight before a block that leaves it out makes the tracker
/// ask whether the node still has it.
const REVIVE_AFTER: Duration = Duration::from_millis(200);

/// After a block mined some of ours: asks the node whether it still has each transaction
/// in flight that was sent well before, and rebroadcasts those it forgot. A node may drop
/// one from its pool: anvil, building a block, skips the first of ours that does not fit
/// what is left of the block, then drops a later, smaller one that would fit (its nonce is
/// too high at that point). Until the gap is filled no later nonce can be mined, so waiting
/// for the next periodic [`check`] (every [`SubmitterOptions::check_every`]) left blocks
/// nearly empty.
async fn revive_dropped(core: &Core, pending: &mut [Flight]) {
    pending.sort_by_key(|f| f.nonce);
    for flight in pending.iter_mut() {
        if flight.last_sent.elapsed() < REVIVE_AFTER {
            continue;
        }
        match rebroadcast_if_forgotten(core, flight).await {
            Ok(Resent::Yes) => flight.last_sent = Instant::now(),
            Ok(Resent::Had | Resent::Refused) => {}
            // The node does not serve its pool by hash, or did not answer: the periodic
            // check looks at the rest.
            Ok(Resent::Unknowable) | Err(_) => return,
        }
    }
}

/// What [`rebroadcast_if_forgotten`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resent {
    /// The node has the transaction.
    Had,
    /// It had forgotten it; it has it again.
    Yes,
    /// It said it did not have it, then refused it as known: it does not serve its pool
    /// by hash, so asking tells nothing.
    Unknowable,
    /// It refused it (the periodic check replaces, re-sends or cancels it).
    Refused,
}

/// Asks the node for `flight`'s newest transaction and rebroadcasts it when the node no
/// longer has it (a pool may drop one).
async fn rebroadcast_if_forgotten(core: &Core, flight: &Flight) -> Result<Resent, ChainError> {
    let newest = flight.newest();
    if core
        .provider
        .get_transaction_by_hash(newest.hash)
        .await?
        .is_some()
    {
        return Ok(Resent::Had);
    }
    Ok(match core.broadcast(&newest.raw).await {
        Ok(()) => {
            tracing::warn!(chain_id = core.chain_id, nonce = flight.nonce, hash = %newest.hash, "the node had dropped a transaction; rebroadcast it");
            Resent::Yes
        }
        Err(Refusal::AlreadyKnown) => Resent::Unknowable,
        Err(r) => {
            tracing::warn!(chain_id = core.chain_id, nonce = flight.nonce, hash = %newest.hash, refusal = ?r, "rebroadcast refused");
            Resent::Refused
        }
    })
}

/// Resolves a nonce whose variant `winner` was mined; returns what to watch until it is
/// `depth` deep (nothing with depth 0).
async fn settle(
    core: &Core,
    mut flight: Flight,
    winner: usize,
    receipt: TransactionReceipt,
    asm: Address,
    options: &SubmitterOptions,
) -> Option<(Flight, B256)> {
    settle_siblings(core, &flight.variants, winner).await;
    if let Some(trial) = flight.trial {
        let excess = i128::from(trial) - i128::from(receipt.gas_used);
        core.trial_excess
            .store(i64::try_from(excess).unwrap_or(0), Ordering::Relaxed);
    }
    let fate = fate_of(&receipt);
    let (hash, block) = (flight.variants[winner].hash, receipt.block_number);
    tracing::info!(
        chain_id = core.chain_id,
        nonce = flight.nonce,
        %hash,
        block,
        ?fate,
        gas_used = receipt.gas_used,
        gas_limit = flight.payload.gas,
        trial = flight.trial,
        objects = flight.payload.intents.len(),
        object_ids = %object_ids(&flight.payload.intents),
        "mined"
    );
    let waiters = std::mem::replace(&mut flight.waiters, Waiters::Nobody);
    if flight.variants[winner].cancel {
        core.finished(hash, fate, block).await;
        tracing::warn!(chain_id = core.chain_id, nonce = flight.nonce, %hash, "a cancellation took the nonce; its work was not done");
        let nonce = flight.nonce;
        waiters.fail(|| ChainError::Canceled(nonce));
        return None;
    }
    match waiters {
        // Pull outcomes are told first: recording them needs nothing from the journal's
        // fate, and a crash before the fate is written leaves the transaction `signed`,
        // settled from its receipt at the next start. Nor does the next receipt wait for
        // this fate's write.
        w @ Waiters::Pulls(_) => {
            resolve(w, &receipt, asm);
            let journal = core.journal.clone();
            let chain_id = core.chain_id;
            tokio::spawn(async move {
                if let Err(e) = journal.finished(chain_id, hash, fate, block).await {
                    tracing::error!(error = %e, %hash, "journaling a mined transaction failed");
                }
            });
        }
        // A call's caller may read the fate (a failure is recorded only when no live
        // transaction is left), so it hears after it is written.
        other => {
            core.finished(hash, fate, block).await;
            resolve(other, &receipt, asm);
        }
    }
    let deep = options.depth > 0 || options.depth_tag.is_some();
    match (deep, receipt.block_hash) {
        (true, Some(block_hash)) => {
            // From now on only this variant can carry the nonce.
            flight.variants = vec![flight.variants.swap_remove(winner)];
            Some((flight, block_hash))
        }
        _ => None,
    }
}

/// Looks again at mined transactions not yet `depth` deep: one whose receipt is gone was
/// taken out by a reorganisation; its effects are undone and it goes back in flight (its
/// nonce is free again on the new chain), to be rebroadcast at the next look.
async fn recheck_shallow(
    core: &Core,
    options: &SubmitterOptions,
    shallow: &mut Vec<(Flight, B256)>,
    pending: &mut Vec<Flight>,
) -> Result<(), ChainError> {
    if shallow.is_empty() {
        return Ok(());
    }
    // The highest block whose transactions are final.
    let final_at = match options.depth_tag {
        Some(tag) => tag.number(&core.provider).await?,
        None => core
            .provider
            .get_block_number()
            .await?
            .saturating_sub(options.depth),
    };
    let mut i = 0;
    while i < shallow.len() {
        let (flight, block_hash) = &mut shallow[i];
        let hash = flight.variants[0].hash;
        match core.provider.get_transaction_receipt(hash).await? {
            Some(r) if r.block_number.is_some_and(|b| b <= final_at) => {
                // Deep enough: final as far as the submitter is concerned.
                shallow.swap_remove(i);
            }
            Some(r) => {
                if let Some(h) = r.block_hash {
                    *block_hash = h;
                }
                i += 1;
            }
            None => {
                let (mut flight, _) = shallow.swap_remove(i);
                tracing::warn!(chain_id = core.chain_id, nonce = flight.nonce, %hash, depth = options.depth, "a reorganisation took a mined transaction out of the chain before its depth; undone and sent again");
                if let Err(e) = core.journal.reorged(core.chain_id, hash).await {
                    tracing::error!(chain_id = core.chain_id, %hash, error = %e, "undoing a reorganised transaction failed");
                }
                // Due for a look at once: the node may not have it any more.
                let due = Instant::now()
                    .checked_sub(options.check_every)
                    .unwrap_or_else(Instant::now);
                flight.last_sent = due;
                flight.first_sent = due;
                pending.push(flight);
            }
        }
    }
    Ok(())
}

/// One look at the nonces in flight that have waited at least a check period.
async fn check(
    core: &Core,
    options: &SubmitterOptions,
    pending: &mut Vec<Flight>,
    resend: &mpsc::Sender<Job>,
) -> Result<(), ChainError> {
    let mined = core.provider.get_transaction_count(core.from).await?;
    let base_fee = core
        .provider
        .get_block_by_number(alloy::eips::BlockNumberOrTag::Latest)
        .await?
        .and_then(|b| b.header.base_fee_per_gas)
        .map(u128::from);
    let mut market_now: Option<Fees> = None;
    let mut i = 0;
    while i < pending.len() {
        let flight = &mut pending[i];
        if flight.last_sent.elapsed() < options.check_every {
            i += 1;
            continue;
        }
        if flight.nonce < mined {
            if core.mined_variant(&flight.variants).await?.is_some() {
                // Mined since the poll: the next poll settles it.
                i += 1;
                continue;
            }
            let flight = pending.swap_remove(i);
            let old: Vec<TxHash> = flight.variants.iter().map(|v| v.hash).collect();
            if flight.canceling() {
                // Given up on, and the nonce went elsewhere: the work is not done.
                for hash in old {
                    core.finished(hash, TxFate::Rejected, None).await;
                }
                let nonce = flight.nonce;
                flight.waiters.fail(|| ChainError::Canceled(nonce));
                continue;
            }
            tracing::warn!(
                chain_id = core.chain_id,
                nonce = flight.nonce,
                "nonce taken by an outside transaction; sending the work again under a new nonce"
            );
            let job = Job::Resend {
                payload: flight.payload,
                waiters: flight.waiters,
                old,
            };
            if let Err(mpsc::error::SendError(job)) = resend.send(job).await
                && let Job::Resend { waiters, old, .. } = job
            {
                for hash in old {
                    core.finished(hash, TxFate::Rejected, None).await;
                }
                waiters.fail(|| ChainError::SubmitterStopped);
            }
            continue;
        }
        let newest = flight.newest().clone();
        let underpriced = base_fee.is_some_and(|b| newest.fees.max_fee < b);
        let waited = flight.last_sent.elapsed() >= options.replace_after;
        if !underpriced && !waited {
            // Still waiting its turn: make sure the node has it (a pool may drop it).
            rebroadcast_if_forgotten(core, flight).await?;
            i += 1;
            continue;
        }
        let market_fees = match market_now {
            Some(m) => m,
            None => {
                let mut m = market(&core.provider).await?;
                if let Some(b) = base_fee {
                    // What the next block asks at least, whatever the estimate's history.
                    m.max_fee = m.max_fee.max(b.saturating_mul(2).saturating_add(m.tip));
                }
                market_now = Some(m);
                m
            }
        };
        let past_deadline = options
            .cancel_after
            .is_some_and(|d| flight.first_sent.elapsed() >= d);
        let floor = flight.floor();
        let bumped = if flight.canceling() || past_deadline {
            None
        } else {
            fees::bump(floor, market_fees, options.fee_cap)
        };
        let (fees, cancel) = match bumped {
            Some(f) => (f, false),
            None => (fees::cancel(floor, market_fees), true),
        };
        let variant = match core
            .sign_and_record(&flight.payload, flight.nonce, fees, cancel)
            .await
        {
            Ok(v) => v,
            Err(e) => {
                tracing::error!(chain_id = core.chain_id, nonce = flight.nonce, error = %e, "could not journal a replacement");
                i += 1;
                continue;
            }
        };
        tracing::warn!(
            chain_id = core.chain_id,
            nonce = flight.nonce,
            hash = %variant.hash,
            replaces = %newest.hash,
            max_fee = fees.max_fee,
            tip = fees.tip,
            cancel,
            underpriced,
            "replacing a transaction that is not mined"
        );
        let refusal = core.broadcast(&variant.raw).await.err();
        flight.last_sent = Instant::now();
        let mut variant = variant;
        if let Some(r @ (Refusal::Underpriced | Refusal::Definite(_))) = refusal {
            // Not in this node's pool: the next look bumps from these fees again.
            tracing::warn!(chain_id = core.chain_id, nonce = flight.nonce, hash = %variant.hash, refusal = ?r, "replacement refused");
            variant.refused = true;
        }
        flight.variants.push(variant);
        i += 1;
    }
    Ok(())
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

/// The intents a transaction carries, for a log line: the first ten, then how many more.
fn object_ids(intents: &[Intent]) -> String {
    const SHOWN: usize = 10;
    let mut out = intents
        .iter()
        .take(SHOWN)
        .map(Intent::to_string)
        .collect::<Vec<_>>()
        .join(",");
    if intents.len() > SHOWN {
        out.push_str(&format!(",… ({} more)", intents.len() - SHOWN));
    }
    out
}

#[cfg(test)]
mod limit_tests {
    use super::{GAS_TOKEN_RESERVE, refund_bound, tight_limit};

    /// The first try leaves a block room for more pulls than the refund bound did, and still
    /// covers a tenth over the last batch's use and the contract's reserve.
    #[test]
    fn a_batch_is_tried_at_a_tenth_over_its_use_not_a_quarter() {
        // (A batch under `LEARN_FROM` items is not guessed.)
        for (item_gas, items) in [
            (8_827u64, 1024u64),
            (8_827, 64),
            (25_000, 300),
            (90_000, 128),
        ] {
            let used = item_gas * items;
            let limit = tight_limit(item_gas, items);
            assert!(limit >= used + used / 10 + GAS_TOKEN_RESERVE, "{limit}");
            assert!(limit < refund_bound(used), "{limit}");
            assert!(refund_bound(used) >= used + used / 4 + GAS_TOKEN_RESERVE);
        }
        // 30M gas of 8,827-gas pulls: 3,398 by use. A node admits the next transaction
        // while the gas used so far plus its limit fits the block, so a block holds n
        // batches when n - 1 uses and one limit fit. Batches of a sixteenth of the block
        // (1.875M, 212 items) tried this way, 15 a block: 3,180 (93 %); an eighth (424
        // items), 7 a block: 2,968 (87 %).
        let fill = |batch_gas: u64| {
            let items = batch_gas / 8_827;
            let (used, limit) = (8_827 * items, tight_limit(8_827, items));
            let batches = (30_000_000 - limit) / used + 1;
            batches * items * 100 / 3_398
        };
        assert!(fill(30_000_000 / 16) >= 93, "{}", fill(30_000_000 / 16));
        assert!(fill(30_000_000 / 8) < fill(30_000_000 / 16));
    }
}

#[cfg(test)]
mod estimate_tests {
    //! How a batch's gas limit is chosen, against a node answering from a script
    //! (`eth_createAccessList` results in order): the first batch at its use's refund bound,
    //! then a tenth over the learnt item gas while that runs, the refund bound of the
    //! batch's own use for [`GUESS_PAUSE`] batches after a guess that ran short, and the
    //! static budget when no execution completes.
    use super::*;
    use alloy::eips::eip2930::AccessListResult;
    use alloy::providers::ProviderBuilder;
    use alloy::transports::mock::Asserter;

    fn sender(node: &Asserter) -> Sender {
        let provider = ProviderBuilder::new()
            .disable_recommended_fillers()
            .connect_mocked_client(node.clone())
            .erased();
        let core = Arc::new(Core {
            provider,
            wallet: EthereumWallet::from(PrivateKeySigner::random()),
            from: Address::ZERO,
            chain_id: 31_337,
            journal: Arc::new(NoJournal),
            mined_below: Default::default(),
            others_gas: Default::default(),
            trial_excess: Default::default(),
        });
        Sender {
            fees: None,
            core,
            nonce: 0,
            asm: Address::ZERO,
            fee_cap: None,
            learnt_item_gas: None,
            guess_after: 0,
            max_batch_gas: 1_875_000,
            block_gas: None,
            packing: Packing::default(),
        }
    }

    #[test]
    fn a_batch_that_would_straddle_two_blocks_is_cut_to_close_the_first() {
        let node = Asserter::new();
        let mut s = sender(&node);
        s.learnt_item_gas = Some(9_000);
        // A full batch: 1,875,000 / 9,000 = 208 pulls, sent at a limit of 2,229,200.
        let most = 208;
        for nonce in 0..14 {
            s.packing.sent(InFlight {
                nonce,
                used: 2_000_000,
                limit: 2_400_000,
            });
        }
        // Without the chain's block gas nothing is cut.
        assert_eq!(s.closing(most), most);
        // Blocks of 30M: twelve fill 24M of the first, the thirteenth and fourteenth join
        // it (their limits fit), which leaves 2M: a full batch's limit does not fit, and
        // the most that do (with the margin) close the block.
        s.block_gas = Some(30_000_000);
        let n = s.closing(most);
        assert_eq!(n, 178);
        assert!(tight_limit(9_000, 178) + CLOSING_MARGIN <= 2_000_000);
        assert!(tight_limit(9_000, 179) + CLOSING_MARGIN > 2_000_000);
        // Others used 1M of the last block: 1M is left, 77 pulls.
        s.core.others_gas.store(1_000_000, Ordering::Relaxed);
        assert_eq!(s.closing(most), 77);
        // Once those fourteen are mined, a full batch starts an empty block.
        s.core.mined_below.store(14, Ordering::Relaxed);
        assert_eq!(s.closing(most), most);
        assert_eq!(s.packing.len(), 0);
    }

    #[tokio::test]
    async fn the_limit_a_closing_batch_is_sized_by_is_the_one_it_is_sent_with() {
        for (items, used) in [(1u64, 59_000u64), (4, 86_000), (15, 185_000)] {
            let node = Asserter::new();
            let mut s = sender(&node);
            s.learnt_item_gas = Some(9_000);
            // A batch under `LEARN_FROM` pulls is tried once at its static budget; one
            // that uses what the learnt item gas and the overhead say is sent at the
            // refund bound of that, which is what the cut reckoned with.
            node.push_success(&ran(used));
            let predicted = s.limit_of(items);
            assert_eq!(
                s.estimate(&batch(items)).await.0,
                predicted,
                "{items} pulls"
            );
        }
    }

    fn pull_intent(id: &str) -> Intent {
        Intent::Pull(PullId::parse(id).expect("a pull id"))
    }

    fn batch(items: u64) -> Payload {
        Payload {
            to: Address::ZERO,
            input: Bytes::new(),
            gas: static_budget(items, 0),
            kind: TxKind::PullBatch,
            intents: (0..items)
                .map(|i| pull_intent(&format!("pull_{i}")))
                .collect(),
        }
    }

    fn ran(used: u64) -> AccessListResult {
        AccessListResult {
            access_list: Default::default(),
            gas_used: U256::from(used),
            error: None,
        }
    }

    fn ran_short() -> AccessListResult {
        AccessListResult {
            access_list: Default::default(),
            gas_used: U256::from(1_000_000u64),
            error: Some("out of gas".into()),
        }
    }

    #[tokio::test]
    async fn the_limit_follows_what_batches_use_and_falls_back_when_a_guess_runs_short() {
        let node = Asserter::new();
        let mut s = sender(&node);
        let items = 200;

        // Nothing learnt: a guess at the static item budget is no tighter than the batch's
        // budget, so one execution at the budget, and the refund bound of its use.
        node.push_success(&ran(8_000 * items));
        assert_eq!(
            s.estimate(&batch(items)).await.0,
            refund_bound(8_000 * items)
        );
        assert_eq!(s.item_gas(), 8_000);

        // Learnt: tried at a tenth over, and that run is the answer (never above the
        // refund bound of what it used).
        node.push_success(&ran(7_900 * items));
        assert_eq!(
            s.estimate(&batch(items)).await.0,
            tight_limit(8_000, items).min(refund_bound(7_900 * items))
        );
        assert_eq!(s.item_gas(), 7_900);

        // Dearer items (fresh slots): the guess runs short; the execution at the budget
        // gives this batch's use, and its refund bound is the limit.
        node.push_success(&ran_short());
        node.push_success(&ran(20_000 * items));
        assert_eq!(
            s.estimate(&batch(items)).await.0,
            refund_bound(20_000 * items)
        );
        assert_eq!(s.item_gas(), 20_000);

        // The next batches are not guessed: one execution each, at the budget.
        for _ in 0..GUESS_PAUSE {
            node.push_success(&ran(19_000 * items));
            assert_eq!(
                s.estimate(&batch(items)).await.0,
                refund_bound(19_000 * items)
            );
        }
        // Then a guess again.
        node.push_success(&ran(19_000 * items));
        assert_eq!(
            s.estimate(&batch(items)).await.0,
            tight_limit(19_000, items).min(refund_bound(19_000 * items))
        );

        // No execution completes (the node refuses, or the batch fails at the budget): the
        // static budget, whatever was learnt.
        node.push_success(&ran_short());
        node.push_success(&ran_short());
        assert_eq!(s.estimate(&batch(items)).await.0, batch(items).gas);
        // (That guess ran short: the next batch goes straight to the budget's execution.)
        node.push_failure_msg("node unavailable");
        assert_eq!(s.estimate(&batch(items)).await.0, batch(items).gas);
        assert!(
            node.read_q().is_empty(),
            "every scripted answer was asked for"
        );
    }

    /// The guess covers what a batch of any size needs: its transaction's own gas, its
    /// items, and the reserve the contract wants left before the last token call (from
    /// `bench gas`: a lone pull 57,149 gas, an item of a full batch ~8,700), with the item
    /// gas learnt from a full batch of 215.
    #[test]
    fn a_guess_covers_a_batch_s_own_overhead_at_every_size() {
        let (item, overhead, reserve) = (8_700u64, 48_500u64, 104_000u64);
        let learnt = (215 * item + overhead) / 215;
        for items in LEARN_FROM..=MAX_BATCH as u64 {
            let needs = overhead + items * item + reserve;
            assert!(
                tight_limit(learnt, items) >= needs,
                "{items} items: {} < {needs}",
                tight_limit(learnt, items)
            );
        }
    }

    #[tokio::test]
    async fn a_small_batch_is_not_guessed_and_leaves_the_next_batches_guessed() {
        let node = Asserter::new();
        let mut s = sender(&node);
        node.push_success(&ran(8_000 * 64));
        s.estimate(&batch(64)).await;
        assert_eq!(s.item_gas(), 8_000);
        // A lone pull: one execution at its budget (its overhead is not in the item gas, so
        // a guess would run short), and the refund bound of its use.
        node.push_success(&ran(57_000));
        assert_eq!(
            s.estimate(&batch(1)).await.0,
            refund_bound(57_000).min(batch(1).gas)
        );
        // The full batch after it is guessed: one execution, at the tight limit.
        node.push_success(&ran(8_000 * 200));
        assert_eq!(
            s.estimate(&batch(200)).await.0,
            tight_limit(8_000, 200).min(refund_bound(8_000 * 200))
        );
        assert!(node.read_q().is_empty(), "one execution a batch");
    }

    #[tokio::test]
    async fn small_batches_do_not_teach_an_item_gas_once_one_is_learnt() {
        let node = Asserter::new();
        let mut s = sender(&node);
        // A lone pull's transaction overhead makes its item look dear: it teaches only
        // while nothing is learnt.
        node.push_success(&ran(60_000));
        s.estimate(&batch(1)).await;
        assert_eq!(s.item_gas(), 60_000);
        node.push_success(&ran(8_000 * 64));
        s.estimate(&batch(64)).await;
        assert_eq!(s.item_gas(), 8_000);
        node.push_success(&ran(60_000));
        s.estimate(&batch(1)).await;
        assert_eq!(s.item_gas(), 8_000, "a batch under LEARN_FROM items taught");
    }
}

#[cfg(test)]
mod tracker_tests {
    //! The tracker's reads of the chain against a node answering from a script: block
    //! receipts read once a block, and the fall back to each flight's own receipt; the
    //! revival of a transaction the node dropped from its pool.
    use super::*;
    use alloy::consensus::{
        Receipt, ReceiptEnvelope, ReceiptWithBloom, SignableTransaction, TxEip1559,
    };
    use alloy::network::TxSignerSync;
    use alloy::providers::ProviderBuilder;
    use alloy::rpc::json_rpc::ErrorPayload;
    use alloy::transports::mock::Asserter;

    fn core(node: &Asserter) -> Core {
        Core {
            provider: ProviderBuilder::new()
                .disable_recommended_fillers()
                .connect_mocked_client(node.clone())
                .erased(),
            wallet: EthereumWallet::from(PrivateKeySigner::random()),
            from: Address::ZERO,
            chain_id: 31_337,
            journal: Arc::new(NoJournal),
            mined_below: Default::default(),
            others_gas: Default::default(),
            trial_excess: Default::default(),
        }
    }

    fn receipt(hash: TxHash, block: u64) -> TransactionReceipt {
        TransactionReceipt {
            inner: ReceiptEnvelope::Eip1559(ReceiptWithBloom {
                receipt: Receipt {
                    status: true.into(),
                    cumulative_gas_used: 21_000,
                    logs: vec![],
                },
                logs_bloom: Default::default(),
            }),
            transaction_hash: hash,
            transaction_index: Some(0),
            block_hash: Some(B256::with_last_byte(block as u8)),
            block_number: Some(block),
            gas_used: 21_000,
            effective_gas_price: 1,
            blob_gas_used: None,
            blob_gas_price: None,
            from: Address::ZERO,
            to: Some(Address::ZERO),
            contract_address: None,
        }
    }

    #[tokio::test]
    async fn block_receipts_are_read_once_a_block_and_each_flight_is_looked_up_otherwise() {
        let node = Asserter::new();
        let core = core(&node);
        let mut scan = BlockScan::default();
        // The first pass: each flight is looked up (what was mined so far is found so).
        node.push_success(&U256::from(10));
        assert!(scan.new_receipts(&core, false).await.is_none());
        // Two blocks later: their receipts, one call a block.
        let (a, b) = (B256::repeat_byte(1), B256::repeat_byte(2));
        node.push_success(&U256::from(12));
        node.push_success(&vec![receipt(a, 11)]);
        node.push_success(&vec![receipt(b, 12)]);
        let got = scan
            .new_receipts(&core, false)
            .await
            .expect("block receipts");
        assert_eq!(got.len(), 2);
        assert_eq!(got[&a].block_number, Some(11));
        assert_eq!(got[&b].block_number, Some(12));
        // No new block: nothing to read, nothing found.
        node.push_success(&U256::from(12));
        assert_eq!(
            scan.new_receipts(&core, false).await.map(|r| r.len()),
            Some(0)
        );
        // A full pass looks each flight up (block 13's receipts, scripted, are not asked
        // for).
        let unasked = vec![receipt(B256::repeat_byte(9), 13)];
        node.push_success(&U256::from(13));
        node.push_success(&unasked);
        assert!(scan.new_receipts(&core, true).await.is_none());
        assert_eq!(node.read_q().len(), 1, "a full pass read block receipts");
        node.pop_response();
        // Further behind than MOST blocks: each flight is looked up instead.
        node.push_success(&U256::from(13 + BlockScan::MOST + 1));
        node.push_success(&unasked);
        assert!(scan.new_receipts(&core, false).await.is_none());
        assert_eq!(node.read_q().len(), 1, "read MOST blocks and more");
        node.pop_response();
    }

    #[tokio::test]
    async fn a_node_that_does_not_serve_block_receipts_is_polled_per_transaction() {
        let node = Asserter::new();
        let core = core(&node);
        let mut scan = BlockScan::default();
        node.push_success(&U256::from(10));
        assert!(scan.new_receipts(&core, false).await.is_none());
        // Refused (an error, or null) GIVE_UP times in a row ...
        for i in 0..BlockScan::GIVE_UP {
            node.push_success(&U256::from(11 + u64::from(i)));
            if i % 2 == 0 {
                node.push_failure_msg("the method eth_getBlockReceipts does not exist");
            } else {
                node.push_success(&serde_json::Value::Null);
            }
            assert!(scan.new_receipts(&core, false).await.is_none());
        }
        // ... and it is not asked again: the block number only, then each flight.
        node.push_success(&U256::from(14));
        node.push_success(&vec![receipt(B256::repeat_byte(4), 14)]);
        assert!(scan.new_receipts(&core, false).await.is_none());
        assert_eq!(node.read_q().len(), 1, "block receipts asked for again");
    }

    #[tokio::test]
    async fn one_refusal_is_not_giving_up() {
        let node = Asserter::new();
        let core = core(&node);
        let mut scan = BlockScan::default();
        node.push_success(&U256::from(10));
        assert!(scan.new_receipts(&core, false).await.is_none());
        node.push_success(&U256::from(11));
        node.push_failure_msg("busy");
        assert!(scan.new_receipts(&core, false).await.is_none());
        // The next block's receipts are read again (the failure count starts over).
        node.push_success(&U256::from(12));
        node.push_success(&vec![receipt(B256::repeat_byte(3), 12)]);
        assert_eq!(
            scan.new_receipts(&core, false).await.map(|r| r.len()),
            Some(1)
        );
        assert_eq!(scan.failures, 0);
    }

    /// A signed transaction at `nonce` (its bytes, hash and the node's view of it).
    fn signed(nonce: u64) -> (Variant, alloy::rpc::types::Transaction) {
        let key = PrivateKeySigner::random();
        let mut tx = TxEip1559 {
            chain_id: 31_337,
            nonce,
            gas_limit: 21_000,
            max_fee_per_gas: 2,
            max_priority_fee_per_gas: 1,
            to: Address::ZERO.into(),
            ..Default::default()
        };
        let signature = key.sign_transaction_sync(&mut tx).unwrap();
        let envelope = TxEnvelope::from(tx.into_signed(signature));
        let variant = Variant {
            hash: *envelope.tx_hash(),
            raw: envelope.encoded_2718().into(),
            fees: Fees { max_fee: 2, tip: 1 },
            cancel: false,
            refused: false,
        };
        let seen = alloy::rpc::types::Transaction {
            inner: alloy::consensus::transaction::Recovered::new_unchecked(envelope, key.address()),
            block_hash: None,
            block_number: None,
            transaction_index: None,
            effective_gas_price: None,
            block_timestamp: None,
        };
        (variant, seen)
    }

    fn flight(nonce: u64, variant: Variant, sent_ago: Duration) -> Flight {
        let sent = Instant::now() - sent_ago;
        Flight {
            nonce,
            payload: Payload {
                to: Address::ZERO,
                input: Bytes::new(),
                gas: 21_000,
                kind: TxKind::PullBatch,
                intents: vec![Intent::Pull(
                    PullId::parse(&format!("pull_{nonce}")).expect("a pull id"),
                )],
            },
            variants: vec![variant],
            first_sent: sent,
            last_sent: sent,
            waiters: Waiters::Nobody,
            trial: None,
        }
    }

    #[tokio::test]
    async fn after_a_block_a_dropped_transaction_is_sent_again_and_a_kept_one_is_not() {
        let node = Asserter::new();
        let core = core(&node);
        let old = REVIVE_AFTER * 2;
        let ((v4, _), (v5, seen5), (v6, _)) = (signed(4), signed(5), signed(6));
        let hash6 = v6.hash;
        let mut pending = vec![
            flight(6, v6, old),
            flight(5, v5, old),
            flight(4, v4, Duration::ZERO), // just sent: not asked about
        ];
        // In nonce order: 5 is in the pool; 6 was dropped and is sent again.
        node.push_success(&seen5);
        node.push_success(&serde_json::Value::Null);
        node.push_success(&hash6);
        revive_dropped(&core, &mut pending).await;
        assert!(
            node.read_q().is_empty(),
            "every scripted answer was asked for"
        );
        assert_eq!(
            pending.iter().map(|f| f.nonce).collect::<Vec<_>>(),
            [4, 5, 6]
        );
        assert!(pending[1].last_sent.elapsed() >= old, "5 was sent again");
        assert!(pending[2].last_sent.elapsed() < old, "6 was not sent again");
    }

    #[tokio::test]
    async fn a_node_that_does_not_serve_its_pool_by_hash_is_not_asked_further() {
        let node = Asserter::new();
        let core = core(&node);
        let old = REVIVE_AFTER * 2;
        let ((v5, _), (v6, _)) = (signed(5), signed(6));
        let mut pending = vec![flight(5, v5, old), flight(6, v6, old)];
        // "Not there", then "already known" when sent: asking tells nothing; 6 is left to
        // the periodic check.
        node.push_success(&serde_json::Value::Null);
        node.push_failure(ErrorPayload {
            code: -32000,
            message: "already known".into(),
            data: None,
        });
        revive_dropped(&core, &mut pending).await;
        assert!(node.read_q().is_empty());
        assert!(pending.iter().all(|f| f.last_sent.elapsed() >= old));
    }
}

#[cfg(test)]
mod log_tests {
    #[test]
    fn object_ids_show_the_first_ten_then_a_count() {
        use openrail_domain::PullId;
        use openrail_domain::journal::Intent;
        let ids: Vec<Intent> = (0..12)
            .map(|i| Intent::Pull(PullId::parse(&format!("pull_{i}")).expect("a pull id")))
            .collect();
        assert_eq!(super::object_ids(&ids[..2]), "pull_0,pull_1");
        let line = super::object_ids(&ids);
        assert!(line.starts_with("pull_0,pull_1,"), "{line}");
        assert!(line.ends_with("pull_9,… (2 more)"), "{line}");
    }
}
