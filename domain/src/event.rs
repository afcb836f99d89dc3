//! An event: one change of an object, written in the same transaction as the change,
//! listed and delivered to webhook endpoints. Its id (`evt_…`); it has no lifecycle.

use crate::ids::typed_id;

typed_id!(
    /// An event (`evt_…`).
    EventId = "evt_"
);
