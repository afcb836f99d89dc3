//! Talking to a chain through one or more RPC URLs, surviving a flaky provider.
//!
//! Every request goes to the URL in use; an answer that says nothing about the request
//! itself — HTTP 429 or 5xx, a timeout, a reset connection, a body that does not parse, a
//! JSON-RPC rate-limit error — is retried after a jittered, growing pause, on the next URL
//! (failover), up to [`RpcOptions::attempts`] tries. A JSON-RPC error that answers the
//! request (a revert, "nonce too low") is returned at once: retrying it gives the same
//! answer. Every request Openrail makes is safe to repeat (reads, and
//! `eth_sendRawTransaction` of journaled bytes, whose repeat answers "already known").

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::rpc::client::RpcClient;
use alloy::rpc::json_rpc::{RequestPacket, ResponsePacket};
use alloy::transports::http::Http;
use alloy::transports::http::reqwest::{Client, Url};
use alloy::transports::{RpcError, TransportError, TransportErrorKind, TransportFut};

use crate::ChainError;

/// How requests to a chain are retried.
#[derive(Debug, Clone)]
pub struct RpcOptions {
    /// Tries per request, across all URLs (at least 1).
    pub attempts: u32,
    /// Pause before the first retry; it doubles with each further one, with jitter.
    pub backoff: Duration,
    /// Longest pause between tries.
    pub max_backoff: Duration,
    /// Time limit of one HTTP request.
    pub timeout: Duration,
}

impl Default for RpcOptions {
    fn default() -> Self {
        Self {
            attempts: 6,
            backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(2),
            timeout: Duration::from_secs(10),
        }
    }
}

impl RpcOptions {
    /// The pause before retry number `retry` (0-based): "equal jitter", half of the
    /// exponential step fixed and half random, so clients that failed together do not
    /// retry together.
    pub fn pause(&self, retry: u32, unit_random: f64) -> Duration {
        let step = self
            .backoff
            .saturating_mul(1u32 << retry.min(16))
            .min(self.max_backoff);
        step / 2 + step.mul_f64(unit_random.clamp(0.0, 1.0) / 2.0)
    }
}

/// How to reach a chain: its RPC URLs (the first preferred, the others taken over in
/// turn when it fails) and how requests are retried.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// One or more URLs of the same chain.
    pub urls: Vec<Url>,
    /// Retries and time limits.
    pub options: RpcOptions,
}

impl Endpoint {
    /// The deployment's URL alone, default retries.
    pub fn of(deployment: &crate::deploy::ChainDeployment) -> Result<Self, ChainError> {
        let url = deployment
            .rpc_url
            .parse()
            .map_err(|e| ChainError::Deployment(format!("rpc_url {}: {e}", deployment.rpc_url)))?;
        Ok(Self {
            urls: vec![url],
            options: RpcOptions::default(),
        })
    }

    /// A provider on this endpoint.
    pub fn provider(&self) -> Result<DynProvider, ChainError> {
        connect(&self.urls, &self.options)
    }
}

/// A provider over `urls` (the first preferred) with the retry and failover above.
pub fn connect(urls: &[Url], options: &RpcOptions) -> Result<DynProvider, ChainError> {
    let first = urls
        .first()
        .ok_or_else(|| ChainError::Deployment("no RPC URL".into()))?;
    let http = crate::tls::client_builder()?
        .timeout(options.timeout)
        .build()
        .map_err(|e| ChainError::Deployment(format!("HTTP client: {e}")))?;
    let service = Failover {
        transports: Arc::new(
            urls.iter()
                .map(|u| Http::with_client(http.clone(), u.clone()))
                .collect(),
        ),
        current: Arc::new(AtomicUsize::new(0)),
        options: options.clone(),
    };
    let local = alloy::transports::utils::guess_local_url(first.as_str());
    Ok(ProviderBuilder::new()
        .connect_client(RpcClient::new(service, local))
        .erased())
}

