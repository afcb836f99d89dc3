//! Secrets' hashes, random tokens and the mode: they live in `openrail_domain::ids` (so the
//! chain crate names them without this one), re-exported here so `openrail_store::ids::…`
//! keeps working. Each object's typed id lives in its object's domain module
//! (`openrail_domain::mandate::MandateId`, at the domain's root too), not here: this crate
//! names them from the domain and re-exports them at its root (`openrail_store::MandateId`).
//! The domain's `sqlx` feature, which this crate enables, makes each id a `sqlx::Any`
//! column.

pub use openrail_domain::ids::*;
