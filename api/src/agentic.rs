//! Mandates, session keys and debit pulls.
//!
//! Writes become transactions on the settlement chain through the submitter. The chain
//! work runs in a spawned task that records the outcome in the store whatever happens to
//! the HTTP request; the handler waits for it up to a bound (`Prefer: wait=N`, default
//! 10 s) and answers 201 when it is done, 202 while it is still pending.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use alloy::primitives::{Address, B256, U256, keccak256};
use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use openrail_chain::consent::{DebitPull as SignedPull, TypedMessage};
use openrail_store::agentic::{
    AgentAuthorization, DebitPull, KeyStatus, Mandate, MandateStatus, PullStatus, SessionKey,
};
use openrail_store::consent::{Authorizable, Authorization};
use openrail_store::ids::{hash_secret, random_id};
use openrail_store::money::format_minor;
use openrail_store::outbox::WorkKind;
use openrail_store::stages;
use openrail_store::{
    Amount, BankAccountId, Currency, Interval, MandateId, Mode, PullId, SessionKeyId, Store,
    StoreError, now_ms,
};
use serde_json::Value;

use crate::AppState;
use crate::body::{Fields, invalid};
use crate::consent::{self, declined};
use crate::context::{Principal, link_created};

use crate::error::{ApiError, DeclineReason};
use crate::represent;
use crate::views;
use openrail_engine::network::Network;
use openrail_store::events::Snapshot;

/// Bounds of `expires_in`, seconds.
pub const EXPIRES_IN: std::ops::RangeInclusive<u64> = 60..=31_536_000;
/// Most entries in a key's allow-list.
pub const MAX_ALLOWED_DESTINATIONS: usize = 20;
/// Longest free-text field.
const MAX_TEXT: usize = 500;

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
        Principal::Account(_) => Ok(()),
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

/// A wallet money may come from or go to on `net`: not the zero address (tokens burned or
/// a transfer that can only fail) and not one of the contracts themselves (tokens sent to
/// the router or the state machine are locked for good). Checked before anything is sent.
pub(crate) fn usable_wallet(net: &Network, param: &str, a: Address) -> Result<Address, ApiError> {
    if a == Address::ZERO {
        return Err(invalid(param, "is the zero address"));
    }
    if a == net.allowance_state_machine || a == net.router || net.tokens.values().any(|t| *t == a) {
        return Err(invalid(
            param,
            "is one of Openrail's contracts; tokens sent there would be locked for good",
        ));
    }
    Ok(a)
}

fn text(param: &str, v: Option<String>) -> Result<Option<String>, ApiError> {
    match v {
        Some(t) if t.chars().count() > MAX_TEXT => {
            Err(invalid(param, "is longer than 500 characters"))
        }
        other => Ok(other),
    }
}

fn onchain_id(id: &str) -> B256 {
    keccak256(id.as_bytes())
}

fn token_units(a: Amount) -> U256 {
    openrail_chain::token_units(a.minor(), a.currency())
}

