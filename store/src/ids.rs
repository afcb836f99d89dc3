//! Identifiers, secrets' hashes and the mode: they live in `openrail_domain::ids` (so the
//! chain crate names them without this one), re-exported here so `openrail_store::MandateId`
//! and `openrail_store::ids::…` keep working. The domain's `sqlx` feature, which this
//! crate enables, makes each id a `sqlx::Any` column.

pub use openrail_domain::ids::*;
