use std::time::Duration;

/// Errors of the chain layer.
#[derive(Debug, thiserror::Error)]
pub enum ChainError {
    /// The anvil binary could not be found.
    #[error("anvil not found: run `make setup` at the repository root or set OPENRAIL_ANVIL")]
    AnvilNotFound,
    /// The anvil process could not be started or died while starting.
    #[error("anvil failed to start: {0}")]
    AnvilStart(String),
    /// Anvil did not report its listening address in time.
    #[error("anvil did not start within {0:?}")]
    AnvilTimeout(Duration),
    /// A JSON-RPC transport error (connection refused, timeout, malformed response).
    #[error("rpc error: {0}")]
    Rpc(#[from] alloy::transports::TransportError),
    /// A contract call or deployment failed (revert, decoding, transport).
    #[error("contract error: {0}")]
    Contract(#[from] alloy::contract::Error),
    /// Waiting for a transaction's receipt failed.
    #[error("pending transaction error: {0}")]
    PendingTx(#[from] alloy::providers::PendingTransactionError),
    /// A transaction was mined but reverted.
    #[error("transaction {0} reverted")]
    Reverted(alloy::primitives::TxHash),
    /// A deployment landed at another address than predicted.
    #[error("deployment check failed: {0}")]
    Deployment(String),
    /// The deployment manifest could not be read or written.
    #[error("manifest {path}: {source}")]
    Manifest {
        /// Path of the manifest.
        path: String,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// The submitter task has stopped (the server is shutting down).
    #[error("the transaction submitter has stopped")]
    SubmitterStopped,
    /// Building, signing or matching a transaction failed.
    #[error("submit: {0}")]
    Submit(String),
    /// A signer refused or failed to sign a message (an attestation receipt).
    #[error("signing failed: {0}")]
    Signing(String),
    /// The journal could not persist a transaction before broadcast.
    #[error("journal: {0}")]
    Journal(String),
    /// This process no longer holds the chain's lease: another process sends its
    /// transactions now, and nothing was sent.
    #[error("this process no longer holds the chain's lease; nothing was sent")]
    LeaseLost,
    /// The deployment manifest is not valid JSON of the expected shape.
    #[error("manifest is malformed: {0}")]
    ManifestFormat(#[from] serde_json::Error),
    /// The node refused a transaction for good (see [`Refusal::Definite`]); nothing of it
    /// was mined.
    #[error("the node refused the transaction: {0}")]
    Refused(String),
    /// The submitter gave up on a transaction (past its fee cap or deadline) and a
    /// zero-value self-send took its nonce: its work was not done.
    #[error("the transaction with nonce {0} was cancelled")]
    Canceled(u64),
}

/// What a node's error answer to `eth_sendRawTransaction` means. Nodes give these no codes
/// of their own (geth, reth and anvil answer -32000 or -32003 with a sentence), so this is
/// the one place the sentences are read; everything else matches on the variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The node has this very transaction already ("already known", anvil's "transaction
    /// already imported"): it is in flight.
    AlreadyKnown,
    /// A mined transaction has this nonce ("nonce too low"): ours, or an outside one.
    NonceTooLow,
    /// It pays too little for now: another transaction with its nonce pays more
    /// ("replacement transaction underpriced"), or the pool's floor or the base fee is
    /// higher ("transaction underpriced", "max fee per gas less than block base fee").
    /// The submitter looks again and replaces it.
    Underpriced,
    /// No definite answer (a timeout, a reset, a 5xx after every retry): it may have
    /// arrived.
    Unknown(String),
    /// A definite refusal of the transaction itself (insufficient funds, gas, size, …).
    Definite(String),
}

impl Refusal {
    /// Classifies a failed `eth_sendRawTransaction`.
    pub fn classify(error: &alloy::transports::TransportError) -> Self {
        use alloy::transports::RpcError;
        match error {
            RpcError::ErrorResp(payload) if !crate::rpc::is_transient(error) => {
                let m = payload.message.to_ascii_lowercase();
                if m.contains("already known") || m.contains("already imported") {
                    Refusal::AlreadyKnown
                } else if m.contains("nonce too low") || m.contains("nonce has already been used") {
                    Refusal::NonceTooLow
                } else if m.contains("underpriced")
                    || m.contains("less than block base fee")
                    || m.contains("fee cap less than block base fee")
                    || m.contains("fee too low")
                {
                    Refusal::Underpriced
                } else {
                    Refusal::Definite(payload.message.to_string())
                }
            }
            other => Refusal::Unknown(other.to_string()),
        }
    }

    /// Words for logs and errors.
    pub fn describe(&self) -> String {
        match self {
            Refusal::AlreadyKnown => "already known".into(),
            Refusal::NonceTooLow => "nonce too low".into(),
            Refusal::Underpriced => "underpriced".into(),
            Refusal::Unknown(m) | Refusal::Definite(m) => m.clone(),
        }
    }
}

impl ChainError {
    /// Whether retrying the same operation later may succeed (network trouble, a node
    /// still starting), as opposed to a definite answer such as a revert.
    pub fn is_transient(&self) -> bool {
        match self {
            ChainError::Rpc(e) => transport_is_transient(e),
            ChainError::Contract(alloy::contract::Error::TransportError(e)) => {
                transport_is_transient(e)
            }
            ChainError::Contract(_) => false,
            ChainError::PendingTx(alloy::providers::PendingTransactionError::TransportError(e)) => {
                transport_is_transient(e)
            }
            ChainError::PendingTx(_) => true,
            ChainError::AnvilTimeout(_) | ChainError::Journal(_) => true,
            ChainError::SubmitterStopped
            | ChainError::Submit(_)
            | ChainError::LeaseLost
            | ChainError::Refused(_)
            | ChainError::Signing(_)
            | ChainError::Canceled(_) => false,
            ChainError::AnvilNotFound
            | ChainError::AnvilStart(_)
            | ChainError::Reverted(_)
            | ChainError::Deployment(_)
            | ChainError::Manifest { .. }
            | ChainError::ManifestFormat(_) => false,
        }
    }
}

fn transport_is_transient(e: &alloy::transports::TransportError) -> bool {
    use alloy::transports::RpcError;
    match e {
        // The connection failed or the node is unreachable: try again later.
        RpcError::Transport(_) | RpcError::NullResp => true,
        // The node answered with a definite error (a revert, a bad request), or the request
        // could not be built: retrying the same thing gives the same answer.
        RpcError::ErrorResp(_)
        | RpcError::UnsupportedFeature(_)
        | RpcError::LocalUsageError(_)
        | RpcError::SerError(_)
        | RpcError::DeserError { .. } => false,
    }
}
