//! Simulated bank accounts (testnet): a balance, a behaviour, transfers.

use serde::{Deserialize, Serialize};

use crate::http::HasId;
use crate::{Client, Error, RequestOptions};

/// A simulated bank account.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BankAccount {
    /// `ba_…`.
    pub id: String,
    /// Whose it is.
    pub owner_name: String,
    /// ISO 4217.
    pub currency: String,
    /// The balance (decimal major units).
    pub balance: String,
    /// What may be spent: the balance less what debits hold.
    pub available_balance: String,
    /// `settles`, `insufficient_funds`, `closed`, `delayed` or `fails_late`.
    pub behavior: String,
    /// Seconds a transfer takes.
    pub delay_seconds: u64,
    /// Its transfers.
    #[serde(default)]
    pub transfers: Vec<serde_json::Value>,
    /// Testnet or mainnet.
    pub livemode: bool,
    /// RFC 3339.
    pub created_at: String,
}

impl HasId for BankAccount {
    fn id(&self) -> &str {
        &self.id
    }
}

/// `POST /v1/bank-accounts`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CreateBankAccount {
    /// Whose it is.
    pub owner_name: String,
    /// `USD` or `EUR`.
    pub currency: String,
    /// The starting balance (default zero).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub balance: Option<String>,
    /// `settles` (default), `insufficient_funds`, `closed`, `delayed` or `fails_late`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub behavior: Option<String>,
    /// Seconds a transfer takes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_seconds: Option<u64>,
}

/// The bank-account routes (from [`Client::bank_accounts`]).
#[derive(Debug, Clone, Copy)]
pub struct BankAccounts<'a>(pub(crate) &'a Client);

impl BankAccounts<'_> {
    /// Creates a simulated bank account.
    pub async fn create(&self, a: &CreateBankAccount) -> Result<BankAccount, Error> {
        self.0
            .post("/v1/bank-accounts", a, &RequestOptions::default())
            .await
    }

    /// A bank account, with its transfers.
    pub async fn get(&self, id: &str) -> Result<BankAccount, Error> {
        self.0.get(&format!("/v1/bank-accounts/{id}")).await
    }
}
