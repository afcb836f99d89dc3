//! The outbound transaction journal's vocabulary: what a journaled operator transaction
//! does ([`TxKind`]) and where it stands ([`TxStatus`]). The journal itself (its rows and
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
