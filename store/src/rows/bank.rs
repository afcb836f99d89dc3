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
    pub failure_reason: Option<String>,
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
        failure_reason: r.text("failure_reason")?,
        due_at: r.integer("due_at")?,
        created_at: r.integer("created_at")?,
        updated_at: r.integer("updated_at")?,
    })
}
