//! One-time payments (`/v1/payments`): wallet → wallet, settled atomically by the settlement
//! router on the settlement chain (the caller never names a chain), and bank → wallet,
//! wallet → bank and bank → bank, each in two legs through the treasury. The handler only
//! validates and records the payment; the engine of the chain's lease holder drives all of them from
//! the database and the transaction journal, and the handler waits for it (`Prefer: wait`).
//! Statuses: `pending` → `processing` (transaction sent) → `succeeded` | `failed`. A payment
//! from a wallet starts `requires_authorization`: the wallet signs its EIP-712 `Payment`
//! (`POST /v1/payments/{id}/authorize`), and only then does it become `pending`; the router
//! moves a wallet's tokens only as the wallet signed.

use std::collections::HashMap;

use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use openrail_store::consent::{Authorizable, Authorization};
use openrail_store::payments::{PartyKind, Payment, PaymentStatus};
use openrail_store::{BankAccountId, Currency, PaymentId, now_ms};
use serde_json::Value;

use crate::AppState;
use crate::agentic::{
    account_only, id_of, missing, network, no_more_query, paging, parse_address, usable_wallet,
    wait_of,
};
use crate::body::{Fields, invalid};
use crate::consent;
use crate::context::Principal;
use crate::error::ApiError;
use crate::represent;
use crate::views::list;
use openrail_store::events::Snapshot;

/// A payment as the API shows it now, with its `authorization`.
async fn render(state: &AppState, p: &Payment) -> Result<Value, ApiError> {
    let snap = Snapshot::Payment {
        authorization: state.store.authorization(&p.id).await?,
        payment: p.clone(),
    };
    represent::object(state, &snap, now_ms())
}

/// What a payment's source or destination is.
fn leg_kind(param: &str, kind: &str) -> Result<PartyKind, ApiError> {
    PartyKind::parse(kind).ok_or_else(|| invalid(param, "must be wallet or bank_account"))
}

/// `POST /v1/payments`
pub async fn create_payment(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    mut fields: Fields,
) -> Result<Response, ApiError> {
    account_only(&p)?;
    let net = network(&state, &p)?;
    let currency = fields.string("currency")?;
    let currency =
        Currency::parse(&currency).ok_or_else(|| invalid("currency", "must be one of USD, EUR"))?;
    let amount = fields.amount("amount", currency)?;
    let mut source = fields.object("source")?;
    let source_type = source.string("type")?;
    let source_id = source.string("id")?;
    source.finish()?;
    let mut destination = fields.object("destination")?;
    let destination_type = destination.string("type")?;
    let destination_address = destination.string("address")?;
    destination.finish()?;
    fields.finish()?;
    let source_type = leg_kind("source.type", &source_type)?;
    let destination_type = leg_kind("destination.type", &destination_type)?;
    let from_bank = source_type == PartyKind::BankAccount;
    let to_bank = destination_type == PartyKind::BankAccount;
    // A bank leg names a simulated account of this account and mode, in the currency.
    let bank_leg = |param: &'static str, id: String| {
        let state = &state;
        let p = &p;
        async move {
            let ba_id = id_of("bank_account", &id, BankAccountId::parse)?;
            let ba = state
                .store
                .bank_account(p.scope(), &ba_id)
                .await
                .map_err(missing("bank_account", &id))?;
            if ba.currency != currency {
                return Err(invalid(
                    param,
                    "is a bank account in another currency than the payment",
                ));
            }
            Ok::<_, ApiError>(String::from(ba.id))
        }
    };
    let source_id = if from_bank {
        bank_leg("source.id", source_id).await?
    } else {
        usable_wallet(&net, "source.id", parse_address("source.id", &source_id)?)?.to_checksum(None)
    };
    let destination_address = if to_bank {
        bank_leg("destination.address", destination_address).await?
    } else {
        usable_wallet(
            &net,
            "destination.address",
            parse_address("destination.address", &destination_address)?,
        )?
        .to_checksum(None)
    };
    if source_id == destination_address {
        return Err(invalid(
            "destination.address",
            "must differ from the source",
        ));
    }
    if !net.tokens.contains_key(&currency) {
        return Err(invalid("currency", "is not available on this network"));
    }

    let now = now_ms();
    let payment = Payment {
        id: PaymentId::new(),
        account_id: p.account_id().to_string(),
        mode: p.mode(),
        amount: amount.minor(),
        currency,
        source_type,
        source_id,
        destination_type,
        destination_address,
        status: if from_bank {
            PaymentStatus::Pending
        } else {
            PaymentStatus::RequiresAuthorization
        },
        failure_reason: None,
        chain_id: net.chain_id,
        tx_hash: None,
        refund_status: None,
        created_at: now,
        updated_at: now,
    };
    crate::context::link_created(&state, &format!("/v1/payments/{}", payment.id)).await?;
    if !from_bank {
        // The wallet must sign the payment first; nothing moves until then.
        let auth = Authorization {
            object_id: payment.id.to_string(),
            signer: payment.source_id.clone(),
            nonce: consent::new_nonce().to_string(),
            deadline: now / 1000 + state.config.authorization_ttl.as_secs() as i64,
            signature: None,
            authorized_at: None,
        };
        state.store.insert_authorization(&auth).await?;
        state.store.insert_payment(&payment).await?;
        return Ok((
            StatusCode::CREATED,
            axum::Json(render(&state, &payment).await?),
        )
            .into_response());
    }
    // The payment and its work are written together; the chain's lease holder drives it
    // from the database and the transaction journal (so a crash loses none). Wait for it
    // up to `wait`.
    let waiter = openrail_engine::waiter(&net, &payment.id);
    state.store.insert_payment(&payment).await?;
    let done = wait_final(&state, waiter, &p, &payment.id, wait_of(&state, &headers)).await?;
    let payment = state.store.payment(p.scope(), &payment.id).await?;
    let status = if done {
        StatusCode::CREATED
    } else {
        StatusCode::ACCEPTED
    };
    Ok((status, axum::Json(render(&state, &payment).await?)).into_response())
}

