//! Simulated bank accounts of testnet (`/v1/bank-accounts`). Mainnet has no bank connector
//! yet, so mainnet keys get 503 `mainnet_unavailable` here.

pub mod types;
mod views;

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use openrail_domain::BankAccountId;
use openrail_store::bank::{BankAccount, BankTransfer, Behavior};
use openrail_store::{Mode, now_ms};

use self::types::BankAccountCreate;
use crate::AppState;
use crate::agentic::{currency_of, missing};
use crate::body::{Fields, invalid};
use crate::context::Principal;
use crate::error::ApiError;
use crate::rfc3339::rfc3339_ms;
use crate::route::{LinkArg, READ, Route, WRITE, route, schema};
use crate::types::{Money, RequestBody};
use openrail_engine::bank_accounts;

/// Longest delay a simulated account may ask for, seconds.
pub use openrail_engine::bank_accounts::MAX_DELAY_SECONDS;

pub(crate) fn testnet_only(p: &Principal) -> Result<(), ApiError> {
    match p {
        Principal::Agent { .. } => Err(ApiError::Forbidden(
            "a session key's secret may only create pulls on its key and read that key and its pulls".into(),
        )),
        Principal::Account(_) | Principal::Dashboard { .. } if p.mode() == Mode::Mainnet => {
            Err(ApiError::MainnetUnavailable)
        }
        Principal::Account(_) | Principal::Dashboard { .. } => Ok(()),
    }
}

pub(crate) fn account_view(a: &BankAccount, transfers: &[BankTransfer]) -> types::BankAccount {
    types::BankAccount {
        id: a.id.to_string(),
        object: types::BankAccountTag,
        livemode: a.mode.livemode(),
        created_at: rfc3339_ms(a.created_at),
        owner_name: a.owner_name.clone(),
        currency: a.currency.code(),
        balance: Money::of(u64::try_from(a.balance).unwrap_or_default(), a.currency),
        available_balance: Money::of(
            u64::try_from(a.balance - a.held).unwrap_or_default(),
            a.currency,
        ),
        behavior: a.behavior.as_str(),
        delay_seconds: a.delay_ms / 1000,
        transfers: transfers
            .iter()
            .map(|t| views::transfer(t, a.currency))
            .collect(),
    }
}

/// This module's operations, in the order the document lists them (the router and the
/// document take every handler module's: [`crate::openapi::ROUTES`]).
pub const OPERATIONS: &[&Route] = &[&CREATE_BANK_ACCOUNT, &GET_BANK_ACCOUNT];

/// The operation [`create_bank_account`] serves.
pub const CREATE_BANK_ACCOUNT: Route = route!(post "/v1/bank-accounts", "createBankAccount", create_bank_account)
    .doc("Create a simulated bank account", "Testnet only (mainnet keys: 503 `mainnet_unavailable`). Choose how its transfers behave with `behavior`, and how long they stay pending with `delay_seconds`.")
    .body(schema::<types::BankAccountCreate>())
    .ok(201, schema::<types::BankAccount>())
    .errors(WRITE)
    .links(&[
        ("GetBankAccount", GET_BANK_ACCOUNT.id, LinkArg::Id),
        ("CreateMandate", crate::agentic::CREATE_MANDATE.id, LinkArg::Body(&[("payer_account_id", "$response.body#/id"), ("currency", "$response.body#/currency")])),
    ]);

/// `POST /v1/bank-accounts`
pub async fn create_bank_account(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    fields: Fields,
) -> Result<Response, ApiError> {
    testnet_only(&p)?;
    let BankAccountCreate {
        owner_name,
        currency,
        balance,
        behavior,
        delay_seconds,
    } = BankAccountCreate::read(fields)?;
    let currency = currency_of(&currency)?;
    let balance = balance
        .map(|b| b.minor_or_zero("balance", currency))
        .transpose()?
        .unwrap_or(0);
    let behavior = behavior
        .map(|b| {
            Behavior::parse(&b).ok_or_else(|| {
                invalid(
                    "behavior",
                    "must be one of settles, insufficient_funds, closed, delayed, fails_late",
                )
            })
        })
        .transpose()?;
    let request = bank_accounts::NewBankAccount {
        owner_name,
        currency,
        balance,
        behavior,
        delay_seconds,
    };
    let account = bank_accounts::prepare(p.scope(), request, now_ms())?;
    crate::context::link_created(&state, &format!("/v1/bank-accounts/{}", account.id)).await?;
    bank_accounts::accept(&state.store, &account).await?;
    Ok((StatusCode::CREATED, axum::Json(account_view(&account, &[]))).into_response())
}

/// The operation [`get_bank_account`] serves.
pub const GET_BANK_ACCOUNT: Route =
    route!(get "/v1/bank-accounts/{id}", "getBankAccount", get_bank_account)
        .doc(
            "Retrieve a simulated bank account",
            "Its balance, what pending debits hold, and its latest transfers.",
        )
        .ok(200, schema::<types::BankAccount>())
        .errors(READ)
        .path_id("ba_");

/// `GET /v1/bank-accounts/{id}`: the balance and the latest transfers.
pub async fn get_bank_account(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    testnet_only(&p)?;
    let id = crate::agentic::id_of("bank_account", &id, BankAccountId::parse)?;
    let account = state
        .store
        .bank()
        .account(p.scope(), &id)
        .await
        .map_err(missing("bank_account", id.as_str()))?;
    let transfers = state.store.bank().transfers(&account.id).await?;
    Ok((
        StatusCode::OK,
        axum::Json(account_view(&account, &transfers)),
    )
        .into_response())
}

impl crate::represent::Represent for openrail_store::events::BankTransferSnapshot {
    type View = types::BankTransfer;
    fn represent(&self, _state: &AppState, _now: i64) -> Result<types::BankTransfer, ApiError> {
        Ok(views::transfer(&self.bank_transfer, self.currency))
    }
}
