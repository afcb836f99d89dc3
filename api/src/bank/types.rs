//! The request and response types of simulated bank accounts (testnet):
//! [`BankAccountCreate`], the [`BankAccount`] and its [`BankTransfer`]s as the API shows
//! them, and the leaf schemas of their behaviours and statuses, written in the shared
//! vocabulary of [`crate::types`]. A transfer's rendering of the store's row is in
//! `views`.

use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use crate::types::{
    AmountString, AmountText, BalanceInput, CurrencyCode, CurrencyInput, FailureCode, Money,
    Timestamp, leaf_schema, object_tag, request_body,
};

leaf_schema!(
    /// How a simulated bank account behaves.
    BankBehavior = json!({
        "type": "string",
        "enum": openrail_store::bank::Behavior::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "description": "settles (default): transfers settle after the delay; insufficient_funds: debits fail; closed: every transfer fails account_closed; delayed: settle after a longer delay (default 5 s); fails_late: debits show settled, then fail as returned one delay later",
    })
);

leaf_schema!(
    /// Direction of a bank transfer.
    TransferDirection = json!({
        "type": "string",
        "enum": openrail_store::bank::Direction::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    })
);

leaf_schema!(
    /// Status of a bank transfer.
    TransferStatus = json!({
        "type": "string",
        "enum": openrail_store::bank::TransferStatus::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    })
);

request_body!(
    /// `POST /v1/bank-accounts`: a simulated bank account (testnet).
    #[schema(example = json!({"owner_name": "Ada Lovelace", "currency": "EUR", "balance": "1500.00", "behavior": "settles", "delay_seconds": 2}))]
    pub struct BankAccountCreate {
        /// The holder's name: 1 to 200 characters, not only spaces.
        #[schema(min_length = 1, max_length = 200, pattern = "\\S")]
        pub owner_name: String,
        /// ISO 4217 code.
        #[schema(value_type = CurrencyInput)]
        pub currency: String,
        /// The starting balance (zero allowed; default zero).
        #[schema(value_type = Option<BalanceInput>)]
        pub balance: Option<AmountText>,
        /// How its transfers behave.
        #[schema(value_type = Option<BankBehavior>)]
        pub behavior: Option<String>,
        /// How long its transfers stay pending, 0 to 3600 seconds.
        #[schema(minimum = 0, maximum = 3600)]
        pub delay_seconds: Option<u64>,
    }
);

object_tag!(
    /// `"bank_account"`
    BankAccountTag = "bank_account"
);
object_tag!(
    /// `"bank_transfer"`
    BankTransferTag = "bank_transfer"
);

/// A simulated bank transfer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BankTransfer {
    /// `btr_…`
    #[schema(pattern = "^btr_")]
    pub id: String,
    /// Always `bank_transfer`.
    pub object: BankTransferTag,
    /// Its account.
    #[schema(pattern = "^ba_")]
    pub bank_account_id: String,
    /// Debit or credit.
    #[schema(value_type = TransferDirection)]
    pub direction: &'static str,
    /// How much.
    #[schema(value_type = AmountString)]
    pub amount: Money,
    /// Lifecycle.
    #[schema(value_type = TransferStatus)]
    pub status: &'static str,
    /// Why it failed (status failed).
    #[schema(value_type = FailureCode)]
    pub failure_reason: Option<&'static str>,
    /// Creation time.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
    /// Last change.
    #[schema(value_type = Timestamp)]
    pub updated_at: String,
}

/// A simulated bank account (testnet).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BankAccount {
    /// `ba_…`
    #[schema(pattern = "^ba_")]
    pub id: String,
    /// Always `bank_account`.
    pub object: BankAccountTag,
    /// Always false (testnet only).
    pub livemode: bool,
    /// Creation time.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
    /// The holder.
    pub owner_name: String,
    /// ISO 4217 code.
    #[schema(value_type = CurrencyCode)]
    pub currency: &'static str,
    /// The balance.
    #[schema(value_type = AmountString)]
    pub balance: Money,
    /// The balance minus what pending debits hold: what a new debit may take.
    #[schema(value_type = AmountString)]
    pub available_balance: Money,
    /// How its transfers behave.
    #[schema(value_type = BankBehavior)]
    pub behavior: &'static str,
    /// How long its transfers stay pending.
    pub delay_seconds: i64,
    /// The latest transfers, newest first.
    pub transfers: Vec<BankTransfer>,
}
