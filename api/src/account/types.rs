//! The request and response types of the caller's account: [`AccountUpdate`], the
//! [`Account`] as its key's mode sees it, and the leaf schema of its chains' names, written
//! in the shared vocabulary of [`crate::types`].

use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use crate::types::{leaf_schema, object_tag, request_body};

request_body!(
    /// `POST /v1/account`: the account's settings for the key's mode.
    #[schema(example = json!({"payments_chain": "attestation"}))]
    pub struct AccountUpdate {
        /// Which chain settles the account's one-time payments from now on (payments already created keep theirs). Agentic debits always settle on the settlement chain.
        #[schema(value_type = Option<PaymentsChainName>)]
        pub payments_chain: Option<String>,
    }
);

leaf_schema!(
    /// Which of a mode's chains.
    PaymentsChainName = json!({
        "type": "string",
        "enum": openrail_store::accounts::PaymentsChain::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        "description": "settlement: the chain with the allowance state machine (agentic debits) and a settlement router; attestation: the second chain, with a settlement router and the attestation registry",
    })
);

object_tag!(
    /// `"account"`
    AccountTag = "account"
);

/// The caller's account, as its key's mode sees it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Account {
    /// `acct_…`
    #[schema(pattern = "^acct_")]
    pub id: String,
    /// Always `account`.
    pub object: AccountTag,
    /// Whether the key is a mainnet key.
    pub livemode: bool,
    /// The business name payers are shown, if the account gave one.
    pub business_name: Option<String>,
    /// Which chain settles the account's one-time payments.
    #[schema(value_type = PaymentsChainName)]
    pub payments_chain: &'static str,
    /// The chains this mode has on this server, the settlement chain first.
    pub chains: Vec<AccountChain>,
}

/// One chain of a mode.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AccountChain {
    /// What the chain is for.
    #[schema(value_type = PaymentsChainName)]
    pub role: &'static str,
    /// Its chain id.
    pub chain_id: u64,
}