fn currency_of(fields: &mut Fields) -> Result<Currency, ApiError> {
    let c = fields.string("currency")?;
    Currency::parse(&c).ok_or_else(|| invalid("currency", "must be one of USD, EUR"))
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

fn json(status: StatusCode, v: Value) -> Response {
    (status, axum::Json(v)).into_response()
}

/// A mandate as the API shows it now.
async fn render_mandate(state: &AppState, m: &Mandate) -> Result<Value, ApiError> {
    let now = now_ms();
    let snap = Snapshot::Mandate {
        current_epoch: state.store.mandate_use(m, now).await?,
        authorization: state.store.authorization(&m.id).await?,
        mandate: m.clone(),
    };
    represent::object(state, &snap, now)
}

/// A session key as the API shows it now.
async fn render_key(state: &AppState, k: &SessionKey, m: &Mandate) -> Result<Value, ApiError> {
    let now = now_ms();
    let snap = Snapshot::SessionKey {
        current_epoch: state.store.key_use(k, m, now).await?,
        session_key: k.clone(),
        mandate: m.clone(),
    };
    represent::object(state, &snap, now)
}

// ------------------------------------------------------------------ mandates

/// `POST /v1/mandates`
pub async fn create_mandate(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    mut fields: Fields,
) -> ApiResult {
    account_only(&p)?;
    let net = network(&state, &p)?;
    let payer_account_id = fields.string("payer_account_id")?;
    let currency = currency_of(&mut fields)?;
    let max_amount = fields.amount("max_amount", currency)?;
    let interval = fields.string("interval")?;
    let interval = Interval::parse(&interval)
        .ok_or_else(|| invalid("interval", "must be one of daily, weekly, monthly, yearly"))?;
    let purpose = text("purpose", fields.opt_string("purpose")?)?;
    fields.finish()?;
    // A bank-account payer is funded through the treasury: the chain pulls from the
    // treasury and the relayer debits the bank account once per authorized pull.
    let payer = if payer_account_id.starts_with("ba_") {
        let ba_id = id_of("bank_account", &payer_account_id, BankAccountId::parse)?;
        let ba = state
            .store
            .bank_account(p.scope(), &ba_id)
            .await
            .map_err(|e| match e {
                StoreError::NotFound => ApiError::ResourceMissing {
                    kind: "bank_account",
                    id: payer_account_id.clone(),
                },
                other => ApiError::Store(other),
            })?;
        if ba.currency != currency {
            return Err(invalid(
                "payer_account_id",
                "is a bank account in another currency than the mandate",
            ));
        }
        net.treasury
    } else {
        usable_wallet(
            &net,
            "payer_account_id",
            parse_address("payer_account_id", &payer_account_id)?,
        )?
    };
    if !net.tokens.contains_key(&currency) {
        return Err(invalid("currency", "is not available on this network"));
    }

    let id = MandateId::new();
    let bank_funded = payer_account_id.starts_with("ba_");
    let now = now_ms();
    let mandate = Mandate {
        onchain_id: onchain_id(&id).to_string(),
        id,
        account_id: p.account_id().to_string(),
        mode: p.mode(),
        payer_account_id,
        payer_address: payer.to_checksum(None),
        currency,
        max_amount: max_amount.minor(),
        interval,
        purpose,
        status: if bank_funded {
            MandateStatus::Pending
        } else {
            MandateStatus::RequiresAuthorization
        },
        chain_id: net.chain_id,
        contract: net.allowance_state_machine.to_checksum(None),
        tx_hash: None,
        created_at: now,
    };
    link_created(&state, &format!("/v1/mandates/{}", mandate.id)).await?;
    if !bank_funded {
        // A wallet payer must sign the mandate's terms first; nothing is sent until then.
        let auth = Authorization {
            object_id: mandate.id.to_string(),
            signer: mandate.payer_address.clone(),
            nonce: consent::new_nonce().to_string(),
            deadline: now / 1000 + state.config.authorization_ttl.as_secs() as i64,
            signature: None,
            authorized_at: None,
        };
        state.store.insert_authorization(&auth).await?;
        state.store.insert_mandate(&mandate).await?;
        return Ok(json(
            StatusCode::CREATED,
            render_mandate(&state, &mandate).await?,
        ));
    }
    // The mandate and its work in one transaction; the chain's engine sends it.
    let waiter = openrail_engine::waiter(&net, &mandate.id);
    state.store.insert_mandate(&mandate).await?;
    let wait = wait_of(&state, &headers);
    let done = waiter
        .wait(&state.store, WorkKind::CreateMandate, wait)
        .await?;
    let mandate = state.store.mandate(p.scope(), &mandate.id).await?;
    let status = if done {
        StatusCode::CREATED
    } else {
        StatusCode::ACCEPTED
    };
    Ok(json(status, render_mandate(&state, &mandate).await?))
}

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
    mut fields: Fields,
) -> ApiResult {
    account_only(&p)?;
    let id = id_of("mandate", &id, MandateId::parse)?;
    let net = network(&state, &p)?;
    let signature = fields.string("signature")?;
    fields.finish()?;
    let m = state
        .store
        .mandate(p.scope(), &id)
        .await
        .map_err(missing("mandate", &id))?;
    match m.status {
        MandateStatus::RequiresAuthorization => {}
        MandateStatus::Pending | MandateStatus::Active => {
            return Ok(json(StatusCode::OK, render_mandate(&state, &m).await?));
        }
        MandateStatus::Canceled | MandateStatus::Failed => {
            return Err(declined(
                DeclineReason::MandateNotActive,
                format!("mandate {id} is {}", m.status.as_str()),
            ));
        }
    }
    let auth = state
        .store
        .authorization(&m.id)
        .await?
        .ok_or_else(|| ApiError::Internal(format!("mandate {id} has no authorization")))?;
    consent::not_expired(auth.deadline, now_ms())?;
    let msg = consent::mandate_message(&m, &net, &auth)
        .ok_or_else(|| ApiError::Internal(format!("mandate {id} has no usable terms")))?;
    let bytes = consent::verify(
        &net,
        msg.payer,
        msg.digest(net.chain_id, net.allowance_state_machine),
        &signature,
    )
    .await?;
    let sig_hex = bytes.to_string();
    let waiter = openrail_engine::waiter(&net, &m.id);
    if !state
        .store
        .authorize(Authorizable::Mandate, &m.id, &sig_hex, now_ms())
        .await?
    {
        // Another request authorized (or canceled) it meanwhile: answer what it is now.
        let m = state.store.mandate(p.scope(), &id).await?;
        return Ok(json(StatusCode::OK, render_mandate(&state, &m).await?));
    }
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
    let m = state.store.mandate(p.scope(), id).await?;
    let status = if done {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok(json(status, render_mandate(state, &m).await?))
}

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
        .mandate(p.scope(), &id)
        .await
        .map_err(missing("mandate", &id))?;
    Ok(json(StatusCode::OK, render_mandate(&state, &m).await?))
}

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
        .list_mandates(p.scope(), limit, after.as_deref())
        .await?;
    let mut data = Vec::with_capacity(page.data.len());
    for m in &page.data {
        data.push(render_mandate(&state, m).await?);
    }
    Ok(json(
        StatusCode::OK,
        views::list(data, page.has_more, "/v1/mandates"),
    ))
}

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
    let m = state
        .store
        .mandate(p.scope(), &id)
        .await
        .map_err(missing("mandate", &id))?;
    match m.status {
        MandateStatus::Canceled => {
            return Ok(json(StatusCode::OK, render_mandate(&state, &m).await?));
        }
        MandateStatus::RequiresAuthorization => {
            // Nothing is on chain: the request to sign is withdrawn.
            state
                .store
                .cancel_unauthorized_mandate(&m.id, now_ms())
                .await?;
            let m = state.store.mandate(p.scope(), &id).await?;
            return Ok(json(StatusCode::OK, render_mandate(&state, &m).await?));
        }
        MandateStatus::Pending | MandateStatus::Failed => {
            return Err(ApiError::Declined {
                reason: DeclineReason::MandateNotActive,
                detail: format!(
                    "mandate {id} is {}; only an active mandate can be canceled",
                    m.status.as_str()
                ),
                pull_id: None,
                remaining: None,
                resets_at: None,
            });
        }
        MandateStatus::Active => {}
    }
    let waiter = openrail_engine::waiter(&net, &m.id);
    state.store.request_cancel(&m.id, now_ms()).await?;
    let wait = wait_of(&state, &headers);
    let done = waiter
        .wait(&state.store, WorkKind::CancelMandate, wait)
        .await?;
    mandate_after_chain_work(&state, &p, &id, done).await
}

