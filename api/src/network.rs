//! The chains behind one mode (testnet or mainnet): the settlement chain's submitter and
//! the addresses the API needs.

use std::collections::BTreeMap;

use alloy::primitives::Address;
use openrail_chain::submitter::Submitter;
use openrail_store::Currency;

/// Decimals of the settlement chain's stablecoins.
pub const TOKEN_DECIMALS: u32 = 6;

/// The settlement chain of one mode.
#[derive(Debug)]
pub struct Network {
    /// Sends the operator's transactions.
    pub submitter: Submitter,
    /// Chain id.
    pub chain_id: u64,
    /// The allowance state machine.
    pub allowance_state_machine: Address,
    /// The settlement router (one-time payments).
    pub router: Address,
    /// The treasury wallet: pays bank-funded pulls on chain, holds bank legs in transit.
    pub treasury: Address,
    /// Stablecoin per currency.
    pub tokens: BTreeMap<Currency, Address>,
    /// Where pulls go when the request names no destination (the account's settlement
    /// wallet; today the treasury of the chain, one for all accounts).
    pub default_destination: Address,
}
