//! A mandate: a payer's standing consent, held on chain, that session keys may pull from
//! them up to a ceiling each interval. Its id (`man_…`) and its lifecycle, with the
//! transitions it allows.

use crate::ids::typed_id;
use crate::status::lifecycle;

typed_id!(
    /// A mandate (`man_…`).
    MandateId = "man_"
);

string_enum!(
    /// Lifecycle of a mandate.
    MandateStatus {
        /// Waiting for the payer's signature (wallet payers); nothing is on chain.
        RequiresAuthorization = "requires_authorization",
        /// Created, its transaction not yet mined.
        Pending = "pending",
        /// On chain; keys may be issued and pull.
        Active = "active",
        /// Canceled; its keys can no longer pull.
        Canceled = "canceled",
        /// Its transaction failed.
        Failed = "failed",
    }
);

impl MandateStatus {
    /// The statuses a mandate may move to `self` from (none: only a new mandate has it).
    pub fn sources(self) -> &'static [MandateStatus] {
        use MandateStatus::*;
        match self {
            RequiresAuthorization => &[],
            Pending => &[RequiresAuthorization],
            Active | Failed => &[Pending],
            Canceled => &[RequiresAuthorization, Pending, Active],
        }
    }
}

lifecycle!(MandateStatus, starts: [RequiresAuthorization, Pending]);

kinds!(TxKind:
    /// What a mandate's transactions do (their intent: the mandate).
    MandateTx of Mandate {
        /// `createMandate` / `createMandateWithSignature`.
        CreateMandate = "create_mandate",
        /// `cancelMandate`.
        CancelMandate = "cancel_mandate",
    }
);

kinds!(WorkKind:
    /// What the outbox asks the engine to do for a mandate.
    MandateWork of Mandate {
        /// Create the mandate on chain.
        CreateMandate = "create_mandate",
        /// Cancel the mandate on chain.
        CancelMandate = "cancel_mandate",
    }
);

impl MandateWork {
    /// The one transaction this work sends.
    pub fn tx_kind(self) -> Option<crate::TxKind> {
        Some(crate::TxKind::Mandate(match self {
            MandateWork::CreateMandate => MandateTx::CreateMandate,
            MandateWork::CancelMandate => MandateTx::CancelMandate,
        }))
    }
}

events!(
    /// What happens to a mandate: the types of its events.
    MandateEvent of Mandate {
        /// A mandate was created (its status says whether the payer must still sign).
        MandateCreated = "mandate.created",
        /// A mandate waits for its payer's signature.
        MandateRequiresAuthorization = "mandate.requires_authorization",
        /// The payer signed; the mandate is being created on chain.
        MandateAuthorized = "mandate.authorized",
        /// The mandate is on chain; keys may be issued and pull.
        MandateActivated = "mandate.activated",
        /// The mandate was canceled (by the API, or by the payer on chain).
        MandateCanceled = "mandate.canceled",
        /// The mandate's transaction failed.
        MandateFailed = "mandate.failed",
    }
);

impl crate::EventType {
    /// The event of a mandate moving to `s` (`pending` after creation: the payer signed).
    pub fn of_mandate(s: MandateStatus) -> crate::EventType {
        match s {
            MandateStatus::RequiresAuthorization => crate::EventType::MandateRequiresAuthorization,
            MandateStatus::Pending => crate::EventType::MandateAuthorized,
            MandateStatus::Active => crate::EventType::MandateActivated,
            MandateStatus::Canceled => crate::EventType::MandateCanceled,
            MandateStatus::Failed => crate::EventType::MandateFailed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pulls::PullId;
    use crate::status::Lifecycle;

    #[test]
    fn typed_ids_check_their_prefix() {
        let m = MandateId::new();
        assert!(m.as_str().starts_with("man_"));
        assert_eq!(MandateId::parse(m.as_str()), Some(m.clone()));
        assert_eq!(MandateId::parse("pull_abc"), None);
        assert_eq!(MandateId::parse("man_"), None);
        assert_eq!(MandateId::parse("man_ab-c"), None);
        assert_eq!(
            PullId::parse("pull_abc").map(String::from),
            Some("pull_abc".into())
        );
        assert_eq!(serde_json::to_string(&m).unwrap(), format!("\"{m}\""));
    }

    #[test]
    fn what_ends_stays_ended() {
        for s in [MandateStatus::Canceled, MandateStatus::Failed] {
            assert!(s.is_final(), "{s:?}");
        }
    }
}
