//! Why a token transfer failed, told from the chain: the payer's balance, then its
//! allowance to the router, else the token itself refused. So a refusal is reported as
//! what it was, never `insufficient_funds` by default.

use alloy::primitives::{Address, U256};
use alloy::providers::Provider;

use crate::bindings::TestStablecoin;
use openrail_domain::Currency;
use openrail_domain::PullId;
use openrail_domain::pulls::DeclineReason;

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

pub use openrail_domain::pulls::PullTransfer;

/// Why the token refused the transfer of debit pull `pull` (`transfer`: read from its row
/// and its mandate's by the caller; the chain read now): the one diagnosis of a
/// `transfer_failed` decline, used by whoever records it first (the engine from a receipt,
/// the watcher from the logs), so the code a pull ends with never depends on which of them
/// won. `TransferFailed` when the rows (`None`) or the chain cannot be read.
pub async fn pull_transfer_failure<P: Provider>(
    provider: &P,
    tokens: &std::collections::BTreeMap<Currency, Address>,
    router: Address,
    pull: &PullId,
    transfer: Option<PullTransfer>,
) -> DeclineReason {
    let inputs = transfer.and_then(|t| {
        Some((
            t.payer_address.parse::<Address>().ok()?,
            *tokens.get(&t.currency)?,
            crate::token_units(t.amount, t.currency),
        ))
    });
    let Some((payer, token, amount)) = inputs else {
        return DeclineReason::TransferFailed;
    };
    match transfer_failure(provider, token, payer, router, amount).await {
        Ok(f) => f.reason(),
        Err(e) => {
            tracing::warn!(%pull, error = %e, "could not tell why the transfer failed");
            DeclineReason::TransferFailed
        }
    }
}
