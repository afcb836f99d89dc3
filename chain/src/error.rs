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
            ChainError::SubmitterStopped | ChainError::Submit(_) | ChainError::LeaseLost => false,
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
