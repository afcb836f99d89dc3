//! An identity verification session: a person or an agent goes through a provider's
//! check, and Openrail issues a credential when it passes. Its id (`idv_…`) and its
//! lifecycle, with the transitions it allows.

use crate::ids::typed_id;
use crate::status::lifecycle;

typed_id!(
    /// An identity verification session (`idv_…`).
    IdentityVerificationId = "idv_"
);

string_enum!(
    /// Lifecycle of an identity verification session (Stripe Identity's shape).
    VerificationStatus {
        /// Waiting for the person (or agent) to finish the provider's flow; also where a
        /// failed check returns, with its `last_error`.
        RequiresInput = "requires_input",
        /// The flow was finished; the provider is checking.
        Processing = "processing",
        /// The check passed; Openrail issued the credential.
        Verified = "verified",
        /// Withdrawn by the developer before it was submitted.
        Canceled = "canceled",
    }
);

impl VerificationStatus {
    /// The statuses a session may move to `self` from: `requires_input` again from
    /// `processing` when the check failed; `canceled` only from `requires_input` (a check
    /// under way runs to its end).
    pub fn sources(self) -> &'static [VerificationStatus] {
        use VerificationStatus::*;
        match self {
            RequiresInput => &[Processing],
            Processing => &[RequiresInput],
            Verified => &[Processing],
            Canceled => &[RequiresInput],
        }
    }
}

lifecycle!(VerificationStatus, starts: [RequiresInput]);

events!(
    /// What happens to an identity verification session: the types of its events.
    IdentityVerificationEvent of IdentityVerification {
        /// An identity verification session was created (it waits for input).
        IdentityVerificationCreated = "identity.verification.created",
        /// The session was submitted; the provider is checking.
        IdentityVerificationProcessing = "identity.verification.processing",
        /// The check passed and the credential was issued (`credential_id`).
        IdentityVerificationVerified = "identity.verification.verified",
        /// The check failed (`last_error`); the session waits for input again.
        IdentityVerificationRequiresInput = "identity.verification.requires_input",
        /// The session was canceled before it was submitted.
        IdentityVerificationCanceled = "identity.verification.canceled",
    }
);

impl crate::EventType {
    /// The event of a verification session moving to `s`.
    pub fn of_verification(s: VerificationStatus) -> crate::EventType {
        match s {
            VerificationStatus::RequiresInput => {
                crate::EventType::IdentityVerificationRequiresInput
            }
            VerificationStatus::Processing => crate::EventType::IdentityVerificationProcessing,
            VerificationStatus::Verified => crate::EventType::IdentityVerificationVerified,
            VerificationStatus::Canceled => crate::EventType::IdentityVerificationCanceled,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Lifecycle;

    #[test]
    fn a_verification_ends_verified_or_canceled_and_retries_only_through_processing() {
        use VerificationStatus as V;
        assert!(V::Verified.is_final() && V::Canceled.is_final());
        assert!(!V::RequiresInput.is_final() && !V::Processing.is_final());
        // A failed check goes back to requires_input; nothing skips the check.
        assert!(V::RequiresInput.reachable_from(V::Processing));
        assert!(!V::Verified.reachable_from(V::RequiresInput));
        // A check under way cannot be canceled.
        assert!(!V::Canceled.reachable_from(V::Processing));
        assert!(!V::Canceled.reachable_from(V::Verified));
    }
}
