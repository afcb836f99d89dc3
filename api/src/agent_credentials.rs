//! Agent credentials (`/v1/session-keys/{id}/credential`): Openrail, as the mode's issuer,
//! binds a session key's agent — its `signer`, the wallet that signs each pull — to the
//! payer, the mandate and the ceiling it pulls under, in a W3C `AgentCredential` (VC 2.0,
//! `eddsa-rdfc-2022`, a revocation entry in one of Openrail's Bitstring Status Lists),
//! valid until the key expires. One per key: its id is derived from the key's, so issuing
//! again answers the same credential. Revoking the key, or canceling its mandate, revokes
//! it in the same database transaction (`openrail_store::agentic`).

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use openrail_domain::SessionKeyId;
use openrail_identity as vc;
use openrail_store::agentic::{KeyStatus, Mandate, MandateStatus, SessionKey};
use openrail_store::identity::{AgentCredential, AgentCredentialRecord, NewCredential};
use openrail_store::money::format_minor;
use openrail_store::now_ms;
use serde_json::{Map, Value, json};

use crate::AppState;
use crate::agentic::{account_only, agent_may_read_key, id_of, missing};
use crate::context::Principal;
use crate::error::{ApiError, Conflict, DeclineReason};
use crate::identity::{issuer, public_base, rfc3339, sign_reserved};
use crate::route::{Codes, READ, Route, WRITE, route, schema};
use crate::types;
use crate::verifications::{TYPES_VOCABULARY, derived_uuid};

/// The credential's type.
pub const AGENT_CREDENTIAL: &str = "AgentCredential";

/// The credential id of key `id`'s AgentCredential: a UUID derived from the key's id, so
/// two requests (or a retry after a crash between issuing and recording) issue one
/// credential, in one status slot.
pub fn credential_id_of(id: &SessionKeyId) -> String {
    derived_uuid(&format!("openrail agent credential {id}"))
}

/// The inline JSON-LD context of the credential: its type and every claim (the VC 2.0
/// context defines no `@vocab`; inline, so verification fetches nothing).
fn context() -> Value {
    let term = |t: &str| format!("{TYPES_VOCABULARY}{t}");
    json!({
        AGENT_CREDENTIAL: term(AGENT_CREDENTIAL),
        "payer": { "@id": term("payer"), "@type": "@id" },
        "payerBankAccount": term("payerBankAccount"),
        "mandate": term("mandate"),
        "sessionKey": term("sessionKey"),
        "ceiling": term("ceiling"),
        "amount": term("amount"),
        "currency": term("currency"),
        "interval": term("interval"),
        "allowedDestinations": { "@id": term("allowedDestinations"), "@container": "@set" },
    })
}

/// A wallet as a `did:pkh` on chain `chain_id`.
fn did_pkh(chain_id: u64, address: &str) -> String {
    format!("did:pkh:eip155:{chain_id}:{address}")
}

/// The credential of key `k` (signed by `signer`) under mandate `m`, before its status
/// entry and proof: valid from `issued_at` until the key expires (whole seconds, never
/// later than the key).
fn unsigned_credential(
    id: &str,
    issuer: &str,
    k: &SessionKey,
    signer: &str,
    m: &Mandate,
    issued_at: i64,
) -> Map<String, Value> {
    let mut subject = Map::new();
    subject.insert("id".into(), json!(did_pkh(m.chain_id, signer)));
    if m.is_bank_funded() {
        subject.insert("payerBankAccount".into(), json!(m.payer_account_id));
    } else {
        subject.insert("payer".into(), json!(did_pkh(m.chain_id, &m.payer_address)));
    }
    subject.insert("mandate".into(), json!(m.id.to_string()));
    subject.insert("sessionKey".into(), json!(k.id.to_string()));
    // What binds the key: its own ceiling when it has one, else its mandate's.
    let ceiling = k.max_amount.unwrap_or(m.max_amount);
    subject.insert(
        "ceiling".into(),
        json!({
            "amount": format_minor(ceiling, m.currency),
            "currency": m.currency.code(),
            "interval": m.interval.as_str(),
        }),
    );
    if !k.allowed_destinations.is_empty() {
        subject.insert("allowedDestinations".into(), json!(k.allowed_destinations));
    }
    let c = json!({
        "@context": [vc::CREDENTIALS_V2, context()],
        "id": id,
        "type": ["VerifiableCredential", AGENT_CREDENTIAL],
        "issuer": issuer,
        "validFrom": rfc3339(issued_at),
        "validUntil": rfc3339(k.expires_at),
        "credentialSubject": subject,
    });
    c.as_object().cloned().unwrap_or_default()
}

