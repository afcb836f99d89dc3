//! The attestation registry (chain B) and its mirror (chain A) as deployed by the devnet:
//! the operator attests on the registry, its log becomes an attester-signed receipt
//! (`openrail_chain::attestations`) that anyone records on the mirror, and the mirror's view
//! follows: valid, then revoked for good, and an older receipt submitted late is refused.

use alloy::primitives::{Address, Bytes, keccak256};
use alloy::rpc::types::TransactionReceipt;
use openrail_chain::attestations::{
    self, AttestationReceipt, RegistryLog, decode_registry_log, receipt_of_log, receipt_sequence,
};
use openrail_chain::bindings::AttestationMirror::AttestationMirrorErrors as MirrorError;
use openrail_chain::bindings::{AttestationMirror, AttestationRegistry};
use openrail_chain::deploy::{mined, signer_provider};
use openrail_chain::devnet::{dev_operator, dev_spare};
use openrail_tests::Harness;

/// The receipt of the registry log in `tx` (the one slot change it made), with its sequence
/// from the log's position on the attestation chain.
fn receipt_of(registry: Address, tx: &TransactionReceipt) -> AttestationReceipt {
    tx.inner
        .logs()
        .iter()
        .find_map(|l| {
            let decoded = decode_registry_log(registry, &l.inner)?;
            let sequence = receipt_sequence(l.block_number?, l.log_index?)?;
            receipt_of_log(&decoded, sequence)
        })
        .expect("the transaction changed a slot")
}

#[tokio::test]
async fn an_attestation_reaches_the_settlement_chain_by_a_signed_receipt() -> anyhow::Result<()> {
    let h = Harness::chains_only().await?;
    let (a, b) = (
        &h.devnet.manifest.settlement,
        &h.devnet.manifest.attestation,
    );
    let registry_addr = b
        .attestation_registry
        .expect("the attestation chain has a registry");
    let mirror_addr = a
        .attestation_mirror
        .expect("the settlement chain has a mirror");
    let attester = dev_operator();
    let subject = Address::repeat_byte(0x5e);

    // Chain B: a schema, then the operator's attestation about the subject.
    let on_b = signer_provider(h.devnet.attestation.rpc_url(), attester.clone())?;
    let registry = AttestationRegistry::new(registry_addr, &on_b);
    let definition = "bytes32 credentialDigest,uint8 kind".to_string();
    let schema = registry
        .registerSchema(definition.clone(), Address::ZERO, true)
        .call()
        .await?;
    mined(
        registry
            .registerSchema(definition, Address::ZERO, true)
            .send()
            .await?,
    )
    .await?;
    let call = attestations::attest_call(
        schema,
        subject,
        0,
        true,
        Default::default(),
        Bytes::from(keccak256("credential").to_vec()),
    );
    let attested = mined(registry.attest(call.request).send().await?).await?;
    let receipt = receipt_of(registry_addr, &attested);
    assert!(matches!(
        decode_registry_log(registry_addr, &attested.inner.logs()[0].inner),
        Some(RegistryLog::Attested(ref e)) if e.latest && e.attester == attester.address()
    ));
    assert!(
        registry
            .isValid(attester.address(), subject, schema)
            .call()
            .await?
    );

    // Chain A: anyone submits the operator's signed receipt; the mirror now says valid.
    let on_a = signer_provider(h.devnet.settlement.rpc_url(), dev_spare())?;
    let mirror = AttestationMirror::new(mirror_addr, &on_a);
    assert!(mirror.isTrusted(attester.address()).call().await?);
    assert!(
        !mirror
            .isValid(attester.address(), subject, schema)
            .call()
            .await?
    );
    let sig = attestations::sign_receipt(&attester, &receipt, a.chain_id, mirror_addr).await?;
    assert_eq!(
        mirror
            .hashReceipt(attestations::record_call(&receipt, sig.clone()).receipt)
            .call()
            .await?,
        attestations::receipt_digest(&receipt, a.chain_id, mirror_addr)
    );
    let first = attestations::record_call(&receipt, sig);
    mined(
        mirror
            .record(first.receipt.clone(), first.signature.clone())
            .send()
            .await?,
    )
    .await?;
    assert!(
        mirror
            .isValid(attester.address(), subject, schema)
            .call()
            .await?
    );

    // Chain B revokes; its receipt makes the mirror's slot invalid.
    let revoked = mined(registry.revoke(schema, receipt.uid).send().await?).await?;
    let revocation = receipt_of(registry_addr, &revoked);
    assert!(revocation.revoked && revocation.sequence > receipt.sequence);
    let sig = attestations::sign_receipt(&attester, &revocation, a.chain_id, mirror_addr).await?;
    let call = attestations::record_call(&revocation, sig);
    mined(mirror.record(call.receipt, call.signature).send().await?).await?;
    assert!(
        !mirror
            .isValid(attester.address(), subject, schema)
            .call()
            .await?
    );

    // The first receipt, submitted again late, is refused: the slot never moves back.
    let err = mirror
        .record(first.receipt, first.signature)
        .send()
        .await
        .expect_err("an older receipt");
    match err.as_decoded_interface_error::<MirrorError>() {
        Some(MirrorError::StaleReceipt(e)) => {
            assert_eq!(
                (e.sequence, e.current),
                (receipt.sequence, revocation.sequence)
            )
        }
        other => panic!("expected StaleReceipt, got {other:?} ({err})"),
    }
    assert!(
        !mirror
            .isValid(attester.address(), subject, schema)
            .call()
            .await?
    );
    Ok(())
}
