//! Identity verification sessions (`/v1/identity/verifications`), in the shape of Stripe
//! Identity's `VerificationSession`: a developer asks whether a wallet is a person
//! (`personhood`), is financially healthy (`financial_health`) or is an agent (`agent`);
//! the session waits for the flow (`requires_input`), is submitted (`processing`), and the
//! provider's check either passes — Openrail then issues the matching W3C credential as the
//! mode's issuer (the same signing path as `POST /v1/identity/credentials/issue`) and the
//! session is `verified` with its `credential_id` — or fails, which returns it to
//! `requires_input` with `last_error`. A session not yet submitted may be canceled.
//!
//! No real provider exists yet: testnet's is simulated ([`SimulatedProvider`], run by the
//! holder of the testnet settlement chain's lease beside the simulated bank), with the
//! scenario chosen at creation (`simulate`); mainnet keys get 503 `mainnet_unavailable`.

pub mod types;
mod views;

use std::collections::HashMap;
use std::time::Duration;

use alloy::primitives::Address;
use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use openrail_domain::IdentityVerificationId;
use openrail_identity as vc;
use openrail_store::agentic::Scope;
use openrail_store::identity::NewCredential;
use openrail_store::verifications::{
    NewVerification, Scenario, SimulatedAnswer, Verification, VerificationType,
};
use openrail_store::{Mode, Store, StoreError, now_ms};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use self::types::IdentityVerificationCreate;
use crate::AppState;
use crate::agentic::{id_of, missing, no_more_query, paging, parse_address};
use crate::bank::testnet_only;
use crate::body::{Fields, invalid};
use crate::context::Principal;
use crate::error::{ApiError, Conflict};
use crate::identity::{issuer_of, public_base, rfc3339, sign_reserved};
use crate::route::{
    Codes, LIST, LinkArg, NOT_WAITING_FOR_INPUT, READ, Route, WRITE, route, schema,
};
use crate::types::RequestBody;

/// How long a credential issued by a verified session is valid.
pub const CREDENTIAL_VALIDITY_MS: i64 = 365 * 24 * 60 * 60 * 1000;

fn answer(status: StatusCode, v: &Verification) -> Response {
    (status, axum::Json(views::identity_verification(v))).into_response()
}

/// A refused move of the session's lifecycle is the request's conflict `code`; not found
/// is 404.
fn refused<'a>(
    code: Conflict,
    id: &'a str,
    detail: &'static str,
) -> impl FnOnce(StoreError) -> ApiError + 'a {
    move |e| match e {
        StoreError::Transition(_) => ApiError::Conflict {
            code,
            detail: detail.into(),
        },
        other => missing("identity_verification", id)(other),
    }
}

/// This module's operations, in the order the document lists them (the router and the
/// document take every handler module's: [`crate::openapi::ROUTES`]).
pub const OPERATIONS: &[&Route] = &[
    &CREATE_IDENTITY_VERIFICATION,
    &LIST_IDENTITY_VERIFICATIONS,
    &GET_IDENTITY_VERIFICATION,
    &SUBMIT_IDENTITY_VERIFICATION,
    &CANCEL_IDENTITY_VERIFICATION,
    &GET_IDENTITY_VERIFICATION_CREDENTIAL,
];

/// The operation [`create_verification`] serves.
pub const CREATE_IDENTITY_VERIFICATION: Route = route!(post "/v1/identity/verifications", "createIdentityVerification", create_verification)
    .doc("Create an identity verification session", "Asks whether a wallet (`subject`) is a person (`personhood`), is financially healthy (`financial_health`) or is an agent (`agent`). The session starts in `requires_input` (the person goes through the provider's flow), then `POST …/submit` hands it to the provider (`processing`): a passed check makes it `verified` and Openrail issues the matching credential (`PersonhoodCredential`, `FinancialHealthCredential`, `AgentCredential`; subject `did:pkh:eip155:<settlement chain>:<subject>`, signed as the mode's issuer with a revocation entry; `GET …/credential`); a failed check returns it to `requires_input` with `last_error`. Testnet only: the provider is simulated, answering as `simulate` says (mainnet keys: 503 `mainnet_unavailable`, no real provider is connected). Events: `identity.verification.created`, `.processing`, `.verified`, `.requires_input`, `.canceled`.")
    .body(schema::<types::IdentityVerificationCreate>())
    .ok(201, schema::<types::IdentityVerification>())
    .errors(WRITE)
    .links(&[
        ("GetIdentityVerification", GET_IDENTITY_VERIFICATION.id, LinkArg::Id),
        ("SubmitIdentityVerification", SUBMIT_IDENTITY_VERIFICATION.id, LinkArg::Id),
        ("CancelIdentityVerification", CANCEL_IDENTITY_VERIFICATION.id, LinkArg::Id),
        ("GetIdentityVerificationCredential", GET_IDENTITY_VERIFICATION_CREDENTIAL.id, LinkArg::Id),
    ]);

