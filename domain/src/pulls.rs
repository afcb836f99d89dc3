//! How a debit pull ends on chain: why it was declined ([`DeclineReason`]) and its
//! resolution as recorded ([`PullResolution`]). The chain tells them (from a receipt or
//! the logs), the store records them; both name them from here. The pull's lifecycle is
//! [`PullStatus`](crate::status::PullStatus).

use crate::status::PullStatus;

string_enum!(
    /// Why a pull (or a request) was declined: one set of reasons for the chain's custom
    /// errors, the stored `decline_code`, and the API's 422 `code`.
    DeclineReason {
        /// The session key was revoked.
        SessionKeyRevoked = "session_key_revoked",
        /// The session key expired.
        SessionKeyExpired = "session_key_expired",
        /// The mandate is not active (pending, canceled or failed).
        MandateNotActive = "mandate_not_active",
        /// The pull would exceed the key's or the mandate's ceiling this epoch.
        AllowanceExceeded = "allowance_exceeded",
        /// The destination is not on the key's allow-list (or may not be paid at all).
        DestinationNotAllowed = "destination_not_allowed",
        /// The payer's balance cannot fund the pull.
        InsufficientFunds = "insufficient_funds",
        /// The payer's allowance to the router is below the amount.
        AllowanceInsufficient = "allowance_insufficient",
        /// The token refused the transfer although balance and allowance suffice.
        TransferFailed = "transfer_failed",
        /// The session key is not on chain (its issuing transaction is pending or failed).
        SessionKeyNotActive = "session_key_not_active",
        /// The key names an agent signer and the pull carries no signature.
        SignatureRequired = "signature_required",
        /// A signature is malformed or not the expected signer's.
        SignatureInvalid = "signature_invalid",
        /// The authorization (payer's or agent's) is past its deadline.
        AuthorizationExpired = "authorization_expired",
        /// The agent's nonce was used already.
        NonceUsed = "nonce_used",
        /// The payer or the key's signer no longer holds an attestation the mandate requires
        /// (the chain's attestation mirror says it is revoked, expired or never recorded).
        IdentityRequirementUnmet = "identity_requirement_unmet",
    }
);

/// How a pull ended on chain, as the store records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullResolution {
    /// `authorized`, `declined` or `failed`.
    pub status: PullStatus,
    /// Why it was declined.
    pub decline_code: Option<DeclineReason>,
    /// For ceiling declines: what was left, in token units.
    pub remaining_token_units: Option<u128>,
    /// For ceiling declines: when the allowance resets, unix seconds.
    pub resets_at_s: Option<i64>,
    /// The transaction that carried the attempt.
    pub tx_hash: Option<String>,
    /// When it was authorized, unix ms.
    pub authorized_at: Option<i64>,
}

impl PullResolution {
    /// A pull that failed without an outcome on chain (its transaction reverted or was
    /// never usable).
    pub fn failed() -> Self {
        Self {
            status: PullStatus::Failed,
            decline_code: None,
            remaining_token_units: None,
            resets_at_s: None,
            tx_hash: None,
            authorized_at: None,
        }
    }
}

/// What the diagnosis of a `transfer_failed` pull needs of it: the token transfer it asked
/// for (`store.pulls().transfer` reads it from the pull's row and its mandate's;
/// `openrail_chain::diagnose::pull_transfer_failure` asks the chain why it failed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullTransfer {
    /// The mandate's payer wallet, as stored.
    pub payer_address: String,
    /// The mandate's currency (a pull is always in its mandate's currency).
    pub currency: crate::money::Currency,
    /// The pull's amount, minor units of `currency`.
    pub amount: u64,
}