/// Why key `k` under mandate `m` cannot be given a credential at `now`, if it cannot: no
/// signer (409), or a key or mandate that can no longer pull (422, the codes a pull would
/// be declined with).
fn refusal(k: &SessionKey, m: &Mandate, now: i64) -> Option<ApiError> {
    let declined = |reason, detail: String| ApiError::Declined {
        reason,
        detail,
        pull_id: None,
        remaining: None,
        resets_at: None,
    };
    if k.signer.is_none() {
        return Some(ApiError::Conflict {
            code: Conflict::SessionKeyWithoutSigner,
            detail: format!(
                "session key {} has no signer: an agent credential names the agent's wallet (create the key with `signer`)",
                k.id
            ),
        });
    }
    match k.status {
        KeyStatus::Revoked => {
            return Some(declined(
                DeclineReason::SessionKeyRevoked,
                format!("session key {} was revoked", k.id),
            ));
        }
        KeyStatus::Pending | KeyStatus::Failed => {
            return Some(declined(
                DeclineReason::SessionKeyNotActive,
                format!("session key {} is not on chain", k.id),
            ));
        }
        KeyStatus::Active if k.expires_at <= now => {
            return Some(declined(
                DeclineReason::SessionKeyExpired,
                format!("session key {} has expired", k.id),
            ));
        }
        KeyStatus::Active => {}
    }
    (m.status != MandateStatus::Active).then(|| {
        declined(
            DeclineReason::MandateNotActive,
            format!("mandate {} is not active", m.id),
        )
    })
}

/// `{"verifiableCredential": {…}}` with `status`.
fn answer(status: StatusCode, c: &AgentCredential) -> Result<Response, ApiError> {
    let credential: Value = serde_json::from_str(&c.credential).map_err(|e| {
        ApiError::Internal(format!("agent credential of {}: {e}", c.session_key_id))
    })?;
    Ok((
        status,
        axum::Json(json!({ "verifiableCredential": credential })),
    )
        .into_response())
}

/// This module's operations, in the order the document lists them (the router and the
/// document take every handler module's: [`crate::openapi::ROUTES`]).
pub const OPERATIONS: &[&Route] = &[&ISSUE_AGENT_CREDENTIAL, &GET_AGENT_CREDENTIAL];

/// The operation [`issue_agent_credential`] serves.
pub const ISSUE_AGENT_CREDENTIAL: Route = route!(post "/v1/session-keys/{id}/credential", "issueAgentCredential", issue_agent_credential)
    .doc("Issue a session key's agent credential", "Openrail, as the issuer of the key's mode (as `issueCredential`: `did:key`, `eddsa-rdfc-2022`, a revocation entry in one of its Bitstring Status Lists), signs a VC 2.0 `AgentCredential` binding the key's agent to what it may pull: `credentialSubject.id` is the key's `signer` as `did:pkh:eip155:<settlement chain>:<signer>`, with the `payer` (`did:pkh`; `payerBankAccount` for a bank-funded mandate), the `mandate` and `sessionKey` ids, the `ceiling` that binds the key (its own `max_amount`, else its mandate's: `amount`, `currency`, `interval`) and its `allowedDestinations` when it has a list; `validUntil` is the key's `expires_at`. Every term is defined in the credential's inline context, so `verifyCredential` verifies it with no network. One per key: 201 the first time, then 200 with the same credential. Revoking the key, or canceling its mandate, revokes it. A key without a `signer` is 409 `session_key_without_signer`; a key that can no longer pull is 422 (`session_key_revoked`, `session_key_expired`, `session_key_not_active`, `mandate_not_active`).")
    .ok(201, schema::<types::IssuedCredential>())
    .ok(200, schema::<types::IssuedCredential>())
    .errors(WRITE)
    .codes(&[
        Codes::of(409)
            .conflicts(&[Conflict::SessionKeyWithoutSigner])
            .what("A request with this Idempotency-Key is still running (retry later), or the key has no signer"),
        Codes::of(422)
            .declines(&[DeclineReason::SessionKeyRevoked, DeclineReason::SessionKeyExpired, DeclineReason::SessionKeyNotActive, DeclineReason::MandateNotActive]),
    ])
    .path_id("sk_");

