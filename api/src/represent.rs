//! The one rendering of each object, from what its representation is computed from (a
//! store snapshot: the row, its epoch use, its payer's authorization): each handler module
//! implements [`Represent`] for its objects' snapshots, and GET handlers and events both go
//! through it ([`crate::ApiObject`] for an event, composed by `crate::handlers!`), so an
//! event's `data.object` is exactly what a GET would have answered at the moment of the
//! event.

use crate::error::ApiError;
use crate::{AppState, Network};
use openrail_store::Mode;

/// The network of objects of `mode`.
pub(crate) fn network(state: &AppState, mode: Mode) -> Result<&Network, ApiError> {
    match mode {
        Mode::Testnet => state.testnet.as_deref(),
        Mode::Mainnet => state.mainnet.as_deref(),
    }
    .ok_or(ApiError::MainnetUnavailable)
}

/// How an object is shown, from its snapshot at `now` (unix ms; a key shows `expired` from
/// then on): implemented by the handler module of each object whose changes are events.
pub(crate) trait Represent {
    /// Its representation (the response type).
    type View;
    /// The representation.
    fn represent(&self, state: &AppState, now: i64) -> Result<Self::View, ApiError>;
}
