//! What a payer signs: the EIP-712 messages of a mandate and of a payment, built from their
//! rows (the request that asks for the signature and the engine that sends it build the
//! same), and the nonces they carry.

use alloy::primitives::{Address, U256};
use openrail_chain::consent as c;
use openrail_store::consent::Authorization;
use openrail_store::payments::Payment;

use crate::network::Network;

/// What the wallet `signer` is asked to sign for object `object_id` at `now` (unix ms):
/// a fresh nonce, valid for `ttl`, not signed yet.
pub fn ask(object_id: &str, signer: &str, ttl: std::time::Duration, now: i64) -> Authorization {
    Authorization {
        object_id: object_id.to_string(),
        signer: signer.to_string(),
        nonce: new_nonce().to_string(),
        deadline: now / 1000 + i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX / 2),
        signature: None,
        authorized_at: None,
    }
}

/// A fresh unordered nonce: 64 random bits.
pub fn new_nonce() -> U256 {
    U256::from(rand::random::<u64>())
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
    let requirements = crate::identity::onchain(m.requirements.as_ref())?;
    Some(c::Mandate {
        mandateId: m.onchain_id.parse().ok()?,
        payer: m.payer_address.parse().ok()?,
        token: *net.tokens.get(&m.currency)?,
        maxAmount: openrail_chain::token_units(m.max_amount, m.currency),
        interval: m.interval.onchain(),
        payees: m
            .payees
            .iter()
            .map(|p| p.parse().ok())
            .collect::<Option<Vec<Address>>>()?,
        agent: match &m.agent {
            Some(a) => a.parse().ok()?,
            None => Address::ZERO,
        },
        purpose: m.purpose.clone().unwrap_or_default(),
        identityAttester: requirements.attester,
        payerSchema: requirements.payerSchema,
        agentSchema: requirements.agentSchema,
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

/// Checks `signature` (0x hex) by `signer` over `digest`: ECDSA like the contracts (65
/// bytes, low `s`), else a contract wallet's ERC-1271 answer (an `eth_call`, the outer
/// error when the chain cannot be asked). Returns the signature's bytes, or why it is
/// invalid.
pub async fn verify(
    net: &Network,
    signer: Address,
    digest: alloy::primitives::B256,
    signature: &str,
) -> Result<Result<alloy::primitives::Bytes, String>, openrail_chain::ChainError> {
    let bytes = match c::parse_signature(signature) {
        Ok(b) => b,
        Err(e) => return Ok(Err(e.to_string())),
    };
    match c::check_ecdsa(digest, &bytes, signer) {
        Ok(()) => Ok(Ok(bytes)),
        // Not the signer's ECDSA signature: a contract wallet may still accept it.
        Err(e) => {
            if c::erc1271_valid(&net.reader, signer, digest, bytes.clone()).await? {
                Ok(Ok(bytes))
            } else {
                Ok(Err(e.to_string()))
            }
        }
    }
}

/// Checks the `signature` a payer gives for object `a.object_id` at `now`: the
/// authorization not expired, the signature the signer's over `digest` (see [`verify`]).
/// Returns it as 0x hex.
pub async fn check_given(
    net: &Network,
    a: &Authorization,
    signer: Address,
    digest: alloy::primitives::B256,
    signature: &str,
    now: i64,
) -> Result<String, crate::service::ServiceError> {
    not_expired(a.deadline, now)?;
    signed_by(net, signer, digest, signature).await
}

/// `authorization_expired` when `deadline` (unix seconds) is before `now` (unix ms).
pub fn not_expired(deadline: i64, now: i64) -> Result<(), crate::service::ServiceError> {
    if now / 1000 > deadline {
        Err(crate::service::ServiceError::AuthorizationExpired { deadline })
    } else {
        Ok(())
    }
}

/// `signature` when it is `signer`'s over `digest` (see [`verify`]), as 0x hex; else
/// declined `signature_invalid`, saying why.
pub async fn signed_by(
    net: &Network,
    signer: Address,
    digest: alloy::primitives::B256,
    signature: &str,
) -> Result<String, crate::service::ServiceError> {
    let bytes = verify(net, signer, digest, signature)
        .await?
        .map_err(|detail| crate::service::ServiceError::Declined {
            reason: openrail_store::agentic::DeclineReason::SignatureInvalid,
            detail,
        })?;
    Ok(bytes.to_string())
}

/// Writes an object (`insert`) that may wait for its payer's signature. When `asking`
/// (an authorization is written with it), nothing is sent until the payer signs: `None`.
/// Otherwise the object is written with its work: a waiter for the engine's steps on
/// `intent`, listening since before the write.
pub(crate) async fn write_asking<'a, F, Fut>(
    net: &'a Network,
    intent: openrail_domain::journal::Intent,
    asking: bool,
    insert: F,
) -> Result<Option<crate::Waiter<'a>>, crate::service::ServiceError>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<(), openrail_store::StoreError>>,
{
    let waiter = (!asking).then(|| crate::waiter(net, intent));
    insert().await?;
    Ok(waiter)
}
