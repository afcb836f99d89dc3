//! One-time payments between wallets and (simulated) bank accounts, settled on chain.

use serde::{Deserialize, Serialize};

use crate::http::HasId;
use crate::{Client, Consent, Error, ListParams, Pages, RequestOptions};

/// A party of a payment as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Party {
    /// `wallet` or `bank_account`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The wallet address or `ba_…` (sources).
    #[serde(default)]
    pub id: Option<String>,
    /// The wallet address or `ba_…` (destinations).
    #[serde(default)]
    pub address: Option<String>,
}

/// A payment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Payment {
    /// `pay_…`.
    pub id: String,
    /// `requires_authorization`, `pending`, `processing`, `succeeded`, `failed` or
    /// `canceled`.
    pub status: String,
    /// Decimal major units.
    pub amount: String,
    /// ISO 4217.
    pub currency: String,
    /// Where the money comes from.
    pub source: Party,
    /// Where it goes.
    pub destination: Party,
    /// The source's consent (a wallet signs its typed data).
    pub authorization: Option<Consent>,
    /// Why it failed.
    pub failure_reason: Option<String>,
    /// A failed payment's refund of its first leg.
    pub refund_status: Option<String>,
    /// Its transaction.
    pub onchain: Option<serde_json::Value>,
    /// Testnet or mainnet.
    pub livemode: bool,
    /// RFC 3339.
    pub created_at: String,
}

impl HasId for Payment {
    fn id(&self) -> &str {
        &self.id
    }
}

/// Where a new payment's money comes from.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Source {
    /// A wallet that approved the router; it signs the payment.
    Wallet {
        /// Its address.
        id: String,
    },
    /// A simulated bank account (`ba_…`).
    BankAccount {
        /// Its id.
        id: String,
    },
}

/// Where a new payment's money goes.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Destination {
    /// A wallet.
    Wallet {
        /// Its address.
        address: String,
    },
    /// A simulated bank account.
    BankAccount {
        /// Its id (`ba_…`).
        address: String,
    },
}

/// `POST /v1/payments`.
#[derive(Debug, Clone, Serialize)]
pub struct CreatePayment {
    /// Decimal major units (`"12.50"`).
    pub amount: String,
    /// `USD` or `EUR` on testnet.
    pub currency: String,
    /// Where the money comes from.
    pub source: Source,
    /// Where it goes (not the source).
    pub destination: Destination,
}

/// The payment routes (from [`Client::payments`]).
#[derive(Debug, Clone, Copy)]
pub struct Payments<'a>(pub(crate) &'a Client);

impl Payments<'_> {
    /// Creates a payment: `requires_authorization` from a wallet (sign its
    /// `authorization.typed_data`, then [`Payments::authorize`]); from a bank account it
    /// starts at once.
    pub async fn create(&self, p: &CreatePayment) -> Result<Payment, Error> {
        self.0
            .post("/v1/payments", p, &RequestOptions::default())
            .await
    }

    /// Sends the source wallet's signature; the payment moves.
    pub async fn authorize(&self, id: &str, signature: &str) -> Result<Payment, Error> {
        self.0
            .post(
                &format!("/v1/payments/{id}/authorize"),
                &serde_json::json!({ "signature": signature }),
                &RequestOptions::default(),
            )
            .await
    }

    /// Withdraws a payment still waiting for its payer's signature
    /// (`requires_authorization`): it becomes `canceled` and its consent link offers
    /// nothing to sign. A payment past that stage is [`Error::Api`] 409
    /// `payment_not_cancelable`.
    pub async fn cancel(&self, id: &str) -> Result<Payment, Error> {
        self.0
            .post(
                &format!("/v1/payments/{id}/cancel"),
                &serde_json::json!({}),
                &RequestOptions::default(),
            )
            .await
    }

    /// A payment.
    pub async fn get(&self, id: &str) -> Result<Payment, Error> {
        self.0.get(&format!("/v1/payments/{id}")).await
    }

    /// The payments, newest first.
    pub fn list(&self, params: ListParams) -> Pages<Payment> {
        self.0.pages("/v1/payments", params)
    }
}
