//! Identity attestations on the attestation chain: the engine's side. `attest` work sends
//! the registry's `attest` for a pending attestation, built from its row (so a request and
//! a takeover after a crash send the same); its journaled fate moves the attestation
//! (`active`/`failed`, `openrail_store::journal::apply_fates_in`), and the engine then
//! reads the receipt's `Attested` log for the on-chain uid. `revoke_attestation` work sends
//! `revoke(schema, uid)` once the attestation is on chain (a pending one waits), and its
//! fate moves it to `revoked`.
//!
//! The attester is the attestation chain's operator (the submitter's key): issuers never
//! share a slot, and the registry's slot of (operator, wallet, schema) moves only forward.

use alloy::primitives::{Address, B256, Bytes};
use alloy::providers::Provider;
use alloy::sol_types::SolCall;
use openrail_chain::attestations::{
    attest_call, attested_uid, credential_data, credential_schema_uid, revoke_call,
    typed_credential_data,
};
use openrail_domain::journal::Intent;
use openrail_domain::{AttestationId, AttestationWork};
use openrail_store::attestations::{Attestation, AttestationStatus};
use openrail_store::outbox::Work;
use openrail_store::{Store, now_ms};

use crate::network::Network;
use crate::{Left, Next, Sent, corrupt, logged, send};

/// The `attest` call of attestation `a`, from its row; `None` when the row makes no usable
/// call (never written so).
pub(crate) fn attest_input(a: &Attestation) -> Option<Bytes> {
    let recipient: Address = a.recipient.parse().ok()?;
    let schema: B256 = a.schema_uid.parse().ok()?;
    let digest: B256 = format!("0x{}", a.credential_digest).parse().ok()?;
    let list = a.status_list_credential.as_deref().unwrap_or("");
    let index = a.status_list_index.unwrap_or(0);
    let data = if schema == credential_schema_uid() {
        credential_data(digest, &a.credential_type, list, index)
    } else {
        typed_credential_data(digest, list, index)
    };
    let expiration = a.expires_at.map_or(0, |ms| (ms / 1000).max(1) as u64);
    let call = attest_call(schema, recipient, expiration, true, B256::ZERO, data);
    Some(call.abi_encode().into())
}

/// Runs an attestation's work to its next resting point: its `attest`, its revoke (once
/// it is on chain), or the record of its receipt in the settlement chain's mirror.
pub(crate) async fn run(
    store: &Store,
    net: &Network,
    kind: AttestationWork,
    w: &Work,
) -> Result<Next, Left> {
    let Intent::Attestation(id) = &w.intent else {
        return Ok(corrupt(w));
    };
    let revoke = match kind {
        AttestationWork::Attest => false,
        AttestationWork::RevokeAttestation => true,
        AttestationWork::MirrorAttested | AttestationWork::MirrorRevoked => {
            return mirror(store, net, id, w).await;
        }
    };
    let a = store
        .attestations()
        .get_unscoped(id)
        .await
        .map_err(logged(w))?;
    if !revoke {
        if a.status != AttestationStatus::Pending {
            return Ok(Next::Close);
        }
        if send(store, net, net.registry(), attest_input(&a), w).await? == Sent::Unsent {
            store
                .attestations()
                .fail_unsent(id, now_ms())
                .await
                .map_err(logged(w))?;
            return Ok(Next::Close);
        }
        // Its fate is recorded: on success, the uid from the receipt.
        let a = store
            .attestations()
            .get_unscoped(id)
            .await
            .map_err(logged(w))?;
        if a.status == AttestationStatus::Active {
            uid_of(store, net, &a, false).await;
        }
        return Ok(Next::Close);
    }
    match a.status {
        // Revoked already, or never on chain: nothing to revoke.
        AttestationStatus::Revoked | AttestationStatus::Failed => Ok(Next::Close),
        // Revoked once it is on chain.
        AttestationStatus::Pending => Ok(Next::Later),
        AttestationStatus::Active => {
            // Read from the receipt again: a reorganisation that mined the same `attest` in
            // another block changed its uid (the registry's uid includes the block's time).
            let Some(uid) = uid_of(store, net, &a, true).await else {
                return Ok(Next::Later);
            };
            let input = a
                .schema_uid
                .parse::<B256>()
                .ok()
                .map(|schema| revoke_call(schema, uid).abi_encode().into());
            // Its fate, applied as the journal records it, revokes the attestation; a
            // revoke that failed changed nothing.
            send(store, net, net.registry(), input, w).await?;
            Ok(Next::Close)
        }
    }
}

/// Sends the receipt the attestation chain's operator signed for attestation `id` to the
/// settlement chain's mirror; none is left to record when the mirror has it (or a later
/// one) already. Its fate, applied as the journal records it, marks the receipt recorded;
/// a receipt the mirror refused (a later one was there first) changes nothing.
async fn mirror(store: &Store, net: &Network, id: &AttestationId, w: &Work) -> Result<Next, Left> {
    let Some(json) = store
        .attestations()
        .receipt_to_record(id.as_str())
        .await
        .map_err(logged(w))?
    else {
        return Ok(Next::Close);
    };
    let call = openrail_chain::attestations::SignedReceipt::from_json(&json)
        .map(|r| r.record_call().abi_encode().into());
    send(store, net, net.mirror(), call, w).await?;
    Ok(Next::Close)
}

