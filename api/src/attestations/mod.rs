//! Identity attestations (`/v1/identity/attestations`): a verified credential attested on
//! the mode's attestation chain — the caller never names the chain. The credential is one
//! this account issued (`credential_id`, not revoked) or one posted whole
//! (`verifiableCredential`, verified first as `POST /v1/identity/credentials/verify` does:
//! 422 with the verification when it does not verify). Its subject must be a wallet
//! (`did:pkh:eip155:<chain>:0x…`; a bare 0x address only in Openrail's own record, since in
//! a posted credential it is no IRI and its proof does not cover it), or the request names
//! one (`recipient`).
//!
//! The record, and the attestation's `data` on chain (schema
//! [`openrail_chain::attestations::CREDENTIAL_SCHEMA`]), hold the credential's digest, type
//! and revocation status reference, its issuer and expiry — never its claims. The request
//! writes the attestation, its event and its `attest` work in one transaction and waits
//! for the attestation chain's engine (201 `active`, 202 `pending`), as mandates do.
//! Revoking it (`POST …/{id}/revoke`), or revoking its credential
//! (`POST /v1/identity/credentials/status`), queues its `revoke` on chain.

pub mod types;
mod views;

use std::collections::HashMap;

use alloy::primitives::Address;
use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use openrail_domain::AttestationId;
use openrail_domain::journal::Intent;
use openrail_store::attestations::{Attestation, AttestationStatus};
use openrail_store::{StoreError, now_ms};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::AppState;
use crate::agentic::{
    account_only, id_of, missing, network, no_more_query, paging, parse_address, wait_of,
};
use crate::body::{Fields, invalid};
use crate::context::{Principal, link_created};
use crate::error::{ApiError, Conflict, ErrorCode};
use crate::identity::{
    STATUS_LISTS_PATH, credential_type, issuer, own_lists, public_base, verify_off_thread,
};
use crate::route::{CREDENTIAL_REVOKED, Codes, LinkArg, Param, READ, Route, WRITE, route, schema};

/// What the attestation says of its credential (no claims).
struct Facts {
    credential_id: Option<String>,
    digest: String,
    issuer: String,
    credential_type: String,
    subject: Option<String>,
    expires_at: Option<i64>,
    status_list_credential: Option<String>,
    status_list_index: Option<u64>,
}

/// The wallet a credential subject id names: `did:pkh:eip155:<chain>:0x…` or a bare 0x
/// address; `None` for anything else (another DID, a URL).
fn wallet_of(subject: &str) -> Option<Address> {
    let hex = match subject.strip_prefix("did:pkh:eip155:") {
        Some(rest) => {
            let (chain, address) = rest.split_once(':')?;
            if chain.is_empty() || !chain.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            address
        }
        None => subject,
    };
    let digits = hex.strip_prefix("0x")?;
    if digits.len() != 40 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    hex.parse().ok()
}

/// An RFC 3339 member of a credential as unix ms (`None` when absent).
fn time_of(c: &Map<String, Value>, member: &str) -> Result<Option<i64>, ApiError> {
    match c.get(member) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(
            OffsetDateTime::parse(s, &Rfc3339)
                .map_err(|_| {
                    invalid(
                        &format!("verifiableCredential.{member}"),
                        "must be an RFC 3339 date-time",
                    )
                })?
                .unix_timestamp()
                .saturating_mul(1000),
        )),
        Some(_) => Err(invalid(
            &format!("verifiableCredential.{member}"),
            "must be an RFC 3339 date-time",
        )),
    }
}

/// The wallet a posted credential's subject id names: only `did:pkh:eip155:<chain>:0x…`. A
/// bare 0x address is no IRI: JSON-LD drops it from the signed graph (an `…-rdfc-…` proof
/// does not cover it), so it could be swapped after signing without breaking the proof.
fn signed_wallet_of(subject: &str) -> Option<Address> {
    subject
        .starts_with("did:pkh:eip155:")
        .then(|| wallet_of(subject))
        .flatten()
}