// ------------------------------------------------------------------ session keys

/// `POST /v1/session-keys`
pub async fn create_session_key(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    mut fields: Fields,
) -> ApiResult {
    account_only(&p)?;
    let net = network(&state, &p)?;
    let mandate_id = fields.string("mandate_id")?;
    let expires_in = fields.integer("expires_in")?;
    if !EXPIRES_IN.contains(&expires_in) {
        return Err(invalid(
            "expires_in",
            "must be between 60 and 31536000 seconds",
        ));
    }
    // The currency of the ceiling is the mandate's: look it up before parsing it.
    let mandate_id = id_of("mandate", &mandate_id, MandateId::parse)?;
    let mandate = state
        .store
        .mandate(p.scope(), &mandate_id)
        .await
        .map_err(|e| match e {
            StoreError::NotFound => ApiError::ResourceMissing {
                kind: "mandate",
                id: mandate_id.to_string(),
            },
            other => ApiError::Store(other),
        })?;
    let max_amount = fields.opt_amount("max_amount", mandate.currency)?;
    let dests = fields
        .opt_string_array("allowed_destinations")?
        .unwrap_or_default();
    let signer = fields
        .opt_string("signer")?
        .map(|s| parse_address("signer", &s).and_then(|a| usable_wallet(&net, "signer", a)))
        .transpose()?;
    fields.finish()?;
    if dests.len() > MAX_ALLOWED_DESTINATIONS {
        return Err(invalid(
            "allowed_destinations",
            "may hold at most 20 destinations",
        ));
    }
    for d in &dests {
        usable_wallet(
            &net,
            "allowed_destinations",
            parse_address("allowed_destinations", d)?,
        )?;
    }
    if let Some(max) = max_amount
        && max.minor() > mandate.max_amount
    {
        return Err(ApiError::SessionKeyCeilingExceedsMandate {
            key: max.to_string(),
            mandate: format_minor(mandate.max_amount, mandate.currency),
        });
    }
    if mandate.status != MandateStatus::Active {
        return Err(ApiError::Declined {
            reason: DeclineReason::MandateNotActive,
            detail: format!("mandate {} is {}", mandate.id, mandate.status.as_str()),
            pull_id: None,
            remaining: None,
            resets_at: None,
        });
    }

    let now = now_ms();
    let expires_at_s = now / 1000 + expires_in as i64;
    let secret = random_id(&format!("sks_{}_", p.mode().as_str()), 32);
    let id = SessionKeyId::new();
    let key = SessionKey {
        onchain_id: onchain_id(&id).to_string(),
        id,
        account_id: p.account_id().to_string(),
        mode: p.mode(),
        mandate_id: mandate.id.clone(),
        expires_at: expires_at_s * 1000,
        max_amount: max_amount.map(Amount::minor),
        allowed_destinations: dests,
        status: KeyStatus::Pending,
        tx_hash: None,
        created_at: now,
        signer: signer.map(|a| a.to_checksum(None)),
    };
    link_created(&state, &format!("/v1/session-keys/{}", key.id)).await?;
    let waiter = openrail_engine::waiter(&net, &key.id);
    state
        .store
        .insert_session_key(&key, &hash_secret(&secret))
        .await?;
    let wait = wait_of(&state, &headers);
    let done = waiter
        .wait(&state.store, WorkKind::IssueSessionKey, wait)
        .await?;
    let key = state.store.session_key(p.scope(), &key.id).await?;
    let mut body = render_key(&state, &key, &mandate).await?;
    body["secret"] = Value::String(secret);
    Ok(json(
        if done {
            StatusCode::CREATED
        } else {
            StatusCode::ACCEPTED
        },
        body,
    ))
}