/// The on-chain uid of active attestation `a`: its row's (unless `fresh`), else read from
/// its `attest` transaction's receipt and recorded when it differs. `None` (logged) when it
/// cannot be read now.
async fn uid_of(store: &Store, net: &Network, a: &Attestation, fresh: bool) -> Option<B256> {
    let stored: Option<B256> = a.uid.as_deref().and_then(|u| u.parse().ok());
    if let (Some(uid), false) = (stored, fresh) {
        return Some(uid);
    }
    let hash: B256 = a.tx_hash.as_deref()?.parse().ok()?;
    let registry = net.registry().ok()?;
    let receipt = match net.reader.get_transaction_receipt(hash).await {
        Ok(Some(r)) => r,
        Ok(None) => {
            tracing::warn!(attestation = %a.id, tx = %hash, "attest receipt not found");
            return None;
        }
        Err(e) => {
            tracing::warn!(attestation = %a.id, tx = %hash, error = %e, "reading the attest receipt failed");
            return None;
        }
    };
    let uid = attested_uid(registry, receipt.inner.logs().iter().map(|l| &l.inner))?;
    if stored == Some(uid) {
        return Some(uid);
    }
    if let Err(e) = store
        .attestations()
        .record_uid(&a.id, &uid.to_string())
        .await
    {
        tracing::error!(attestation = %a.id, error = %e, "recording the attestation uid failed");
    }
    Some(uid)
}

/// The registry schema every Openrail credential attestation uses.
pub fn schema_uid() -> B256 {
    credential_schema_uid()
}

/// Relays the receipts of this attestation chain's attestations to its mode's settlement
/// chain (run by its engine while it holds the lease): for each attestation whose next
/// step (its `attest`, its `revoke`) is final here and not yet relayed, the registry log
/// its transaction left becomes an `AttestationReceipt` (sequence: the log's position on
/// this chain), signed by the operator (the attester), stored with `mirror_*` work for the
/// settlement chain's engine, which records it in the mirror. A log that left the slot as
/// it was (an older attestation beside a newer one) needs no receipt. Whatever fails here
/// (an RPC, a read) is tried again at the next pass: the rows say what is left.
pub(crate) async fn relay(store: &Store, net: &Network) {
    use openrail_chain::attestations::{
        SignedReceipt, receipt_of_log, receipt_sequence, registry_log_of,
    };
    use openrail_store::attestations::RelayStep;
    use openrail_store::journal::TxKind;
    let (Some((settlement_chain, mirror)), Some(submitter), Ok(registry)) =
        (net.settlement_mirror, net.submitter(), net.registry())
    else {
        return;
    };
    // Only the schemas a mandate can require: the settlement chain needs no other.
    let schemas: Vec<String> = openrail_chain::attestations::TYPED_SCHEMAS
        .iter()
        .map(|(_, s)| openrail_chain::attestations::schema_uid(s).to_string())
        .collect();
    let todo = match store
        .attestations()
        .to_relay(net.chain_id, &schemas, 50)
        .await
    {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(chain_id = net.chain_id, error = %e, "reading attestations to relay failed");
            return;
        }
    };
    for (a, step) in todo {
        let Some(uid) = a.uid.as_deref().and_then(|u| u.parse::<B256>().ok()) else {
            continue;
        };
        let hash = match step {
            RelayStep::Attested => a.tx_hash.clone(),
            RelayStep::Revoked => {
                match store
                    .outbox()
                    .succeeded_tx(
                        &Intent::Attestation(a.id.clone()),
                        TxKind::RevokeAttestation,
                    )
                    .await
                {
                    Ok(h) => h,
                    Err(e) => {
                        tracing::warn!(attestation = %a.id, error = %e, "reading the revoke transaction failed");
                        continue;
                    }
                }
            }
        };
        let Some(hash) = hash.and_then(|h| h.parse::<B256>().ok()) else {
            tracing::warn!(attestation = %a.id, "no transaction to relay the attestation's receipt from");
            continue;
        };
        let receipt = match net.reader.get_transaction_receipt(hash).await {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => {
                tracing::warn!(attestation = %a.id, tx = %hash, error = %e, "reading a receipt to relay failed");
                continue;
            }
        };
        let logs = receipt
            .inner
            .logs()
            .iter()
            .map(|l| (&l.inner, l.block_number, l.log_index));
        let revoked = step == RelayStep::Revoked;
        let Some((log, Some(block), Some(index))) = registry_log_of(registry, uid, revoked, logs)
        else {
            tracing::warn!(attestation = %a.id, tx = %hash, "the transaction has no registry log of the attestation (yet)");
            continue;
        };
        let Some(sequence) = receipt_sequence(block, index) else {
            tracing::error!(attestation = %a.id, block, index, "registry log position out of range");
            continue;
        };
        let signed = match receipt_of_log(&log, sequence) {
            // Attested by another key (the operator key was rotated since): only that key
            // can sign its receipt. Marked relayed, without one, rather than retried forever.
            Some(r) if r.attester != submitter.operator() => {
                tracing::warn!(attestation = %a.id, attester = %r.attester, "attested by another operator key; its receipt cannot be signed here and is not relayed");
                None
            }
            Some(r) => match submitter.sign_receipt(&r, settlement_chain, mirror).await {
                Ok(signature) => Some(SignedReceipt::new(&r, signature)),
                Err(e) => {
                    tracing::error!(attestation = %a.id, error = %e, "signing the attestation receipt failed");
                    continue;
                }
            },
            None => None,
        };
        let json = signed.as_ref().map(|s| (s.to_json(), s.sequence));
        let queued = store
            .attestations()
            .queue_receipt(
                &a.id,
                step,
                json.as_ref().map(|(j, s)| (j.as_str(), *s)),
                settlement_chain,
                now_ms(),
            )
            .await;
        match queued {
            Ok(true) => {
                tracing::info!(attestation = %a.id, ?step, sequence, relayed = signed.is_some(), "attestation receipt queued for the settlement chain");
            }
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(attestation = %a.id, error = %e, "queueing the attestation receipt failed");
            }
        }
    }
}
