//! The one rendering of each object, from what its representation is computed from (a
//! store [`Snapshot`]: the row, its epoch use, its payer's authorization). GET handlers
//! and events both go through [`object`], so an event's `data.object` is exactly what a GET
//! would have answered at the moment of the event.

use crate::error::ApiError;
use crate::types::{ApiObject, Consent};
use crate::{AppState, Network, consent, views};
use alloy::primitives::Address;
use openrail_store::Mode;
use openrail_store::agentic::Mandate;
use openrail_store::consent::Authorization;
use openrail_store::events::{
    AttestationSnapshot, BankTransferSnapshot, DebitPullSnapshot, IdentityVerificationSnapshot,
    MandateSnapshot, PaymentSnapshot, SessionKeySnapshot, Snapshot, WebhookEndpointSnapshot,
};
use openrail_store::payments::{PartyKind, Payment};

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
) -> Result<Option<Consent>, ApiError> {
    if m.is_bank_funded() {
        return Ok(Some(consent::bank_mandate_view()));
    }
    let Some(a) = a else {
        return Ok(None);
    };
    let net = network(state, m.mode)?;
    let msg = consent::mandate_message(m, net, a)
        .ok_or_else(|| ApiError::Internal(format!("mandate {} has no usable terms", m.id)))?;
    let asm = net
        .state_machine()
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(Some(consent::view_of(a, &msg, net, asm)))
}

/// A payment's `authorization` member (wallet sources: the payer's signature; bank
/// sources: the bank mandate).
fn payment_authorization(
    state: &AppState,
    p: &Payment,
    a: Option<&Authorization>,
) -> Result<Option<Consent>, ApiError> {
    if p.source_type == PartyKind::BankAccount {
        return Ok(Some(consent::bank_mandate_view()));
    }
    let Some(a) = a else {
        return Ok(None);
    };
    let net = network(state, p.mode)?
        .on_chain(p.chain_id)
        .ok_or_else(|| {
            ApiError::Internal(format!(
                "payment {} is on chain {}, not served here",
                p.id, p.chain_id
            ))
        })?;
    let msg = consent::payment_message(p, net, a)
        .ok_or_else(|| ApiError::Internal(format!("payment {} has no usable terms", p.id)))?;
    Ok(Some(consent::view_of(a, &msg, net, net.router)))
}

/// The representation of `snap` at `now` (unix ms; a key shows `expired` from then on).
pub(crate) fn object(state: &AppState, snap: &Snapshot, now: i64) -> Result<ApiObject, ApiError> {
    Ok(match snap {
        Snapshot::Mandate(MandateSnapshot {
            mandate,
            current_epoch,
            authorization,
        }) => {
            let mut v = views::mandate(mandate, *current_epoch);
            v.authorization = mandate_authorization(state, mandate, authorization.as_ref())?;
            ApiObject::Mandate(v)
        }
        Snapshot::SessionKey(SessionKeySnapshot {
            session_key: k,
            mandate: m,
            current_epoch,
        }) => {
            let mut v = views::session_key(k, m, *current_epoch, &m.contract, now);
            v.eip712_domain = match (&k.signer, m.contract.parse::<Address>()) {
                (Some(_), Ok(contract)) => {
                    Some(openrail_chain::consent::domain_json(m.chain_id, contract))
                }
                _ => None,
            };
            ApiObject::SessionKey(v)
        }
        Snapshot::DebitPull(DebitPullSnapshot {
            debit_pull,
            chain_id,
        }) => ApiObject::DebitPull(views::pull(debit_pull, *chain_id)),
        Snapshot::Payment(PaymentSnapshot {
            payment,
            authorization,
        }) => {
            let mut v = views::payment(payment);
            v.authorization = payment_authorization(state, payment, authorization.as_ref())?;
            ApiObject::Payment(v)
        }
        Snapshot::BankTransfer(BankTransferSnapshot {
            bank_transfer,
            currency,
        }) => ApiObject::BankTransfer(views::transfer(bank_transfer, *currency)),
        Snapshot::WebhookEndpoint(WebhookEndpointSnapshot { webhook_endpoint }) => {
            ApiObject::WebhookEndpoint(views::webhook_endpoint(webhook_endpoint))
        }
        Snapshot::IdentityVerification(IdentityVerificationSnapshot {
            identity_verification,
        }) => ApiObject::IdentityVerification(views::identity_verification(identity_verification)),
        Snapshot::Attestation(AttestationSnapshot { attestation }) => {
            ApiObject::IdentityAttestation(views::attestation(attestation, now))
        }
    })
}

/// A mandate's representation.
pub(crate) fn mandate(
    state: &AppState,
    snap: &Snapshot,
    now: i64,
) -> Result<crate::types::Mandate, ApiError> {
    match object(state, snap, now)? {
        ApiObject::Mandate(m) => Ok(m),
        _ => Err(ApiError::Internal(
            "a mandate snapshot rendered another object".into(),
        )),
    }
}

/// A session key's representation.
pub(crate) fn session_key(
    state: &AppState,
    snap: &Snapshot,
    now: i64,
) -> Result<crate::types::SessionKey, ApiError> {
    match object(state, snap, now)? {
        ApiObject::SessionKey(k) => Ok(k),
        _ => Err(ApiError::Internal(
            "a key snapshot rendered another object".into(),
        )),
    }
}

/// A payment's representation.
pub(crate) fn payment(
    state: &AppState,
    snap: &Snapshot,
    now: i64,
) -> Result<crate::types::Payment, ApiError> {
    match object(state, snap, now)? {
        ApiObject::Payment(p) => Ok(p),
        _ => Err(ApiError::Internal(
            "a payment snapshot rendered another object".into(),
        )),
    }
}
