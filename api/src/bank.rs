//! Simulated bank accounts of testnet (`/v1/bank-accounts`). Mainnet has no bank connector
//! yet, so mainnet keys get 503 `mainnet_unavailable` here.

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use openrail_store::bank::{BankAccount, BankTransfer, Behavior};
use openrail_store::money::format_minor;
use openrail_store::{BankAccountId, Currency, Mode, now_ms};
use serde_json::{Value, json};

use crate::AppState;
use crate::agentic::missing;
use crate::body::{Fields, invalid};
use crate::context::Principal;
use crate::error::ApiError;
use crate::views::{self, rfc3339_ms};
use openrail_engine::bank_accounts;

/// Longest delay a simulated account may ask for, seconds.
pub use openrail_engine::bank_accounts::MAX_DELAY_SECONDS;

fn testnet_only(p: &Principal) -> Result<(), ApiError> {
    match p {
        Principal::Agent { .. } => Err(ApiError::Forbidden(
            "a session key's secret may only create pulls on its key and read that key and its pulls".into(),
        )),
        Principal::Account(k) if k.mode == Mode::Mainnet => Err(ApiError::MainnetUnavailable),
        Principal::Account(_) => Ok(()),
    }
}

fn account_json(a: &BankAccount, transfers: &[BankTransfer]) -> Value {
    json!({
        "id": a.id,
        "object": "bank_account",
        "livemode": a.mode.livemode(),
        "created_at": rfc3339_ms(a.created_at),
        "owner_name": a.owner_name,
        "currency": a.currency.code(),
        "balance": format_minor(u64::try_from(a.balance).unwrap_or_default(), a.currency),
        "available_balance": format_minor(
            u64::try_from(a.balance - a.held).unwrap_or_default(),
            a.currency,
        ),
        "behavior": a.behavior.as_str(),
        "delay_seconds": a.delay_ms / 1000,
        "transfers": transfers.iter().map(|t| views::transfer(t, a.currency)).collect::<Vec<_>>(),
    })
}

/// `POST /v1/bank-accounts`
pub async fn create_bank_account(
    State(state): State<AppState>,
    Extension(p): Extension<Principal>,
    mut fields: Fields,
) -> Result<Response, ApiError> {
    testnet_only(&p)?;
    let owner_name = fields.string("owner_name")?;
    let currency = fields.string("currency")?;
    let currency =
        Currency::parse(&currency).ok_or_else(|| invalid("currency", "must be one of USD, EUR"))?;
    let balance = fields.opt_amount_or_zero("balance", currency)?.unwrap_or(0);
    let behavior = fields
        .opt_string("behavior")?
        .map(|b| {
            Behavior::parse(&b).ok_or_else(|| {
                invalid(
                    "behavior",
                    "must be one of settles, insufficient_funds, closed, delayed, fails_late",
                )
            })
        })
        .transpose()?;
    let delay_seconds = fields.opt_integer("delay_seconds")?;
    fields.finish()?;
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
    Ok((StatusCode::CREATED, axum::Json(account_json(&account, &[]))).into_response())
}

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
        .bank_account(p.scope(), &id)
        .await
        .map_err(missing("bank_account", &id))?;
    let transfers = state.store.bank_transfers(&account.id).await?;
    Ok((
        StatusCode::OK,
        axum::Json(account_json(&account, &transfers)),
    )
        .into_response())
}