/// `POST /v1/session-keys/{id}/credential`: issues the key's AgentCredential (201), or
/// answers the one issued before (200).
pub async fn issue_agent_credential(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    account_only(&p)?;
    let id = id_of("session_key", &id, SessionKeyId::parse)?;
    let k = state
        .store
        .keys()
        .get(p.scope(), &id)
        .await
        .map_err(missing("session_key", id.as_str()))?;
    if let Some(c) = state
        .store
        .identity()
        .agent_credential(p.scope(), &id)
        .await?
    {
        return answer(StatusCode::OK, &c);
    }
    let m = state.store.mandates().get(p.scope(), &k.mandate_id).await?;
    let now = now_ms();
    if let Some(refused) = refusal(&k, &m, now) {
        return Err(refused);
    }
    let Some(signer) = k.signer.as_deref() else {
        return Err(ApiError::Internal(format!("key {id} lost its signer")));
    };
    let credential_id = credential_id_of(&id);
    let subject = did_pkh(m.chain_id, signer);
    let new = NewCredential {
        id: &credential_id,
        credential_type: AGENT_CREDENTIAL,
        subject: Some(&subject),
        valid_until: Some(k.expires_at),
    };
    // One record per key: a request that finds it reserved (a concurrent one, or one that
    // crashed before recording) signs the same credential, from the reservation's time.
    let record = match state
        .store
        .identity()
        .reserve_credential(p.scope(), &new, now)
        .await?
    {
        Some(r) => r,
        None => {
            state
                .store
                .identity()
                .issued_credential(p.scope(), &credential_id)
                .await?
        }
    };
    let (key, did, vm) = issuer(&state, p.mode()).await?;
    let issued_at = record.created_at;
    let unsigned = unsigned_credential(&credential_id, &did, &k, signer, &m, issued_at);
    let base = public_base(&state, &headers);
    let signed =
        sign_reserved(&state.store, &base, &record, unsigned, (key, vm), issued_at).await?;
    let recorded = state
        .store
        .identity()
        .record_agent_credential(&id, &credential_id, &signed.to_string(), now_ms())
        .await?;
    match recorded {
        AgentCredentialRecord::New(c) => answer(StatusCode::CREATED, &c),
        AgentCredentialRecord::Existing(c) => answer(StatusCode::OK, &c),
        AgentCredentialRecord::KeyNotLive => {
            // Revoked, expired or its mandate canceled while this request signed.
            let k = state.store.keys().get(p.scope(), &id).await?;
            let m = state.store.mandates().get(p.scope(), &k.mandate_id).await?;
            Err(refusal(&k, &m, now_ms()).unwrap_or(ApiError::Declined {
                reason: DeclineReason::SessionKeyNotActive,
                detail: format!("session key {id} can no longer pull"),
                pull_id: None,
                remaining: None,
                resets_at: None,
            }))
        }
    }
}

/// The operation [`get_agent_credential`] serves.
pub const GET_AGENT_CREDENTIAL: Route = route!(get "/v1/session-keys/{id}/credential", "getAgentCredential", get_agent_credential)
    .doc("Retrieve a session key's agent credential", "The `AgentCredential` issued for the key (`{\"verifiableCredential\": {…}}`), whatever its status since (`verifyCredential` says whether it is revoked). The key's own secret may read it. 404 `resource_missing` before one was issued.")
    .ok(200, schema::<types::IssuedCredential>())
    .errors(READ)
    .path_id("sk_");

