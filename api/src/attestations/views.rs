//! The rendering of an identity attestation as its API type ([`super::types`]). Times are
//! RFC 3339 UTC.

use super::types;
use crate::rfc3339::rfc3339_ms;

/// An identity attestation at `now` (`expired` once its expiry passed).
pub fn attestation(
    a: &openrail_store::attestations::Attestation,
    now: i64,
) -> types::IdentityAttestation {
    types::IdentityAttestation {
        id: a.id.to_string(),
        object: types::IdentityAttestationTag,
        status: a.status_at(now),
        recipient: a.recipient.clone(),
        credential_id: a.credential_id.clone(),
        credential_digest: a.credential_digest.clone(),
        issuer: a.issuer.clone(),
        credential_type: a.credential_type.clone(),
        expires_at: a.expires_at.map(rfc3339_ms),
        status_list_credential: a.status_list_credential.clone(),
        status_list_index: a.status_list_index,
        chain_id: a.chain_id,
        registry: a.registry.clone(),
        schema: a.schema_uid.clone(),
        uid: a.uid.clone(),
        tx_hash: a.tx_hash.clone(),
        revoked_at: a.revoked_at.map(rfc3339_ms),
        settlement_recorded: a.mirrored_sequence.is_some(),
        livemode: a.mode.livemode(),
        created_at: rfc3339_ms(a.created_at),
        updated_at: rfc3339_ms(a.updated_at),
    }
}