fn agent_may_read_key(p: &Principal, key_id: &str) -> Result<(), ApiError> {
    match p {
        Principal::Agent { session_key_id, .. } if session_key_id != key_id => {
            Err(ApiError::Forbidden(
                "a session key's secret may only read its own key and pulls".into(),
            ))
        }
        _ => Ok(()),
    }
}

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
        .session_key(p.scope(), &id)
        .await
        .map_err(missing("session_key", &id))?;
    let m = state.store.mandate(p.scope(), &k.mandate_id).await?;
    Ok(json(StatusCode::OK, render_key(&state, &k, &m).await?))
}

/// `GET /v1/session-keys`
pub async fn list_session_keys(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Query(mut q): Query<HashMap<String, String>>,
) -> ApiResult {
    account_only(&p)?;
    let (limit, after) = paging(&mut q)?;
    let mandate_id = q.remove("mandate_id");
    no_more_query(q)?;
    let page = state
        .store
        .list_session_keys(p.scope(), mandate_id.as_deref(), limit, after.as_deref())
        .await?;
    let mut data = Vec::with_capacity(page.data.len());
    for k in &page.data {
        let m = state.store.mandate(p.scope(), &k.mandate_id).await?;
        data.push(render_key(&state, k, &m).await?);
    }
    Ok(json(
        StatusCode::OK,
        views::list(data, page.has_more, "/v1/session-keys"),
    ))
}

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
    let k = state
        .store
        .session_key(p.scope(), &id)
        .await
        .map_err(missing("session_key", &id))?;
    let m = state.store.mandate(p.scope(), &k.mandate_id).await?;
    if k.status == KeyStatus::Revoked {
        return Ok(json(StatusCode::OK, render_key(&state, &k, &m).await?));
    }
    let waiter = openrail_engine::waiter(&net, &k.id);
    state.store.request_revoke(&k.id, now_ms()).await?;
    let wait = wait_of(&state, &headers);
    let done = waiter
        .wait(&state.store, WorkKind::RevokeSessionKey, wait)
        .await?;
    let k = state.store.session_key(p.scope(), &id).await?;
    let status = if done {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok(json(status, render_key(&state, &k, &m).await?))
}

