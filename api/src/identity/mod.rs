//! Identity (`/v1/identity`): W3C Verifiable Credentials in the VC API's shapes.
//! Verification of credentials and presentations (Data Integrity proofs, validity, status,
//! with no network: `openrail-identity`), single-use presentation challenges, and Openrail
//! as an issuer — its own Ed25519 key per mode (`did:key`), `eddsa-rdfc-2022` proofs, a
//! Bitstring Status List entry in every credential it issues, revocation, and the lists
//! served publicly.
//!
//! Whether an issuer is *trusted* is not part of verification: a credential verifies when
//! its proofs, validity and status hold, whoever signed it; the caller's policy decides
//! what to make of its `issuer`.

pub mod types;

use std::collections::HashMap;

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use openrail_identity::ed25519_dalek::SigningKey;
use openrail_identity::{
    self as vc, StatusListSource, Verification, VerifyOptions, did_key_from_ed25519_public,
    did_key_verification_method,
};
use openrail_store::identity::{IssuedCredential, Issuer, NewCredential};
use openrail_store::{Mode, Store, now_ms};
use rand::RngCore;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::AppState;
use crate::agentic::account_only;
use crate::body::{Fields, invalid};
use crate::context::Principal;
use crate::error::{ApiError, Conflict};
use crate::route::{CREDENTIAL_REVOKED, Codes, Route, VERIFY, WRITE, route, schema};

/// How long a presentation challenge may be used.
pub const CHALLENGE_TTL_MS: i64 = 10 * 60 * 1000;

/// How long a verifier may cache a status list (seconds).
pub const STATUS_LIST_MAX_AGE_S: u64 = 60;

/// Where this server's status lists are published (under the URL it is known by).
pub(crate) const STATUS_LISTS_PATH: &str = "/v1/identity/status-lists/";

/// The URL this server is known by: its configured public URL, else the address it
/// listens on. Never the request's `Host` (a client could make Openrail sign a URL of its
/// choosing into a credential); only an app built without `serve` (no address yet) falls
/// back to its bound address.
pub(crate) fn public_base(state: &AppState, _headers: &HeaderMap) -> String {
    if let Some(url) = &state.config.advertise_url {
        return url.trim_end_matches('/').to_string();
    }
    match state.public_url.get() {
        Some(url) => url.trim_end_matches('/').to_string(),
        None => format!("http://{}", state.config.bind),
    }
}

/// Openrail's issuer of `mode`: its signing key, DID and verification method (made and
/// stored the first time).
pub(crate) async fn issuer(
    state: &AppState,
    mode: Mode,
) -> Result<(SigningKey, String, String), ApiError> {
    issuer_of(&state.store, mode).await
}

/// [`issuer`] from the store alone (for work outside a request: verification sessions).
pub(crate) async fn issuer_of(
    store: &Store,
    mode: Mode,
) -> Result<(SigningKey, String, String), ApiError> {
    let make = || {
        let mut seed = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut seed);
        let key = SigningKey::from_bytes(&seed);
        Issuer {
            secret_key: hex::encode(seed),
            did: did_key_from_ed25519_public(&key.verifying_key()),
        }
    };
    let stored = store.identity().issuer(mode, make, now_ms()).await?;
    let seed: [u8; 32] = hex::decode(&stored.secret_key)
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| {
            ApiError::Internal(format!(
                "issuer key of {} is not 32 hex bytes",
                mode.as_str()
            ))
        })?;
    let key = SigningKey::from_bytes(&seed);
    let vm = did_key_verification_method(&stored.did);
    Ok((key, stored.did, vm))
}

/// The `statusListCredential` URLs of `doc`'s status entries (a credential's, or for a
/// presentation, its credentials').
fn status_urls(doc: &Value, out: &mut Vec<String>) {
    let entries = match doc.get("credentialStatus") {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(v) => vec![v],
        None => Vec::new(),
    };
    for e in entries {
        if let Some(url) = e.get("statusListCredential").and_then(Value::as_str) {
            out.push(url.to_string());
        }
    }
    match doc.get("verifiableCredential") {
        Some(Value::Array(a)) => a.iter().for_each(|c| status_urls(c, out)),
        Some(c @ Value::Object(_)) => status_urls(c, out),
        _ => {}
    }
}

