//! An identity attestation as data (its row's fields, its status at a time): what events
//! and the API read. No SQL here, so the store's modules that record events can name it
//! without importing `attestations` (whose SQL records events: an import circle).

use openrail_domain::{AccountId, AttestationId, AttestationStatus};

use crate::ids::Mode;

/// One identity attestation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Attestation {
    /// `att_…`
    pub id: AttestationId,
    /// Owner.
    pub account_id: AccountId,
    /// Mode.
    pub mode: Mode,
    /// The attestation chain.
    pub chain_id: u64,
    /// The registry attested on (0x, checksummed).
    pub registry: String,
    /// The registry schema's uid (0x bytes32).
    pub schema_uid: String,
    /// The wallet it is about (0x, checksummed): the credential's subject.
    pub recipient: String,
    /// The credential Openrail issued, when attested from one (`credential_id`).
    pub credential_id: Option<String>,
    /// SHA-256 of the credential's JSON (JCS form for Openrail's), hex.
    pub credential_digest: String,
    /// The credential's issuer (a DID).
    pub issuer: String,
    /// The credential's most specific type.
    pub credential_type: String,
    /// The credential's `validUntil` (unix ms), the attestation's expiration.
    pub expires_at: Option<i64>,
    /// Its revocation status list (`statusListCredential`), when it has one.
    pub status_list_credential: Option<String>,
    /// Its index in that list.
    pub status_list_index: Option<u64>,
    /// Stored status.
    pub status: AttestationStatus,
    /// The on-chain uid (0x bytes32), once mined and read.
    pub uid: Option<String>,
    /// Its `attest` transaction.
    pub tx_hash: Option<String>,
    /// When its revocation was mined (unix ms).
    pub revoked_at: Option<i64>,
    /// The sequence of its latest receipt the settlement chain's attestation mirror
    /// recorded (`None`: the settlement chain has not heard of it yet).
    pub mirrored_sequence: Option<i64>,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms.
    pub updated_at: i64,
}

impl Attestation {
    /// The status as the API shows it at `now`: `expired` once an active attestation's
    /// expiry passed.
    pub fn status_at(&self, now: i64) -> &'static str {
        match (self.status, self.expires_at) {
            (AttestationStatus::Active, Some(t)) if t <= now => "expired",
            (s, _) => s.as_str(),
        }
    }
}
