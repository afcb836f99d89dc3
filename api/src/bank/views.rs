//! The rendering of a bank transfer as its API type ([`super::types`]). Amounts are exact
//! decimals in major units, times are RFC 3339 UTC.

use super::types;
use crate::rfc3339::rfc3339_ms;
use crate::types::Money;
use openrail_store::Currency;
use openrail_store::bank::BankTransfer;

/// A bank transfer as the API shows it.
pub fn transfer(t: &BankTransfer, currency: Currency) -> types::BankTransfer {
    types::BankTransfer {
        id: t.id.to_string(),
        object: types::BankTransferTag,
        bank_account_id: t.bank_account_id.to_string(),
        direction: t.direction.as_str(),
        amount: Money::of(t.amount, currency),
        status: t.status.as_str(),
        failure_reason: t.failure_reason.map(|r| r.as_str()),
        created_at: rfc3339_ms(t.created_at),
        updated_at: rfc3339_ms(t.updated_at),
    }
}
