//! Liveness and readiness, for a supervisor or a load balancer (not part of `/v1`, not in
//! the OpenAPI document, no authentication).
//!
//! - `GET /healthz`: the process is alive and its HTTP server answers; nothing else is
//!   checked (a supervisor restarts a process that fails it; a dead database must not
//!   restart every process).
//! - `GET /readyz`: this process should get traffic: it is not shutting down, its
//!   database answers within [`crate::ApiConfig::ready_timeout`], and every chain it
//!   serves answers its RPC head within that timeout (and, when
//!   [`crate::ApiConfig::ready_max_head_age`] is set, the head block is no older than
//!   that). 503 `application/problem+json` naming each failed check otherwise. Holding a
//!   chain's lease is not part of readiness: a follower serves every request.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use alloy::providers::Provider;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::AppState;
use openrail_engine::network::Network;

/// Whether this process is shutting down: set first on SIGTERM / Ctrl-C, so `/readyz`
/// turns 503 and new requests are refused ([`refuse_while_draining`]) while those in
/// flight finish; and when the last request arrived, so the listener is closed only once
/// requests stop arriving.
#[derive(Debug)]
pub struct Lifecycle {
    draining: AtomicBool,
    started: Instant,
    /// Milliseconds from `started` to the start of the latest request.
    last_request_ms: AtomicU64,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Self {
            draining: AtomicBool::new(false),
            started: Instant::now(),
            last_request_ms: AtomicU64::new(0),
        }
    }
}

impl Lifecycle {
    /// Starts draining (for good).
    pub fn drain(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    /// Whether draining has started.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Notes that a request started now.
    fn request_started(&self) {
        let ms = self.started.elapsed().as_millis() as u64;
        self.last_request_ms.fetch_max(ms, Ordering::Relaxed);
    }

    /// How long since the latest request started.
    pub fn quiet_for(&self) -> Duration {
        let now = self.started.elapsed().as_millis() as u64;
        Duration::from_millis(now.saturating_sub(self.last_request_ms.load(Ordering::Relaxed)))
    }
}

/// While the process drains, answers every new request (but `/healthz` and `/readyz`)
/// 503 `temporarily_unavailable` with `Retry-After: 1` and `Connection: close`: a definite
/// answer (nothing was done; send it again, another process answers it) instead of a
/// connection closed under it. Requests that started before the drain run to their end.
pub async fn refuse_while_draining(
    State(state): State<AppState>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    state.lifecycle.request_started();
    let probe = matches!(req.uri().path(), "/healthz" | "/readyz");
    if !state.lifecycle.is_draining() || probe {
        return next.run(req).await;
    }
    let c = crate::error::ErrorCode::TemporarilyUnavailable;
    let code = c.as_str();
    let problem = crate::error::Problem {
        type_: format!("https://docs.openrail.dev/errors/{code}"),
        title: c.title(),
        status: c.status().as_u16(),
        detail: "this server is stopping and took nothing from this request: send it again".into(),
        code,
        param: None,
        request_id: crate::context::current_request_id(),
        extra: Default::default(),
        retry_after: Some(1),
    };
    let mut res = problem.into_response();
    res.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    res
}

/// `GET /healthz`
pub async fn healthz() -> Response {
    axum::Json(json!({"status": "ok"})).into_response()
}

/// `GET /readyz`
pub async fn readyz(State(state): State<AppState>) -> Response {
    let mut failed: Vec<String> = Vec::new();
    if state.lifecycle.is_draining() {
        failed.push("shutting down".into());
    }
    let timeout = state.config.ready_timeout;
    let lease = openrail_store::lease::node_lease(&state.config.node_id);
    match tokio::time::timeout(timeout, state.store.leases().get(&lease)).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "readiness: the database failed");
            failed.push("database: the query failed".into());
        }
        Err(_) => failed.push(format!("database: no answer within {timeout:?}")),
    }
    let networks: Vec<Arc<Network>> = state
        .testnet
        .iter()
        .chain(state.mainnet.iter())
        .cloned()
        .collect();
    for net in &networks {
        for chain in net.chains() {
            if let Err(why) = chain_ready(chain, timeout, state.config.ready_max_head_age).await {
                failed.push(format!("chain {}: {why}", chain.chain_id));
            }
        }
    }
    if failed.is_empty() {
        return axum::Json(json!({"status": "ready"})).into_response();
    }
    let body = json!({
        "type": "about:blank",
        "title": "Not ready",
        "status": 503,
        "detail": failed.join("; "),
        "checks_failed": failed,
    });
    let mut res = (StatusCode::SERVICE_UNAVAILABLE, body.to_string()).into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    res
}

/// Whether `chain`'s RPC answers its head within `timeout`, and the head is no older than
/// `max_age` when given.
async fn chain_ready(
    chain: &Network,
    timeout: Duration,
    max_age: Option<Duration>,
) -> Result<(), String> {
    let Some(max_age) = max_age else {
        return match tokio::time::timeout(timeout, chain.reader.get_block_number()).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(format!("the RPC failed ({e})")),
            Err(_) => Err(format!("the RPC gave no head within {timeout:?}")),
        };
    };
    let head = tokio::time::timeout(
        timeout,
        chain
            .reader
            .get_block_by_number(alloy::eips::BlockNumberOrTag::Latest),
    )
    .await
    .map_err(|_| format!("the RPC gave no head within {timeout:?}"))?
    .map_err(|e| format!("the RPC failed ({e})"))?
    .ok_or("the RPC has no latest block")?;
    let age_s = (openrail_store::now_ms() / 1000).saturating_sub(head.header.timestamp as i64);
    if age_s > max_age.as_secs() as i64 {
        return Err(format!(
            "its head (block {}) is {age_s} s old, more than {} s",
            head.header.number,
            max_age.as_secs()
        ));
    }
    Ok(())
}
