//! Mandates, session keys and debit pulls: the HTTP side. A handler parses the request,
//! asks its service (`openrail_engine::{mandates, session_keys, pulls}`), which writes the
//! object, its events and its work (the outbox) in one database transaction and sends
//! nothing; the engine of the settlement chain's lease holder sends the work and records
//! the outcome, whatever happens to the HTTP request. The handler waits for it up to a
//! bound (`Prefer: wait=N`, default 10 s) and answers 201 when it is done, 202 while it is
//! still pending.

pub mod types;
pub(crate) mod views;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use alloy::primitives::Address;
use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use openrail_domain::{BankAccountId, MandateId, PullId, SessionKeyId};
use openrail_store::agentic::{DebitPull, Mandate, PullStatus, SessionKey};
use openrail_store::money::format_minor;
use openrail_store::outbox::WorkKind;
use openrail_store::stages;
use openrail_store::verification::VerificationType;
use openrail_store::{Currency, Interval, Mode, StoreError, now_ms};
use serde::Serialize;

use self::types::{DebitPullCreate, MandateCreate, SessionKeyCreate};
use crate::AppState;
use crate::body::{Fields, invalid};
use crate::context::{Principal, link_created};
use crate::types::{AuthorizationCreate, RequestBody, Text};

use crate::error::{ApiError, DeclineReason, ErrorCode};
use crate::represent::Represent;
use crate::rfc3339::rfc3339_ms;
use crate::route::{
    Codes, IDENTITY_FORBIDDEN, LIST, LinkArg, Param, READ, Route, WRITE, examples, route, schema,
};
use openrail_engine::network::Network;
use openrail_engine::{mandates, pulls, session_keys};
use openrail_store::events::{DebitPullSnapshot, MandateSnapshot, SessionKeySnapshot};

type ApiResult = Result<Response, ApiError>;

pub(crate) fn network(state: &AppState, p: &Principal) -> Result<Arc<Network>, ApiError> {
    match p.mode() {
        Mode::Testnet => state.testnet.clone(),
        Mode::Mainnet => state.mainnet.clone(),
    }
    .ok_or(ApiError::MainnetUnavailable)
}

pub(crate) fn account_only(p: &Principal) -> Result<(), ApiError> {
    match p {
        Principal::Account(_) | Principal::Dashboard { .. } => Ok(()),
        Principal::Agent { .. } => Err(ApiError::Forbidden(
            "a session key's secret may only create pulls on its key and read that key and its pulls".into(),
        )),
    }
}

/// The id `s` names as a `T` (parsed with `parse`); an id of another kind names no such
/// object: 404, as for an unknown one.
pub(crate) fn id_of<T>(
    kind: &'static str,
    s: &str,
    parse: fn(&str) -> Option<T>,
) -> Result<T, ApiError> {
    parse(s).ok_or_else(|| ApiError::ResourceMissing {
        kind,
        id: s.to_string(),
    })
}

pub(crate) fn missing<'a>(
    kind: &'static str,
    id: &'a str,
) -> impl FnOnce(StoreError) -> ApiError + 'a {
    move |e| match e {
        StoreError::NotFound => ApiError::ResourceMissing {
            kind,
            id: id.to_string(),
        },
        other => ApiError::Store(other),
    }
}

/// How long to wait for the chain: `Prefer: wait=N` (seconds) within the configured bound.
pub(crate) fn wait_of(state: &AppState, headers: &HeaderMap) -> Duration {
    headers
        .get_all("prefer")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|p| p.trim().strip_prefix("wait="))
        .filter_map(|n| n.trim().parse::<u64>().ok())
        .map(Duration::from_secs)
        .next()
        .unwrap_or(state.config.default_wait)
        .min(state.config.max_wait)
}

pub(crate) fn parse_address(param: &str, s: &str) -> Result<Address, ApiError> {
    if s.starts_with("ba_") {
        return Err(invalid(
            param,
            "names a bank account; bank accounts are not available yet, use a wallet address",
        ));
    }
    let hex = s
        .strip_prefix("0x")
        .filter(|h| h.len() == 40 && h.bytes().all(|b| b.is_ascii_hexdigit()));
    match hex {
        // Mixed case claims an EIP-55 checksum: it must hold, so a typo is caught rather
        // than paid. All-lowercase and all-uppercase carry no checksum and are accepted.
        Some(h)
            if h.bytes().any(|b| b.is_ascii_lowercase())
                && h.bytes().any(|b| b.is_ascii_uppercase()) =>
        {
            Address::parse_checksummed(s, None).map_err(|_| {
                invalid(
                    param,
                    "has a wrong EIP-55 checksum (a typo?); send the checksummed form or all lowercase",
                )
            })
        }
        Some(_) => s
            .parse()
            .map_err(|_| invalid(param, "must be a wallet address (0x and 40 hex digits)")),
        None => Err(invalid(
            param,
            "must be a wallet address (0x and 40 hex digits)",
        )),
    }
}

