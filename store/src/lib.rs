//! Every SQL query and the migrations runner, with the ids and rows of each object. Money,
//! epochs and the lifecycles with their transitions live in `openrail-domain` (re-exported
//! here as `money`, `epoch` and in each object's module); this crate knows nothing of HTTP
//! or chains.

#[macro_use]
extern crate openrail_domain;

pub mod accounts;
pub mod agentic;
pub mod attestation;
pub mod attestations;
pub mod bank;
pub mod consent;
pub use openrail_domain::crash;
pub mod dashboard;
pub mod db;
pub use openrail_domain::epoch;
pub mod events;
mod exec;
mod group;
pub mod identity;
pub mod ids;
mod inline;
pub mod journal;
pub mod lease;
mod migrations;
pub mod ops_metrics;
pub use openrail_domain::money;
pub mod outbox;
pub mod payments;
pub use openrail_domain::stages;
pub mod testing;
pub mod verification;
pub mod verifications;
pub mod webhooks;

pub use db::{Backend, Store, StoreError};
pub use epoch::{Epoch, Interval};
pub use ids::{
    AccountId, ApiKeyId, AttestationId, BankAccountId, BankTransferId, EventId, MandateId, Mode,
    PaymentId, PullId, SessionKeyId, WebhookDeliveryId, WebhookEndpointId,
};
pub use money::{Amount, AmountError, Currency};

/// Now, in unix milliseconds.
pub fn now_ms() -> i64 {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970");
    i64::try_from(d.as_millis()).expect("milliseconds fit in i64")
}