/// This server's own status lists that `doc` refers to, read from the database (lists of
/// other issuers are unknown: no network at verification time).
pub(crate) async fn own_lists(
    state: &AppState,
    headers: &HeaderMap,
    doc: &Value,
) -> Result<HashMap<String, StatusListSource>, ApiError> {
    let prefix = format!("{}{STATUS_LISTS_PATH}", public_base(state, headers));
    let mut urls = Vec::new();
    status_urls(doc, &mut urls);
    let mut lists = HashMap::new();
    for url in urls {
        let Some(id) = url.strip_prefix(&prefix) else {
            continue;
        };
        if lists.contains_key(&url) || id.is_empty() || id.contains(['/', '?', '#']) {
            continue;
        }
        match state.store.identity().status_list(id).await {
            Ok(l) => {
                let mut list = vc::StatusList::new(l.length as usize)
                    .map_err(|e| ApiError::Internal(format!("status list {id}: {e}")))?;
                for i in l.set {
                    list.set(i, true)
                        .map_err(|e| ApiError::Internal(format!("status list {id}: {e}")))?;
                }
                let source = StatusListSource::Trusted {
                    status_purpose: l.purpose,
                    list,
                };
                lists.insert(url, source);
            }
            Err(openrail_store::StoreError::NotFound) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(lists)
}

/// A verification's answer: 200 verified, 422 not (VC API shapes); an input that is no
/// credential or presentation at all is 400 naming `param`.
fn answer(v: Verification, param: &str) -> Result<Response, ApiError> {
    if v.malformed {
        let detail = v
            .problem_details
            .first()
            .map_or("is not a credential", |p| p.detail.as_str());
        return Err(invalid(param, detail));
    }
    let status = if v.verified {
        StatusCode::OK
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    Ok((status, axum::Json(v)).into_response())
}

/// Runs a verification off the async workers (canonicalization and signature checks are
/// CPU work).
pub(crate) async fn verify_off_thread(
    doc: Value,
    lists: HashMap<String, StatusListSource>,
    challenge: Option<String>,
    domain: Option<String>,
    presentation: bool,
) -> Result<Verification, ApiError> {
    tokio::task::spawn_blocking(move || {
        let mut options = VerifyOptions::new(OffsetDateTime::now_utc());
        options.status_lists = Some(&lists);
        options.challenge = challenge.as_deref();
        options.domain = domain.as_deref();
        if presentation {
            vc::verify_presentation(&doc, &options)
        } else {
            vc::verify_credential(&doc, &options)
        }
    })
    .await
    .map_err(|e| ApiError::Internal(format!("verification task: {e}")))
}

/// This module's operations, in the order the document lists them (the router and the
/// document take every handler module's: [`crate::openapi::ROUTES`]).
pub const OPERATIONS: &[&Route] = &[
    &VERIFY_CREDENTIAL,
    &VERIFY_PRESENTATION,
    &CREATE_CHALLENGE,
    &ISSUE_CREDENTIAL,
    &UPDATE_CREDENTIAL_STATUS,
    &GET_STATUS_LIST,
];

/// The operation [`verify_credential`] serves.
pub const VERIFY_CREDENTIAL: Route = route!(post "/v1/identity/credentials/verify", "verifyCredential", verify_credential)
    .doc("Verify a credential", "A W3C Verifiable Credential (VC Data Model 1.1 or 2.0) secured with Data Integrity proofs — `eddsa-rdfc-2022`, `eddsa-jcs-2022`, `ecdsa-rdfc-2019` and `ecdsa-jcs-2019` (P-256, P-384), proof sets and chains — with `did:key` verification methods; its validity period; its Bitstring Status List entries when the list is one this server publishes (any other list: not verified). Nothing is fetched from the network: JSON-LD contexts are built in, and a term no context defines is a failure. 200 `verified: true`; 422 `verified: false` with `problemDetails` (VC Data Model error types). Whether the issuer is trusted is your policy, not part of verification. `options` is accepted and ignored. May be called without a key (rate-limited per address).")
    .body(schema::<types::CredentialVerifyRequest>())
    .ok(200, schema::<crate::types::VerificationResult>())
    .ok(422, schema::<crate::types::VerificationResult>())
    .errors(VERIFY)
    .anonymous();

/// `POST /v1/identity/credentials/verify` (VC API): `{"verifiableCredential": {…},
/// "options": {…}}`; unknown options (the legacy `checks`) are accepted and ignored.
/// Reachable without a key (rate-limited per client address).
pub async fn verify_credential(
    State(state): State<AppState>,
    headers: HeaderMap,
    mut fields: Fields,
) -> Result<Response, ApiError> {
    let credential = fields
        .opt_json_object("verifiableCredential")?
        .ok_or_else(|| ApiError::ParameterMissing {
            param: "verifiableCredential".into(),
        })?;
    let _ignored = fields.opt_json_object("options")?;
    fields.finish()?;
    let doc = Value::Object(credential);
    let lists = own_lists(&state, &headers, &doc).await?;
    let v = verify_off_thread(doc, lists, None, None, false).await?;
    answer(v, "verifiableCredential")
}

/// The operation [`verify_presentation`] serves.
pub const VERIFY_PRESENTATION: Route = route!(post "/v1/identity/presentations/verify", "verifyPresentation", verify_presentation)
    .doc("Verify a presentation", "A Verifiable Presentation whose proof (purpose `authentication`) carries a challenge this server gave (`POST /v1/identity/challenges`): the challenge is used up here (a replay is 422 `INVALID_CHALLENGE_ERROR`), and `options.domain`, or the challenge's own domain, must match the proof's. Every embedded credential is verified as `verifyCredential` does. 200 verified, 422 not.")
    .body(schema::<types::PresentationVerifyRequest>())
    .ok(200, schema::<crate::types::VerificationResult>())
    .ok(422, schema::<crate::types::VerificationResult>())
    .errors(VERIFY);

/// `POST /v1/identity/presentations/verify` (VC API): `{"verifiablePresentation": {…},
/// "options": {"challenge": "…", "domain": "…"}}`. The challenge must be one this server
/// gave (`POST /v1/identity/challenges`), unused and unexpired: it is used up here, so a
/// replayed presentation fails.
pub async fn verify_presentation(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    mut fields: Fields,
) -> Result<Response, ApiError> {
    let presentation = fields
        .opt_json_object("verifiablePresentation")?
        .ok_or_else(|| ApiError::ParameterMissing {
            param: "verifiablePresentation".into(),
        })?;
    let options = fields.opt_json_object("options")?.unwrap_or_default();
    fields.finish()?;
    let text = |k: &str| -> Result<Option<String>, ApiError> {
        match options.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(invalid(&format!("options.{k}"), "must be a string")),
        }
    };
    let challenge = text("challenge")?.ok_or_else(|| ApiError::ParameterMissing {
        param: "options.challenge".into(),
    })?;
    let mut domain = text("domain")?;
    let doc = Value::Object(presentation);
    let lists = own_lists(&state, &headers, &doc).await?;
    let issued = state
        .store
        .identity()
        .use_challenge(p.mode(), &challenge, now_ms())
        .await?;
    let Some(bound) = issued else {
        let mut v = Verification::default();
        v.problem_details.push(vc::ProblemDetail::new(
            vc::ProblemType::InvalidChallengeError,
            "Invalid challenge",
            "the challenge was not issued by this server for this mode, was already used, or expired",
        ));
        return answer(v, "verifiablePresentation");
    };
    if let Some(bound) = bound {
        match &domain {
            Some(d) if *d != bound => {
                let mut v = Verification::default();
                v.problem_details.push(vc::ProblemDetail::new(
                    vc::ProblemType::InvalidDomainError,
                    "Invalid domain",
                    "options.domain differs from the domain the challenge was issued for",
                ));
                return answer(v, "verifiablePresentation");
            }
            _ => domain = Some(bound),
        }
    }
    let v = verify_off_thread(doc, lists, Some(challenge), domain, true).await?;
    answer(v, "verifiablePresentation")
}

/// The operation [`create_challenge`] serves.
pub const CREATE_CHALLENGE: Route = route!(post "/v1/identity/challenges", "createChallenge", create_challenge)
    .doc("Create a presentation challenge", "A single-use challenge, valid ten minutes, for a holder to sign into a presentation (optionally bound to a `domain`).")
    .body(schema::<types::ChallengeCreate>())
    .ok(201, schema::<types::IdentityChallenge>())
    .errors(VERIFY);

/// `POST /v1/identity/challenges`: a single-use challenge (ten minutes) for a holder to
/// sign into a presentation, optionally bound to a `domain`.
pub async fn create_challenge(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    mut fields: Fields,
) -> Result<Response, ApiError> {
    let domain = fields.opt_string("domain")?;
    fields.finish()?;
    if let Some(d) = &domain
        && (d.is_empty() || d.chars().count() > 253 || d.chars().any(char::is_control))
    {
        return Err(invalid(
            "domain",
            "must be 1 to 253 characters, no control characters",
        ));
    }
    let now = now_ms();
    let expires_at = now + CHALLENGE_TTL_MS;
    let challenge = state
        .store
        .identity()
        .create_challenge(p.mode(), domain.as_deref(), expires_at, now)
        .await?;
    let body = json!({
        "object": "identity_challenge",
        "challenge": challenge,
        "domain": domain,
        "expires_at": expires_at / 1000,
        "livemode": p.mode().livemode(),
    });
    Ok((StatusCode::CREATED, axum::Json(body)).into_response())
}

/// RFC 3339 of unix milliseconds, whole seconds, UTC.
pub(crate) fn rfc3339(ms: i64) -> String {
    OffsetDateTime::from_unix_timestamp(ms / 1000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
        .format(&Rfc3339)
        .unwrap_or_default()
}

/// The most specific type of a credential (its last that is not `VerifiableCredential`).
pub(crate) fn credential_type(c: &Map<String, Value>) -> String {
    let types: Vec<&str> = match c.get("type") {
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        Some(Value::String(s)) => vec![s.as_str()],
        _ => Vec::new(),
    };
    types
        .iter()
        .rev()
        .find(|t| **t != "VerifiableCredential")
        .unwrap_or(&"VerifiableCredential")
        .to_string()
}

/// The operation [`issue_credential`] serves.
pub const ISSUE_CREDENTIAL: Route = route!(post "/v1/identity/credentials/issue", "issueCredential", issue_credential)
    .doc("Issue a credential", "Openrail signs a VC 2.0 credential as the issuer of the key's mode (`did:key`, Ed25519, `eddsa-rdfc-2022`, purpose `assertionMethod`): it adds `issuer` (or checks it is its own), `id` (`urn:uuid:…`) and `validFrom` when absent, and a revocation entry in one of its Bitstring Status Lists. `proof` and `credentialStatus` may not be given. A term no JSON-LD context defines cannot be signed (400). An `id` issued before is 409 `credential_exists`.")
    .body(schema::<types::CredentialIssueRequest>())
    .ok(201, schema::<crate::types::IssuedCredential>())
    .errors(WRITE)
    .codes(&[Codes::of(409).conflicts(&[Conflict::CredentialExists]).what("A request with this Idempotency-Key is still running (retry later), or a credential with this id was issued before")]);

/// `POST /v1/identity/credentials/issue` (VC API): `{"credential": {…}, "options": {…}}`.
/// Openrail signs a VC 2.0 credential as its own issuer (`eddsa-rdfc-2022`), adding its
/// `id` (when absent), `issuer`, `validFrom` (when absent) and a revocation entry in one
/// of its status lists. 201 `{"verifiableCredential": {…}}`.
pub async fn issue_credential(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    mut fields: Fields,
) -> Result<Response, ApiError> {
    account_only(&p)?;
    let mut c =
        fields
            .opt_json_object("credential")?
            .ok_or_else(|| ApiError::ParameterMissing {
                param: "credential".into(),
            })?;
    let _ignored = fields.opt_json_object("options")?;
    fields.finish()?;
    let first_context = match c.get("@context") {
        Some(Value::Array(a)) => a.first().and_then(Value::as_str),
        Some(Value::String(s)) => Some(s.as_str()),
        _ => None,
    };
    if first_context != Some(vc::CREDENTIALS_V2) {
        return Err(invalid(
            "credential.@context",
            "must start with https://www.w3.org/ns/credentials/v2 (Openrail issues VC 2.0 credentials)",
        ));
    }
    let typed = match c.get("type") {
        Some(Value::Array(a)) => a.iter().any(|t| t == "VerifiableCredential"),
        Some(Value::String(s)) => s == "VerifiableCredential",
        _ => false,
    };
    if !typed {
        return Err(invalid(
            "credential.type",
            "must include VerifiableCredential",
        ));
    }
    for (field, why) in [
        ("proof", "is added by the issuer"),
        ("credentialStatus", "is added by the issuer"),
    ] {
        if c.contains_key(field) {
            return Err(invalid(&format!("credential.{field}"), why));
        }
    }
    let subject = match c.get("credentialSubject") {
        Some(Value::Object(s)) => s.get("id").and_then(Value::as_str).map(str::to_string),
        _ => {
            return Err(invalid(
                "credential.credentialSubject",
                "must be an object (one subject)",
            ));
        }
    };
    let (key, did, vm) = issuer(&state, p.mode()).await?;
    match c.get("issuer") {
        None => {}
        Some(Value::String(s)) if *s == did => {}
        Some(Value::Object(o)) if o.get("id").and_then(Value::as_str) == Some(did.as_str()) => {}
        Some(_) => {
            return Err(invalid(
                "credential.issuer",
                "must be absent or this server's issuer DID (see the answer's issuer)",
            ));
        }
    }
    c.entry("issuer")
        .or_insert_with(|| Value::String(did.clone()));
    let now = now_ms();
    c.entry("validFrom")
        .or_insert_with(|| Value::String(rfc3339(now)));
    let valid_until = match c.get("validUntil") {
        None => None,
        Some(Value::String(s)) => Some(
            OffsetDateTime::parse(s, &Rfc3339)
                .map_err(|_| invalid("credential.validUntil", "must be an RFC 3339 date-time"))?
                .unix_timestamp()
                .saturating_mul(1000),
        ),
        Some(_) => {
            return Err(invalid(
                "credential.validUntil",
                "must be an RFC 3339 date-time",
            ));
        }
    };
    let id = match c.get("id") {
        None => {
            let mut b = [0u8; 16];
            rand::thread_rng().fill_bytes(&mut b);
            b[6] = (b[6] & 0x0f) | 0x40;
            b[8] = (b[8] & 0x3f) | 0x80;
            let h = hex::encode(b);
            let id = format!(
                "urn:uuid:{}-{}-{}-{}-{}",
                &h[0..8],
                &h[8..12],
                &h[12..16],
                &h[16..20],
                &h[20..32]
            );
            c.insert("id".into(), Value::String(id.clone()));
            id
        }
        Some(Value::String(s)) if !s.is_empty() && s.len() <= 200 && s.contains(':') => s.clone(),
        Some(_) => {
            return Err(invalid(
                "credential.id",
                "must be a URI of at most 200 characters",
            ));
        }
    };
    let ctype = credential_type(&c);
    let record = state
        .store
        .identity()
        .reserve_credential(
            p.scope(),
            &NewCredential {
                id: &id,
                credential_type: &ctype,
                subject: subject.as_deref(),
                valid_until,
            },
            now,
        )
        .await?
        .ok_or_else(|| ApiError::Conflict {
            code: Conflict::CredentialExists,
            detail: "a credential with this id was already issued".into(),
        })?;
    let base = public_base(&state, &headers);
    let signed = sign_reserved(&state.store, &base, &record, c, (key, vm), now).await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(json!({ "verifiableCredential": signed })),
    )
        .into_response())
}

/// Finishes a credential whose status slot `record` holds (the one signing path of the
/// credentials Openrail issues: `issue_credential` and verified sessions): adds its
/// revocation entry in the list published under `base`, signs it with the issuer's
/// `(key, verification method)` at `created_ms` (whole seconds: the same inputs sign the
/// same bytes, Ed25519 being deterministic) and records its digest.
pub(crate) async fn sign_reserved(
    store: &Store,
    base: &str,
    record: &IssuedCredential,
    mut c: Map<String, Value>,
    (key, vm): (SigningKey, String),
    created_ms: i64,
) -> Result<Value, ApiError> {
    let list_url = format!("{base}{STATUS_LISTS_PATH}{}", record.status_list_id);
    c.insert(
        "credentialStatus".into(),
        json!({
            "id": format!("{list_url}#{}", record.status_index),
            "type": "BitstringStatusListEntry",
            "statusPurpose": "revocation",
            "statusListIndex": record.status_index.to_string(),
            "statusListCredential": list_url,
        }),
    );
    let created = OffsetDateTime::from_unix_timestamp(created_ms / 1000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let signed = tokio::task::spawn_blocking(move || {
        vc::issue_credential(Value::Object(c), &key, &vm, created)
    })
    .await
    .map_err(|e| ApiError::Internal(format!("signing task: {e}")))?
    .map_err(|e| invalid("credential", &format!("cannot be signed: {e}")))?;
    let jcs = serde_json::to_vec(&signed).map_err(|e| ApiError::Internal(e.to_string()))?;
    let digest = hex::encode(Sha256::digest(&jcs));
    store
        .identity()
        .seal_credential(&record.id, &digest)
        .await?;
    Ok(signed)
}

/// The operation [`update_credential_status`] serves.
pub const UPDATE_CREDENTIAL_STATUS: Route = route!(post "/v1/identity/credentials/status", "updateCredentialStatus", update_credential_status)
    .doc("Revoke a credential", "Sets the revocation bit of a credential this account issued (`status: true`, the default): final, and its status list says so within a minute. `status: false` for a revoked credential is 409 `credential_revoked`.")
    .body(schema::<types::CredentialStatusUpdate>())
    .ok(200, schema::<types::IdentityCredential>())
    .errors(WRITE)
    .codes(&[Codes::of(409).conflicts(&[Conflict::CredentialRevoked]).what(CREDENTIAL_REVOKED)]);

/// `POST /v1/identity/credentials/status` (VC API): `{"credentialId": "urn:uuid:…",
/// "credentialStatus": {"type": "BitstringStatusListEntry", "statusPurpose":
/// "revocation"}, "status": true}` revokes a credential this account issued (final:
/// `status: false` for a revoked credential is 409). Answers its record.
pub async fn update_credential_status(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    mut fields: Fields,
) -> Result<Response, ApiError> {
    account_only(&p)?;
    let id = fields.string("credentialId")?;
    let entry = fields
        .opt_json_object("credentialStatus")?
        .unwrap_or_default();
    let status = fields.opt_bool("status")?.unwrap_or(true);
    fields.finish()?;
    let purpose = entry
        .get("statusPurpose")
        .and_then(Value::as_str)
        .unwrap_or("revocation");
    if purpose != "revocation" {
        return Err(invalid(
            "credentialStatus.statusPurpose",
            "must be revocation (the only purpose of Openrail's lists)",
        ));
    }
    let missing = |e| match e {
        openrail_store::StoreError::NotFound => ApiError::ResourceMissing {
            kind: "credential",
            id: id.clone(),
        },
        e => e.into(),
    };
    let record = if status {
        state
            .store
            .identity()
            .revoke_credential(p.scope(), &id, now_ms())
            .await
            .map_err(missing)?
    } else {
        let r = state
            .store
            .identity()
            .issued_credential(p.scope(), &id)
            .await
            .map_err(missing)?;
        if r.revoked_at.is_some() {
            return Err(ApiError::Conflict {
                code: Conflict::CredentialRevoked,
                detail: "a revoked credential stays revoked".into(),
            });
        }
        r
    };
    Ok((StatusCode::OK, axum::Json(credential_view(&record))).into_response())
}

fn credential_view(r: &openrail_store::identity::IssuedCredential) -> Value {
    json!({
        "object": "identity_credential",
        "id": r.id,
        "type": r.credential_type,
        "subject": r.subject,
        "status": if r.revoked_at.is_some() { "revoked" } else { "active" },
        "status_list_id": r.status_list_id,
        "status_list_index": r.status_index,
        "revoked_at": r.revoked_at.map(|t| t / 1000),
        "valid_until": r.valid_until.map(|t| t / 1000),
        "created": r.created_at / 1000,
        "livemode": r.mode.livemode(),
    })
}

/// The operation [`get_status_list`] serves.
pub const GET_STATUS_LIST: Route = route!(get "/v1/identity/status-lists/{id}", "getStatusList", get_status_list)
    .doc("Retrieve a status list", "A Bitstring Status List this server publishes, as a `BitstringStatusListCredential` signed by the issuer of its mode (131,072 entries, GZIP-compressed and multibase-encoded in `encodedList`). No authentication; cacheable for 60 seconds.")
    .ok(200, schema::<types::StatusListCredential>())
    .errors(&[404])
    .path_id("sl_")
    .public();

/// `GET /v1/identity/status-lists/{id}` (public, no key): the list as a
/// `BitstringStatusListCredential` signed by the issuer of its mode, its `encodedList`
/// GZIP-compressed and multibase-encoded; cacheable for a minute.
pub async fn get_status_list(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let l = state
        .store
        .identity()
        .status_list(&id)
        .await
        .map_err(|e| match e {
            openrail_store::StoreError::NotFound => ApiError::ResourceMissing {
                kind: "status_list",
                id: id.clone(),
            },
            e => e.into(),
        })?;
    let mut list = vc::StatusList::new(l.length as usize)
        .map_err(|e| ApiError::Internal(format!("status list {id}: {e}")))?;
    for i in &l.set {
        list.set(*i, true)
            .map_err(|e| ApiError::Internal(format!("status list {id}: {e}")))?;
    }
    let encoded = list.encode();
    let (key, did, vm) = issuer(&state, l.mode).await?;
    let url = format!("{}{STATUS_LISTS_PATH}{id}", public_base(&state, &headers));
    let now = now_ms();
    let unsigned = json!({
        "@context": [vc::CREDENTIALS_V2],
        "id": url,
        "type": ["VerifiableCredential", "BitstringStatusListCredential"],
        "issuer": did,
        "validFrom": rfc3339(now),
        "credentialSubject": {
            "id": format!("{url}#list"),
            "type": "BitstringStatusList",
            "statusPurpose": l.purpose,
            "encodedList": encoded,
        },
    });
    let created =
        OffsetDateTime::from_unix_timestamp(now / 1000).unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let signed =
        tokio::task::spawn_blocking(move || vc::issue_credential(unsigned, &key, &vm, created))
            .await
            .map_err(|e| ApiError::Internal(format!("signing task: {e}")))?
            .map_err(|e| ApiError::Internal(format!("signing status list {id}: {e}")))?;
    let mut res = (StatusCode::OK, axum::Json(signed)).into_response();
    res.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_str(&format!("public, max-age={STATUS_LIST_MAX_AGE_S}"))
            .expect("a valid header"),
    );
    Ok(res)
}
