//! The axum HTTP API (`/v1`): authentication, validation, the one mapping from errors to
//! problem+json ([`error`]), idempotency, rate limits, and the agentic-debit resources
//! (mandates, session keys, debit pulls). It persists through `openrail-store` and turns
//! requests into transactions through `openrail-chain`'s submitter; it holds no SQL.

pub mod agentic;
pub mod body;
pub mod error;
mod middleware;
pub mod network;
pub mod server;
mod views;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::{get, post};
use openrail_store::Store;

pub use error::ApiError;
pub use network::Network;

/// Tunables of the API.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// How long a POST waits for the chain by default (`Prefer: wait=N` overrides).
    pub default_wait: Duration,
    /// Longest wait a client may ask for.
    pub max_wait: Duration,
    /// Sustained requests per second per credential.
    pub rate_per_sec: f64,
    /// Burst size per credential.
    pub rate_burst: f64,
}

impl Default for ApiConfig {
    fn default() -> Self {
        Self {
            default_wait: Duration::from_secs(10),
            max_wait: Duration::from_secs(60),
            rate_per_sec: 1000.0,
            rate_burst: 2000.0,
        }
    }
}

/// Shared state of every handler.
#[derive(Debug, Clone)]
pub struct AppState {
    /// The database.
    pub store: Store,
    /// Chains of testnet keys.
    pub testnet: Option<Arc<Network>>,
    /// Chains of mainnet keys; `None` answers 503 `mainnet_unavailable`.
    pub mainnet: Option<Arc<Network>>,
    /// Tunables.
    pub config: ApiConfig,
    limiter: Arc<middleware::RateLimiter>,
}

impl AppState {
    /// State with the given networks and configuration.
    pub fn new(
        store: Store,
        testnet: Option<Arc<Network>>,
        mainnet: Option<Arc<Network>>,
        config: ApiConfig,
    ) -> Self {
        let limiter = Arc::new(middleware::RateLimiter::new(
            config.rate_per_sec,
            config.rate_burst,
        ));
        Self {
            store,
            testnet,
            mainnet,
            config,
            limiter,
        }
    }
}

/// The whole HTTP application.
pub fn router(state: AppState) -> Router {
    let v1 = Router::new()
        .route(
            "/v1/mandates",
            post(agentic::create_mandate).get(agentic::list_mandates),
        )
        .route("/v1/mandates/{id}", get(agentic::get_mandate))
        .route("/v1/mandates/{id}/cancel", post(agentic::cancel_mandate))
        .route(
            "/v1/session-keys",
            post(agentic::create_session_key).get(agentic::list_session_keys),
        )
        .route(
            "/v1/session-keys/{id}",
            get(agentic::get_session_key).delete(agentic::revoke_session_key),
        )
        .route(
            "/v1/debit-pulls",
            post(agentic::create_pull).get(agentic::list_pulls),
        )
        .route("/v1/debit-pulls/{id}", get(agentic::get_pull))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            middleware::idempotency,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            middleware::authenticate,
        ));
    Router::new()
        .route(
            "/healthz",
            get(|| async { axum::Json(serde_json::json!({"status": "ok"})) }),
        )
        .merge(v1)
        .fallback(middleware::not_found)
        .method_not_allowed_fallback(middleware::method_not_allowed)
        .layer(axum::middleware::from_fn(middleware::request_id))
        .with_state(state)
}