/// A currency code a request sent.
pub(crate) fn currency_of(code: &str) -> Result<Currency, ApiError> {
    Currency::parse(code).ok_or_else(|| invalid("currency", "must be one of USD, EUR"))
}

pub(crate) fn paging(q: &mut HashMap<String, String>) -> Result<(u32, Option<String>), ApiError> {
    let limit = match q.remove("limit") {
        None => 10,
        Some(l) => l
            .parse::<u32>()
            .ok()
            .filter(|l| (1..=100).contains(l))
            .ok_or_else(|| invalid("limit", "must be 1 to 100"))?,
    };
    Ok((limit, q.remove("starting_after")))
}

pub(crate) fn no_more_query(q: HashMap<String, String>) -> Result<(), ApiError> {
    match q.into_keys().next() {
        Some(param) => Err(ApiError::ParameterUnknown { param }),
        None => Ok(()),
    }
}

/// A typed answer with its status.
pub(crate) fn json<T: Serialize>(status: StatusCode, v: T) -> Response {
    (status, axum::Json(v)).into_response()
}

/// A mandate as the API shows it now.
pub(crate) async fn render_mandate(
    state: &AppState,
    m: &Mandate,
) -> Result<types::Mandate, ApiError> {
    let now = now_ms();
    MandateSnapshot {
        current_epoch: state.store.mandates().epoch_use(m, now).await?,
        authorization: state.store.consent().get(m.id.as_str()).await?,
        mandate: m.clone(),
    }
    .represent(state, now)
}

/// A session key as the API shows it now.
pub(crate) async fn render_key(
    state: &AppState,
    k: &SessionKey,
    m: &Mandate,
) -> Result<types::SessionKey, ApiError> {
    let now = now_ms();
    SessionKeySnapshot {
        current_epoch: state.store.keys().epoch_use(k, m, now).await?,
        session_key: k.clone(),
        mandate: m.clone(),
    }
    .represent(state, now)
}

// ------------------------------------------------------------------ mandates

/// This module's operations, in the order the document lists them (the router and the
/// document take every handler module's: [`crate::openapi::ROUTES`]).
pub const OPERATIONS: &[&Route] = &[
    &CREATE_MANDATE,
    &LIST_MANDATES,
    &GET_MANDATE,
    &CANCEL_MANDATE,
    &AUTHORIZE_MANDATE,
    &CREATE_SESSION_KEY,
    &LIST_SESSION_KEYS,
    &GET_SESSION_KEY,
    &REVOKE_SESSION_KEY,
    &CREATE_DEBIT_PULL,
    &LIST_DEBIT_PULLS,
    &GET_DEBIT_PULL,
];

/// The operation [`create_mandate`] serves.
pub const CREATE_MANDATE: Route = route!(post "/v1/mandates", "createMandate", create_mandate)
    .doc("Create a mandate", "A ceiling per epoch a payer grants, enforced on chain by the allowance state machine. A wallet payer must sign it first: the answer is 201 `requires_authorization` with the EIP-712 typed data to sign (then `POST /v1/mandates/{id}/authorize`). A bank-account payer's bank mandate is its consent: the mandate is created on chain at once (201 `active`, or 202 `pending` while the chain has not answered).")
    .body(schema::<types::MandateCreate>())
    .ok(201, schema::<types::Mandate>())
    .ok(202, schema::<types::Mandate>())
    .errors(WRITE)
    .codes(&[Codes::of(403).own(&[ErrorCode::IdentityRequirementUnmet]).what(IDENTITY_FORBIDDEN)])
    .example(201, examples::created_mandate)
    .waits()
    .links(&[
        ("GetMandate", GET_MANDATE.id, LinkArg::Id),
        ("AuthorizeMandate", AUTHORIZE_MANDATE.id, LinkArg::Id),
        ("CancelMandate", CANCEL_MANDATE.id, LinkArg::Id),
        ("CreateSessionKey", CREATE_SESSION_KEY.id, LinkArg::Body(&[("mandate_id", "$response.body#/id")])),
        ("ListSessionKeys", LIST_SESSION_KEYS.id, LinkArg::Query("mandate_id")),
    ]);

