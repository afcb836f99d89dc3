//! JSON renderings of the resources. Amounts are decimal strings in major units, times are
//! RFC 3339 UTC.

use openrail_store::Currency;
use openrail_store::agentic::{DebitPull, EpochUse, KeyStatus, Mandate, SessionKey};
use openrail_store::bank::BankTransfer;
use openrail_store::money::format_minor;
use openrail_store::payments::Payment;
use openrail_store::webhooks::{Delivery, WebhookEndpoint};
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// RFC 3339 UTC of unix milliseconds.
pub fn rfc3339_ms(ms: i64) -> String {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_default()
}

/// RFC 3339 UTC of unix seconds.
pub fn rfc3339_s(s: i64) -> String {
    rfc3339_ms(s.saturating_mul(1000))
}

/// The current epoch of a mandate or key as the API shows it.
fn epoch_json(e: EpochUse, currency: Currency) -> Value {
    json!({
        "starts_at": rfc3339_s(e.starts_at),
        "ends_at": rfc3339_s(e.ends_at),
        "spent": format_minor(e.spent, currency),
        "remaining": format_minor(e.remaining, currency),
    })
}

pub fn mandate(m: &Mandate, epoch: EpochUse) -> Value {
    json!({
        "id": m.id,
        "object": "mandate",
        "livemode": m.mode.livemode(),
        "created_at": rfc3339_ms(m.created_at),
        "payer_account_id": m.payer_account_id,
        "max_amount": format_minor(m.max_amount, m.currency),
        "currency": m.currency.code(),
        "interval": m.interval.as_str(),
        "purpose": m.purpose,
        "status": m.status.as_str(),
        "current_epoch": epoch_json(epoch, m.currency),
        "onchain": {
            "chain_id": m.chain_id,
            "contract": m.contract,
            "id": m.onchain_id,
            "tx_hash": m.tx_hash,
        },
    })
}

/// A key's status as shown: `expired` the moment its time passes.
pub fn key_status(k: &SessionKey, now_ms: i64) -> &'static str {
    match k.status {
        KeyStatus::Revoked => "revoked",
        KeyStatus::Failed => "failed",
        KeyStatus::Pending => "pending",
        KeyStatus::Active if now_ms >= k.expires_at => "expired",
        KeyStatus::Active => "active",
    }
}

pub fn session_key(
    k: &SessionKey,
    m: &Mandate,
    epoch: EpochUse,
    contract: &str,
    now_ms: i64,
) -> Value {
    json!({
        "id": k.id,
        "object": "session_key",
        "livemode": k.mode.livemode(),
        "created_at": rfc3339_ms(k.created_at),
        "mandate_id": k.mandate_id,
        "status": key_status(k, now_ms),
        "expires_at": rfc3339_ms(k.expires_at),
        "max_amount": k.max_amount.map(|a| format_minor(a, m.currency)),
        "currency": m.currency.code(),
        "allowed_destinations": k.allowed_destinations,
        "current_epoch": epoch_json(epoch, m.currency),
        "onchain": {
            "chain_id": m.chain_id,
            "contract": contract,
            "id": k.onchain_id,
            "tx_hash": k.tx_hash,
        },
    })
}

pub fn pull(p: &DebitPull, chain_id: u64) -> Value {
    json!({
        "id": p.id,
        "object": "debit_pull",
        "livemode": p.mode.livemode(),
        "created_at": rfc3339_ms(p.created_at),
        "session_key_id": p.session_key_id,
        "mandate_id": p.mandate_id,
        "amount": format_minor(p.amount, p.currency),
        "currency": p.currency.code(),
        "destination": p.destination,
        "description": p.description,
        "status": p.status.as_str(),
        "decline_code": p.decline_code.map(|r| r.as_str()),
        "failure_reason": p.failure_reason,
        "authorized_at": p.authorized_at.map(rfc3339_ms),
        "onchain": { "chain_id": chain_id, "tx_hash": p.tx_hash },
    })
}

pub fn list(data: Vec<Value>, has_more: bool, url: &str) -> Value {
    json!({ "object": "list", "url": url, "data": data, "has_more": has_more })
}

/// A payment's fields (without `authorization`, which [`crate::represent`] adds).
pub fn payment(p: &Payment) -> Value {
    json!({
        "id": p.id,
        "object": "payment",
        "livemode": p.mode.livemode(),
        "created_at": rfc3339_ms(p.created_at),
        "amount": format_minor(p.amount, p.currency),
        "currency": p.currency.code(),
        "source": { "type": p.source_type.as_str(), "id": p.source_id },
        "destination": { "type": p.destination_type.as_str(), "address": p.destination_address },
        "status": p.status.as_str(),
        "failure_reason": p.failure_reason,
        "refund_status": p.refund_status.map(|r| r.as_str()),
        "onchain": { "chain_id": p.chain_id, "tx_hash": p.tx_hash },
    })
}

/// A bank transfer as the API shows it.
pub fn transfer(t: &BankTransfer, currency: Currency) -> Value {
    json!({
        "id": t.id,
        "object": "bank_transfer",
        "bank_account_id": t.bank_account_id,
        "direction": t.direction.as_str(),
        "amount": format_minor(t.amount, currency),
        "status": t.status.as_str(),
        "failure_reason": t.failure_reason,
        "created_at": rfc3339_ms(t.created_at),
        "updated_at": rfc3339_ms(t.updated_at),
    })
}

/// A webhook endpoint (never its secret; creation and rotation add `secret` once).
pub fn webhook_endpoint(e: &WebhookEndpoint) -> Value {
    json!({
        "id": e.id,
        "object": "webhook_endpoint",
        "livemode": e.mode.livemode(),
        "created_at": rfc3339_ms(e.created_at),
        "url": e.url,
        "description": e.description,
        "enabled_events": e.enabled_events,
        "status": e.status.as_str(),
        "disabled_reason": e.disabled_reason,
        "failing_since": e.failing_since.map(rfc3339_ms),
        "previous_secret_expires_at": e.previous_secret_expires_at.map(rfc3339_ms),
    })
}

/// One delivery of an event to an endpoint, with its last attempt.
pub fn webhook_delivery(d: &Delivery) -> Value {
    json!({
        "id": d.id,
        "object": "webhook_delivery",
        "endpoint_id": d.endpoint_id,
        "event_id": d.event_id,
        "redelivery": d.redelivery,
        "status": d.status.as_str(),
        "attempts": d.attempts,
        "last_status_code": d.last_status_code,
        "last_error": d.last_error,
        "latency_ms": d.last_latency_ms,
        "last_attempt_at": d.last_attempt_at.map(rfc3339_ms),
        "next_attempt_at": d.next_attempt_at.map(rfc3339_ms),
        "created_at": rfc3339_ms(d.created_at),
    })
}
