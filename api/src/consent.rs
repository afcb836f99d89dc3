//! Payer and agent consent in the API: the authorization a wallet payer is asked for (typed
//! data for `eth_signTypedData_v4`, a deadline), the check of the signature it sends back
//! before anything is sent (ECDSA like the contracts, or ERC-1271 through an `eth_call`),
//! and the view of both. The chain checks every signature again; these checks only keep a
//! bad one from costing a transaction.

use alloy::primitives::{Address, B256, Bytes, U256};
use openrail_chain::consent::{self as c, TypedMessage};
use openrail_store::consent::Authorization;
use openrail_store::payments::Payment;
use serde_json::{Value, json};

use crate::error::{ApiError, DeclineReason};
use crate::network::Network;
use crate::views::{rfc3339_ms, rfc3339_s};

/// A fresh unordered nonce: 64 random bits.
pub fn new_nonce() -> U256 {
    U256::from(rand::random::<u64>())
}

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

fn nonce_of(a: &Authorization) -> Option<U256> {
    U256::from_str_radix(&a.nonce, 10).ok()
}

/// The `Mandate` message a payer signs for mandate `m`.
pub fn mandate_message(
    m: &openrail_store::agentic::Mandate,
    net: &Network,
    a: &Authorization,
) -> Option<c::Mandate> {
    Some(c::Mandate {
        mandateId: m.onchain_id.parse().ok()?,
        payer: m.payer_address.parse().ok()?,
        token: *net.tokens.get(&m.currency)?,
        maxAmount: openrail_chain::token_units(m.max_amount, m.currency),
        interval: m.interval.onchain(),
        nonce: nonce_of(a)?,
        deadline: U256::from(u64::try_from(a.deadline).ok()?),
    })
}

/// Where a payment's source leg pays: its destination wallet, or the treasury when the
/// destination is a bank account.
pub fn payment_recipient(p: &Payment, net: &Network) -> Option<Address> {
    if p.destination_type == openrail_store::payments::PartyKind::BankAccount {
        Some(net.treasury)
    } else {
        p.destination_address.parse().ok()
    }
}

/// The `Payment` message a wallet source signs for payment `p`.
pub fn payment_message(p: &Payment, net: &Network, a: &Authorization) -> Option<c::Payment> {
    Some(c::Payment {
        token: *net.tokens.get(&p.currency)?,
        from: p.source_id.parse().ok()?,
        to: payment_recipient(p, net)?,
        amount: openrail_chain::token_units(p.amount, p.currency),
        nonce: nonce_of(a)?,
        deadline: U256::from(u64::try_from(a.deadline).ok()?),
    })
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

/// Checks `signature` (0x hex) by `signer` over `digest`: ECDSA like the contracts (65
/// bytes, low `s`), else a contract wallet's ERC-1271 answer. Returns the signature's bytes,
/// or 422 `signature_invalid` saying why.
pub async fn verify(
    net: &Network,
    signer: Address,
    digest: B256,
    signature: &str,
) -> Result<Bytes, ApiError> {
    let bytes = match c::parse_signature(signature) {
        Ok(b) => b,
        Err(e) => return Err(declined(DeclineReason::SignatureInvalid, e.to_string())),
    };
    match c::check_ecdsa(digest, &bytes, signer) {
        Ok(()) => Ok(bytes),
        // Not the signer's ECDSA signature: a contract wallet may still accept it.
        Err(e) => {
            if c::erc1271_valid(&net.reader, signer, digest, bytes.clone()).await? {
                Ok(bytes)
            } else {
                Err(declined(DeclineReason::SignatureInvalid, e.to_string()))
            }
        }
    }
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
