//! The outbound transaction journal's and the outbox's vocabulary: what a journaled
//! operator transaction does ([`TxKind`]) and where it stands ([`TxStatus`]), and what a
//! row of the outbox asks the engine to do ([`WorkKind`]). The journal itself (its rows and
//! queries) is the store's; the chain's submitter names these when it signs and records.

string_enum!(
    /// What a journaled operator transaction does.
    TxKind {
        /// `createMandate` / `createMandateWithSignature` (intent: the mandate).
        CreateMandate = "create_mandate",
        /// `cancelMandate` (intent: the mandate).
        CancelMandate = "cancel_mandate",
        /// `issueSessionKey` (intent: the key).
        IssueSessionKey = "issue_session_key",
        /// `revokeSessionKey` (intent: the key).
        RevokeSessionKey = "revoke_session_key",
        /// `pullBatch` (intents: its pulls, in item order).
        PullBatch = "pull_batch",
        /// `settle` / `settleWithSignature` (intent: a payment leg or a pull's payout).
        Settle = "settle",
        /// A zero-value self-send that takes the nonce of a transaction the submitter gave
        /// up on (past its fee cap or deadline); carries no intent.
        CancelNonce = "cancel_nonce",
        /// `AttestationRegistry.attest` (intent: the identity attestation).
        Attest = "attest",
        /// `AttestationRegistry.revoke` (intent: the identity attestation).
        RevokeAttestation = "revoke_attestation",
        /// `AttestationMirror.record` of an attestation's receipt (intent: the attestation).
        MirrorAttested = "mirror_attested",
        /// `AttestationMirror.record` of a revocation's receipt (intent: the attestation).
        MirrorRevoked = "mirror_revoked",
    }
);

string_enum!(
    /// Where a journaled transaction stands.
    TxStatus {
        /// Signed and journaled; broadcast or about to be; fate not known yet.
        Signed = "signed",
        /// Mined and succeeded.
        Succeeded = "succeeded",
        /// Mined and reverted.
        Reverted = "reverted",
        /// Refused by the node, or its nonce taken by a cancellation or an outside
        /// transaction: never mined, and nothing else carries its work.
        Rejected = "rejected",
        /// Never mined, and another transaction carries its work: a variant of the same
        /// nonce with other fees (one of them was mined), or the work re-sent under a new
        /// nonce. Marked only once that other transaction is journaled, so an intent never
        /// has every transaction dead while its work goes on.
        Replaced = "replaced",
    }
);

string_enum!(
    /// What a row of the outbox asks the engine to do. The first five send one operator
    /// transaction of the same name (and are done once its outcome is recorded); the last
    /// two drive an object through legs that take from seconds to days (bank transfers,
    /// router transfers), step by step, until it is final.
    WorkKind {
        /// Create a mandate on chain.
        CreateMandate = "create_mandate",
        /// Issue a session key on chain.
        IssueSessionKey = "issue_session_key",
        /// Cancel a mandate on chain.
        CancelMandate = "cancel_mandate",
        /// Revoke a session key on chain.
        RevokeSessionKey = "revoke_session_key",
        /// Send a debit pull (batched with the others in flight).
        PullBatch = "pull_batch",
        /// Drive a payment (`pay_…`): its legs, then any refund owed.
        Payment = "payment",
        /// Drive the bank leg and payout of an authorized pull on a bank-funded mandate.
        Payout = "payout",
        /// Attest an identity attestation on the attestation chain's registry.
        Attest = "attest",
        /// Revoke an identity attestation on the attestation chain's registry.
        RevokeAttestation = "revoke_attestation",
        /// Record an attestation's receipt in the settlement chain's attestation mirror.
        MirrorAttested = "mirror_attested",
        /// Record a revocation's receipt in the settlement chain's attestation mirror.
        MirrorRevoked = "mirror_revoked",
    }
);

impl WorkKind {
    /// The one transaction this work sends (`None` for the work that drives an object
    /// through several legs).
    pub fn tx_kind(self) -> Option<TxKind> {
        match self {
            WorkKind::CreateMandate => Some(TxKind::CreateMandate),
            WorkKind::IssueSessionKey => Some(TxKind::IssueSessionKey),
            WorkKind::CancelMandate => Some(TxKind::CancelMandate),
            WorkKind::RevokeSessionKey => Some(TxKind::RevokeSessionKey),
            WorkKind::PullBatch => Some(TxKind::PullBatch),
            WorkKind::Attest => Some(TxKind::Attest),
            WorkKind::RevokeAttestation => Some(TxKind::RevokeAttestation),
            WorkKind::MirrorAttested => Some(TxKind::MirrorAttested),
            WorkKind::MirrorRevoked => Some(TxKind::MirrorRevoked),
            WorkKind::Payment | WorkKind::Payout => None,
        }
    }

    /// The work that sends one transaction of `kind` (`None` for a payment's legs, which
    /// are sent by driving work).
    pub fn sending(kind: TxKind) -> Option<WorkKind> {
        WorkKind::ALL
            .iter()
            .copied()
            .find(|w| w.tx_kind() == Some(kind))
    }
}
