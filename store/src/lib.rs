//! Every SQL query and the migrations runner, with the rows of each object. [`Store`] is
//! the connection (connect, backend, migrations, `ops_snapshot`); each aggregate is
//! reached through a small `Copy` handle borrowing it, which carries that aggregate's
//! methods: `store.mandates()`, `keys()`, `pulls()`, `payments()`, `consent()`, `bank()`,
//! `journal()`, `idempotency()`, `outbox()`, `events()`, `webhooks()`, `accounts()`,
//! `api_keys()`, `dashboard()`, `identity()`, `attestations()`, `verifications()`,
//! `leases()`. What runs inside another aggregate's transaction is a free `*_in(conn, …)`
//! function of its module.
//!
//! The modules import each other without a cycle (`xtask/src/module_graph.rs`): `sql`
//! (backend, errors, placeholders) and `exec` (one statement, either executor) at the
//! bottom; `inline` and `db` (the `Store`) above them; `rows` (each object's row type and
//! reader) above `db`; `outbox` and `events` (whose snapshots hold the rows) above `rows`;
//! the aggregates above them; and `group`, the group writer, above the aggregates it
//! writes (`db` keeps its queue without naming its type).
//!
//! Money, epochs, each object's typed id and lifecycle with its transitions (one domain
//! module per object), secrets' hashes and the mode, the journal's `TxKind`/`TxStatus`, a
//! pull's `DeclineReason`/`PullResolution`, and the `crash` points and `stages` marks live
//! in `openrail-domain`, so the chain crate names them without depending on this one; they
//! are re-exported here under their old paths (`money`, `epoch`, `ids`, `crash`,
//! `stages`, `journal::TxKind`, `agentic::DeclineReason`, `agentic::MandateStatus`,
//! `events::EventType`, …; the crates above name ids from the domain), as are the rows
//! under their aggregates' paths
//! (`agentic::Mandate`, `payments::Payment`, …). This crate's `crash-points` feature turns
//! on the domain's. It knows nothing of HTTP or chains.

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
mod rows;
pub use openrail_domain::stages;
mod sql;
pub mod testing;
pub mod verification;
pub mod verifications;
pub mod webhooks;
mod writer;

pub use db::{Backend, Store, StoreError};
pub use epoch::{Epoch, Interval};
pub use ids::Mode;
pub use money::{Amount, AmountError, Currency};

/// Now, in unix milliseconds.
pub fn now_ms() -> i64 {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970");
    i64::try_from(d.as_millis()).expect("milliseconds fit in i64")
}
