//! A simulated bank transfer's row.

use super::corrupt;
use crate::db::StoreError;
use crate::exec::Record;
use openrail_domain::{BankAccountId, BankTransferId, TransferStatus};

string_enum!(
    /// Money out of or into the account.
    Direction {
        /// Out of the account.
        Debit = "debit",
        /// Into the account.
        Credit = "credit",
    }
);

/// A transfer on a simulated account.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BankTransfer {
    /// `btr_…`
    pub id: BankTransferId,
    /// The account.
    pub bank_account_id: BankAccountId,
    /// Debit or credit.
    pub direction: Direction,
    /// Minor units.
    pub amount: u64,
    /// Lifecycle.
    pub status: TransferStatus,
    /// Why it failed.
    pub failure_reason: Option<openrail_domain::FailureReason>,
    /// When it is next due for a transition (`i64::MAX`: final).
    pub due_at: i64,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms.
    pub updated_at: i64,
}

pub(crate) const TRANSFER_COLS: &str = "id, bank_account_id, direction, amount, status, failure_reason, due_at, created_at, updated_at";

pub(crate) fn transfer_of(r: &impl Record) -> Result<BankTransfer, StoreError> {
    let direction = r.string("direction")?;
    let status = r.string("status")?;
    Ok(BankTransfer {
        id: BankTransferId::from_trusted(r.string("id")?),
        bank_account_id: BankAccountId::from_trusted(r.string("bank_account_id")?),
        direction: Direction::parse(&direction).ok_or_else(|| corrupt("direction", &direction))?,
        amount: u64::try_from(r.integer("amount")?).unwrap_or_default(),
        status: TransferStatus::parse(&status)
            .ok_or_else(|| corrupt("transfer status", &status))?,
        failure_reason: super::failure_of(r)?,
        due_at: r.integer("due_at")?,
        created_at: r.integer("created_at")?,
        updated_at: r.integer("updated_at")?,
    })
}

/// What a bank transfer's events hold: the row and its account's currency.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BankTransferSnapshot {
    /// The row.
    pub bank_transfer: BankTransfer,
    /// Its account's currency.
    pub currency: crate::money::Currency,
}

impl BankTransferSnapshot {
    /// Transfer `id` as it is now inside `conn`'s transaction, with its owner and mode.
    pub(crate) async fn read_in(
        conn: &mut impl crate::exec::Exec,
        id: &str,
        _now: i64,
    ) -> Result<(Self, openrail_domain::AccountId, crate::ids::Mode), StoreError> {
        let t = transfer_of(&super::row_in(conn, "bank_transfers", TRANSFER_COLS, id).await?)?;
        let a = super::row_in(
            conn,
            "bank_accounts",
            "account_id, mode, currency",
            t.bank_account_id.as_str(),
        )
        .await?;
        let account = openrail_domain::AccountId::from_trusted(a.string("account_id")?);
        let (mode, currency) = (
            super::mode_of(&a, "mode")?,
            super::currency_of(&a, "currency")?,
        );
        let snap = BankTransferSnapshot {
            bank_transfer: t,
            currency,
        };
        Ok((snap, account, mode))
    }
}
