//! The rendering of a payment as its API type ([`super::types`]). Amounts are exact
//! decimals in major units, times are RFC 3339 UTC.

use super::types;
use crate::rfc3339::rfc3339_ms;
use crate::types::{Money, OnChainTx};
use openrail_store::payments::Payment;

/// A payment's fields (its `authorization` is [`crate::represent`]'s).
pub fn payment(p: &Payment) -> types::Payment {
    types::Payment {
        id: p.id.to_string(),
        object: types::PaymentTag,
        livemode: p.mode.livemode(),
        created_at: rfc3339_ms(p.created_at),
        amount: Money::of(p.amount, p.currency),
        currency: p.currency.code(),
        source: types::PaymentSourceView {
            kind: p.source_type.as_str(),
            id: p.source_id.clone(),
        },
        destination: types::PaymentDestinationView {
            kind: p.destination_type.as_str(),
            address: p.destination_address.clone(),
        },
        status: p.status.as_str(),
        failure_reason: p.failure_reason.map(|r| r.as_str()),
        refund_status: p.refund_status.map(|r| r.as_str()),
        onchain: OnChainTx {
            chain_id: p.chain_id,
            tx_hash: p.tx_hash.clone(),
        },
        authorization: None,
    }
}