// ------------------------------------------------------------------ debit pulls

/// `POST /v1/debit-pulls`
pub async fn create_pull(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    mut fields: Fields,
) -> ApiResult {
    let pull_id = PullId::new();
    stages::mark("received", [pull_id.as_str()]);
    let net = network(&state, &p)?;
    let key_id = fields.string("session_key_id")?;
    agent_may_read_key(&p, &key_id)?;
    let key_id = id_of("session_key", &key_id, SessionKeyId::parse)?;
    let key = state
        .store
        .session_key(p.scope(), &key_id)
        .await
        .map_err(|e| match e {
            StoreError::NotFound => ApiError::ResourceMissing {
                kind: "session_key",
                id: key_id.to_string(),
            },
            other => ApiError::Store(other),
        })?;
    let mandate = state.store.mandate(p.scope(), &key.mandate_id).await?;
    let amount = fields.amount("amount", mandate.currency)?;
    let destination = fields.opt_string("destination")?;
    let description = text("description", fields.opt_string("description")?)?;
    let signature = fields.opt_string("signature")?;
    let nonce = fields.opt_uint256("nonce")?;
    let deadline = fields.opt_integer("deadline")?;
    fields.finish()?;
    let (destination, address) = match destination {
        Some(d) => {
            let a = usable_wallet(&net, "destination", parse_address("destination", &d)?)?;
            (d, a)
        }
        None => (
            net.default_destination.to_checksum(None),
            net.default_destination,
        ),
    };
    if mandate.payer_address.parse::<Address>().ok() == Some(address) {
        return Err(invalid(
            "destination",
            "is the mandate's payer (for a bank-account payer, the treasury): a pull may not pay its payer; name a destination",
        ));
    }
    if matches!(key.status, KeyStatus::Pending | KeyStatus::Failed) {
        return Err(ApiError::Declined {
            reason: DeclineReason::SessionKeyNotActive,
            detail: format!("session key {} is {} on chain", key.id, key.status.as_str()),
            pull_id: None,
            remaining: None,
            resets_at: None,
        });
    }

    let now = now_ms();
    // What the database already knows is dead is declined here, without a transaction
    // (the chain would decline it too, at the operator's expense); the declined pull is
    // recorded like one the chain declined.
    let dead = if key.status == KeyStatus::Revoked {
        Some(DeclineReason::SessionKeyRevoked)
    } else if now >= key.expires_at {
        Some(DeclineReason::SessionKeyExpired)
    } else if mandate.status != MandateStatus::Active {
        Some(DeclineReason::MandateNotActive)
    } else {
        None
    };
    let agent = if dead.is_some() {
        None
    } else {
        agent_authorization(
            &net,
            &key,
            address,
            token_units(amount),
            (signature, nonce, deadline),
            &state.store,
            now,
        )
        .await?
    };
    let pull = DebitPull {
        id: pull_id,
        account_id: p.account_id().to_string(),
        mode: p.mode(),
        session_key_id: key.id.clone(),
        mandate_id: mandate.id.clone(),
        amount: amount.minor(),
        currency: mandate.currency,
        destination,
        destination_address: address.to_checksum(None),
        description,
        status: if dead.is_some() {
            PullStatus::Declined
        } else {
            PullStatus::Pending
        },
        decline_code: dead,
        remaining: None,
        resets_at: None,
        tx_hash: None,
        authorized_at: None,
        created_at: now,
        updated_at: now,
        failure_reason: None,
        agent,
    };
    link_created(&state, &format!("/v1/debit-pulls/{}", pull.id)).await?;
    // Listening before the work is written: the engine's wake cannot come first.
    let waiter = openrail_engine::waiter(&net, &pull.id);
    stages::mark("accepted", [pull.id.as_str()]);
    // Committed with the other pulls, outcomes and fates that arrive meanwhile.
    state.store.accept_pull(pull.clone()).await?;
    stages::mark("written", [pull.id.as_str()]);
    if dead.is_some() {
        return pull_response(&pull, net.chain_id);
    }

    // The pull and its work were written in one transaction; the chain's engine sends it
    // (batched with the others in flight).
    let chain_id = net.chain_id;
    let wait = wait_of(&state, &headers);
    waiter.wait(&state.store, WorkKind::PullBatch, wait).await?;
    stages::mark("answered", [pull.id.as_str()]);

    let pull = state.store.pull(p.scope(), &pull.id).await?;
    pull_response(&pull, chain_id)
}