/// The facts of a posted, verified credential.
fn facts_of_posted(c: &Map<String, Value>) -> Result<Facts, ApiError> {
    let issuer = match c.get("issuer") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(o)) => o
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        _ => String::new(),
    };
    let subject = match c.get("credentialSubject") {
        Some(Value::Object(s)) => s.get("id").and_then(Value::as_str).map(str::to_string),
        Some(Value::Array(a)) => a
            .first()
            .and_then(|s| s.get("id"))
            .and_then(Value::as_str)
            .map(str::to_string),
        _ => None,
    };
    // VC 2.0 `validUntil`, VC 1.1 `expirationDate`.
    let expires_at = match time_of(c, "validUntil")? {
        Some(t) => Some(t),
        None => time_of(c, "expirationDate")?,
    };
    let entries: Vec<&Value> = match c.get("credentialStatus") {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(v) => vec![v],
        None => Vec::new(),
    };
    let revocation = entries
        .iter()
        .find(|e| e.get("statusPurpose").and_then(Value::as_str) == Some("revocation"))
        .or(entries.first());
    let (list, index) = match revocation {
        Some(e) => (
            e.get("statusListCredential")
                .and_then(Value::as_str)
                .map(str::to_string),
            e.get("statusListIndex").and_then(|i| match i {
                Value::String(s) => s.parse::<u64>().ok(),
                Value::Number(n) => n.as_u64(),
                _ => None,
            }),
        ),
        None => (None, None),
    };
    let bytes = serde_json::to_vec(c).map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(Facts {
        credential_id: None,
        digest: hex::encode(Sha256::digest(&bytes)),
        issuer,
        credential_type: credential_type(c),
        subject,
        expires_at,
        status_list_credential: list,
        status_list_index: index,
    })
}

/// This module's operations, in the order the document lists them (the router and the
/// document take every handler module's: [`crate::openapi::ROUTES`]).
pub const OPERATIONS: &[&Route] = &[
    &CREATE_ATTESTATION,
    &LIST_ATTESTATIONS,
    &GET_ATTESTATION,
    &REVOKE_ATTESTATION,
];

/// The operation [`create_attestation`] serves.
pub const CREATE_ATTESTATION: Route = route!(post "/v1/identity/attestations", "createAttestation", create_attestation)
    .doc("Attest a credential on chain", "Verifies a credential, then attests it on the mode's attestation chain (the `AttestationRegistry`; requests never name a chain): `credential_id` names one this account issued (not revoked), or `verifiableCredential` gives one whole, verified as `verifyCredential` does (422 with the verification when it does not verify). Its subject must be a wallet (`did:pkh:eip155:…:0x…`, or a bare 0x address in a credential named by `credential_id`; in a posted credential a bare address is no IRI, so its proof does not cover it) or `recipient` names one. The attestation holds the credential's SHA-256 digest, type and revocation status reference, its issuer and expiry (`validUntil`) — never its claims. 201 `active` once mined, 202 `pending` while the chain has not answered; events `identity.attestation.pending`, then `.active` (or `.failed`). A mode without an attestation chain is 503 `chain_unavailable`.")
    .body(schema::<types::AttestationCreate>())
    .ok(201, schema::<types::IdentityAttestation>())
    .ok(202, schema::<types::IdentityAttestation>())
    .ok(422, schema::<crate::types::VerificationResult>())
    .errors(WRITE)
    .codes(&[
        Codes::of(409).conflicts(&[Conflict::CredentialRevoked]).what(CREDENTIAL_REVOKED),
        Codes::of(503).own(&[ErrorCode::ChainUnavailable]),
    ])
    .waits()
    .links(&[
        ("GetAttestation", GET_ATTESTATION.id, LinkArg::Id),
        ("RevokeAttestation", REVOKE_ATTESTATION.id, LinkArg::Id),
    ]);

