//! A one-time payment's row.

use crate::db::StoreError;
use crate::exec::Record;
use crate::ids::Mode;
use crate::money::Currency;
use openrail_domain::{AccountId, PaymentId, PaymentStatus, RefundStatus};

string_enum!(
    /// What a payment's source or destination is.
    PartyKind {
        /// A wallet on the settlement chain (an address).
        Wallet = "wallet",
        /// A bank account (`ba_…`).
        BankAccount = "bank_account",
    }
);

/// A payment row.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Payment {
    /// `pay_…`
    pub id: PaymentId,
    /// Owner.
    pub account_id: AccountId,
    /// Mode.
    pub mode: Mode,
    /// Minor units.
    pub amount: u64,
    /// Currency.
    pub currency: Currency,
    /// `wallet` or `bank_account`.
    pub source_type: PartyKind,
    /// Wallet address or `ba_…`.
    pub source_id: String,
    /// `wallet` or `bank_account`.
    pub destination_type: PartyKind,
    /// Wallet address or `ba_…`.
    pub destination_address: String,
    /// Lifecycle.
    pub status: PaymentStatus,
    /// Why it failed.
    pub failure_reason: Option<openrail_domain::FailureReason>,
    /// Chain it settles on.
    pub chain_id: u64,
    /// Its transaction.
    pub tx_hash: Option<String>,
    /// The refund to the source, when the destination leg failed after the source leg.
    pub refund_status: Option<RefundStatus>,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms.
    pub updated_at: i64,
}

pub(crate) const COLS: &str = "id, account_id, mode, amount, currency, source_type, source_id, destination_type, \
    destination_address, status, failure_reason, chain_id, tx_hash, created_at, updated_at, refund_status";

fn party_of(r: &impl Record, col: &str) -> Result<PartyKind, StoreError> {
    let v = r.string(col)?;
    PartyKind::parse(&v).ok_or_else(|| StoreError::Corrupt(format!("party kind {v:?}")))
}

pub(crate) fn payment_of(r: &impl Record) -> Result<Payment, StoreError> {
    let mode = r.string("mode")?;
    let currency = r.string("currency")?;
    let status = r.string("status")?;
    let bad = |what: &str, v: &str| StoreError::Corrupt(format!("{what} {v:?}"));
    Ok(Payment {
        id: PaymentId::from_trusted(r.string("id")?),
        account_id: AccountId::from_trusted(r.string("account_id")?),
        mode: Mode::parse(&mode).ok_or_else(|| bad("mode", &mode))?,
        amount: u64::try_from(r.integer("amount")?).unwrap_or_default(),
        currency: Currency::parse(&currency).ok_or_else(|| bad("currency", &currency))?,
        source_type: party_of(r, "source_type")?,
        source_id: r.string("source_id")?,
        destination_type: party_of(r, "destination_type")?,
        destination_address: r.string("destination_address")?,
        status: PaymentStatus::parse(&status).ok_or_else(|| bad("payment status", &status))?,
        failure_reason: super::failure_of(r)?,
        chain_id: u64::try_from(r.integer("chain_id")?).unwrap_or_default(),
        tx_hash: r.text("tx_hash")?,
        created_at: r.integer("created_at")?,
        updated_at: r.integer("updated_at")?,
        refund_status: match r.text("refund_status")? {
            None => None,
            Some(v) => Some(RefundStatus::parse(&v).ok_or_else(|| bad("refund status", &v))?),
        },
    })
}

/// What a payment's events hold: the row and its payer's authorization.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PaymentSnapshot {
    /// The row.
    pub payment: Payment,
    /// What a wallet source was asked to sign, and the signature once given.
    pub authorization: Option<super::consent::Authorization>,
}

impl PaymentSnapshot {
    /// Payment `id` as it is now inside `conn`'s transaction, with its owner and mode.
    pub(crate) async fn read_in(
        conn: &mut impl crate::exec::Exec,
        id: &str,
        _now: i64,
    ) -> Result<(Self, AccountId, Mode), StoreError> {
        let p = payment_of(&super::row_in(conn, "payments", COLS, id).await?)?;
        let authorization = super::consent::authorization_in(conn, id).await?;
        let (account, mode) = (p.account_id.clone(), p.mode);
        let snap = PaymentSnapshot {
            payment: p,
            authorization,
        };
        Ok((snap, account, mode))
    }
}
