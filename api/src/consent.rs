//! Payer and agent consent in the API: the authorization a wallet payer is asked for (typed
//! data for `eth_signTypedData_v4`, a deadline), the check of the signature it sends back
//! before anything is sent (ECDSA like the contracts, or ERC-1271 through an `eth_call`),
//! and the view of both. The chain checks every signature again; these checks only keep a
//! bad one from costing a transaction.

use alloy::primitives::{Address, B256, Bytes};
use openrail_chain::consent::TypedMessage;
use openrail_store::consent::Authorization;
use serde_json::{Value, json};

use crate::error::{ApiError, DeclineReason};
use crate::views::{rfc3339_ms, rfc3339_s};
pub use openrail_engine::consent::{mandate_message, new_nonce, payment_message};
use openrail_engine::network::Network;

/// A 422 with `reason`.
pub fn declined(reason: DeclineReason, detail: impl Into<String>) -> ApiError {
    ApiError::Declined {
        reason,
        detail: detail.into(),
        pull_id: None,
        remaining: None,
        resets_at: None,
    }
}

/// The `authorization` member of a mandate or payment a wallet must sign for.
pub fn view(a: &Authorization, typed_data: Value) -> Value {
    json!({
        "method": "payer_signature",
        "signer": a.signer,
        "typed_data": typed_data,
        "expires_at": rfc3339_s(a.deadline),
        "signature": a.signature,
        "authorized_at": a.authorized_at.map(rfc3339_ms),
    })
}

/// The `authorization` member of a mandate or payment whose payer is a bank account: the
/// bank mandate is the consent, and the treasury funds the chain side.
pub fn bank_mandate_view() -> Value {
    json!({ "method": "bank_mandate" })
}

/// The `authorization` member for `a` of `message` on `net`'s verifying contract.
pub fn view_of<M: TypedMessage>(
    a: &Authorization,
    message: &M,
    net: &Network,
    verifier: Address,
) -> Value {
    view(a, message.typed_data(net.chain_id, verifier))
}

/// Checks `signature` (0x hex) by `signer` over `digest` (see
/// [`openrail_engine::consent::verify`]). Returns the signature's bytes, or 422
/// `signature_invalid` saying why.
pub async fn verify(
    net: &Network,
    signer: Address,
    digest: B256,
    signature: &str,
) -> Result<Bytes, ApiError> {
    openrail_engine::consent::verify(net, signer, digest, signature)
        .await?
        .map_err(|why| declined(DeclineReason::SignatureInvalid, why))
}

/// 422 `authorization_expired` when `deadline` (unix seconds) is before `now_ms`.
pub fn not_expired(deadline: i64, now_ms: i64) -> Result<(), ApiError> {
    if now_ms / 1000 > deadline {
        Err(declined(
            DeclineReason::AuthorizationExpired,
            format!("the authorization expired at {}", rfc3339_s(deadline)),
        ))
    } else {
        Ok(())
    }
}
