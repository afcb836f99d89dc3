//! One-time payments (`/v1/payments`): wallet → wallet, settled atomically by the settlement
//! router on the settlement chain (the caller never names a chain), and bank → wallet,
//! wallet → bank and bank → bank, each in two legs through the treasury. The handler only
//! validates and records the payment; the engine of the chain's lease holder drives all of them from
//! the database and the transaction journal, and the handler waits for it (`Prefer: wait`).
//! Statuses: `pending` → `processing` (transaction sent) → `succeeded` | `failed`. A payment
//! from a wallet starts `requires_authorization`: the wallet signs its EIP-712 `Payment`
//! (`POST /v1/payments/{id}/authorize`), and only then does it become `pending`; the router
//! moves a wallet's tokens only as the wallet signed. Until it signs, the developer may
//! withdraw it (`POST /v1/payments/{id}/cancel` → `canceled`).

pub mod types;
mod views;

use std::collections::HashMap;

use self::types::PaymentCreate;
use crate::AppState;
use crate::agentic::{
    account_only, currency_of, id_of, missing, network, no_more_query, paging, parse_address,
    wait_of,
};
use crate::body::{Fields, invalid};
use crate::context::Principal;
use crate::error::{ApiError, Conflict, DeclineReason, ErrorCode};
use crate::represent::Represent;
use crate::route::{Codes, LIST, LinkArg, READ, Route, WRITE, route, schema};
use crate::types::{AuthorizationCreate, RequestBody};
use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use openrail_domain::{BankAccountId, PaymentId};
use openrail_engine::payments::service::{self as payments, Leg};
use openrail_store::events::PaymentSnapshot;
use openrail_store::now_ms;
use openrail_store::payments::{PartyKind, Payment, PaymentStatus};

/// A payment as the API shows it now, with its `authorization`.
pub(crate) async fn render(state: &AppState, p: &Payment) -> Result<types::Payment, ApiError> {
    PaymentSnapshot {
        authorization: state.store.consent().get(p.id.as_str()).await?,
        payment: p.clone(),
    }
    .represent(state, now_ms())
}

/// What a payment's source or destination is.
fn leg_kind(param: &str, kind: &str) -> Result<PartyKind, ApiError> {
    PartyKind::parse(kind).ok_or_else(|| invalid(param, "must be wallet or bank_account"))
}

/// This module's operations, in the order the document lists them (the router and the
/// document take every handler module's: [`crate::openapi::ROUTES`]).
pub const OPERATIONS: &[&Route] = &[
    &CREATE_PAYMENT,
    &LIST_PAYMENTS,
    &GET_PAYMENT,
    &AUTHORIZE_PAYMENT,
    &CANCEL_PAYMENT,
];

/// The operation [`create_payment`] serves.
pub const CREATE_PAYMENT: Route = route!(post "/v1/payments", "createPayment", create_payment)
    .doc("Create a one-time payment", "Wallet → wallet settles atomically through the settlement router once the source wallet signs (201 `requires_authorization` with EIP-712 `Payment` typed data, then `POST /v1/payments/{id}/authorize`). Payments with a bank leg go through the treasury in two legs and answer 201 when final, 202 `processing` while they run.")
    .body(schema::<types::PaymentCreate>())
    .ok(201, schema::<types::Payment>())
    .ok(202, schema::<types::Payment>())
    .errors(WRITE)
    .codes(&[Codes::of(503).own(&[ErrorCode::ChainUnavailable])])
    .waits()
    .links(&[
        ("GetPayment", GET_PAYMENT.id, LinkArg::Id),
        ("AuthorizePayment", AUTHORIZE_PAYMENT.id, LinkArg::Id),
        ("CancelPayment", CANCEL_PAYMENT.id, LinkArg::Id),
    ]);

