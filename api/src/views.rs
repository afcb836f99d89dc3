//! The renderings of the resources as their API types ([`crate::types`]). Amounts are
//! exact decimals in major units, times are RFC 3339 UTC.

pub use crate::rfc3339::{rfc3339_ms, rfc3339_s};
use crate::types::{self, Money, SessionKeyStatus};
use openrail_store::Currency;
use openrail_store::agentic::{DebitPull, EpochUse, KeyStatus, Mandate, SessionKey};
use openrail_store::bank::BankTransfer;
use openrail_store::payments::Payment;
use openrail_store::webhooks::{Delivery, WebhookEndpoint};

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
        onchain: types::OnChainTx {
            chain_id,
            tx_hash: p.tx_hash.clone(),
        },
    }
}

/// A payment's fields (its `authorization` is [`crate::represent`]'s).
pub fn payment(p: &Payment) -> types::Payment {
    types::Payment {
        id: p.id.to_string(),
        object: types::PaymentTag,
        livemode: p.mode.livemode(),
        created_at: rfc3339_ms(p.created_at),
        amount: Money::of(p.amount, p.currency),
        currency: p.currency.code(),
        source: types::PaymentSourceView {
            kind: p.source_type.as_str(),
            id: p.source_id.clone(),
        },
        destination: types::PaymentDestinationView {
            kind: p.destination_type.as_str(),
            address: p.destination_address.clone(),
        },
        status: p.status.as_str(),
        failure_reason: p.failure_reason.map(|r| r.as_str()),
        refund_status: p.refund_status.map(|r| r.as_str()),
        onchain: types::OnChainTx {
            chain_id: p.chain_id,
            tx_hash: p.tx_hash.clone(),
        },
        authorization: None,
    }
}

/// A bank transfer as the API shows it.
pub fn transfer(t: &BankTransfer, currency: Currency) -> types::BankTransfer {
    types::BankTransfer {
        id: t.id.to_string(),
        object: types::BankTransferTag,
        bank_account_id: t.bank_account_id.to_string(),
        direction: t.direction.as_str(),
        amount: Money::of(t.amount, currency),
        status: t.status.as_str(),
        failure_reason: t.failure_reason.map(|r| r.as_str()),
        created_at: rfc3339_ms(t.created_at),
        updated_at: rfc3339_ms(t.updated_at),
    }
}

/// A webhook endpoint (never its secret; creation and rotation add `secret` once).
pub fn webhook_endpoint(e: &WebhookEndpoint) -> types::WebhookEndpoint {
    types::WebhookEndpoint {
        id: e.id.to_string(),
        object: types::WebhookEndpointTag,
        livemode: e.mode.livemode(),
        created_at: rfc3339_ms(e.created_at),
        url: e.url.clone(),
        description: e.description.clone(),
        enabled_events: e.enabled_events.names(),
        status: e.status.as_str(),
        disabled_reason: e.disabled_reason.clone(),
        failing_since: e.failing_since.map(rfc3339_ms),
        previous_secret_expires_at: e.previous_secret_expires_at.map(rfc3339_ms),
        secret: None,
        secret_redacted: None,
    }
}

/// One delivery of an event to an endpoint, with its last attempt.
pub fn webhook_delivery(d: &Delivery) -> types::WebhookDelivery {
    types::WebhookDelivery {
        id: d.id.to_string(),
        object: types::WebhookDeliveryTag,
        endpoint_id: d.endpoint_id.to_string(),
        event_id: d.event_id.to_string(),
        redelivery: d.redelivery,
        status: d.status.as_str(),
        attempts: d.attempts,
        last_status_code: d.last_status_code,
        last_error: d.last_error.clone(),
        latency_ms: d.last_latency_ms,
        last_attempt_at: d.last_attempt_at.map(rfc3339_ms),
        next_attempt_at: d.next_attempt_at.map(rfc3339_ms),
        created_at: rfc3339_ms(d.created_at),
    }
}

/// A session as the API shows it.
pub(crate) fn identity_verification(
    v: &openrail_store::verifications::Verification,
) -> types::IdentityVerification {
    types::IdentityVerification {
        id: v.id.to_string(),
        object: types::IdentityVerificationTag,
        livemode: v.mode.livemode(),
        created_at: rfc3339_ms(v.created_at),
        kind: v.kind.as_str(),
        credential_type: v.kind.credential_type(),
        subject: v.subject.clone(),
        status: v.status.as_str(),
        last_error: v.last_error.as_ref().map(|e| types::VerificationError {
            code: e.code.clone(),
            reason: e.reason.clone(),
        }),
        credential_id: v.credential_id.clone(),
        simulate: types::VerificationSimulation {
            outcome: v.scenario.as_str(),
            failure_reason: v.failure_reason.clone(),
        },
    }
}

/// An identity attestation at `now` (`expired` once its expiry passed).
pub fn attestation(
    a: &openrail_store::attestations::Attestation,
    now: i64,
) -> types::IdentityAttestation {
    types::IdentityAttestation {
        id: a.id.to_string(),
        object: types::IdentityAttestationTag,
        status: a.status_at(now),
        recipient: a.recipient.clone(),
        credential_id: a.credential_id.clone(),
        credential_digest: a.credential_digest.clone(),
        issuer: a.issuer.clone(),
        credential_type: a.credential_type.clone(),
        expires_at: a.expires_at.map(rfc3339_ms),
        status_list_credential: a.status_list_credential.clone(),
        status_list_index: a.status_list_index,
        chain_id: a.chain_id,
        registry: a.registry.clone(),
        schema: a.schema_uid.clone(),
        uid: a.uid.clone(),
        tx_hash: a.tx_hash.clone(),
        revoked_at: a.revoked_at.map(rfc3339_ms),
        settlement_recorded: a.mirrored_sequence.is_some(),
        livemode: a.mode.livemode(),
        created_at: rfc3339_ms(a.created_at),
        updated_at: rfc3339_ms(a.updated_at),
    }
}