/// `POST /v1/identity/attestations`: `{"credential_id": "…"}` or `{"verifiableCredential":
/// {…}}`, optionally `recipient`. 201 `active` once mined, 202 `pending` while the chain has
/// not answered within the wait.
pub async fn create_attestation(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    mut fields: Fields,
) -> Result<Response, ApiError> {
    account_only(&p)?;
    let credential_id = fields.opt_string("credential_id")?;
    let posted = fields.opt_json_object("verifiableCredential")?;
    let recipient = fields.opt_string("recipient")?;
    fields.finish()?;
    let recipient = recipient
        .map(|r| parse_address("recipient", &r))
        .transpose()?;
    let net = network(&state, &p)?;
    let chain = net
        .attestation
        .clone()
        .filter(|c| c.attestation_registry.is_some())
        .ok_or(ApiError::ChainUnavailable {
            chain: "attestation",
        })?;
    let now = now_ms();
    let posted_whole = posted.is_some();
    let facts = match (credential_id, posted) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "credential_id",
                "give either credential_id or verifiableCredential, not both",
            ));
        }
        (None, None) => {
            return Err(ApiError::ParameterMissing {
                param: "credential_id".into(),
            });
        }
        (Some(id), None) => {
            let c = state
                .store
                .identity()
                .issued_credential(p.scope(), &id)
                .await
                .map_err(missing("credential", &id))?;
            if c.revoked_at.is_some() {
                return Err(ApiError::Conflict {
                    code: Conflict::CredentialRevoked,
                    detail: "a revoked credential cannot be attested".into(),
                });
            }
            if c.digest.is_empty() {
                return Err(invalid(
                    "credential_id",
                    "names a credential not yet signed",
                ));
            }
            let (_, did, _) = issuer(&state, p.mode()).await?;
            Facts {
                credential_id: Some(c.id.clone()),
                digest: c.digest.clone(),
                issuer: did,
                credential_type: c.credential_type.clone(),
                subject: c.subject.clone(),
                expires_at: c.valid_until,
                status_list_credential: Some(format!(
                    "{}{STATUS_LISTS_PATH}{}",
                    public_base(&state, &headers),
                    c.status_list_id
                )),
                status_list_index: Some(c.status_index),
            }
        }
        (None, Some(vc)) => {
            let doc = Value::Object(vc);
            let lists = own_lists(&state, &headers, &doc).await?;
            let v = verify_off_thread(doc.clone(), lists, None, None, false).await?;
            if v.malformed {
                let detail = v
                    .problem_details
                    .first()
                    .map_or("is not a credential", |p| p.detail.as_str());
                return Err(invalid("verifiableCredential", detail));
            }
            if !v.verified {
                return Ok((StatusCode::UNPROCESSABLE_ENTITY, axum::Json(v)).into_response());
            }
            let Value::Object(c) = &doc else {
                return Err(ApiError::Internal("a credential that is no object".into()));
            };
            let mut f = facts_of_posted(c)?;
            // A credential this account issued, posted whole: linked, so revoking it
            // revokes the attestation too.
            if let Some(id) = c.get("id").and_then(Value::as_str) {
                match state
                    .store
                    .identity()
                    .issued_credential(p.scope(), id)
                    .await
                {
                    Ok(issued) if issued.revoked_at.is_none() => f.credential_id = Some(issued.id),
                    Ok(_) | Err(StoreError::NotFound) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            f
        }
    };
    if facts.expires_at.is_some_and(|t| t <= now + 1000) {
        return Err(invalid(
            "credential_id",
            "names a credential that has expired",
        ));
    }
    // Openrail's own record names the subject it signed; a posted credential's subject
    // counts only when its proof covers it (see `signed_wallet_of`).
    let subject_wallet = match facts.credential_id.is_some() && !posted_whole {
        true => facts.subject.as_deref().and_then(wallet_of),
        false => facts.subject.as_deref().and_then(signed_wallet_of),
    };
    let wallet = match (subject_wallet, recipient) {
        (Some(s), Some(r)) if s != r => {
            return Err(invalid(
                "recipient",
                "differs from the wallet the credential's subject names",
            ));
        }
        (Some(w), _) | (None, Some(w)) => w,
        (None, None) => {
            return Err(invalid(
                "recipient",
                "is required: the credential's subject is no wallet (did:pkh:eip155:…:0x… or a 0x address)",
            ));
        }
    };
    let wallet = chain
        .usable_wallet(wallet)
        .map_err(|why| invalid("recipient", why))?;
    // A credential type Openrail issues, signed by this mode's own issuer, takes that
    // type's schema (what mandates require); any other credential the generic one.
    let (_, own_did, _) = issuer(&state, p.mode()).await?;
    let schema = match openrail_chain::attestations::typed_schema_uid(&facts.credential_type) {
        Some(uid) if facts.issuer == own_did => uid,
        _ => openrail_engine::attestations::schema_uid(),
    };
    let a = Attestation {
        id: AttestationId::new(),
        account_id: p.account_id().clone(),
        mode: p.mode(),
        chain_id: chain.chain_id,
        registry: chain
            .registry()
            .map_err(|e| ApiError::Internal(e.to_string()))?
            .to_checksum(None),
        schema_uid: schema.to_string(),
        recipient: wallet.to_checksum(None),
        credential_id: facts.credential_id,
        credential_digest: facts.digest,
        issuer: facts.issuer,
        credential_type: facts.credential_type,
        // Whole seconds, as the chain keeps it (`expirationTime`) and the credential says
        // it: the API's identity checks then expire when the chain's do.
        expires_at: facts.expires_at.map(|ms| ms - ms.rem_euclid(1000)),
        status_list_credential: facts.status_list_credential,
        status_list_index: facts.status_list_index,
        status: AttestationStatus::Pending,
        uid: None,
        tx_hash: None,
        revoked_at: None,
        mirrored_sequence: None,
        created_at: now,
        updated_at: now,
    };
    link_created(&state, &format!("/v1/identity/attestations/{}", a.id)).await?;
    let waiter = openrail_engine::waiter(&chain, Intent::Attestation(a.id.clone()));
    state.store.attestations().insert(&a).await?;
    let store = &state.store;
    let id = &a.id;
    let done = waiter
        .wait_until(wait_of(&state, &headers), || async move {
            let a = store.attestations().get_unscoped(id).await?;
            Ok(match a.status {
                AttestationStatus::Pending => false,
                AttestationStatus::Active => a.uid.is_some(),
                AttestationStatus::Revoked | AttestationStatus::Failed => true,
            })
        })
        .await?;
    let a = state.store.attestations().get(p.scope(), &a.id).await?;
    let status = if done {
        StatusCode::CREATED
    } else {
        StatusCode::ACCEPTED
    };
    Ok((status, axum::Json(views::attestation(&a, now_ms()))).into_response())
}

