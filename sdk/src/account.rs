//! Your account (`/v1/account`): the chains its key's mode has, and which of them settles
//! its one-time payments. Requests never name a chain; the account chooses here.

use serde::{Deserialize, Serialize};

use crate::{Client, Error, RequestOptions};

/// The account, as its key's mode sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    /// `acct_…`.
    pub id: String,
    /// Whether the key is a mainnet key.
    pub livemode: bool,
    /// The business name payers see, if given.
    pub business_name: Option<String>,
    /// `settlement` or `attestation`: where one-time payments settle.
    pub payments_chain: String,
    /// The mode's chains, the settlement chain first.
    pub chains: Vec<AccountChain>,
}

/// One chain of a mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountChain {
    /// `settlement` or `attestation`.
    pub role: String,
    /// Its chain id.
    pub chain_id: u64,
}

/// `POST /v1/account`: the settings to change (the others stay).
#[derive(Debug, Clone, Default, Serialize)]
pub struct UpdateAccount {
    /// `settlement` or `attestation`: where the payments created from now on settle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payments_chain: Option<String>,
}

/// The account routes (from [`Client::account`]).
#[derive(Debug, Clone, Copy)]
pub struct AccountSettings<'a>(pub(crate) &'a Client);

impl AccountSettings<'_> {
    /// The account.
    pub async fn get(&self) -> Result<Account, Error> {
        self.0.get("/v1/account").await
    }

    /// Changes the settings given.
    pub async fn update(&self, u: &UpdateAccount) -> Result<Account, Error> {
        self.0
            .post("/v1/account", u, &RequestOptions::default())
            .await
    }
}
