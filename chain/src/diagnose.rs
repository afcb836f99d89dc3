//! Why a token transfer failed, told from the chain: the payer's balance, then its
//! allowance to the router, else the token itself refused. So a refusal is reported as
//! what it was, never `insufficient_funds` by default.

use alloy::primitives::{Address, U256};
use alloy::providers::Provider;

use crate::bindings::TestStablecoin;
use openrail_store::agentic::DeclineReason;

/// What stopped a transfer of `amount` of `token` from `payer` through `router`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransferFailure {
    /// The payer's balance is below the amount.
    InsufficientFunds,
    /// The payer's allowance to the router is below the amount.
    AllowanceInsufficient,
    /// Balance and allowance suffice: the token refused for its own reasons.
    TokenRefused,
}

impl TransferFailure {
    /// The reason the API records and answers.
    pub fn reason(self) -> DeclineReason {
        match self {
            TransferFailure::InsufficientFunds => DeclineReason::InsufficientFunds,
            TransferFailure::AllowanceInsufficient => DeclineReason::AllowanceInsufficient,
            TransferFailure::TokenRefused => DeclineReason::TransferFailed,
        }
    }
}

/// Reads the payer's balance and allowance now (after the failure; close enough to tell
/// which was short, and never a reason to move money).
pub async fn transfer_failure<P: Provider>(
    provider: &P,
    token: Address,
    payer: Address,
    router: Address,
    amount: U256,
) -> Result<TransferFailure, crate::ChainError> {
    let t = TestStablecoin::new(token, provider);
    if t.balanceOf(payer).call().await? < amount {
        return Ok(TransferFailure::InsufficientFunds);
    }
    if t.allowance(payer, router).call().await? < amount {
        return Ok(TransferFailure::AllowanceInsufficient);
    }
    Ok(TransferFailure::TokenRefused)
}
