//! An identity attestation on the attestation chain (mirrored to the settlement chain,
//! where mandates may require it). Its id (`att_…`) and its stored lifecycle, with the
//! transitions it allows.

use crate::ids::typed_id;
use crate::status::lifecycle;

typed_id!(
    /// An identity attestation on the attestation chain (`att_…`).
    AttestationId = "att_"
);

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

lifecycle!(AttestationStatus, starts: [Pending]);

kinds!(TxKind:
    /// What an identity attestation's transactions do (their intent: the attestation).
    AttestationTx of Attestation {
        /// `AttestationRegistry.attest`.
        Attest = "attest",
        /// `AttestationRegistry.revoke`.
        RevokeAttestation = "revoke_attestation",
        /// `AttestationMirror.record` of an attestation's receipt.
        MirrorAttested = "mirror_attested",
        /// `AttestationMirror.record` of a revocation's receipt.
        MirrorRevoked = "mirror_revoked",
    }
);

kinds!(WorkKind:
    /// What the outbox asks the engine to do for an identity attestation.
    AttestationWork of Attestation {
        /// Attest it on the attestation chain's registry.
        Attest = "attest",
        /// Revoke it on the attestation chain's registry.
        RevokeAttestation = "revoke_attestation",
        /// Record its receipt in the settlement chain's attestation mirror.
        MirrorAttested = "mirror_attested",
        /// Record its revocation's receipt in the settlement chain's attestation mirror.
        MirrorRevoked = "mirror_revoked",
    }
);

impl AttestationWork {
    /// The one transaction this work sends.
    pub fn tx_kind(self) -> Option<crate::TxKind> {
        Some(crate::TxKind::Attestation(match self {
            AttestationWork::Attest => AttestationTx::Attest,
            AttestationWork::RevokeAttestation => AttestationTx::RevokeAttestation,
            AttestationWork::MirrorAttested => AttestationTx::MirrorAttested,
            AttestationWork::MirrorRevoked => AttestationTx::MirrorRevoked,
        }))
    }
}

events!(
    /// What happens to an identity attestation: the types of its events.
    AttestationEvent of Attestation {
        /// An identity attestation was accepted; its transaction is on its way.
        IdentityAttestationPending = "identity.attestation.pending",
        /// The attestation is on the attestation chain.
        IdentityAttestationActive = "identity.attestation.active",
        /// The attestation was revoked on the attestation chain.
        IdentityAttestationRevoked = "identity.attestation.revoked",
        /// The attestation's transaction failed.
        IdentityAttestationFailed = "identity.attestation.failed",
    }
);

impl crate::EventType {
    /// The event of an identity attestation reaching `s`.
    pub fn of_attestation(s: AttestationStatus) -> crate::EventType {
        match s {
            AttestationStatus::Pending => crate::EventType::IdentityAttestationPending,
            AttestationStatus::Active => crate::EventType::IdentityAttestationActive,
            AttestationStatus::Revoked => crate::EventType::IdentityAttestationRevoked,
            AttestationStatus::Failed => crate::EventType::IdentityAttestationFailed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Lifecycle;

    #[test]
    fn what_ends_stays_ended() {
        use AttestationStatus as A;
        assert!(A::Revoked.is_final() && A::Failed.is_final() && !A::Active.is_final());
        assert!(!A::Revoked.reachable_from(A::Pending) && !A::Active.reachable_from(A::Revoked));
    }
}