/// Whether an error of one try says nothing about the request (try again, elsewhere).
pub fn is_transient(error: &TransportError) -> bool {
    match error {
        RpcError::Transport(kind) => match kind {
            TransportErrorKind::HttpError(e) => e.status == 429 || e.status >= 500,
            TransportErrorKind::HttpErrorWithRetryAfter { error, .. } => {
                error.status == 429 || error.status >= 500
            }
            TransportErrorKind::MissingBatchResponse(_)
            | TransportErrorKind::BackendGone
            | TransportErrorKind::Custom(_) => true,
            TransportErrorKind::PubsubUnavailable | TransportErrorKind::NonRetryable(_) => false,
            // A kind added by a later alloy: not retried until it is read.
            _ => false,
        },
        // A garbled or truncated body (a proxy's reset mid-answer).
        RpcError::DeserError { .. } | RpcError::NullResp => true,
        // The node's answer to the request itself, unless it is a rate limit.
        RpcError::ErrorResp(payload) => rate_limited(payload.code),
        RpcError::UnsupportedFeature(_) | RpcError::LocalUsageError(_) | RpcError::SerError(_) => {
            false
        }
    }
}

/// JSON-RPC codes providers use for "too many requests" (EIP-1474's -32005, and 429).
fn rate_limited(code: i64) -> bool {
    code == 429 || code == -32005
}

#[derive(Clone)]
struct Failover {
    transports: Arc<Vec<Http<Client>>>,
    /// The URL in use (an index into `transports`, modulo its length).
    current: Arc<AtomicUsize>,
    options: RpcOptions,
}

impl tower::Service<RequestPacket> for Failover {
    type Response = ResponsePacket;
    type Error = TransportError;
    type Future = TransportFut<'static>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: RequestPacket) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            let n = this.transports.len();
            let mut retry = 0;
            loop {
                let at = this.current.load(Ordering::Relaxed);
                let mut transport = this.transports[at % n].clone();
                let result = tower::Service::call(&mut transport, request.clone()).await;
                let transient = match &result {
                    Ok(response) => response.as_error().is_some_and(|e| rate_limited(e.code)),
                    Err(e) => is_transient(e),
                };
                if !transient || retry + 1 >= this.options.attempts.max(1) {
                    return result;
                }
                // The next URL takes over (unless another request moved on already).
                let _ = this.current.compare_exchange(
                    at,
                    at.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
                let pause = this.options.pause(retry, rand::random::<f64>());
                tracing::debug!(
                    retry,
                    ?pause,
                    url = at % n,
                    "RPC request failed transiently; retrying"
                );
                tokio::time::sleep(pause).await;
                retry += 1;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Pauses stay within half and all of the exponential step, capped.
        #[test]
        fn pauses_are_bounded(retry in 0u32..40, r in 0.0f64..=1.0) {
            let o = RpcOptions::default();
            let p = o.pause(retry, r);
            let step = o.backoff.saturating_mul(1 << retry.min(16)).min(o.max_backoff);
            prop_assert!(p >= step / 2 && p <= step);
        }
    }

    #[test]
    fn answers_are_not_retried_but_rate_limits_are() {
        let answer: TransportError = RpcError::ErrorResp(alloy::rpc::json_rpc::ErrorPayload {
            code: -32000,
            message: "nonce too low".into(),
            data: None,
        });
        assert!(!is_transient(&answer));
        let limited: TransportError = RpcError::ErrorResp(alloy::rpc::json_rpc::ErrorPayload {
            code: -32005,
            message: "limit exceeded".into(),
            data: None,
        });
        assert!(is_transient(&limited));
    }
}

/// A depth the chain names rather than a count of blocks: outcomes are final at the
/// chain's `safe` or `finalized` block (a proof-of-stake chain's justified and finalized
/// checkpoints; an L2's node reports its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepthTag {
    /// The `safe` block.
    Safe,
    /// The `finalized` block.
    Finalized,
}

impl DepthTag {
    /// `safe` or `finalized`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "safe" => Some(DepthTag::Safe),
            "finalized" => Some(DepthTag::Finalized),
            _ => None,
        }
    }

    /// The number of the chain's block at this tag now (0 when it has none yet).
    pub async fn number(self, provider: &DynProvider) -> Result<u64, TransportError> {
        let tag = match self {
            DepthTag::Safe => alloy::eips::BlockNumberOrTag::Safe,
            DepthTag::Finalized => alloy::eips::BlockNumberOrTag::Finalized,
        };
        Ok(provider
            .get_block_by_number(tag)
            .await?
            .map(|b| b.header.number)
            .unwrap_or(0))
    }
}
