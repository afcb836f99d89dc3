//! The one rendering of each object, from what its representation is computed from (a
//! store [`Snapshot`]: the row, its epoch use, its payer's authorization). GET handlers
//! and events both go through [`object`], so an event's `data.object` is exactly what a GET
//! would have answered at the moment of the event.

use alloy::primitives::Address;
use openrail_store::Mode;
use openrail_store::agentic::Mandate;
use openrail_store::consent::Authorization;
use openrail_store::events::Snapshot;
use openrail_store::payments::{PartyKind, Payment};
use serde_json::Value;

use crate::error::ApiError;
use crate::{AppState, Network, consent, views};

/// The network of objects of `mode`.
fn network(state: &AppState, mode: Mode) -> Result<&Network, ApiError> {
    match mode {
        Mode::Testnet => state.testnet.as_deref(),
        Mode::Mainnet => state.mainnet.as_deref(),
    }
    .ok_or(ApiError::MainnetUnavailable)
}

/// A mandate's `authorization` member: the payer's signature (asked for or given), or the
/// bank mandate of a bank-account payer.
fn mandate_authorization(
    state: &AppState,
    m: &Mandate,
    a: Option<&Authorization>,
) -> Result<Value, ApiError> {
    if m.is_bank_funded() {
        return Ok(consent::bank_mandate_view());
    }
    let Some(a) = a else {
        return Ok(Value::Null);
    };
    let net = network(state, m.mode)?;
    let msg = consent::mandate_message(m, net, a)
        .ok_or_else(|| ApiError::Internal(format!("mandate {} has no usable terms", m.id)))?;
    Ok(consent::view_of(a, &msg, net, net.allowance_state_machine))
}

/// A payment's `authorization` member (wallet sources: the payer's signature; bank
/// sources: the bank mandate).
fn payment_authorization(
    state: &AppState,
    p: &Payment,
    a: Option<&Authorization>,
) -> Result<Value, ApiError> {
    if p.source_type == PartyKind::BankAccount {
        return Ok(consent::bank_mandate_view());
    }
    let Some(a) = a else {
        return Ok(Value::Null);
    };
    let net = network(state, p.mode)?;
    let msg = consent::payment_message(p, net, a)
        .ok_or_else(|| ApiError::Internal(format!("payment {} has no usable terms", p.id)))?;
    Ok(consent::view_of(a, &msg, net, net.router))
}

/// The representation of `snap` at `now` (unix ms; a key shows `expired` from then on).
pub(crate) fn object(state: &AppState, snap: &Snapshot, now: i64) -> Result<Value, ApiError> {
    Ok(match snap {
        Snapshot::Mandate {
            mandate,
            current_epoch,
            authorization,
        } => {
            let mut v = views::mandate(mandate, *current_epoch);
            v["authorization"] = mandate_authorization(state, mandate, authorization.as_ref())?;
            v
        }
        Snapshot::SessionKey {
            session_key: k,
            mandate: m,
            current_epoch,
        } => {
            let mut v = views::session_key(k, m, *current_epoch, &m.contract, now);
            v["signer"] = k.signer.clone().map_or(Value::Null, Value::String);
            v["eip712_domain"] = match (&k.signer, m.contract.parse::<Address>()) {
                (Some(_), Ok(contract)) => {
                    openrail_chain::consent::domain_json(m.chain_id, contract)
                }
                _ => Value::Null,
            };
            v
        }
        Snapshot::DebitPull {
            debit_pull,
            chain_id,
        } => views::pull(debit_pull, *chain_id),
        Snapshot::Payment {
            payment,
            authorization,
        } => {
            let mut v = views::payment(payment);
            v["authorization"] = payment_authorization(state, payment, authorization.as_ref())?;
            v
        }
        Snapshot::BankTransfer {
            bank_transfer,
            currency,
        } => views::transfer(bank_transfer, *currency),
        Snapshot::WebhookEndpoint { webhook_endpoint } => views::webhook_endpoint(webhook_endpoint),
    })
}
