//! The lifecycle of each object, with the transitions it allows as data: for every status,
//! the statuses it may be reached from ([`Lifecycle::sources`]). The store changes a status
//! only along these (a conditional `UPDATE … WHERE status IN (sources)`, or a check before
//! it), and the tests below hold the tables to their shape: nothing is reached from itself,
//! every status is reachable from a first one, and what the tables call final stays final.

/// A status enum with its transition table.
pub trait Lifecycle: Copy + Eq + std::fmt::Debug + 'static {
    /// Every status, in declaration order.
    fn all() -> &'static [Self];
    /// The statuses `self` may be reached from (none: only a new object has it).
    fn sources(self) -> &'static [Self];
    /// Whether an object may move from `from` to `self`.
    fn reachable_from(self, from: Self) -> bool {
        self.sources().contains(&from)
    }
    /// Whether nothing may follow it.
    fn is_final(self) -> bool {
        !Self::all().iter().any(|s| s.sources().contains(&self))
    }
}

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

string_enum!(
    /// Lifecycle of a payment.
    PaymentStatus {
        /// Waiting for the payer's signature (wallet sources); nothing moves until then.
        RequiresAuthorization = "requires_authorization",
        /// Accepted, nothing sent yet.
        Pending = "pending",
        /// Its transaction (or bank transfer) is under way.
        Processing = "processing",
        /// Money arrived.
        Succeeded = "succeeded",
        /// It did not; `failure_reason` says why.
        Failed = "failed",
        /// Withdrawn by the developer while it waited for its payer's signature; nothing
        /// moved, and its authorization can no longer be given.
        Canceled = "canceled",
    }
);

impl PaymentStatus {
    /// The statuses a payment may move to `self` from (none: only a new payment has it).
    pub fn sources(self) -> &'static [PaymentStatus] {
        use PaymentStatus::*;
        match self {
            RequiresAuthorization => &[],
            Pending => &[RequiresAuthorization],
            Processing => &[Pending],
            Succeeded | Failed => &[Processing],
            Canceled => &[RequiresAuthorization],
        }
    }
}

string_enum!(
    /// A refund owed to a payment's source after its destination leg failed.
    RefundStatus {
        /// Owed, not yet back at the source.
        Pending = "pending",
        /// Back at the source.
        Succeeded = "succeeded",
        /// The refund itself failed: an operator must act (logged as an error).
        Failed = "failed",
    }
);

impl RefundStatus {
    /// The statuses a refund may move to `self` from (none: it starts owed).
    pub fn sources(self) -> &'static [RefundStatus] {
        use RefundStatus::*;
        match self {
            Pending => &[],
            Succeeded | Failed => &[Pending],
        }
    }
}

string_enum!(
    /// Lifecycle of a bank transfer.
    TransferStatus {
        /// Not yet due.
        Pending = "pending",
        /// Money moved (a `fails_late` debit may still be returned).
        Settled = "settled",
        /// Did not move, or was returned.
        Failed = "failed",
    }
);

impl TransferStatus {
    /// The statuses a transfer may move to `self` from: `failed` after `settled` is a
    /// debit returned late.
    pub fn sources(self) -> &'static [TransferStatus] {
        use TransferStatus::*;
        match self {
            Pending => &[],
            Settled => &[Pending],
            Failed => &[Pending, Settled],
        }
    }
}

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

string_enum!(
    /// Stored lifecycle of an identity attestation on the attestation chain (`expired` is
    /// computed from its expiration time, as a session key's).
    AttestationStatus {
        /// Accepted, its `attest` transaction not yet mined.
        Pending = "pending",
        /// On the attestation chain.
        Active = "active",
        /// Revoked on the attestation chain (for good).
        Revoked = "revoked",
        /// Its `attest` transaction failed; nothing is on chain.
        Failed = "failed",
    }
);

impl AttestationStatus {
    /// The statuses an attestation may move to `self` from (none: only a new one has it).
    /// Only an attestation on chain can be revoked: a revoke asked for a pending one waits
    /// for it.
    pub fn sources(self) -> &'static [AttestationStatus] {
        use AttestationStatus::*;
        match self {
            Pending => &[],
            Active | Failed => &[Pending],
            Revoked => &[Active],
        }
    }
}

macro_rules! lifecycle {
    ($($name:ident),+) => {$(
        impl Lifecycle for $name {
            fn all() -> &'static [Self] {
                $name::ALL
            }
            fn sources(self) -> &'static [Self] {
                $name::sources(self)
            }
        }
    )+};
}
lifecycle!(
    MandateStatus,
    KeyStatus,
    PullStatus,
    PaymentStatus,
    RefundStatus,
    TransferStatus,
    VerificationStatus,
    AttestationStatus
);

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape every table must have: no status reached from itself; every status
    /// reachable from one that nothing leads to (where objects start) — or, for a pull,
    /// from `pending`, where every pull starts; at least one final status.
    fn well_formed<S: Lifecycle>(first: &[S]) {
        for s in S::all() {
            assert!(!s.sources().contains(s), "{s:?} from itself");
        }
        let mut reached: Vec<S> = first.to_vec();
        loop {
            let before = reached.len();
            for s in S::all() {
                if !reached.contains(s) && s.sources().iter().any(|f| reached.contains(f)) {
                    reached.push(*s);
                }
            }
            if reached.len() == before {
                break;
            }
        }
        assert_eq!(reached.len(), S::all().len(), "unreachable: {:?}", S::all());
        assert!(
            S::all().iter().any(|s| s.is_final()),
            "{:?} has no end",
            S::all()
        );
    }

    #[test]
    fn every_lifecycle_is_well_formed() {
        well_formed(&[MandateStatus::RequiresAuthorization, MandateStatus::Pending]);
        well_formed(&[KeyStatus::Pending]);
        well_formed(&[PullStatus::Pending]);
        well_formed(&[PaymentStatus::RequiresAuthorization, PaymentStatus::Pending]);
        well_formed(&[RefundStatus::Pending]);
        well_formed(&[TransferStatus::Pending]);
        well_formed(&[AttestationStatus::Pending]);
        well_formed(&[VerificationStatus::RequiresInput]);
    }

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

    #[test]
    fn what_ends_stays_ended() {
        use PaymentStatus as P;
        for s in [P::Succeeded, P::Failed, P::Canceled] {
            assert!(s.is_final(), "{s:?}");
        }
        assert!(!P::Processing.is_final());
        for s in [MandateStatus::Canceled, MandateStatus::Failed] {
            assert!(s.is_final(), "{s:?}");
        }
        for s in [KeyStatus::Revoked, KeyStatus::Failed] {
            assert!(s.is_final(), "{s:?}");
        }
        // A pull's bank leg runs once: settled and failed are final, authorized is not.
        assert!(PullStatus::Settled.is_final() && PullStatus::Failed.is_final());
        assert!(!PullStatus::Authorized.is_final());
        assert!(RefundStatus::Succeeded.is_final() && RefundStatus::Failed.is_final());
        assert!(TransferStatus::Failed.is_final() && !TransferStatus::Settled.is_final());
        use AttestationStatus as A;
        assert!(A::Revoked.is_final() && A::Failed.is_final() && !A::Active.is_final());
        assert!(!A::Revoked.reachable_from(A::Pending) && !A::Active.reachable_from(A::Revoked));
    }

    #[test]
    fn names_round_trip() {
        for s in PaymentStatus::ALL {
            assert_eq!(PaymentStatus::parse(s.as_str()), Some(*s));
        }
        assert_eq!(PullStatus::parse("expired"), None);
    }
}
