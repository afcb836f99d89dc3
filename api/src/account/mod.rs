//! The caller's account (`/v1/account`): what its key's mode serves, and where its
//! one-time payments settle. The caller never names a chain in a request; the account
//! chooses once, here, and every payment it creates afterwards settles there (a payment
//! keeps the chain it was created on).

pub mod types;

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use openrail_store::accounts::PaymentsChain;
use openrail_store::now_ms;

use self::types::AccountUpdate;
use crate::AppState;
use crate::agentic::{account_only, network};
use crate::body::{Fields, invalid};
use crate::context::Principal;
use crate::error::ApiError;
use crate::route::{READ, Route, WRITE, route, schema};
use crate::types::RequestBody;

async fn view(state: &AppState, p: &Principal) -> Result<types::Account, ApiError> {
    let net = network(state, p)?;
    let account = state.store.accounts().get(p.account_id()).await?;
    let chain = state
        .store
        .accounts()
        .payments_chain(p.account_id(), p.mode())
        .await?;
    let chains = PaymentsChain::ALL
        .into_iter()
        .filter_map(|c| {
            net.for_payments(c).map(|n| types::AccountChain {
                role: c.as_str(),
                chain_id: n.chain_id,
            })
        })
        .collect();
    Ok(types::Account {
        id: account.id.to_string(),
        object: types::AccountTag,
        livemode: p.mode().livemode(),
        business_name: account.business_name,
        payments_chain: chain.as_str(),
        chains,
    })
}

/// This module's operations, in the order the document lists them (the router and the
/// document take every handler module's: [`crate::openapi::ROUTES`]).
pub const OPERATIONS: &[&Route] = &[&GET_ACCOUNT, &UPDATE_ACCOUNT];

/// The operation [`get_account`] serves.
pub const GET_ACCOUNT: Route = route!(get "/v1/account", "getAccount", get_account)
    .doc("Retrieve your account", "The account of the key, as its mode sees it: the chains this server has for the mode, and which of them settles the account's one-time payments (`payments_chain`). Requests never name a chain; agentic debits always settle on the settlement chain.")
    .ok(200, schema::<types::Account>())
    .errors(READ);

/// `GET /v1/account`
pub async fn get_account(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
) -> Result<Response, ApiError> {
    account_only(&p)?;
    Ok((StatusCode::OK, axum::Json(view(&state, &p).await?)).into_response())
}

/// The operation [`update_account`] serves.
pub const UPDATE_ACCOUNT: Route = route!(post "/v1/account", "updateAccount", update_account)
    .doc("Update your account", "Sets the fields given for the key's mode. `payments_chain`: which chain settles the one-time payments the account creates from now on (`settlement`, the default, or `attestation` when the server has that chain for the mode: 400 otherwise). Payments already created keep their chain.")
    .body(schema::<types::AccountUpdate>())
    .ok(200, schema::<types::Account>())
    .errors(WRITE);

/// `POST /v1/account`: changes the settings given, leaves the others.
pub async fn update_account(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    fields: Fields,
) -> Result<Response, ApiError> {
    account_only(&p)?;
    let net = network(&state, &p)?;
    let AccountUpdate { payments_chain } = AccountUpdate::read(fields)?;
    if let Some(name) = payments_chain {
        let chain = PaymentsChain::parse(&name)
            .ok_or_else(|| invalid("payments_chain", "must be settlement or attestation"))?;
        if net.for_payments(chain).is_none() {
            return Err(invalid(
                "payments_chain",
                "this server has no attestation chain for this mode",
            ));
        }
        state
            .store
            .accounts()
            .set_payments_chain(p.account_id(), p.mode(), chain, now_ms())
            .await?;
    }
    Ok((StatusCode::OK, axum::Json(view(&state, &p).await?)).into_response())
}