/// `POST /v1/identity/verifications`
pub async fn create_verification(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    fields: Fields,
) -> Result<Response, ApiError> {
    testnet_only(&p)?;
    let IdentityVerificationCreate {
        r#type,
        subject,
        simulate,
    } = IdentityVerificationCreate::read(fields)?;
    let kind = VerificationType::parse(&r#type)
        .ok_or_else(|| invalid("type", "must be one of personhood, financial_health, agent"))?;
    let address = parse_address("subject", &subject)?;
    if address == Address::ZERO {
        return Err(invalid("subject", "must not be the zero address"));
    }
    let (scenario, failure_reason) = match simulate {
        None => (Scenario::Verified, None),
        Some(s) => {
            let outcome = match s.outcome.as_deref() {
                None => Scenario::Verified,
                Some(o) => Scenario::parse(o).ok_or_else(|| {
                    invalid("simulate.outcome", "must be one of verified, failed, slow")
                })?,
            };
            // Kept whatever the outcome (shown in `simulate`); only `failed` uses it.
            (outcome, s.failure_reason.map(|t| t.0))
        }
    };
    let subject = address.to_checksum(None);
    let base = public_base(&state, &headers);
    let id = IdentityVerificationId::new();
    crate::context::link_created(&state, &format!("/v1/identity/verifications/{id}")).await?;
    let new = NewVerification {
        kind,
        subject: &subject,
        scenario,
        failure_reason: failure_reason.as_deref(),
        issuer_base: &base,
    };
    let v = state
        .store
        .verifications()
        .create(p.scope(), &id, &new, now_ms())
        .await?;
    Ok(answer(StatusCode::CREATED, &v))
}

/// The operation [`get_verification`] serves.
pub const GET_IDENTITY_VERIFICATION: Route =
    route!(get "/v1/identity/verifications/{id}", "getIdentityVerification", get_verification)
        .doc("Retrieve an identity verification session", "")
        .ok(200, schema::<types::IdentityVerification>())
        .errors(READ)
        .path_id("idv_");

/// `GET /v1/identity/verifications/{id}`
pub async fn get_verification(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    testnet_only(&p)?;
    let id = id_of("identity_verification", &id, IdentityVerificationId::parse)?;
    let v = state
        .store
        .verifications()
        .get(p.scope(), &id)
        .await
        .map_err(missing("identity_verification", id.as_str()))?;
    Ok(answer(StatusCode::OK, &v))
}

/// The operation [`list_verifications`] serves.
pub const LIST_IDENTITY_VERIFICATIONS: Route =
    route!(get "/v1/identity/verifications", "listIdentityVerifications", list_verifications)
        .doc("List identity verification sessions", "Newest first.")
        .ok(200, schema::<types::IdentityVerificationList>())
        .errors(READ)
        .query(LIST);

/// `GET /v1/identity/verifications`: newest first.
pub async fn list_verifications(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Query(mut q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    testnet_only(&p)?;
    let (limit, after) = paging(&mut q)?;
    no_more_query(q)?;
    let page = state
        .store
        .verifications()
        .list(p.scope(), limit, after.as_deref())
        .await?;
    let list = types::IdentityVerificationList::new(
        crate::types::ListTag,
        "/v1/identity/verifications".into(),
        page.data.iter().map(views::identity_verification).collect(),
        page.has_more,
    );
    Ok((StatusCode::OK, axum::Json(list)).into_response())
}

/// The operation [`submit_verification`] serves.
pub const SUBMIT_IDENTITY_VERIFICATION: Route = route!(post "/v1/identity/verifications/{id}/submit", "submitIdentityVerification", submit_verification)
    .doc("Submit an identity verification session", "The flow is finished: `requires_input` → `processing`, and the provider checks (the simulated one answers in about half a second, `slow` in about five). Clears `last_error`. Any other status is 409 `verification_not_submittable`.")
    .ok(200, schema::<types::IdentityVerification>())
    .errors(WRITE)
    .codes(&[
        Codes::of(409)
            .conflicts(&[Conflict::VerificationNotSubmittable])
            .what(NOT_WAITING_FOR_INPUT),
    ])
    .path_id("idv_");

/// `POST /v1/identity/verifications/{id}/submit`: the flow is finished; the provider
/// checks (`requires_input` → `processing`).
pub async fn submit_verification(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    testnet_only(&p)?;
    let id = id_of("identity_verification", &id, IdentityVerificationId::parse)?;
    let v = state
        .store
        .verifications()
        .submit(p.scope(), &id, now_ms())
        .await
        .map_err(refused(
            Conflict::VerificationNotSubmittable,
            id.as_str(),
            "only a session waiting for input (requires_input) may be submitted",
        ))?;
    Ok(answer(StatusCode::OK, &v))
}

/// The operation [`cancel_verification`] serves.
pub const CANCEL_IDENTITY_VERIFICATION: Route = route!(post "/v1/identity/verifications/{id}/cancel", "cancelIdentityVerification", cancel_verification)
    .doc("Cancel an identity verification session", "Withdraws a session waiting for input (`requires_input` → `canceled`). Canceling a canceled session answers it as it is; a session being checked or verified is 409 `verification_not_cancelable`.")
    .ok(200, schema::<types::IdentityVerification>())
    .errors(WRITE)
    .codes(&[
        Codes::of(409)
            .conflicts(&[Conflict::VerificationNotCancelable])
            .what(NOT_WAITING_FOR_INPUT),
    ])
    .path_id("idv_");

/// `POST /v1/identity/verifications/{id}/cancel`: withdraws a session not yet submitted.
pub async fn cancel_verification(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    testnet_only(&p)?;
    let id = id_of("identity_verification", &id, IdentityVerificationId::parse)?;
    let v = state
        .store
        .verifications()
        .cancel(p.scope(), &id, now_ms())
        .await
        .map_err(refused(
            Conflict::VerificationNotCancelable,
            id.as_str(),
            "only a session waiting for input (requires_input) may be canceled",
        ))?;
    Ok(answer(StatusCode::OK, &v))
}

/// The operation [`get_verification_credential`] serves.
pub const GET_IDENTITY_VERIFICATION_CREDENTIAL: Route = route!(get "/v1/identity/verifications/{id}/credential", "getIdentityVerificationCredential", get_verification_credential)
    .doc("Retrieve a verified session's credential", "The W3C credential the session issued, signed (`{\"verifiableCredential\": {…}}`), to hand to its holder; `POST /v1/identity/credentials/verify` verifies it and `POST /v1/identity/credentials/status` revokes it. Before the session is verified: 409 `verification_not_verified`.")
    .ok(200, schema::<crate::types::IssuedCredential>())
    .errors(&[400, 401, 403, 404, 409, 429, 503])
    .codes(&[
        Codes::of(409)
            .conflicts(&[Conflict::VerificationNotVerified])
            .what("The session is not verified: it has issued no credential")
            .alone(),
    ])
    .path_id("idv_");

/// `GET /v1/identity/verifications/{id}/credential`: the credential a verified session
/// issued, signed, for its holder (`{"verifiableCredential": {…}}`, as
/// `POST /v1/identity/credentials/issue` answers).
pub async fn get_verification_credential(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    testnet_only(&p)?;
    let id = id_of("identity_verification", &id, IdentityVerificationId::parse)?;
    let stored = state
        .store
        .verifications()
        .credential(p.scope(), &id)
        .await
        .map_err(missing("identity_verification", id.as_str()))?;
    let Some(text) = stored else {
        return Err(ApiError::Conflict {
            code: Conflict::VerificationNotVerified,
            detail: "the session has issued no credential: it is not verified".into(),
        });
    };
    let credential: Value = serde_json::from_str(&text)
        .map_err(|e| ApiError::Internal(format!("credential of {id}: {e}")))?;
    Ok((
        StatusCode::OK,
        axum::Json(json!({ "verifiableCredential": credential })),
    )
        .into_response())
}

/// The credential id a session issues: a UUID derived from the session's id, so a check
/// answered twice (a crash between issuing and recording) issues one credential, in the
/// same status slot, with the same bytes.
pub fn credential_id_of(id: &IdentityVerificationId) -> String {
    derived_uuid(&format!("openrail identity verification {id}"))
}

/// A `urn:uuid:` (version 8) derived from `seed`: the same seed, the same id.
pub(crate) fn derived_uuid(seed: &str) -> String {
    let d = Sha256::digest(seed.as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    b[6] = (b[6] & 0x0f) | 0x80; // version 8: custom
    b[8] = (b[8] & 0x3f) | 0x80; // RFC 9562 variant
    let h = hex::encode(b);
    format!(
        "urn:uuid:{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Where the terms of the credential types sessions issue are defined.
pub const TYPES_VOCABULARY: &str = "https://docs.openrail.dev/identity/vocab#";

/// The inline JSON-LD context naming those types (the VC 2.0 context defines no
/// `@vocab`, so every term must be defined; inline, so verification fetches nothing).
fn credential_context() -> Value {
    let mut terms = serde_json::Map::new();
    for kind in VerificationType::ALL {
        let t = kind.credential_type();
        terms.insert(t.into(), json!(format!("{TYPES_VOCABULARY}{t}")));
    }
    Value::Object(terms)
}

/// The credential a verified session issues, before its status entry and proof.
fn unsigned_credential(
    id: &str,
    credential_type: &str,
    issuer: &str,
    subject: &str,
    issued_at: i64,
    valid_until: i64,
) -> serde_json::Map<String, Value> {
    let c = json!({
        "@context": [vc::CREDENTIALS_V2, credential_context()],
        "id": id,
        "type": ["VerifiableCredential", credential_type],
        "issuer": issuer,
        "validFrom": rfc3339(issued_at),
        "validUntil": rfc3339(valid_until),
        "credentialSubject": { "id": subject },
    });
    c.as_object().cloned().unwrap_or_default()
}

/// Testnet's simulated identity provider: answers the sessions whose check is due, as
/// their scenario says ([`Verification::simulated_answer`]), and issues the credential of
/// those that pass. Run by the holder of the testnet settlement chain's lease.
#[derive(Debug, Clone)]
pub struct SimulatedProvider {
    store: Store,
    chain_id: u64,
}

impl SimulatedProvider {
    /// The provider of testnet, whose credentials name subjects by their `did:pkh` on
    /// the settlement chain `chain_id`.
    pub fn new(store: Store, chain_id: u64) -> Self {
        Self { store, chain_id }
    }

    /// Answers every session due at `now` (unix ms). Returns how many moved.
    pub async fn process_due(&self, now: i64) -> Result<usize, ApiError> {
        let mut moved = 0;
        for v in self
            .store
            .verifications()
            .due(Mode::Testnet, now, 50)
            .await?
        {
            // One session's failure (logged, retried at the next step) holds up no other.
            match self.answer(&v, now).await {
                Ok(done) => moved += usize::from(done),
                Err(e) => {
                    tracing::warn!(error = %e, session = %v.id, "simulated identity check failed to record")
                }
            }
        }
        Ok(moved)
    }

    /// Answers one due session; false when another worker answered it first.
    async fn answer(&self, v: &Verification, now: i64) -> Result<bool, ApiError> {
        Ok(match v.simulated_answer() {
            SimulatedAnswer::Failed { code, reason } => {
                self.store
                    .verifications()
                    .fail(v, (code, reason), now)
                    .await?
            }
            SimulatedAnswer::Verified => {
                let (credential_id, credential) = self.issue(v).await?;
                self.store
                    .verifications()
                    .complete(v, &credential_id, &credential, now)
                    .await?
            }
        })
    }

    /// Issues the credential of session `v` (again, byte for byte, if a previous answer
    /// issued it and was not recorded): its id and signed JSON.
    async fn issue(&self, v: &Verification) -> Result<(String, String), ApiError> {
        let scope = Scope {
            account_id: &v.account_id,
            mode: v.mode,
        };
        let id = credential_id_of(&v.id);
        let ctype = v.kind.credential_type();
        let subject = format!("did:pkh:eip155:{}:{}", self.chain_id, v.subject);
        // The check's due time: every input of the signature is fixed by the session.
        let issued_at = v.due_at.unwrap_or(v.updated_at);
        let valid_until = issued_at + CREDENTIAL_VALIDITY_MS;
        let new = NewCredential {
            id: &id,
            credential_type: ctype,
            subject: Some(&subject),
            valid_until: Some(valid_until),
        };
        let record = match self
            .store
            .identity()
            .reserve_credential(scope, &new, issued_at)
            .await?
        {
            Some(r) => r,
            None => self.store.identity().issued_credential(scope, &id).await?,
        };
        let (key, did, vm) = issuer_of(&self.store, v.mode).await?;
        let unsigned = unsigned_credential(&id, ctype, &did, &subject, issued_at, valid_until);
        let signed = sign_reserved(
            &self.store,
            &v.issuer_base,
            &record,
            unsigned,
            (key, vm),
            issued_at,
        )
        .await?;
        Ok((id, signed.to_string()))
    }

    /// Answers due sessions every `poll`, forever.
    pub async fn run(self, poll: Duration) {
        loop {
            if let Err(e) = self.process_due(now_ms()).await {
                tracing::warn!(error = %e, "simulated identity provider step failed");
            }
            tokio::time::sleep(poll).await;
        }
    }
}

impl crate::represent::Represent for openrail_store::events::IdentityVerificationSnapshot {
    type View = types::IdentityVerification;
    fn represent(
        &self,
        _state: &AppState,
        _now: i64,
    ) -> Result<types::IdentityVerification, ApiError> {
        Ok(views::identity_verification(&self.identity_verification))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_credentials_of_sessions_sign_and_verify() {
        use openrail_identity::ed25519_dalek::SigningKey;
        let key = SigningKey::from_bytes(&[7u8; 32]);
        let did = vc::did_key_from_ed25519_public(&key.verifying_key());
        let vm = vc::did_key_verification_method(&did);
        let now = 1_780_000_000_000;
        for kind in VerificationType::ALL {
            let c = unsigned_credential(
                "urn:uuid:00000000-0000-8000-8000-000000000000",
                kind.credential_type(),
                &did,
                "did:pkh:eip155:31337:0x90F79bf6EB2c4f870365E785982E1f101E93b906",
                now,
                now + CREDENTIAL_VALIDITY_MS,
            );
            let created = time::OffsetDateTime::from_unix_timestamp(now / 1000).unwrap();
            let signed =
                vc::issue_credential(Value::Object(c.clone()), &key, &vm, created).expect("signs");
            let again = vc::issue_credential(Value::Object(c), &key, &vm, created).expect("signs");
            assert_eq!(signed, again, "the same inputs sign the same bytes");
            let at = time::OffsetDateTime::from_unix_timestamp(now / 1000 + 60).unwrap();
            let v = vc::verify_credential(&signed, &vc::VerifyOptions::new(at));
            assert!(v.verified, "{kind:?}: {:?}", v.problem_details);
        }
    }

    #[test]
    fn a_session_names_one_credential_id_a_uuid() {
        let a = IdentityVerificationId::parse("idv_a").unwrap();
        let b = IdentityVerificationId::parse("idv_b").unwrap();
        let id = credential_id_of(&a);
        assert_eq!(id, credential_id_of(&a));
        assert_ne!(id, credential_id_of(&b));
        let uuid = id.strip_prefix("urn:uuid:").unwrap();
        let parts: Vec<usize> = uuid.split('-').map(str::len).collect();
        assert_eq!(parts, [8, 4, 4, 4, 12]);
        assert_eq!(&uuid[14..15], "8");
        assert!(matches!(&uuid[19..20], "8" | "9" | "a" | "b"));
    }
}
