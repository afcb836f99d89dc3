//! A debit pull: a session key's pull of an amount under its mandate, enforced on chain.
//! Its id (`pull_…`), its lifecycle with the transitions it allows, and how it ends on
//! chain: why it was declined ([`DeclineReason`]) and its resolution as recorded
//! ([`PullResolution`]). The chain tells them (from a receipt or the logs), the store
//! records them; both name them from here.

use crate::ids::typed_id;
use crate::status::lifecycle;

typed_id!(
    /// A debit pull (`pull_…`).
    PullId = "pull_"
);

string_enum!(
    /// Lifecycle of a debit pull.
    PullStatus {
        /// Submitted, outcome unknown.
        Pending = "pending",
        /// Allowance consumed on chain, tokens moved.
        Authorized = "authorized",
        /// Any bank leg done.
        Settled = "settled",
        /// An on-chain rule refused it.
        Declined = "declined",
        /// A bank leg failed after authorization, or the transaction failed.
        Failed = "failed",
    }
);

impl PullStatus {
    /// The statuses a pull may move to `self` from. `pending` again from `authorized` or
    /// `declined`: a reorganisation took away the block that resolved it (it is resolved
    /// again from the new chain); a pull whose bank leg ran is never undone.
    pub fn sources(self) -> &'static [PullStatus] {
        use PullStatus::*;
        match self {
            Pending => &[Authorized, Declined],
            Authorized | Declined => &[Pending],
            Settled => &[Authorized],
            Failed => &[Pending, Authorized],
        }
    }
}

lifecycle!(PullStatus, starts: [Pending]);

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

kinds!(TxKind:
    /// What a debit pull's transactions do.
    PullTx of Pull {
        /// `pullBatch` (its intents: its pulls, in item order).
        PullBatch = "pull_batch",
    }
);

kinds!(WorkKind:
    /// What the outbox asks the engine to do for a debit pull.
    PullWork of Pull {
        /// Send the pull (batched with the others in flight).
        PullBatch = "pull_batch",
        /// Drive the bank leg and payout of an authorized pull on a bank-funded mandate
        /// (its payout is a router transfer, `TxKind::Settle`, intent `pull_…:payout`).
        Payout = "payout",
    }
);

impl PullWork {
    /// The one transaction this work sends (`None` for the payout, driven step by step).
    pub fn tx_kind(self) -> Option<crate::TxKind> {
        match self {
            PullWork::PullBatch => Some(crate::TxKind::Pull(PullTx::PullBatch)),
            PullWork::Payout => None,
        }
    }
}

events!(
    /// What happens to a debit pull: the types of its events.
    DebitPullEvent of DebitPull {
        /// A debit pull was accepted.
        DebitPullCreated = "debit_pull.created",
        /// The chain consumed the allowance and moved the tokens.
        DebitPullAuthorized = "debit_pull.authorized",
        /// A rule refused the pull (`decline_code` says which).
        DebitPullDeclined = "debit_pull.declined",
        /// A bank-funded pull's bank leg finished.
        DebitPullSettled = "debit_pull.settled",
        /// The pull's transaction, or its bank leg, failed.
        DebitPullFailed = "debit_pull.failed",
        /// A reorganisation removed the block that resolved the pull: it is pending again
        /// and will be resolved again.
        DebitPullReorged = "debit_pull.reorged",
    }
);

impl crate::EventType {
    /// The event of a pull moving to `s` (`pending` after creation: a reorganisation).
    pub fn of_pull(s: PullStatus) -> crate::EventType {
        match s {
            PullStatus::Pending => crate::EventType::DebitPullReorged,
            PullStatus::Authorized => crate::EventType::DebitPullAuthorized,
            PullStatus::Declined => crate::EventType::DebitPullDeclined,
            PullStatus::Settled => crate::EventType::DebitPullSettled,
            PullStatus::Failed => crate::EventType::DebitPullFailed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Lifecycle;

    #[test]
    fn what_ends_stays_ended() {
        // A pull's bank leg runs once: settled and failed are final, authorized is not.
        assert!(PullStatus::Settled.is_final() && PullStatus::Failed.is_final());
        assert!(!PullStatus::Authorized.is_final());
    }

    #[test]
    fn expired_is_not_a_pull_status() {
        assert_eq!(PullStatus::parse("expired"), None);
    }
}