/// The operation [`get_attestation`] serves.
pub const GET_ATTESTATION: Route =
    route!(get "/v1/identity/attestations/{id}", "getAttestation", get_attestation)
        .doc(
            "Retrieve an attestation",
            "`expired` once its credential's `validUntil` passed.",
        )
        .ok(200, schema::<types::IdentityAttestation>())
        .errors(READ)
        .path_id("att_");

/// `GET /v1/identity/attestations/{id}`
pub async fn get_attestation(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    account_only(&p)?;
    let id = id_of("identity_attestation", &id, AttestationId::parse)?;
    let a = state
        .store
        .attestations()
        .get(p.scope(), &id)
        .await
        .map_err(missing("identity_attestation", id.as_str()))?;
    Ok((StatusCode::OK, axum::Json(views::attestation(&a, now_ms()))).into_response())
}

/// The operation [`list_attestations`] serves.
pub const LIST_ATTESTATIONS: Route =
    route!(get "/v1/identity/attestations", "listAttestations", list_attestations)
        .doc(
            "List attestations",
            "Newest first; `subject` keeps those about one wallet.",
        )
        .ok(200, schema::<types::IdentityAttestationList>())
        .errors(READ)
        .query(&[Param::Limit, Param::StartingAfter, Param::Subject]);

