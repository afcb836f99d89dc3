//! What an identity verification session's events hold. The session's type lives in
//! [`crate::verification`] and its SQL in [`crate::verifications`], which writes each of
//! its events with this snapshot of the row it just wrote.

use crate::db::StoreError;
use crate::exec::Exec;
use crate::ids::Mode;
use crate::verification::Verification;
use openrail_domain::AccountId;

/// What an identity verification session's events hold: the row.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IdentityVerificationSnapshot {
    /// The row.
    pub identity_verification: Verification,
}

impl IdentityVerificationSnapshot {
    /// Never read here: `verifications` writes each event with the snapshot of the row it
    /// just wrote.
    pub(crate) async fn read_in(
        _conn: &mut impl Exec,
        id: &str,
        _now: i64,
    ) -> Result<(Self, AccountId, Mode), StoreError> {
        Err(StoreError::Corrupt(format!(
            "identity verification {id}: its events are written with their snapshot"
        )))
    }
}
