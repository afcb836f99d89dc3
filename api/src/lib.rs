//! The axum HTTP API (`/v1`, the dashboard, the hosted consent page): authentication,
//! validation, the one mapping from errors to problem+json ([`error`]), idempotency, rate
//! limits, and every resource (mandates, session keys, debit pulls, payments, bank
//! accounts, events, webhook endpoints, identity). A handler parses the request, asks the
//! engine's services (`openrail-engine`) to judge and write it — the object, its events
//! and its work in one database transaction — and answers with the object as it is when
//! the engine has sent the work, or 202 past the request's wait. It sends no transaction
//! and holds no SQL.

/// The handler modules, declared here and nowhere else. Each declares its operations
/// beside its handlers (`route::Route` constants) and lists them in its `OPERATIONS`;
/// [`openapi::ROUTES`], which the router and the OpenAPI document are built from, is
/// theirs in this order. A module that shows an object whose changes are events names it
/// here with its store snapshot and its response type (a type of the module's own
/// `types`: `$module::types::$view`), and implements [`represent::Represent`] for the
/// snapshot: [`ApiObject`] (an event's `data.object`) is composed from these. A new
/// object's handlers are its module (`api/src/<module>/`: its handlers in `mod.rs`, its
/// request and response types in `types.rs`, its renderings of the store's rows in
/// `views.rs`) and its line here; [`types`] holds only the vocabulary objects share.
macro_rules! handlers {
    ($($module:ident $({ $($(#[$doc:meta])* $kind:ident($snapshot:ident) => $view:ident),+ $(,)? })?),+ $(,)?) => {
        $(pub mod $module;)+

        /// Each handler module's operations, in the document's order.
        const HANDLER_ROUTES: &[&[&route::Route]] = &[$($module::OPERATIONS),+];

        /// An event's object: exactly what a GET of it answered at the moment of the event.
        #[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
        #[serde(untagged)]
        pub enum ApiObject {
            $($($(
                $(#[$doc])*
                $kind($module::types::$view),
            )+)?)+
        }

        impl ApiObject {
            /// The representation of `snap` at `now` (unix ms).
            pub(crate) fn of(
                state: &AppState,
                snap: &openrail_store::events::Snapshot,
                now: i64,
            ) -> Result<ApiObject, error::ApiError> {
                use represent::Represent;
                Ok(match snap {
                    $($($(openrail_store::events::Snapshot::$kind(s) => ApiObject::$kind(s.represent(state, now)?),)+)?)+
                })
            }
        }
    };
}

handlers! {
    agentic {
        /// A mandate.
        Mandate(MandateSnapshot) => Mandate,
        /// A session key.
        SessionKey(SessionKeySnapshot) => SessionKey,
        /// A debit pull.
        DebitPull(DebitPullSnapshot) => DebitPull,
    },
    agent_credentials,
    payments {
        /// A payment.
        Payment(PaymentSnapshot) => Payment
    },
    bank {
        /// A bank transfer.
        BankTransfer(BankTransferSnapshot) => BankTransfer
    },
    events,
    webhooks {
        /// A webhook endpoint.
        WebhookEndpoint(WebhookEndpointSnapshot) => WebhookEndpoint
    },
    account,
    identity,
    verifications {
        /// An identity verification session.
        IdentityVerification(IdentityVerificationSnapshot) => IdentityVerification
    },
    attestations {
        /// An identity attestation.
        Attestation(AttestationSnapshot) => IdentityAttestation
    },
    openapi,
}

pub mod body;
pub mod consent;
pub mod context;
pub mod dashboard;
pub mod docs;
pub mod error;
pub mod hardening;
pub mod health;
pub mod metrics;
mod middleware;
mod represent;
mod rfc3339;
pub mod route;
pub mod server;
pub mod types;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use openrail_store::Store;

pub use error::ApiError;
pub use openrail_engine::network::Network;
use openrail_webhooks as delivery;

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
    /// This process's name in leases (see [`openrail_engine::lead`]); unique per process.
    pub node_id: String,
    /// Length of this process's liveness lease (`node:<node_id>`, renewed every third of
    /// it while the API serves): a dead process's idempotency claims are recovered once
    /// it expires.
    pub node_ttl: Duration,
    /// The address the API binds (loopback unless told).
    pub bind: std::net::IpAddr,
    /// The URL this process is known by (recorded in its leases, for operators); default:
    /// the bound address and port. No process sends requests to another.
    pub advertise_url: Option<String>,
    /// Failed authentications a client address may make per second, sustained.
    pub auth_failures_per_sec: f64,
    /// Failed authentications a client address may make in a burst; then 429.
    pub auth_failure_burst: f64,
    /// Requests without a key a client address may make per second, sustained, to the
    /// operations open to anyone (credential verification).
    pub anonymous_per_sec: f64,
    /// Requests without a key a client address may make in a burst; then 429.
    pub anonymous_burst: f64,
    /// How long a payer has to sign a mandate or payment (the signature's on-chain
    /// deadline), whole seconds.
    pub authorization_ttl: Duration,
    /// A block explorer's transaction page with `{tx}` where the hash goes, for the
    /// dashboard's links (none: hashes are shown without links).
    pub explorer_tx_url: Option<String>,
    /// The reverse proxies whose `Forwarded` / `X-Forwarded-For` (and
    /// `X-Forwarded-Proto`) are believed (none by default: the peer is the client).
    pub trusted_proxies: hardening::TrustedProxies,
    /// Which non-public addresses webhook endpoints may name (`serve`: none unless told).
    pub webhook_targets: delivery::Targets,
    /// Sign-ups allowed per client address in the dashboard's failure window (15 minutes;
    /// counted in the database, so shared by every process).
    pub max_signups_per_address: i64,
    /// How long `/readyz` waits for the database and for each chain's RPC.
    pub ready_timeout: Duration,
    /// When set, `/readyz` also wants each chain's head block no older than this (off by
    /// default: local chains mine only when sent a transaction).
    pub ready_max_head_age: Option<Duration>,
}

impl Default for ApiConfig {
    fn default() -> Self {
        Self {
            default_wait: Duration::from_secs(10),
            max_wait: Duration::from_secs(60),
            rate_per_sec: 1000.0,
            rate_burst: 2000.0,
            node_id: openrail_store::ids::random_id("node_", 12),
            node_ttl: Duration::from_secs(10),
            authorization_ttl: Duration::from_secs(3600),
            auth_failures_per_sec: 1.0,
            auth_failure_burst: 20.0,
            anonymous_per_sec: 5.0,
            anonymous_burst: 50.0,
            bind: std::net::IpAddr::from([127, 0, 0, 1]),
            advertise_url: None,
            explorer_tx_url: None,
            trusted_proxies: hardening::TrustedProxies::default(),
            webhook_targets: delivery::Targets::default(),
            max_signups_per_address: 10,
            ready_timeout: Duration::from_secs(2),
            ready_max_head_age: None,
        }
    }
}

/// Shared state of every handler: one allocation, shared. Every middleware layer and
/// handler takes its own copy of the state for each request, so a copy is one reference
/// count (a profile of `bench pulls` found the field-by-field copies and drops — the
/// configuration's strings, the store's channels — at about 4 % of the server's CPU).
#[derive(Debug, Clone)]
pub struct AppState(Arc<Shared>);

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// What [`AppState`] shares.
#[derive(Debug)]
pub struct Shared {
    /// The database.
    pub store: Store,
    /// Chains of testnet keys.
    pub testnet: Option<Arc<Network>>,
    /// Chains of mainnet keys; `None` answers 503 `mainnet_unavailable`.
    pub mainnet: Option<Arc<Network>>,
    /// Tunables.
    pub config: ApiConfig,
    limiter: Arc<middleware::RateLimiter>,
    /// Failed authentications per client address.
    auth_failures: Arc<middleware::RateLimiter>,
    /// Requests without a key to operations open to anyone, per client address.
    anonymous: Arc<middleware::RateLimiter>,
    /// Whether this process is shutting down (see [`health::Lifecycle`]).
    pub lifecycle: Arc<health::Lifecycle>,
    /// The URL this process is known by once it listens (the configured `advertise_url`,
    /// else its bound address): what it signs into URLs it publishes, such as its status
    /// lists, never what a request's `Host` says.
    pub public_url: Arc<std::sync::OnceLock<String>>,
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
        let auth_failures = Arc::new(middleware::RateLimiter::new(
            config.auth_failures_per_sec,
            config.auth_failure_burst,
        ));
        let anonymous = Arc::new(middleware::RateLimiter::new(
            config.anonymous_per_sec,
            config.anonymous_burst,
        ));
        Self(Arc::new(Shared {
            store,
            testnet,
            mainnet,
            config,
            limiter,
            auth_failures,
            anonymous,
            lifecycle: Arc::default(),
            public_url: Arc::default(),
        }))
    }
}

/// The whole HTTP application. The `/v1` routes come from [`openapi::ROUTES`], the same
/// list the OpenAPI document is generated from (each operation declared once, beside its
/// handler).
pub fn router(state: AppState) -> Router {
    // The recorder exists before the first request is counted.
    let _ = metrics::handle();
    // One router per kind: the public routes outside authentication, the others in `/v1`.
    let by_path = |public: bool| {
        let mut router = Router::new();
        let mut paths: Vec<&str> = Vec::new();
        for route in openapi::ROUTES.iter() {
            if route.is_public() == public && !paths.contains(&route.path) {
                paths.push(route.path);
            }
        }
        for path in paths {
            let mut methods = axum::routing::MethodRouter::new();
            for route in openapi::ROUTES.iter().filter(|r| r.path == path) {
                methods = methods.merge((route.handler)());
            }
            router = router.route(path, methods);
        }
        router
    };
    let v1 = by_path(false)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            middleware::idempotency,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            middleware::authenticate,
        ));
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .merge(by_path(true))
        .route("/docs", get(docs::page))
        .route("/docs/redoc.standalone.js", get(docs::redoc))
        .route("/docs/init.js", get(docs::init))
        .merge(v1)
        .merge(dashboard::routes())
        .fallback(middleware::not_found)
        .method_not_allowed_fallback(middleware::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            health::refuse_while_draining,
        ))
        .layer(axum::middleware::from_fn(middleware::request_id))
        .layer(axum::middleware::from_fn(hardening::security_headers))
        .layer(axum::middleware::from_fn(metrics::http))
        .with_state(state)
}

/// How the webhook deliverer (`openrail-webhooks`) renders an event: as
/// `GET /v1/events/{id}` answers it, with the networks of the mode.
pub fn webhook_renderer(
    store: Store,
    testnet: Option<Arc<Network>>,
    mainnet: Option<Arc<Network>>,
) -> openrail_webhooks::Render {
    let state = AppState::new(store, testnet, mainnet, ApiConfig::default());
    Arc::new(move |e| {
        let v = events::render(&state, e).map_err(|e| e.to_string())?;
        serde_json::to_vec(&v).map_err(|e| e.to_string())
    })
}