/// `POST /v1/mandates`
pub async fn create_mandate(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    fields: Fields,
) -> ApiResult {
    account_only(&p)?;
    let net = network(&state, &p)?;
    let MandateCreate {
        payer_account_id,
        currency,
        max_amount,
        interval,
        purpose,
        payees,
        agent,
        requirements,
    } = MandateCreate::read(fields)?;
    let currency = currency_of(&currency)?;
    let max_amount = max_amount.amount("max_amount", currency)?;
    let interval = Interval::parse(&interval)
        .ok_or_else(|| invalid("interval", "must be one of daily, weekly, monthly, yearly"))?;
    let purpose = purpose.map(|Text(t)| t);
    // A bank-account payer is funded through the treasury: the chain pulls from the
    // treasury and the relayer debits the bank account once per authorized pull.
    let payer = if payer_account_id.starts_with("ba_") {
        mandates::Payer::BankAccount(id_of(
            "bank_account",
            &payer_account_id,
            BankAccountId::parse,
        )?)
    } else {
        let a = parse_address("payer_account_id", &payer_account_id)?;
        mandates::Payer::Wallet(payer_account_id, a)
    };
    let payees = payees
        .unwrap_or_default()
        .into_iter()
        .map(|d| parse_address("payees", &d).map(|a| (d, a)))
        .collect::<Result<Vec<_>, _>>()?;
    let agent = agent.map(|a| parse_address("agent", &a)).transpose()?;
    let kind = |param: &str, v: Option<String>| {
        v.map(|v| {
            VerificationType::parse(&v)
                .ok_or_else(|| invalid(param, "must be one of personhood, financial_health, agent"))
        })
        .transpose()
    };
    let (payer_requirement, agent_requirement) = match requirements {
        Some(r) => (
            kind("requirements.payer", r.payer)?,
            kind("requirements.agent", r.agent)?,
        ),
        None => (None, None),
    };
    let request = mandates::NewMandate {
        payer,
        max_amount,
        interval,
        purpose,
        payees,
        agent,
        payer_requirement,
        agent_requirement,
    };
    // Service: judge it, link the idempotency key to it, write it.
    let prepared = mandates::prepare(
        &state.store,
        &net,
        p.scope(),
        request,
        state.config.authorization_ttl,
        now_ms(),
    )
    .await?;
    link_created(&state, &format!("/v1/mandates/{}", prepared.mandate.id)).await?;
    let Some(waiter) = mandates::accept(&state.store, &net, &prepared).await? else {
        // A wallet payer must sign the mandate's terms first; nothing is sent until then.
        return Ok(json(
            StatusCode::CREATED,
            render_mandate(&state, &prepared.mandate).await?,
        ));
    };
    // The engine creates it on chain.
    let mandate = prepared.mandate;
    let wait = wait_of(&state, &headers);
    let done = waiter
        .wait(&state.store, WorkKind::CreateMandate, wait)
        .await?;
    let mandate = state.store.mandates().get(p.scope(), &mandate.id).await?;
    let status = if done {
        StatusCode::CREATED
    } else {
        StatusCode::ACCEPTED
    };
    Ok(json(status, render_mandate(&state, &mandate).await?))
}

/// The operation [`authorize_mandate`] serves.
pub const AUTHORIZE_MANDATE: Route = route!(post "/v1/mandates/{id}/authorize", "authorizeMandate", authorize_mandate)
    .doc("Authorize a mandate with the payer's signature", "The payer's EIP-712 signature of `authorization.typed_data` (status `requires_authorization`). Checked here (ECDSA, or the wallet's ERC-1271 answer), then the mandate is created on chain. A wrong or malformed signature is 422 `signature_invalid` and changes nothing; after `authorization.expires_at`, 422 `authorization_expired`. Authorizing an authorized mandate answers it as it is.")
    .body(schema::<AuthorizationCreate>())
    .ok(200, schema::<types::Mandate>())
    .ok(202, schema::<types::Mandate>())
    .errors(WRITE)
    .codes(&[
        Codes::of(422)
            .declines(&[DeclineReason::SignatureInvalid, DeclineReason::AuthorizationExpired, DeclineReason::MandateNotActive]),
    ])
    .path_id("man_")
    .waits();

/// `POST /v1/mandates/{id}/authorize`: the payer's signature of the mandate's typed data.
/// Checked here (ECDSA, or the wallet's ERC-1271 answer), then the mandate is sent with it
/// and goes `pending` → `active` as a bank-funded one does. A wrong or malformed signature
/// is 422 `signature_invalid` and changes nothing; after `expires_at`, 422
/// `authorization_expired`. Authorizing an authorized mandate answers it as it is.
pub async fn authorize_mandate(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    Path(id): Path<String>,
    fields: Fields,
) -> ApiResult {
    account_only(&p)?;
    let id = id_of("mandate", &id, MandateId::parse)?;
    let net = network(&state, &p)?;
    let AuthorizationCreate { signature } = AuthorizationCreate::read(fields)?;
    let step =
        mandates::authorize(&state.store, &net, p.scope(), &id, &signature, now_ms()).await?;
    let mandates::Step::Queued(waiter) = step else {
        let m = state.store.mandates().get(p.scope(), &id).await?;
        return Ok(json(StatusCode::OK, render_mandate(&state, &m).await?));
    };
    // Authorized and queued in one transaction; the chain's engine sends it.
    let wait = wait_of(&state, &headers);
    let done = waiter
        .wait(&state.store, WorkKind::CreateMandate, wait)
        .await?;
    mandate_after_chain_work(&state, &p, &id, done).await
}

