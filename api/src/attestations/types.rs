//! The request and response types of identity attestations: the [`IdentityAttestation`]
//! as the API shows it and its list, what creating one takes ([`AttestationCreate`]), and
//! the leaf schema of its statuses, written in the shared vocabulary of [`crate::types`].
//! Its rendering of the store's row is in `views`.

use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use crate::types::{Address, Timestamp, leaf_schema, list_new, list_type, object_tag};

object_tag!(
    /// `"identity_attestation"`
    IdentityAttestationTag = "identity_attestation"
);

leaf_schema!(
    /// Status of an identity attestation (`expired`: its credential's `validUntil` passed).
    AttestationStatus = json!({
        "type": "string",
        "enum": openrail_store::attestations::AttestationStatus::ALL.iter().map(|s| s.as_str()).chain(["expired"]).collect::<Vec<_>>(),
    })
);

/// A verified credential attested on the mode's attestation chain: what the chain holds —
/// the credential's digest, issuer, type, expiry and status reference, and the wallet it is
/// about — never its claims.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IdentityAttestation {
    /// `att_…`
    #[schema(pattern = "^att_")]
    pub id: String,
    /// Always `identity_attestation`.
    pub object: IdentityAttestationTag,
    /// `pending` → `active` → `revoked` (or `expired` once its expiry passed); `failed`
    /// when its transaction failed.
    #[schema(value_type = AttestationStatus)]
    pub status: &'static str,
    /// The wallet the credential is about (its subject).
    #[schema(value_type = Address)]
    pub recipient: String,
    /// The credential Openrail issued, when attested from one.
    pub credential_id: Option<String>,
    /// SHA-256 of the credential (hex, 64 digits).
    #[schema(pattern = "^[0-9a-f]{64}$")]
    pub credential_digest: String,
    /// The credential's issuer (a DID).
    pub issuer: String,
    /// The credential's most specific type.
    pub credential_type: String,
    /// The credential's `validUntil`: the attestation expires then.
    #[schema(value_type = Option<Timestamp>)]
    pub expires_at: Option<String>,
    /// The credential's revocation status list.
    pub status_list_credential: Option<String>,
    /// Its index in that list.
    pub status_list_index: Option<u64>,
    /// The chain it is attested on (the mode's attestation chain).
    pub chain_id: u64,
    /// The attestation registry.
    #[schema(value_type = Address)]
    pub registry: String,
    /// The registry schema (0x, 32 bytes).
    #[schema(pattern = "^0x[0-9a-f]{64}$")]
    pub schema: String,
    /// The attestation's uid on chain, once mined.
    #[schema(pattern = "^0x[0-9a-f]{64}$")]
    pub uid: Option<String>,
    /// Its `attest` transaction.
    pub tx_hash: Option<String>,
    /// When its revocation was mined.
    #[schema(value_type = Option<Timestamp>)]
    pub revoked_at: Option<String>,
    /// Whether the settlement chain's attestation mirror has recorded it: only then does an active attestation meet a mandate's identity requirement, which the chain checks against the mirror. Set a moment after `active` (the attestation chain's operator signs a receipt and the settlement chain's operator records it); a revocation reaches the mirror the same way, and the API refuses a revoked attestation at once.
    pub settlement_recorded: bool,
    /// Whether it is a mainnet object.
    pub livemode: bool,
    /// Creation time.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
    /// Last change.
    #[schema(value_type = Timestamp)]
    pub updated_at: String,
}

leaf_schema!(
    /// `POST /v1/identity/attestations`: one of `credential_id` and `verifiableCredential`.
    AttestationCreate = json!({
        "type": "object",
        "properties": {
            "credential_id": { "type": "string", "description": "A credential this account issued (`POST /v1/identity/credentials/issue`), not revoked" },
            "verifiableCredential": { "type": "object", "description": "A credential to verify and attest (any issuer; it must verify)", "additionalProperties": true },
            "recipient": { "type": "string", "pattern": "^0x[0-9a-fA-F]{40}$", "description": "The wallet to attest about, when the credential's subject is not one (`did:pkh:eip155:…:0x…`; a bare 0x address only for a credential named by `credential_id`: in a posted credential it is no IRI, so its proof does not cover it); when both are given they must agree" },
        },
        "example": {"credential_id": "urn:uuid:…"},
    })
);

list_type!(
    /// A page of identity attestations.
    IdentityAttestationList of IdentityAttestation
);

list_new!(
    IdentityAttestationList of IdentityAttestation
);