/// `POST /v1/payments`
pub async fn create_payment(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    fields: Fields,
) -> Result<Response, ApiError> {
    account_only(&p)?;
    let mode_net = network(&state, &p)?;
    // The account chooses the chain (`POST /v1/account`), never the request.
    let chain = state
        .store
        .accounts()
        .payments_chain(p.account_id(), p.mode())
        .await?;
    let net = mode_net
        .for_payments(chain)
        .ok_or_else(|| ApiError::ChainUnavailable {
            chain: chain.as_str(),
        })?;
    let PaymentCreate {
        currency,
        amount,
        source,
        destination,
    } = PaymentCreate::read(fields)?;
    let currency = currency_of(&currency)?;
    let amount = amount.amount("amount", currency)?;
    let (source_type, source_id) = (source.r#type, source.id);
    let (destination_type, destination_address) = (destination.r#type, destination.address);
    // A bank leg names a simulated account (`ba_…`, else 404); a wallet leg an address.
    let leg = |kind: &str, kind_param: &str, param: &str, id: &str| -> Result<Leg, ApiError> {
        Ok(match leg_kind(kind_param, kind)? {
            PartyKind::BankAccount => {
                Leg::BankAccount(id_of("bank_account", id, BankAccountId::parse)?)
            }
            PartyKind::Wallet => Leg::Wallet(parse_address(param, id)?),
        })
    };
    let source = leg(&source_type, "source.type", "source.id", &source_id)?;
    let destination = leg(
        &destination_type,
        "destination.type",
        "destination.address",
        &destination_address,
    )?;
    let request = payments::NewPayment {
        amount,
        source,
        destination,
    };
    // Service: judge it, link the idempotency key to it, write it.
    let prepared = payments::prepare(
        &state.store,
        net,
        p.scope(),
        request,
        state.config.authorization_ttl,
        now_ms(),
    )
    .await?;
    crate::context::link_created(&state, &format!("/v1/payments/{}", prepared.payment.id)).await?;
    let Some(waiter) = payments::accept(&state.store, net, &prepared).await? else {
        // The wallet must sign the payment first; nothing moves until then.
        return Ok((
            StatusCode::CREATED,
            axum::Json(render(&state, &prepared.payment).await?),
        )
            .into_response());
    };
    // The engine of the chain's lease holder drives it from the database and the
    // transaction journal (so a crash loses none). Wait for it up to `wait`.
    let payment = prepared.payment;
    let done = wait_final(&state, waiter, &p, &payment.id, wait_of(&state, &headers)).await?;
    let payment = state.store.payments().get(p.scope(), &payment.id).await?;
    let status = if done {
        StatusCode::CREATED
    } else {
        StatusCode::ACCEPTED
    };
    Ok((status, axum::Json(render(&state, &payment).await?)).into_response())
}

/// The operation [`authorize_payment`] serves.
pub const AUTHORIZE_PAYMENT: Route = route!(post "/v1/payments/{id}/authorize", "authorizePayment", authorize_payment)
    .doc("Authorize a wallet payment with the payer's signature", "The source wallet's EIP-712 signature of `authorization.typed_data` (status `requires_authorization`); the payment then runs. A wrong or malformed signature is 422 `signature_invalid`; after `expires_at`, 422 `authorization_expired`. Authorizing an authorized payment answers it as it is; a canceled payment is 409 `payment_canceled` (its link was withdrawn).")
    .body(schema::<AuthorizationCreate>())
    .ok(200, schema::<types::Payment>())
    .ok(202, schema::<types::Payment>())
    .errors(WRITE)
    .codes(&[
        Codes::of(409)
            .conflicts(&[Conflict::PaymentCanceled])
            .what("A request with this Idempotency-Key is still running (retry later), or the payment was canceled"),
        Codes::of(422)
            .declines(&[DeclineReason::SignatureInvalid, DeclineReason::AuthorizationExpired]),
    ])
    .path_id("pay_")
    .waits();

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
    fields: Fields,
) -> Result<Response, ApiError> {
    account_only(&p)?;
    let net = network(&state, &p)?;
    let AuthorizationCreate { signature } = AuthorizationCreate::read(fields)?;
    let id = id_of("payment", &id, PaymentId::parse)?;
    let Some(waiter) =
        payments::authorize(&state.store, &net, p.scope(), &id, &signature, now_ms()).await?
    else {
        let payment = state.store.payments().get(p.scope(), &id).await?;
        return Ok((StatusCode::OK, axum::Json(render(&state, &payment).await?)).into_response());
    };
    let done = wait_final(&state, waiter, &p, &id, wait_of(&state, &headers)).await?;
    let payment = state.store.payments().get(p.scope(), &id).await?;
    let status = if done {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok((status, axum::Json(render(&state, &payment).await?)).into_response())
}

/// The operation [`cancel_payment`] serves.
pub const CANCEL_PAYMENT: Route = route!(post "/v1/payments/{id}/cancel", "cancelPayment", cancel_payment)
    .doc("Cancel a payment waiting for its payer", "Withdraws a wallet payment the payer has not signed yet (status `requires_authorization`): it becomes `canceled` (event `payment.canceled`), nothing moves, and its consent link (`/authorize/{id}`) says it was withdrawn and offers nothing to sign; authorizing it afterwards is 409 `payment_canceled`. Canceling a canceled payment answers it as it is. A payment past that stage (`pending`, `processing`, `succeeded`, `failed`) is 409 `payment_not_cancelable`.")
    .ok(200, schema::<types::Payment>())
    .errors(WRITE)
    .codes(&[
        Codes::of(409)
            .conflicts(&[Conflict::PaymentNotCancelable])
            .what("A request with this Idempotency-Key is still running (retry later), or the payment is past its payer's signature"),
    ])
    .path_id("pay_");

/// `POST /v1/payments/{id}/cancel`: the developer withdraws a payment still waiting for
/// its payer's signature (`requires_authorization` → `canceled`, with `payment.canceled`;
/// nothing was sent, so there is nothing to wait for). Its consent link then says it was
/// withdrawn and offers nothing to sign, and authorizing it is 409 `payment_canceled`.
/// Canceling a canceled payment answers it as it is; one past that stage is 409
/// `payment_not_cancelable`.
pub async fn cancel_payment(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    _headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    account_only(&p)?;
    let id = id_of("payment", &id, PaymentId::parse)?;
    payments::cancel(&state.store, p.scope(), &id, now_ms()).await?;
    let payment = state.store.payments().get(p.scope(), &id).await?;
    Ok((StatusCode::OK, axum::Json(render(&state, &payment).await?)).into_response())
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
            let status = state.store.payments().get(p.scope(), id).await?.status;
            Ok(matches!(
                status,
                PaymentStatus::Succeeded | PaymentStatus::Failed
            ))
        })
        .await?;
    Ok(done)
}