/// The mandate as it stands after chain work: 200 when the work finished, 202 while it
/// is still pending.
async fn mandate_after_chain_work(
    state: &AppState,
    p: &Principal,
    id: &MandateId,
    done: bool,
) -> ApiResult {
    let m = state.store.mandates().get(p.scope(), id).await?;
    let status = if done {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok(json(status, render_mandate(state, &m).await?))
}

/// The operation [`get_mandate`] serves.
pub const GET_MANDATE: Route = route!(get "/v1/mandates/{id}", "getMandate", get_mandate)
    .doc("Retrieve a mandate", "With its current epoch's use.")
    .ok(200, schema::<types::Mandate>())
    .errors(READ)
    .path_id("man_");

/// `GET /v1/mandates/{id}`
pub async fn get_mandate(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
) -> ApiResult {
    account_only(&p)?;
    let id = id_of("mandate", &id, MandateId::parse)?;
    let m = state
        .store
        .mandates()
        .get(p.scope(), &id)
        .await
        .map_err(missing("mandate", id.as_str()))?;
    Ok(json(StatusCode::OK, render_mandate(&state, &m).await?))
}

/// The operation [`list_mandates`] serves.
pub const LIST_MANDATES: Route = route!(get "/v1/mandates", "listMandates", list_mandates)
    .doc("List mandates", "Newest first.")
    .ok(200, schema::<types::MandateList>())
    .errors(READ)
    .query(LIST);

/// `GET /v1/mandates`
pub async fn list_mandates(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Query(mut q): Query<HashMap<String, String>>,
) -> ApiResult {
    account_only(&p)?;
    let (limit, after) = paging(&mut q)?;
    no_more_query(q)?;
    let page = state
        .store
        .mandates()
        .list(p.scope(), limit, after.as_deref())
        .await?;
    let mut data = Vec::with_capacity(page.data.len());
    for m in &page.data {
        data.push(render_mandate(&state, m).await?);
    }
    Ok(json(
        StatusCode::OK,
        types::MandateList::new(
            crate::types::ListTag,
            "/v1/mandates".into(),
            data,
            page.has_more,
        ),
    ))
}

/// The operation [`cancel_mandate`] serves.
pub const CANCEL_MANDATE: Route = route!(post "/v1/mandates/{id}/cancel", "cancelMandate", cancel_mandate)
    .doc("Cancel a mandate", "Cancels it on chain; its keys can no longer pull. A mandate still waiting for its payer's signature (`requires_authorization`) is canceled at once (nothing is on chain), and its consent link (`/authorize/{id}`) says it was withdrawn and offers nothing to sign; authorizing it afterwards is 422 `mandate_not_active`. Canceling a canceled mandate answers it as it is.")
    .ok(200, schema::<types::Mandate>())
    .ok(202, schema::<types::Mandate>())
    .errors(WRITE)
    .codes(&[Codes::of(422).declines(&[DeclineReason::MandateNotActive])])
    .path_id("man_")
    .waits();

/// `POST /v1/mandates/{id}/cancel`
pub async fn cancel_mandate(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> ApiResult {
    account_only(&p)?;
    let id = id_of("mandate", &id, MandateId::parse)?;
    let net = network(&state, &p)?;
    let step = mandates::cancel(&state.store, &net, p.scope(), &id, now_ms()).await?;
    let mandates::Step::Queued(waiter) = step else {
        let m = state.store.mandates().get(p.scope(), &id).await?;
        return Ok(json(StatusCode::OK, render_mandate(&state, &m).await?));
    };
    let wait = wait_of(&state, &headers);
    let done = waiter
        .wait(&state.store, WorkKind::CancelMandate, wait)
        .await?;
    mandate_after_chain_work(&state, &p, &id, done).await
}

// ------------------------------------------------------------------ session keys

/// The operation [`create_session_key`] serves.
pub const CREATE_SESSION_KEY: Route = route!(post "/v1/session-keys", "createSessionKey", create_session_key)
    .doc("Issue a session key", "A key an agent pulls with, under an active mandate, until `expires_at`, within its own ceiling. Answers its bearer `secret` (`sks_…`) once: it may only create pulls on this key and read the key and its pulls.")
    .body(schema::<types::SessionKeyCreate>())
    .ok(201, schema::<types::SessionKey>())
    .ok(202, schema::<types::SessionKey>())
    .errors(WRITE)
    .codes(&[
        Codes::of(403).own(&[ErrorCode::IdentityRequirementUnmet]).what(IDENTITY_FORBIDDEN),
        Codes::of(422)
            .own(&[ErrorCode::SessionKeyCeilingExceedsMandate, ErrorCode::SessionKeyOutsideMandate])
            .declines(&[DeclineReason::MandateNotActive]),
    ])
    .example(201, examples::created_session_key)
    .waits()
    .links(&[
        ("GetSessionKey", GET_SESSION_KEY.id, LinkArg::Id),
        ("RevokeSessionKey", REVOKE_SESSION_KEY.id, LinkArg::Id),
        // By its id, not its constant: `agent_credentials` reads this module's keys, and a
        // link back would make the two modules import each other (`routes_are_consistent`
        // fails on a link to no listed operation).
        ("IssueAgentCredential", "issueAgentCredential", LinkArg::Id),
        ("CreateDebitPull", CREATE_DEBIT_PULL.id, LinkArg::Body(&[("session_key_id", "$response.body#/id")])),
        ("ListDebitPulls", LIST_DEBIT_PULLS.id, LinkArg::Query("session_key_id")),
    ]);

/// `POST /v1/session-keys`
pub async fn create_session_key(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    fields: Fields,
) -> ApiResult {
    account_only(&p)?;
    let net = network(&state, &p)?;
    // Parse.
    let SessionKeyCreate {
        mandate_id,
        expires_in,
        max_amount,
        allowed_destinations,
        signer,
    } = SessionKeyCreate::read(fields)?;
    let mandate_id = id_of("mandate", &mandate_id, MandateId::parse)?;
    let max_amount = max_amount.map(|a| a.0);
    let allowed_destinations = allowed_destinations
        .unwrap_or_default()
        .into_iter()
        .map(|d| parse_address("allowed_destinations", &d).map(|a| (d, a)))
        .collect::<Result<Vec<_>, _>>()?;
    let signer = signer.map(|s| parse_address("signer", &s)).transpose()?;
    let request = session_keys::NewKey {
        mandate_id,
        expires_in,
        max_amount,
        allowed_destinations,
        signer,
    };
    // Service: judge it, link the idempotency key to it, write it.
    let prepared = session_keys::prepare(&state.store, &net, p.scope(), request, now_ms()).await?;
    link_created(&state, &format!("/v1/session-keys/{}", prepared.key.id)).await?;
    let waiter = session_keys::accept(&state.store, &net, &prepared).await?;
    let session_keys::Prepared {
        key,
        mandate,
        secret,
    } = prepared;
    let wait = wait_of(&state, &headers);
    let done = waiter
        .wait(&state.store, WorkKind::IssueSessionKey, wait)
        .await?;
    let key = state.store.keys().get(p.scope(), &key.id).await?;
    let mut body = render_key(&state, &key, &mandate).await?;
    body.secret = Some(secret);
    Ok(json(
        if done {
            StatusCode::CREATED
        } else {
            StatusCode::ACCEPTED
        },
        body,
    ))
}

pub(crate) fn agent_may_read_key(p: &Principal, key_id: &str) -> Result<(), ApiError> {
    match p {
        Principal::Agent { session_key_id, .. } if session_key_id != key_id => {
            Err(ApiError::Forbidden(
                "a session key's secret may only read its own key and pulls".into(),
            ))
        }
        _ => Ok(()),
    }
}

/// The operation [`get_session_key`] serves.
pub const GET_SESSION_KEY: Route =
    route!(get "/v1/session-keys/{id}", "getSessionKey", get_session_key)
        .doc(
            "Retrieve a session key",
            "A session key's own secret may read it.",
        )
        .ok(200, schema::<types::SessionKey>())
        .errors(READ)
        .path_id("sk_");

/// `GET /v1/session-keys/{id}`
pub async fn get_session_key(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
) -> ApiResult {
    agent_may_read_key(&p, &id)?;
    let id = id_of("session_key", &id, SessionKeyId::parse)?;
    let k = state
        .store
        .keys()
        .get(p.scope(), &id)
        .await
        .map_err(missing("session_key", id.as_str()))?;
    let m = state.store.mandates().get(p.scope(), &k.mandate_id).await?;
    Ok(json(StatusCode::OK, render_key(&state, &k, &m).await?))
}

/// The operation [`list_session_keys`] serves.
pub const LIST_SESSION_KEYS: Route = route!(get "/v1/session-keys", "listSessionKeys", list_session_keys)
    .doc("List session keys", "Newest first; `mandate_id` filters by mandate. With a session key's secret (`sks_…`): that key alone, so an agent holding only its secret learns its key's id, ceiling and expiry.")
    .ok(200, schema::<types::SessionKeyList>())
    .errors(READ)
    .query(&[Param::Limit, Param::StartingAfter, Param::MandateId]);

/// `GET /v1/session-keys`: the account's keys; a session key's secret sees its own key
/// only (how an agent holding nothing but its secret learns its key's id and limits).
pub async fn list_session_keys(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Query(mut q): Query<HashMap<String, String>>,
) -> ApiResult {
    let (limit, after) = paging(&mut q)?;
    let mandate_id = q.remove("mandate_id");
    no_more_query(q)?;
    if let Principal::Agent { session_key_id, .. } = &p {
        let k = state.store.keys().get(p.scope(), session_key_id).await?;
        // One key: it is on the first page, and nothing follows it; a cursor that is not
        // that key names nothing of this list.
        match after.as_deref() {
            Some(a) if a != session_key_id.as_str() => {
                return Err(ApiError::Store(StoreError::UnknownCursor));
            }
            _ => {}
        }
        let mut data = Vec::new();
        if after.is_none()
            && mandate_id
                .as_deref()
                .is_none_or(|m| m == k.mandate_id.as_str())
        {
            let m = state.store.mandates().get(p.scope(), &k.mandate_id).await?;
            data.push(render_key(&state, &k, &m).await?);
        }
        return Ok(json(
            StatusCode::OK,
            types::SessionKeyList::new(
                crate::types::ListTag,
                "/v1/session-keys".into(),
                data,
                false,
            ),
        ));
    }
    let page = state
        .store
        .keys()
        .list(p.scope(), mandate_id.as_deref(), limit, after.as_deref())
        .await?;
    let mut data = Vec::with_capacity(page.data.len());
    for k in &page.data {
        let m = state.store.mandates().get(p.scope(), &k.mandate_id).await?;
        data.push(render_key(&state, k, &m).await?);
    }
    Ok(json(
        StatusCode::OK,
        types::SessionKeyList::new(
            crate::types::ListTag,
            "/v1/session-keys".into(),
            data,
            page.has_more,
        ),
    ))
}

/// The operation [`revoke_session_key`] serves.
pub const REVOKE_SESSION_KEY: Route = route!(delete "/v1/session-keys/{id}", "revokeSessionKey", revoke_session_key)
    .doc("Revoke a session key", "Revokes it on chain; its mandate and sibling keys are unaffected. Revoking a revoked key answers it again.")
    .ok(200, schema::<types::SessionKey>())
    .ok(202, schema::<types::SessionKey>())
    .errors(WRITE)
    .path_id("sk_")
    .waits();

/// `DELETE /v1/session-keys/{id}`: revokes the key on chain; its mandate and sibling keys
/// are unaffected. Revoking a revoked key answers the key again.
pub async fn revoke_session_key(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> ApiResult {
    account_only(&p)?;
    let id = id_of("session_key", &id, SessionKeyId::parse)?;
    let net = network(&state, &p)?;
    let waiter = session_keys::revoke(&state.store, &net, p.scope(), &id, now_ms()).await?;
    let done = match waiter {
        Some(waiter) => {
            let wait = wait_of(&state, &headers);
            waiter
                .wait(&state.store, WorkKind::RevokeSessionKey, wait)
                .await?
        }
        None => true,
    };
    let k = state.store.keys().get(p.scope(), &id).await?;
    let m = state.store.mandates().get(p.scope(), &k.mandate_id).await?;
    let status = if done {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok(json(status, render_key(&state, &k, &m).await?))
}

// ------------------------------------------------------------------ debit pulls

/// The operation [`create_pull`] serves.
pub const CREATE_DEBIT_PULL: Route = route!(post "/v1/debit-pulls", "createDebitPull", create_pull)
    .doc("Pull against a session key", "Checked on chain (batched with concurrent pulls into one `pullBatch`). 201 `authorized` when the chain took it, 202 `pending` while it has not answered; a rule that refuses it is 422 with its `code` (`allowance_exceeded` with `remaining` and `resets_at`), and the declined pull stays readable under `pull_id`. A session key's own secret may pull on its key.")
    .body(schema::<types::DebitPullCreate>())
    .ok(201, schema::<types::DebitPull>())
    .ok(202, schema::<types::DebitPull>())
    .errors(WRITE)
    .codes(&[
        Codes::of(403).own(&[ErrorCode::IdentityRequirementUnmet]).what(IDENTITY_FORBIDDEN),
        Codes::of(422).declines(DeclineReason::ALL),
    ])
    .example(201, examples::created_debit_pull)
    .problem_example(422, examples::declined_pulls)
    .waits()
    .links(&[("GetDebitPull", GET_DEBIT_PULL.id, LinkArg::Id)]);

/// `POST /v1/debit-pulls`
pub async fn create_pull(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    fields: Fields,
) -> ApiResult {
    let pull_id = PullId::new();
    stages::mark("received", [pull_id.as_str()]);
    let net = network(&state, &p)?;
    // Parse: the request's syntax, and whether this caller may name the key.
    let DebitPullCreate {
        session_key_id: key_id,
        amount,
        destination,
        description,
        signature,
        nonce,
        deadline,
    } = DebitPullCreate::read(fields)?;
    agent_may_read_key(&p, &key_id)?;
    let session_key_id = id_of("session_key", &key_id, SessionKeyId::parse)?;
    let amount = amount.0;
    let destination = match destination {
        Some(d) => {
            let a = parse_address("destination", &d)?;
            Some((d, a))
        }
        None => None,
    };
    let description = description.map(|Text(t)| t);
    let agent = pulls::AgentFields {
        signature,
        nonce: nonce.map(|n| n.0),
        deadline,
    };
    let request = pulls::NewPull {
        id: pull_id,
        session_key_id,
        amount,
        destination,
        description,
        agent,
    };
    // Service: judge it, link the idempotency key to it, write it.
    let prepared = pulls::prepare(&state.store, &net, p.scope(), request, now_ms()).await?;
    link_created(&state, &format!("/v1/debit-pulls/{}", prepared.pull.id)).await?;
    let declined = prepared.is_declined();
    let (pull, waiter) = pulls::accept(&state.store, &net, prepared).await?;
    if declined {
        return pull_response(&pull, net.chain_id);
    }
    // The engine sends it (batched with the others in flight) and wakes the waiter.
    let wait = wait_of(&state, &headers);
    let (_, recorded) = waiter
        .wait_recorded(&state.store, WorkKind::PullBatch, wait)
        .await?;
    stages::mark("answered", [pull.id.as_str()]);
    // View: the pull as this process's engine recorded it, else as the database has it.
    let pull = match recorded {
        Some(recorded) => recorded,
        None => state.store.pulls().get(p.scope(), &pull.id).await?,
    };
    pull_response(&pull, net.chain_id)
}

fn pull_response(pull: &DebitPull, chain_id: u64) -> ApiResult {
    match pull.status {
        PullStatus::Pending => Ok(json(StatusCode::ACCEPTED, views::pull(pull, chain_id))),
        PullStatus::Authorized | PullStatus::Settled | PullStatus::Failed => {
            Ok(json(StatusCode::CREATED, views::pull(pull, chain_id)))
        }
        PullStatus::Declined => {
            let reason = pull.decline_code.ok_or_else(|| {
                ApiError::Internal(format!("pull {} declined without a code", pull.id))
            })?;
            let amount = format_minor(pull.amount, pull.currency);
            let detail = match reason {
                DeclineReason::SessionKeyRevoked => {
                    format!("session key {} was revoked", pull.session_key_id)
                }
                DeclineReason::SessionKeyExpired => {
                    format!("session key {} has expired", pull.session_key_id)
                }
                DeclineReason::MandateNotActive => {
                    format!("mandate {} is not active", pull.mandate_id)
                }
                DeclineReason::AllowanceExceeded => format!(
                    "a pull of {amount} {} exceeds what may still be pulled this epoch",
                    pull.currency.code()
                ),
                DeclineReason::DestinationNotAllowed => {
                    format!(
                        "{} is not among the session key's allowed_destinations",
                        pull.destination
                    )
                }
                DeclineReason::InsufficientFunds => {
                    format!(
                        "the payer's balance cannot cover {amount} {}",
                        pull.currency.code()
                    )
                }
                DeclineReason::AllowanceInsufficient => format!(
                    "the payer's allowance to the router is below {amount} {}: the payer must approve it",
                    pull.currency.code()
                ),
                DeclineReason::TransferFailed => {
                    "the token refused the transfer although the payer's balance and allowance cover it"
                        .to_string()
                }
                DeclineReason::SessionKeyNotActive => {
                    format!("session key {} is not on chain", pull.session_key_id)
                }
                DeclineReason::SignatureRequired => format!(
                    "session key {} needs its agent's signature on every pull",
                    pull.session_key_id
                ),
                DeclineReason::SignatureInvalid => {
                    "the chain refused the agent's signature".to_string()
                }
                DeclineReason::AuthorizationExpired => {
                    "the agent's signature was past its deadline when the chain checked it"
                        .to_string()
                }
                DeclineReason::NonceUsed => {
                    "the agent's nonce was used on chain already".to_string()
                }
                DeclineReason::IdentityRequirementUnmet => {
                    "the chain found an attestation the mandate requires revoked, expired or \
                     not recorded"
                        .to_string()
                }
            };
            Err(ApiError::Declined {
                reason,
                detail,
                pull_id: Some(pull.id.to_string()),
                remaining: pull.remaining.map(|r| format_minor(r, pull.currency)),
                resets_at: pull.resets_at.map(rfc3339_ms),
            })
        }
    }
}

/// The operation [`get_pull`] serves.
pub const GET_DEBIT_PULL: Route = route!(get "/v1/debit-pulls/{id}", "getDebitPull", get_pull)
    .doc("Retrieve a debit pull", "Declined pulls too.")
    .ok(200, schema::<types::DebitPull>())
    .errors(READ)
    .path_id("pull_");

/// `GET /v1/debit-pulls/{id}`
pub async fn get_pull(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
) -> ApiResult {
    let id = id_of("debit_pull", &id, PullId::parse)?;
    let net = network(&state, &p)?;
    let pull = state
        .store
        .pulls()
        .get(p.scope(), &id)
        .await
        .map_err(missing("debit_pull", id.as_str()))?;
    if let Principal::Agent { session_key_id, .. } = &p
        && *session_key_id != pull.session_key_id
    {
        // Not this agent's: as if it did not exist.
        return Err(ApiError::ResourceMissing {
            kind: "debit_pull",
            id: id.to_string(),
        });
    }
    Ok(json(StatusCode::OK, views::pull(&pull, net.chain_id)))
}

/// The operation [`list_pulls`] serves.
pub const LIST_DEBIT_PULLS: Route = route!(get "/v1/debit-pulls", "listDebitPulls", list_pulls)
    .doc(
        "List debit pulls",
        "Newest first; `session_key_id` filters by key (a session key's secret sees only its own).",
    )
    .ok(200, schema::<types::DebitPullList>())
    .errors(READ)
    .query(&[Param::Limit, Param::StartingAfter, Param::SessionKeyId]);

/// `GET /v1/debit-pulls`
pub async fn list_pulls(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Query(mut q): Query<HashMap<String, String>>,
) -> ApiResult {
    let net = network(&state, &p)?;
    let (limit, after) = paging(&mut q)?;
    let mut key = q.remove("session_key_id");
    no_more_query(q)?;
    if let Principal::Agent { session_key_id, .. } = &p {
        if key.as_ref().is_some_and(|k| k != session_key_id.as_str()) {
            return Err(ApiError::Forbidden(
                "a session key's secret may only list its own pulls".into(),
            ));
        }
        key = Some(session_key_id.to_string());
    }
    let page = state
        .store
        .pulls()
        .list(p.scope(), key.as_deref(), limit, after.as_deref())
        .await?;
    let data = page
        .data
        .iter()
        .map(|x| views::pull(x, net.chain_id))
        .collect();
    Ok(json(
        StatusCode::OK,
        types::DebitPullList::new(
            crate::types::ListTag,
            "/v1/debit-pulls".into(),
            data,
            page.has_more,
        ),
    ))
}
/// A mandate's `authorization` member: the payer's signature (asked for or given), or the
/// bank mandate of a bank-account payer.
fn mandate_authorization(
    state: &AppState,
    m: &Mandate,
    a: Option<&openrail_store::consent::Authorization>,
) -> Result<Option<crate::types::Consent>, ApiError> {
    if m.is_bank_funded() {
        return Ok(Some(crate::consent::bank_mandate_view()));
    }
    let Some(a) = a else {
        return Ok(None);
    };
    let net = crate::represent::network(state, m.mode)?;
    let msg = crate::consent::mandate_message(m, net, a)
        .ok_or_else(|| ApiError::Internal(format!("mandate {} has no usable terms", m.id)))?;
    let asm = net
        .state_machine()
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(Some(crate::consent::view_of(a, &msg, net, asm)))
}

impl Represent for MandateSnapshot {
    type View = types::Mandate;
    fn represent(&self, state: &AppState, _now: i64) -> Result<types::Mandate, ApiError> {
        let mut v = views::mandate(&self.mandate, self.current_epoch);
        v.authorization = mandate_authorization(state, &self.mandate, self.authorization.as_ref())?;
        Ok(v)
    }
}

impl Represent for SessionKeySnapshot {
    type View = types::SessionKey;
    fn represent(&self, _state: &AppState, now: i64) -> Result<types::SessionKey, ApiError> {
        let (k, m) = (&self.session_key, &self.mandate);
        let mut v = views::session_key(k, m, self.current_epoch, &m.contract, now);
        v.eip712_domain = match (&k.signer, m.contract.parse::<alloy::primitives::Address>()) {
            (Some(_), Ok(contract)) => {
                Some(openrail_chain::consent::domain_json(m.chain_id, contract))
            }
            _ => None,
        };
        Ok(v)
    }
}

impl Represent for DebitPullSnapshot {
    type View = types::DebitPull;
    fn represent(&self, _state: &AppState, _now: i64) -> Result<types::DebitPull, ApiError> {
        Ok(views::pull(&self.debit_pull, self.chain_id))
    }
}
