//! A session key: what pulls under a mandate, within its own ceiling, destinations and
//! expiry, issued on chain. Its id (`sk_…`) and its stored lifecycle, with the transitions
//! it allows.

use crate::ids::typed_id;
use crate::status::lifecycle;

typed_id!(
    /// A session key (`sk_…`).
    SessionKeyId = "sk_"
);

string_enum!(
    /// Stored lifecycle of a session key (`expired` is computed from time).
    KeyStatus {
        /// Issued, its transaction not yet mined.
        Pending = "pending",
        /// On chain.
        Active = "active",
        /// Revoked.
        Revoked = "revoked",
        /// Its transaction failed.
        Failed = "failed",
    }
);

impl KeyStatus {
    /// The statuses a key may move to `self` from (none: only a new key has it).
    pub fn sources(self) -> &'static [KeyStatus] {
        use KeyStatus::*;
        match self {
            Pending => &[],
            Active | Failed => &[Pending],
            Revoked => &[Pending, Active],
        }
    }
}

lifecycle!(KeyStatus, starts: [Pending]);

kinds!(TxKind:
    /// What a session key's transactions do (their intent: the key).
    SessionKeyTx of SessionKey {
        /// `issueSessionKey` / `issueSessionKeyWithSignature`.
        IssueSessionKey = "issue_session_key",
        /// `revokeSessionKey`.
        RevokeSessionKey = "revoke_session_key",
    }
);

kinds!(WorkKind:
    /// What the outbox asks the engine to do for a session key.
    SessionKeyWork of SessionKey {
        /// Issue the key on chain.
        IssueSessionKey = "issue_session_key",
        /// Revoke the key on chain.
        RevokeSessionKey = "revoke_session_key",
    }
);

impl SessionKeyWork {
    /// The one transaction this work sends.
    pub fn tx_kind(self) -> Option<crate::TxKind> {
        Some(crate::TxKind::SessionKey(match self {
            SessionKeyWork::IssueSessionKey => SessionKeyTx::IssueSessionKey,
            SessionKeyWork::RevokeSessionKey => SessionKeyTx::RevokeSessionKey,
        }))
    }
}

events!(
    /// What happens to a session key: the types of its events.
    SessionKeyEvent of SessionKey {
        /// A session key was issued.
        SessionKeyCreated = "session_key.created",
        /// The key is on chain and may pull.
        SessionKeyActivated = "session_key.activated",
        /// The key was revoked (by the API, or by the payer on chain).
        SessionKeyRevoked = "session_key.revoked",
        /// The key's time passed.
        SessionKeyExpired = "session_key.expired",
        /// The key's transaction failed.
        SessionKeyFailed = "session_key.failed",
    }
);

impl crate::EventType {
    /// The event of a key moving to `s` (none for `pending`, which only a new key has).
    pub fn of_key(s: KeyStatus) -> Option<crate::EventType> {
        match s {
            KeyStatus::Pending => None,
            KeyStatus::Active => Some(crate::EventType::SessionKeyActivated),
            KeyStatus::Revoked => Some(crate::EventType::SessionKeyRevoked),
            KeyStatus::Failed => Some(crate::EventType::SessionKeyFailed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Lifecycle;

    #[test]
    fn what_ends_stays_ended() {
        for s in [KeyStatus::Revoked, KeyStatus::Failed] {
            assert!(s.is_final(), "{s:?}");
        }
    }
}