/// The operation [`get_payment`] serves.
pub const GET_PAYMENT: Route = route!(get "/v1/payments/{id}", "getPayment", get_payment)
    .doc(
        "Retrieve a payment",
        "With its legs' outcome and any refund.",
    )
    .ok(200, schema::<types::Payment>())
    .errors(READ)
    .path_id("pay_");

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
        .payments()
        .get(p.scope(), &id)
        .await
        .map_err(missing("payment", id.as_str()))?;
    Ok((StatusCode::OK, axum::Json(render(&state, &payment).await?)).into_response())
}

/// The operation [`list_payments`] serves.
pub const LIST_PAYMENTS: Route = route!(get "/v1/payments", "listPayments", list_payments)
    .doc("List payments", "Newest first.")
    .ok(200, schema::<types::PaymentList>())
    .errors(READ)
    .query(LIST);

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
        .payments()
        .list(p.scope(), limit, after.as_deref())
        .await?;
    let mut data = Vec::with_capacity(page.data.len());
    for x in &page.data {
        data.push(render(&state, x).await?);
    }
    Ok((
        StatusCode::OK,
        axum::Json(types::PaymentList::new(
            crate::types::ListTag,
            "/v1/payments".into(),
            data,
            page.has_more,
        )),
    )
        .into_response())
}
/// A payment's `authorization` member (wallet sources: the payer's signature; bank
/// sources: the bank mandate).
fn payment_authorization(
    state: &AppState,
    p: &Payment,
    a: Option<&openrail_store::consent::Authorization>,
) -> Result<Option<crate::types::Consent>, ApiError> {
    if p.source_type == PartyKind::BankAccount {
        return Ok(Some(crate::consent::bank_mandate_view()));
    }
    let Some(a) = a else {
        return Ok(None);
    };
    let net = crate::represent::network(state, p.mode)?
        .on_chain(p.chain_id)
        .ok_or_else(|| {
            ApiError::Internal(format!(
                "payment {} is on chain {}, not served here",
                p.id, p.chain_id
            ))
        })?;
    let msg = crate::consent::payment_message(p, net, a)
        .ok_or_else(|| ApiError::Internal(format!("payment {} has no usable terms", p.id)))?;
    Ok(Some(crate::consent::view_of(a, &msg, net, net.router)))
}

impl Represent for PaymentSnapshot {
    type View = types::Payment;
    fn represent(&self, state: &AppState, _now: i64) -> Result<types::Payment, ApiError> {
        let mut v = views::payment(&self.payment);
        v.authorization = payment_authorization(state, &self.payment, self.authorization.as_ref())?;
        Ok(v)
    }
}