/// The agent's authorization of a pull on `key`, checked before anything is sent: a key
/// with a signer needs `signature`, `nonce` and `deadline` (422 `signature_required`
/// without them), a deadline not passed (`authorization_expired`), a nonce not in use on
/// the key (`nonce_used`) and the signer's EIP-712 `DebitPull` signature
/// (`signature_invalid`). A key without a signer takes none of them.
async fn agent_authorization(
    net: &Network,
    key: &SessionKey,
    destination: Address,
    amount: U256,
    (signature, nonce, deadline): (Option<String>, Option<String>, Option<u64>),
    store: &Store,
    now: i64,
) -> Result<Option<AgentAuthorization>, ApiError> {
    let Some(signer) = &key.signer else {
        if signature.is_some() || nonce.is_some() || deadline.is_some() {
            let param = if signature.is_some() {
                "signature"
            } else if nonce.is_some() {
                "nonce"
            } else {
                "deadline"
            };
            return Err(invalid(
                param,
                "is only for pulls on a session key with a signer; this key has none",
            ));
        }
        return Ok(None);
    };
    let (Some(signature), Some(nonce), Some(deadline)) = (signature, nonce, deadline) else {
        return Err(declined(
            DeclineReason::SignatureRequired,
            format!(
                "session key {} names the signer {signer}: a pull needs its EIP-712 DebitPull \
                 signature, nonce and deadline",
                key.id
            ),
        ));
    };
    let deadline = i64::try_from(deadline).map_err(|_| invalid("deadline", "is too large"))?;
    consent::not_expired(deadline, now)?;
    if store.agent_nonce_taken(&key.id, &nonce).await? {
        return Err(declined(
            DeclineReason::NonceUsed,
            format!("nonce {nonce} was used on session key {} already", key.id),
        ));
    }
    let message = SignedPull {
        keyId: onchain_id(&key.id),
        destination,
        amount,
        nonce: U256::from_str_radix(&nonce, 10).map_err(|_| invalid("nonce", "is not a number"))?,
        deadline: U256::from(deadline as u64),
    };
    let signer: Address = signer
        .parse()
        .map_err(|_| ApiError::Internal(format!("key {} has an unusable signer", key.id)))?;
    let bytes = consent::verify(
        net,
        signer,
        message.digest(net.chain_id, net.allowance_state_machine),
        &signature,
    )
    .await?;
    Ok(Some(AgentAuthorization {
        nonce,
        deadline,
        signature: bytes.to_string(),
    }))
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
            };
            Err(ApiError::Declined {
                reason,
                detail,
                pull_id: Some(pull.id.to_string()),
                remaining: pull.remaining.map(|r| format_minor(r, pull.currency)),
                resets_at: pull.resets_at.map(views::rfc3339_ms),
            })
        }
    }
}

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
        .pull(p.scope(), &id)
        .await
        .map_err(missing("debit_pull", &id))?;
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
        .list_pulls(p.scope(), key.as_deref(), limit, after.as_deref())
        .await?;
    let data = page
        .data
        .iter()
        .map(|x| views::pull(x, net.chain_id))
        .collect();
    Ok(json(
        StatusCode::OK,
        views::list(data, page.has_more, "/v1/debit-pulls"),
    ))
}