/// `POST /v1/payments/{id}/authorize`: the source wallet's signature of the payment's
/// typed data. Checked here (ECDSA, or the wallet's ERC-1271 answer); then the payment is
/// `pending` (its work queued with it) and the engine sends it with the signature. A wrong or malformed
/// signature is 422 `signature_invalid` and changes nothing; after `expires_at`, 422
/// `authorization_expired`. Authorizing an authorized payment answers it as it is.
pub async fn authorize_payment(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    Path(id): Path<String>,
    mut fields: Fields,
) -> Result<Response, ApiError> {
    account_only(&p)?;
    let net = network(&state, &p)?;
    let signature = fields.string("signature")?;
    fields.finish()?;
    let id = id_of("payment", &id, PaymentId::parse)?;
    let payment = state
        .store
        .payment(p.scope(), &id)
        .await
        .map_err(missing("payment", &id))?;
    if payment.status != PaymentStatus::RequiresAuthorization {
        return Ok((StatusCode::OK, axum::Json(render(&state, &payment).await?)).into_response());
    }
    let auth = state
        .store
        .authorization(&payment.id)
        .await?
        .ok_or_else(|| ApiError::Internal(format!("payment {id} has no authorization")))?;
    let now = now_ms();
    consent::not_expired(auth.deadline, now)?;
    let msg = consent::payment_message(&payment, &net, &auth)
        .ok_or_else(|| ApiError::Internal(format!("payment {id} has no usable terms")))?;
    use openrail_chain::consent::TypedMessage;
    let bytes = consent::verify(
        &net,
        msg.from,
        msg.digest(net.chain_id, net.router),
        &signature,
    )
    .await?;
    let waiter = openrail_engine::waiter(&net, &payment.id);
    if !state
        .store
        .authorize(Authorizable::Payment, &payment.id, &bytes.to_string(), now)
        .await?
    {
        let payment = state.store.payment(p.scope(), &id).await?;
        return Ok((StatusCode::OK, axum::Json(render(&state, &payment).await?)).into_response());
    }
    let done = wait_final(&state, waiter, &p, &payment.id, wait_of(&state, &headers)).await?;
    let payment = state.store.payment(p.scope(), &id).await?;
    let status = if done {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok((status, axum::Json(render(&state, &payment).await?)).into_response())
}

/// Waits up to `wait` for the payment to succeed or fail (a refund it may owe follows
/// later); returns whether it did.
async fn wait_final(
    state: &AppState,
    waiter: openrail_engine::Waiter<'_>,
    p: &Principal,
    id: &PaymentId,
    wait: std::time::Duration,
) -> Result<bool, ApiError> {
    let done = waiter
        .wait_until(wait, || async {
            let status = state.store.payment(p.scope(), id).await?.status;
            Ok(matches!(
                status,
                PaymentStatus::Succeeded | PaymentStatus::Failed
            ))
        })
        .await?;
    Ok(done)
}

/// `GET /v1/payments/{id}`
pub async fn get_payment(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    account_only(&p)?;
    let id = id_of("payment", &id, PaymentId::parse)?;
    let payment = state
        .store
        .payment(p.scope(), &id)
        .await
        .map_err(missing("payment", &id))?;
    Ok((StatusCode::OK, axum::Json(render(&state, &payment).await?)).into_response())
}

/// `GET /v1/payments`
pub async fn list_payments(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Query(mut q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    account_only(&p)?;
    let (limit, after) = paging(&mut q)?;
    no_more_query(q)?;
    let page = state
        .store
        .list_payments(p.scope(), limit, after.as_deref())
        .await?;
    let mut data = Vec::with_capacity(page.data.len());
    for x in &page.data {
        data.push(render(&state, x).await?);
    }
    Ok((
        StatusCode::OK,
        axum::Json(list(data, page.has_more, "/v1/payments")),
    )
        .into_response())
}
