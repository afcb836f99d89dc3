//! Rust client of Openrail's `/v1` HTTP API, with the modules [`payments`] and [`agentic`]
//! (plus [`bank_accounts`], [`events`], [`identity`] and [`webhooks`]), as the API splits its
//! routes.
//!
//! ```no_run
//! # async fn run() -> Result<(), openrail_client::Error> {
//! let client = openrail_client::Client::new("sk_testnet_…").base_url("http://127.0.0.1:8080");
//! let pull = client.agentic().create_pull(&openrail_client::agentic::CreatePull {
//!     session_key_id: "sk_…".into(),
//!     amount: "5.00".into(),
//!     ..Default::default()
//! }).await?;
//! # Ok(()) }
//! ```
//!
//! Every POST and DELETE carries an `Idempotency-Key` (a fresh one per call unless given),
//! so a retry is safe: network errors, 409 `idempotency_in_progress`, 429 and 503 are
//! retried with the same key, honouring `Retry-After`, up to [`Client::max_retries`].
//! An answer with an error is an [`Error::Api`] carrying the problem's `code`. Lists page
//! through [`Pages`]. Talks HTTP only.

pub mod account;
pub mod agentic;
pub mod bank_accounts;
pub mod events;
mod http;
pub mod identity;
pub mod payments;
pub mod signing;
pub mod webhooks;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use http::{HasId, Pages, Problem};

/// What a call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The API answered with an error (`application/problem+json`).
    #[error("{status} {code}: {detail}", code = .0.code, status = .0.status, detail = .0.detail)]
    Api(Box<Problem>),
    /// The request did not get an answer (connection refused, reset, timed out), after
    /// the retries.
    #[error("network: {0}")]
    Network(#[from] reqwest::Error),
    /// The answer was not what the API documents.
    #[error("unexpected answer: {0}")]
    Decode(String),
    /// Signing failed (a malformed typed-data document or key).
    #[error("signing: {0}")]
    Signing(String),
    /// A webhook's signature or timestamp did not check out.
    #[error("webhook: {0}")]
    Webhook(&'static str),
    /// A credential posted to be attested did not verify (the API's 422 with the
    /// verification): its `problem_details` say why.
    #[error("the credential does not verify: {}", .0.problem_names().join(", "))]
    NotVerified(Box<identity::Verification>),
}

impl Error {
    /// The problem's stable `code` (`allowance_exceeded`, …), when the API answered one.
    pub fn code(&self) -> Option<&str> {
        match self {
            Error::Api(p) => Some(&p.code),
            Error::Network(_)
            | Error::Decode(_)
            | Error::Signing(_)
            | Error::Webhook(_)
            | Error::NotVerified(_) => None,
        }
    }

    /// The problem, when the API answered one.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            Error::Api(p) => Some(p),
            Error::Network(_)
            | Error::Decode(_)
            | Error::Signing(_)
            | Error::Webhook(_)
            | Error::NotVerified(_) => None,
        }
    }
}

/// A client of the API: cheap to clone, one connection pool.
#[derive(Debug, Clone)]
pub struct Client {
    pub(crate) http: reqwest::Client,
    pub(crate) base: String,
    pub(crate) key: String,
    pub(crate) max_retries: u32,
    pub(crate) wait: Option<u64>,
}

impl Client {
    /// A client with `key` (an API key `sk_testnet_…`/`sk_mainnet_…`, or a session key's
    /// secret `sks_…` for an agent), talking to `http://127.0.0.1:8080` until
    /// [`Client::base_url`] says otherwise.
    pub fn new(key: impl Into<String>) -> Self {
        Self {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(75))
                .build()
                .unwrap_or_default(),
            base: "http://127.0.0.1:8080".into(),
            key: key.into(),
            max_retries: 3,
            wait: None,
        }
    }

    /// A client without a key: only what the API serves anonymously works (verifying a
    /// credential, rate-limited per address; reading a status list).
    pub fn anonymous() -> Self {
        Self::new("")
    }

    /// The API's base URL (no trailing `/v1`).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base = url.into().trim_end_matches('/').to_string();
        self
    }

    /// How many times a call is retried after a network error, 409
    /// `idempotency_in_progress`, 429 or 503 (default 3; 0: never).
    pub fn max_retries(mut self, n: u32) -> Self {
        self.max_retries = n;
        self
    }

    /// How long POSTs wait for the chain, whole seconds (`Prefer: wait=N`; the API's
    /// default is 10, its maximum 60).
    pub fn prefer_wait(mut self, seconds: u64) -> Self {
        self.wait = Some(seconds);
        self
    }

    /// Mandates, session keys and debit pulls.
    pub fn agentic(&self) -> agentic::Agentic<'_> {
        agentic::Agentic(self)
    }

    /// One-time payments.
    pub fn payments(&self) -> payments::Payments<'_> {
        payments::Payments(self)
    }

    /// Simulated bank accounts (testnet).
    pub fn bank_accounts(&self) -> bank_accounts::BankAccounts<'_> {
        bank_accounts::BankAccounts(self)
    }

    /// Your account's settings (where its one-time payments settle).
    pub fn account(&self) -> account::AccountSettings<'_> {
        account::AccountSettings(self)
    }

    /// W3C Verifiable Credentials: verify credentials and presentations, challenges,
    /// issuing, revoking, status lists; verification sessions and attestations.
    pub fn identity(&self) -> identity::Identity<'_> {
        identity::Identity(self)
    }

    /// Events.
    pub fn events(&self) -> events::Events<'_> {
        events::Events(self)
    }

    /// Webhook endpoints and their deliveries.
    pub fn webhook_endpoints(&self) -> webhooks::WebhookEndpoints<'_> {
        webhooks::WebhookEndpoints(self)
    }
}

/// Where an object lives on chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OnChain {
    /// The settlement chain.
    pub chain_id: u64,
    /// The allowance state machine (or router).
    pub contract: String,
    /// The object's id on chain (bytes32, `0x…`).
    pub id: String,
    /// The transaction that created it, once sent.
    pub tx_hash: Option<String>,
}

/// A payer's consent: what the payer signs, or that a bank mandate stands for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Consent {
    /// `payer_signature` or `bank_mandate`.
    pub method: String,
    /// The EIP-712 document to sign (`eth_signTypedData_v4`), for `payer_signature`.
    #[serde(default)]
    pub typed_data: Option<serde_json::Value>,
    /// The signature's on-chain deadline.
    #[serde(default)]
    pub expires_at: Option<String>,
    /// When it was given.
    #[serde(default)]
    pub authorized_at: Option<String>,
}

/// Options of a list call (`limit` 1–100, `starting_after` an id of the list).
#[derive(Debug, Clone, Default)]
pub struct ListParams {
    /// Objects per page (the API's default is 10, at most 100).
    pub limit: Option<u32>,
    /// Start after this object (the pages go newest first).
    pub starting_after: Option<String>,
    /// Filters as the list documents them (`status`, `mandate_id`, `type`, …).
    pub filters: Vec<(String, String)>,
}

impl ListParams {
    /// Adds the filter `name=value`.
    pub fn filter(mut self, name: &str, value: &str) -> Self {
        self.filters.push((name.into(), value.into()));
        self
    }

    /// Sets the page size.
    pub fn limit(mut self, n: u32) -> Self {
        self.limit = Some(n);
        self
    }
}

/// Options of a POST or DELETE.
#[derive(Debug, Clone, Default)]
pub struct RequestOptions {
    /// The `Idempotency-Key` (default: a fresh random one per call, kept across its
    /// retries).
    pub idempotency_key: Option<String>,
}