/// `GET /v1/session-keys/{id}/credential`: the key's AgentCredential (the key's own
/// secret may read it); 404 before one was issued.
pub async fn get_agent_credential(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    agent_may_read_key(&p, &id)?;
    let id = id_of("session_key", &id, SessionKeyId::parse)?;
    state
        .store
        .keys()
        .get(p.scope(), &id)
        .await
        .map_err(missing("session_key", id.as_str()))?;
    match state
        .store
        .identity()
        .agent_credential(p.scope(), &id)
        .await?
    {
        Some(c) => answer(StatusCode::OK, &c),
        None => Err(ApiError::ResourceMissing {
            kind: "agent_credential",
            id: id.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openrail_domain::{AccountId, MandateId};
    use openrail_store::agentic::Mandate;
    use openrail_store::{Currency, Interval, Mode};

    fn fixture(now: i64) -> (SessionKey, Mandate) {
        let m = Mandate {
            id: MandateId::parse("man_test").unwrap(),
            account_id: AccountId::parse("acct_test").unwrap(),
            mode: Mode::Testnet,
            payer_account_id: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8".into(),
            payer_address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8".into(),
            currency: Currency::Usd,
            max_amount: 10_000,
            interval: Interval::Monthly,
            purpose: None,
            payees: vec!["0x90F79bf6EB2c4f870365E785982E1f101E93b906".into()],
            agent: None,
            requirements: None,
            status: MandateStatus::Active,
            chain_id: 31337,
            contract: "0x5FbDB2315678afecb367f032d93F642f64180aa3".into(),
            onchain_id: format!("0x{}", "11".repeat(32)),
            tx_hash: None,
            created_at: now,
        };
        let k = SessionKey {
            id: SessionKeyId::parse("sk_test").unwrap(),
            account_id: m.account_id.clone(),
            mode: Mode::Testnet,
            mandate_id: m.id.clone(),
            expires_at: now + 3_600_500,
            max_amount: Some(2_500),
            allowed_destinations: vec!["0x90F79bf6EB2c4f870365E785982E1f101E93b906".into()],
            status: KeyStatus::Active,
            onchain_id: format!("0x{}", "22".repeat(32)),
            tx_hash: None,
            created_at: now,
            signer: Some("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC".into()),
        };
        (k, m)
    }

    #[test]
    fn the_credential_signs_and_verifies_with_every_claim_defined() {
        use openrail_identity::ed25519_dalek::SigningKey;
        let key = SigningKey::from_bytes(&[9u8; 32]);
        let did = vc::did_key_from_ed25519_public(&key.verifying_key());
        let vm = vc::did_key_verification_method(&did);
        let now = 1_780_000_000_000;
        let (k, mut m) = fixture(now);
        for bank in [false, true] {
            if bank {
                m.payer_account_id = "ba_test".into();
            }
            let c = unsigned_credential(
                &credential_id_of(&k.id),
                &did,
                &k,
                "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
                &m,
                now,
            );
            let s = &c["credentialSubject"];
            assert_eq!(s["ceiling"]["amount"], "25.00", "the key's own ceiling");
            assert_eq!(s["ceiling"]["interval"], "monthly");
            assert_eq!(s["sessionKey"], "sk_test");
            assert_eq!(s.get("payer").is_some(), !bank);
            assert_eq!(s.get("payerBankAccount").is_some(), bank);
            // validUntil is the key's expiry in whole seconds: never later.
            assert_eq!(c["validUntil"], rfc3339(k.expires_at));
            let created = time::OffsetDateTime::from_unix_timestamp(now / 1000).unwrap();
            let signed = vc::issue_credential(Value::Object(c), &key, &vm, created).expect("signs");
            let at = time::OffsetDateTime::from_unix_timestamp(now / 1000 + 60).unwrap();
            let v = vc::verify_credential(&signed, &vc::VerifyOptions::new(at));
            assert!(v.verified, "{:?}", v.problem_details);
            // An undefined claim is refused: the context is what makes it verify.
            let mut extra = unsigned_credential(
                &credential_id_of(&k.id),
                &did,
                &k,
                "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
                &m,
                now,
            );
            extra["credentialSubject"]["undefinedClaim"] = json!("x");
            assert!(vc::issue_credential(Value::Object(extra), &key, &vm, created).is_err());
        }
    }

    #[test]
    fn a_key_without_signer_or_that_cannot_pull_is_refused() {
        let now = 1_780_000_000_000;
        let (k, m) = fixture(now);
        assert!(refusal(&k, &m, now).is_none());
        let code = |k: &SessionKey, m: &Mandate, at| refusal(k, m, at).map(|e| e.problem().code);
        let mut no_signer = k.clone();
        no_signer.signer = None;
        assert_eq!(
            code(&no_signer, &m, now),
            Some("session_key_without_signer")
        );
        assert_eq!(code(&k, &m, k.expires_at), Some("session_key_expired"));
        let mut revoked = k.clone();
        revoked.status = KeyStatus::Revoked;
        assert_eq!(code(&revoked, &m, now), Some("session_key_revoked"));
        let mut pending = k.clone();
        pending.status = KeyStatus::Pending;
        assert_eq!(code(&pending, &m, now), Some("session_key_not_active"));
        let mut canceled = m.clone();
        canceled.status = MandateStatus::Canceled;
        assert_eq!(code(&k, &canceled, now), Some("mandate_not_active"));
    }

    #[test]
    fn a_key_names_one_credential_id() {
        let a = SessionKeyId::parse("sk_a").unwrap();
        let b = SessionKeyId::parse("sk_b").unwrap();
        assert_eq!(credential_id_of(&a), credential_id_of(&a));
        assert_ne!(credential_id_of(&a), credential_id_of(&b));
        assert!(credential_id_of(&a).starts_with("urn:uuid:"));
    }
}
