//! The renderings of mandates, session keys and debit pulls as their API types
//! ([`super::types`]). Amounts are exact decimals in major units, times are RFC 3339 UTC.

use super::types::{self, SessionKeyStatus};
use crate::rfc3339::{rfc3339_ms, rfc3339_s};
use crate::types::{Money, OnChainTx};
use openrail_store::Currency;
use openrail_store::agentic::{DebitPull, EpochUse, KeyStatus, Mandate, SessionKey};

/// The current epoch of a mandate or key as the API shows it.
fn epoch(e: EpochUse, currency: Currency) -> types::Epoch {
    types::Epoch {
        starts_at: rfc3339_s(e.starts_at),
        ends_at: rfc3339_s(e.ends_at),
        spent: Money::of(e.spent, currency),
        remaining: Money::of(e.remaining, currency),
    }
}

/// A mandate (its `authorization` is [`crate::represent`]'s).
pub fn mandate(m: &Mandate, e: EpochUse) -> types::Mandate {
    types::Mandate {
        id: m.id.to_string(),
        object: types::MandateTag,
        livemode: m.mode.livemode(),
        created_at: rfc3339_ms(m.created_at),
        payer_account_id: m.payer_account_id.clone(),
        max_amount: Money::of(m.max_amount, m.currency),
        currency: m.currency.code(),
        interval: m.interval.as_str(),
        purpose: m.purpose.clone(),
        payees: m.payees.clone(),
        agent: m.agent.clone(),
        requirements: m
            .requirements
            .as_ref()
            .map(|r| types::MandateRequirementsView {
                payer: r.payer.map(|k| k.as_str()),
                agent: r.agent.map(|k| k.as_str()),
                attester: r.attester.clone(),
            }),
        status: m.status.as_str(),
        current_epoch: epoch(e, m.currency),
        onchain: types::OnChainObject {
            chain_id: m.chain_id,
            contract: m.contract.clone(),
            id: m.onchain_id.clone(),
            tx_hash: m.tx_hash.clone(),
        },
        authorization: None,
    }
}

/// A key's status as shown: `expired` the moment its time passes.
pub fn key_status(k: &SessionKey, now_ms: i64) -> SessionKeyStatus {
    match k.status {
        KeyStatus::Revoked => SessionKeyStatus::Revoked,
        KeyStatus::Failed => SessionKeyStatus::Failed,
        KeyStatus::Pending => SessionKeyStatus::Pending,
        KeyStatus::Active if now_ms >= k.expires_at => SessionKeyStatus::Expired,
        KeyStatus::Active => SessionKeyStatus::Active,
    }
}

/// A session key (its `signer` domain is [`crate::represent`]'s).
pub fn session_key(
    k: &SessionKey,
    m: &Mandate,
    e: EpochUse,
    contract: &str,
    now_ms: i64,
) -> types::SessionKey {
    types::SessionKey {
        id: k.id.to_string(),
        object: types::SessionKeyTag,
        livemode: k.mode.livemode(),
        created_at: rfc3339_ms(k.created_at),
        mandate_id: k.mandate_id.to_string(),
        status: key_status(k, now_ms),
        expires_at: rfc3339_ms(k.expires_at),
        max_amount: k.max_amount.map(|a| Money::of(a, m.currency)),
        currency: m.currency.code(),
        allowed_destinations: k.allowed_destinations.clone(),
        current_epoch: epoch(e, m.currency),
        onchain: types::OnChainObject {
            chain_id: m.chain_id,
            contract: contract.to_string(),
            id: k.onchain_id.clone(),
            tx_hash: k.tx_hash.clone(),
        },
        signer: k.signer.clone(),
        eip712_domain: None,
        secret: None,
        secret_redacted: None,
    }
}

/// A debit pull.
pub fn pull(p: &DebitPull, chain_id: u64) -> types::DebitPull {
    types::DebitPull {
        id: p.id.to_string(),
        object: types::DebitPullTag,
        livemode: p.mode.livemode(),
        created_at: rfc3339_ms(p.created_at),
        session_key_id: p.session_key_id.to_string(),
        mandate_id: p.mandate_id.to_string(),
        amount: Money::of(p.amount, p.currency),
        currency: p.currency.code(),
        destination: p.destination.clone(),
        description: p.description.clone(),
        status: p.status.as_str(),
        decline_code: p.decline_code.map(|r| r.as_str()),
        failure_reason: p.failure_reason.map(|r| r.as_str()),
        authorized_at: p.authorized_at.map(rfc3339_ms),
        onchain: OnChainTx {
            chain_id,
            tx_hash: p.tx_hash.clone(),
        },
    }
}
