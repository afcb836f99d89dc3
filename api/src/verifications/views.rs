//! The rendering of an identity verification session as its API type
//! ([`super::types`]). Times are RFC 3339 UTC.

use super::types;
use crate::rfc3339::rfc3339_ms;

/// A session as the API shows it.
pub(crate) fn identity_verification(
    v: &openrail_store::verifications::Verification,
) -> types::IdentityVerification {
    types::IdentityVerification {
        id: v.id.to_string(),
        object: types::IdentityVerificationTag,
        livemode: v.mode.livemode(),
        created_at: rfc3339_ms(v.created_at),
        kind: v.kind.as_str(),
        credential_type: v.kind.credential_type(),
        subject: v.subject.clone(),
        status: v.status.as_str(),
        last_error: v.last_error.as_ref().map(|e| types::VerificationError {
            code: e.code.clone(),
            reason: e.reason.clone(),
        }),
        credential_id: v.credential_id.clone(),
        simulate: types::VerificationSimulation {
            outcome: v.scenario.as_str(),
            failure_reason: v.failure_reason.clone(),
        },
    }
}