/// `GET /v1/identity/attestations?subject=0x…`: the account's attestations, newest first,
/// optionally about one wallet (`subject`).
pub async fn list_attestations(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Query(mut q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    account_only(&p)?;
    let (limit, after) = paging(&mut q)?;
    let subject = q
        .remove("subject")
        .map(|s| {
            wallet_of(&s)
                .map(|a| a.to_checksum(None))
                .ok_or_else(|| invalid("subject", "must be a wallet: 0x… or did:pkh:eip155:…:0x…"))
        })
        .transpose()?;
    no_more_query(q)?;
    let page = state
        .store
        .attestations()
        .list(p.scope(), subject.as_deref(), limit, after.as_deref())
        .await?;
    let now = now_ms();
    let data = page
        .data
        .iter()
        .map(|a| views::attestation(a, now))
        .collect();
    Ok((
        StatusCode::OK,
        axum::Json(types::IdentityAttestationList::new(
            crate::types::ListTag,
            "/v1/identity/attestations".into(),
            data,
            page.has_more,
        )),
    )
        .into_response())
}

/// The operation [`revoke_attestation`] serves.
pub const REVOKE_ATTESTATION: Route = route!(post "/v1/identity/attestations/{id}/revoke", "revokeAttestation", revoke_attestation)
    .doc("Revoke an attestation", "Revokes it on the attestation chain (final; event `identity.attestation.revoked`): 200 once mined, 202 while the chain has not answered (a pending attestation is revoked once it is on chain). Revoking its credential (`POST /v1/identity/credentials/status`) does the same. A revoked or failed attestation is answered as it is.")
    .ok(200, schema::<types::IdentityAttestation>())
    .ok(202, schema::<types::IdentityAttestation>())
    .errors(WRITE)
    .path_id("att_")
    .waits();

/// `POST /v1/identity/attestations/{id}/revoke`: revokes it on chain (final). 200 once
/// revoked, 202 while the chain has not answered (a pending attestation is revoked once it
/// is on chain); a failed or revoked one is answered as it is.
pub async fn revoke_attestation(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    account_only(&p)?;
    let id = id_of("identity_attestation", &id, AttestationId::parse)?;
    let net = network(&state, &p)?;
    let a = state
        .store
        .attestations()
        .get(p.scope(), &id)
        .await
        .map_err(missing("identity_attestation", id.as_str()))?;
    if !openrail_store::attestations::revocable(a.status) {
        return Ok((StatusCode::OK, axum::Json(views::attestation(&a, now_ms()))).into_response());
    }
    let chain = net.on_chain(a.chain_id).ok_or(ApiError::ChainUnavailable {
        chain: "attestation",
    })?;
    let waiter = openrail_engine::waiter(chain, Intent::Attestation(id.clone()));
    state
        .store
        .attestations()
        .request_revoke(p.scope(), &id, now_ms())
        .await?;
    let store = &state.store;
    let idr = &id;
    let done = waiter
        .wait_until(wait_of(&state, &headers), || async move {
            let a = store.attestations().get_unscoped(idr).await?;
            Ok(matches!(
                a.status,
                AttestationStatus::Revoked | AttestationStatus::Failed
            ))
        })
        .await?;
    let a = state.store.attestations().get(p.scope(), &id).await?;
    let status = if done {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok((status, axum::Json(views::attestation(&a, now_ms()))).into_response())
}

impl crate::represent::Represent for openrail_store::events::AttestationSnapshot {
    type View = types::IdentityAttestation;
    fn represent(
        &self,
        _state: &AppState,
        now: i64,
    ) -> Result<types::IdentityAttestation, ApiError> {
        Ok(views::attestation(&self.attestation, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_that_name_a_wallet() {
        let a = "0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e";
        let w: Address = a.parse().unwrap();
        assert_eq!(wallet_of(a), Some(w));
        assert_eq!(wallet_of(&format!("did:pkh:eip155:1:{a}")), Some(w));
        assert_eq!(wallet_of(&format!("did:pkh:eip155:x:{a}")), None);
        assert_eq!(wallet_of("did:key:z6Mk"), None);
        assert_eq!(wallet_of("0x1234"), None);
        assert_eq!(wallet_of(&format!("did:pkh:solana:1:{a}")), None);
        // A posted credential's bare address is not covered by its proof: not a wallet.
        assert_eq!(signed_wallet_of(a), None);
        assert_eq!(signed_wallet_of(&format!("did:pkh:eip155:1:{a}")), Some(w));
    }
}
