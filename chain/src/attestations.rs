//! Typed helpers for attestations: the `AttestationRegistry` on the attestation chain (build
//! an `attest` call, decode its `Attested`/`Revoked` logs) and the `AttestationMirror` on the
//! settlement chain (an attester-signed EIP-712 `AttestationReceipt` of a slot's state, and
//! the `record` call that carries it over).
//!
//! How the settlement chain learns of an attestation: the registry's log of a slot change
//! (`Attested` with `latest`, or `Revoked` with `latest`) becomes a [`AttestationReceipt`]
//! ([`receipt_of_log`]) whose `sequence` is the log's position on the attestation chain
//! ([`receipt_sequence`]), signed by the attester ([`sign_receipt`]) and submitted by anyone
//! ([`record_call`]). The mirror keeps, per (attester, recipient, schema), the receipt with
//! the highest sequence, so receipts may arrive late or twice without moving a slot back.
//! Sans-IO: nothing here sends.

use alloy::primitives::{Address, B256, Bytes, Log};
use alloy::signers::Signer;
use alloy::sol;
use alloy::sol_types::{Eip712Domain, SolEvent, SolStruct, eip712_domain};

use crate::ChainError;
use crate::bindings::{AttestationMirror, AttestationRegistry, IAttestationRegistry};

sol! {
    /// What an attester signs for the mirror (`AttestationMirror.RECEIPT_TYPEHASH`): the state
    /// of its slot (attester, recipient, schema) on the attestation chain.
    #[derive(Debug, PartialEq, Eq)]
    struct AttestationReceipt {
        address attester;
        address recipient;
        bytes32 schema;
        bytes32 uid;
        uint64 expirationTime;
        bool revoked;
        uint64 sequence;
    }
}

/// The EIP-712 domain of the mirror at `mirror` on chain `chain_id` (name `Openrail
/// AttestationMirror`, version `1`).
pub fn mirror_domain(chain_id: u64, mirror: Address) -> Eip712Domain {
    eip712_domain! {
        name: "Openrail AttestationMirror",
        version: "1",
        chain_id: chain_id,
        verifying_contract: mirror,
    }
}

/// The `attest` call of the registry: `recipient` holds `schema` (a registered schema's uid)
/// with `data` (Openrail: a credential's digest, type and status reference, never personal
/// data), until `expiration_time` (unix seconds; 0: never), revocable by its attester (the
/// sender) when `revocable`, referring to `ref_uid` (zero: nothing).
pub fn attest_call(
    schema: B256,
    recipient: Address,
    expiration_time: u64,
    revocable: bool,
    ref_uid: B256,
    data: Bytes,
) -> AttestationRegistry::attestCall {
    AttestationRegistry::attestCall {
        request: IAttestationRegistry::AttestationRequest {
            schema,
            recipient,
            expirationTime: expiration_time,
            revocable,
            refUID: ref_uid,
            data,
        },
    }
}

/// The `revoke` call of the registry (the sender must be the attestation's attester).
pub fn revoke_call(schema: B256, uid: B256) -> AttestationRegistry::revokeCall {
    AttestationRegistry::revokeCall { schema, uid }
}

/// A registry log this module understands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryLog {
    /// An attestation was recorded.
    Attested(AttestationRegistry::Attested),
    /// An attestation was revoked.
    Revoked(AttestationRegistry::Revoked),
}

/// Decodes an `Attested` or `Revoked` log of the registry at `registry`; `None` for another
/// contract's log, another event, or a log that does not decode.
pub fn decode_registry_log(registry: Address, log: &Log) -> Option<RegistryLog> {
    if log.address != registry {
        return None;
    }
    match log.topics().first()? {
        t if *t == AttestationRegistry::Attested::SIGNATURE_HASH => {
            AttestationRegistry::Attested::decode_log(log)
                .ok()
                .map(|l| RegistryLog::Attested(l.data))
        }
        t if *t == AttestationRegistry::Revoked::SIGNATURE_HASH => {
            AttestationRegistry::Revoked::decode_log(log)
                .ok()
                .map(|l| RegistryLog::Revoked(l.data))
        }
        _ => None,
    }
}

/// The `sequence` of a receipt for the registry log at (`block_number`, `log_index`) of the
/// attestation chain: `block_number << 24 | log_index`, so receipts order as the chain's
/// logs. `None` past 2^40 blocks or 2^24 logs in a block.
pub fn receipt_sequence(block_number: u64, log_index: u64) -> Option<u64> {
    (block_number < 1 << 40 && log_index < 1 << 24).then_some(block_number << 24 | log_index)
}

/// The receipt a registry log makes when it changed its slot: an `Attested` that took the
/// slot (a valid attestation), a `Revoked` of the slot's attestation (revoked, expiration 0).
/// `None` for a log that left the slot as it was (an older attestation stored beside a newer
/// one, the revocation of such an older one): the mirror must not hear of those.
pub fn receipt_of_log(log: &RegistryLog, sequence: u64) -> Option<AttestationReceipt> {
    match log {
        RegistryLog::Attested(e) if e.latest => Some(AttestationReceipt {
            attester: e.attester,
            recipient: e.recipient,
            schema: e.schema,
            uid: e.uid,
            expirationTime: e.expirationTime,
            revoked: false,
            sequence,
        }),
        RegistryLog::Revoked(e) if e.latest => Some(AttestationReceipt {
            attester: e.attester,
            recipient: e.recipient,
            schema: e.schema,
            uid: e.uid,
            expirationTime: 0,
            revoked: true,
            sequence,
        }),
        _ => None,
    }
}

/// The digest an attester signs for `receipt` and the mirror at `mirror` on `chain_id`
/// (what `AttestationMirror.hashReceipt` returns).
pub fn receipt_digest(receipt: &AttestationReceipt, chain_id: u64, mirror: Address) -> B256 {
    receipt.eip712_signing_hash(&mirror_domain(chain_id, mirror))
}

/// Signs `receipt` for the mirror at `mirror` on `chain_id` with any alloy signer (a local
/// key, a KMS, a hardware wallet), which must be the receipt's attester; returns the 65-byte
/// `r ‖ s ‖ v` signature `record` takes.
pub async fn sign_receipt<S: Signer + Sync + ?Sized>(
    signer: &S,
    receipt: &AttestationReceipt,
    chain_id: u64,
    mirror: Address,
) -> Result<Bytes, ChainError> {
    if signer.address() != receipt.attester {
        return Err(ChainError::Signing(format!(
            "the receipt's attester is {}, the signer {}",
            receipt.attester,
            signer.address()
        )));
    }
    let sig = signer
        .sign_hash(&receipt_digest(receipt, chain_id, mirror))
        .await
        .map_err(|e| ChainError::Signing(e.to_string()))?;
    Ok(Bytes::from(sig.as_bytes().to_vec()))
}

/// A receipt and its attester's signature, as stored until the mirror records it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignedReceipt {
    /// The attester (the signer).
    pub attester: Address,
    /// The wallet the attestation is about.
    pub recipient: Address,
    /// The schema.
    pub schema: B256,
    /// The attestation now in the slot.
    pub uid: B256,
    /// Its expiration (unix seconds, 0: never).
    pub expiration_time: u64,
    /// Whether it is revoked.
    pub revoked: bool,
    /// Its order ([`receipt_sequence`]).
    pub sequence: u64,
    /// The attester's EIP-712 signature for the mirror.
    pub signature: Bytes,
}

impl SignedReceipt {
    /// `receipt` with `signature`.
    pub fn new(receipt: &AttestationReceipt, signature: Bytes) -> Self {
        SignedReceipt {
            attester: receipt.attester,
            recipient: receipt.recipient,
            schema: receipt.schema,
            uid: receipt.uid,
            expiration_time: receipt.expirationTime,
            revoked: receipt.revoked,
            sequence: receipt.sequence,
            signature,
        }
    }

    /// The receipt signed.
    pub fn receipt(&self) -> AttestationReceipt {
        AttestationReceipt {
            attester: self.attester,
            recipient: self.recipient,
            schema: self.schema,
            uid: self.uid,
            expirationTime: self.expiration_time,
            revoked: self.revoked,
            sequence: self.sequence,
        }
    }

    /// As stored (JSON).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a receipt serializes")
    }

    /// From its stored JSON; `None` when it is not one.
    pub fn from_json(json: &str) -> Option<Self> {
        serde_json::from_str(json).ok()
    }

    /// The mirror's `record` call that carries it.
    pub fn record_call(&self) -> AttestationMirror::recordCall {
        record_call(&self.receipt(), self.signature.clone())
    }
}

/// The registry log of `registry` that transaction logs `logs` hold for attestation `uid`
/// (its `Attested` when `revoked` is false, its `Revoked` otherwise), with its position
/// (block number and log index) when the logs carry it.
pub fn registry_log_of<'a>(
    registry: Address,
    uid: B256,
    revoked: bool,
    logs: impl IntoIterator<Item = (&'a Log, Option<u64>, Option<u64>)>,
) -> Option<(RegistryLog, Option<u64>, Option<u64>)> {
    logs.into_iter().find_map(|(l, block, index)| {
        let log = decode_registry_log(registry, l)?;
        let matches = match &log {
            RegistryLog::Attested(e) => !revoked && e.uid == uid,
            RegistryLog::Revoked(e) => revoked && e.uid == uid,
        };
        matches.then_some((log, block, index))
    })
}

/// The mirror's `record` call for a signed `receipt`.
pub fn record_call(
    receipt: &AttestationReceipt,
    signature: Bytes,
) -> AttestationMirror::recordCall {
    AttestationMirror::recordCall {
        receipt: crate::bindings::IAttestationMirror::Receipt {
            attester: receipt.attester,
            recipient: receipt.recipient,
            schema: receipt.schema,
            uid: receipt.uid,
            expirationTime: receipt.expirationTime,
            revoked: receipt.revoked,
            sequence: receipt.sequence,
        },
        signature,
    }
}

/// The registry schema of Openrail's credential attestations: what an attestation's `data`
/// holds (ABI-encoded, [`credential_data`]) — the credential's digest, its type and its
/// revocation status reference; never its claims. Registered once per registry, without a
/// resolver and revocable, when the attestation chain is deployed (`deploy`, idempotent).
pub const CREDENTIAL_SCHEMA: &str = "bytes32 credentialDigest,string credentialType,string statusListCredential,uint256 statusListIndex";

/// The uid of [`CREDENTIAL_SCHEMA`] on any registry.
pub fn credential_schema_uid() -> B256 {
    schema_uid(CREDENTIAL_SCHEMA)
}

/// The uid of `schema` on any registry: `keccak256(schema ‖ resolver ‖ revocable)` with no
/// resolver and revocable, as `AttestationRegistry.registerSchema` computes it.
pub fn schema_uid(schema: &str) -> B256 {
    let mut packed = schema.as_bytes().to_vec();
    packed.extend_from_slice(Address::ZERO.as_slice());
    packed.push(1);
    alloy::primitives::keccak256(packed)
}

/// The registry schemas of the credential types Openrail issues, one per type: `(credential
/// type, schema)`. A registry slot is (attester, recipient, schema), so a wallet's
/// personhood and its agent credential each keep their own slot (under the generic
/// [`CREDENTIAL_SCHEMA`] a newer credential of any type would take the slot), and a mandate
/// can require one of them by its schema. Only credentials Openrail's own issuer signed are
/// attested under them (whether another issuer is trusted for a type is a policy Openrail
/// does not have); their `data` is [`typed_credential_data`]. Registered with the generic
/// one when the attestation chain is deployed.
pub const TYPED_SCHEMAS: [(&str, &str); 3] = [
    (
        "PersonhoodCredential",
        "bytes32 personhoodCredentialDigest,string statusListCredential,uint256 statusListIndex",
    ),
    (
        "FinancialHealthCredential",
        "bytes32 financialHealthCredentialDigest,string statusListCredential,uint256 statusListIndex",
    ),
    (
        "AgentCredential",
        "bytes32 agentCredentialDigest,string statusListCredential,uint256 statusListIndex",
    ),
];

/// The uid of the registry schema of credential type `credential_type`, when Openrail has
/// one ([`TYPED_SCHEMAS`]).
pub fn typed_schema_uid(credential_type: &str) -> Option<B256> {
    TYPED_SCHEMAS
        .iter()
        .find(|(t, _)| *t == credential_type)
        .map(|(_, schema)| schema_uid(schema))
}

/// The `data` of an attestation under one of [`TYPED_SCHEMAS`]: `abi.encode(digest,
/// statusListCredential, statusListIndex)`.
pub fn typed_credential_data(
    digest: B256,
    status_list_credential: &str,
    status_list_index: u64,
) -> Bytes {
    use alloy::sol_types::SolValue;
    (
        digest,
        status_list_credential.to_string(),
        alloy::primitives::U256::from(status_list_index),
    )
        .abi_encode_params()
        .into()
}

/// The `data` of a credential attestation under [`CREDENTIAL_SCHEMA`]: `abi.encode(digest,
/// credentialType, statusListCredential, statusListIndex)` (an empty reference and index 0
/// for a credential without a status entry).
pub fn credential_data(
    digest: B256,
    credential_type: &str,
    status_list_credential: &str,
    status_list_index: u64,
) -> Bytes {
    use alloy::sol_types::SolValue;
    (
        digest,
        credential_type.to_string(),
        status_list_credential.to_string(),
        alloy::primitives::U256::from(status_list_index),
    )
        .abi_encode_params()
        .into()
}

/// The uid of the attestation an `attest` transaction made, from its receipt's logs: the
/// `Attested` log of `registry`.
pub fn attested_uid<'a>(
    registry: Address,
    logs: impl IntoIterator<Item = &'a Log>,
) -> Option<B256> {
    logs.into_iter()
        .find_map(|l| match decode_registry_log(registry, l)? {
            RegistryLog::Attested(e) => Some(e.uid),
            RegistryLog::Revoked(_) => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::{LogData, address, b256};
    use alloy::signers::local::PrivateKeySigner;
    use alloy::sol_types::SolCall;

    /// The receipt of the forge test `MirrorRecordTest.test_record_success_digestOfTheRustFixture`
    /// (contracts/test/mirror/Record.t.sol), with its mirror address and chain id.
    fn fixture() -> AttestationReceipt {
        AttestationReceipt {
            attester: address!("0x1111111111111111111111111111111111111111"),
            recipient: address!("0x2222222222222222222222222222222222222222"),
            schema: B256::with_last_byte(0x33),
            uid: B256::with_last_byte(0x44),
            expirationTime: 1_900_000_000,
            revoked: true,
            sequence: receipt_sequence(123_456, 7).unwrap(),
        }
    }

    /// The digest computed here is the figure the contract's `hashReceipt` returns in the
    /// forge test for the same receipt, mirror and chain (both check this one value).
    #[test]
    fn receipt_digest_matches_the_forge_fixture() {
        let mirror = address!("0x5615dEB798BB3E4dFa0139dFa1b3D433Cc23b72f");
        assert_eq!(
            receipt_digest(&fixture(), 31337, mirror),
            b256!("0x671f28c37b360df49bddac861a2126787f4b3744ab2602ebd63a098cff28183d")
        );
        // The type string is the contract's RECEIPT_TYPEHASH preimage.
        assert_eq!(
            fixture().eip712_type_hash(),
            alloy::primitives::keccak256(
                "AttestationReceipt(address attester,address recipient,bytes32 schema,bytes32 uid,uint64 expirationTime,bool revoked,uint64 sequence)"
            )
        );
        // Another chain or mirror is another digest.
        assert_ne!(
            receipt_digest(&fixture(), 31338, mirror),
            receipt_digest(&fixture(), 31337, mirror)
        );
    }

    #[tokio::test]
    async fn a_receipt_is_signed_by_its_attester_only() {
        let key = PrivateKeySigner::random();
        let mirror = Address::repeat_byte(5);
        let mut receipt = fixture();
        receipt.attester = key.address();
        let sig = sign_receipt(&key, &receipt, 31337, mirror).await.unwrap();
        assert_eq!(sig.len(), 65);
        let parsed = alloy::primitives::Signature::try_from(sig.as_ref()).unwrap();
        let signer = parsed
            .recover_address_from_prehash(&receipt_digest(&receipt, 31337, mirror))
            .unwrap();
        assert_eq!(signer, key.address());
        let call = record_call(&receipt, sig.clone());
        let decoded = AttestationMirror::recordCall::abi_decode(&call.abi_encode()).unwrap();
        assert_eq!(decoded.receipt.sequence, receipt.sequence);
        assert_eq!(decoded.signature, sig);
        // Another key may not sign the attester's receipt.
        let other = PrivateKeySigner::random();
        assert!(matches!(
            sign_receipt(&other, &receipt, 31337, mirror).await,
            Err(ChainError::Signing(_))
        ));
    }

    #[test]
    fn sequences_follow_the_chains_log_order() {
        assert_eq!(receipt_sequence(1, 0), Some(1 << 24));
        assert!(receipt_sequence(1, (1 << 24) - 1) < receipt_sequence(2, 0));
        assert!(receipt_sequence(7, 3) < receipt_sequence(7, 4));
        assert_eq!(receipt_sequence(1 << 40, 0), None);
        assert_eq!(receipt_sequence(0, 1 << 24), None);
    }

    #[test]
    fn the_attest_call_encodes_the_request() {
        let call = attest_call(
            B256::repeat_byte(1),
            Address::repeat_byte(2),
            99,
            true,
            B256::ZERO,
            Bytes::from_static(b"digest"),
        );
        let bytes = call.abi_encode();
        assert_eq!(bytes[..4], AttestationRegistry::attestCall::SELECTOR);
        let back = AttestationRegistry::attestCall::abi_decode(&bytes).unwrap();
        assert_eq!(back.request.recipient, Address::repeat_byte(2));
        assert_eq!(back.request.expirationTime, 99);
        assert_eq!(back.request.data, Bytes::from_static(b"digest"));
        let revoke = revoke_call(B256::repeat_byte(1), B256::repeat_byte(3)).abi_encode();
        assert_eq!(revoke[..4], AttestationRegistry::revokeCall::SELECTOR);
    }

    fn log_of<E: SolEvent>(address: Address, event: &E) -> Log {
        Log {
            address,
            data: event.encode_log_data(),
        }
    }

    #[test]
    fn logs_decode_and_only_slot_changes_make_receipts() {
        let registry = Address::repeat_byte(0xee);
        let attested = AttestationRegistry::Attested {
            recipient: Address::repeat_byte(2),
            attester: Address::repeat_byte(1),
            schema: B256::repeat_byte(3),
            uid: B256::repeat_byte(4),
            time: 10,
            expirationTime: 500,
            latest: true,
        };
        let log = log_of(registry, &attested);
        let decoded = decode_registry_log(registry, &log).unwrap();
        assert_eq!(decoded, RegistryLog::Attested(attested.clone()));
        let r = receipt_of_log(&decoded, 42).unwrap();
        assert_eq!(
            (
                r.attester,
                r.recipient,
                r.schema,
                r.uid,
                r.expirationTime,
                r.revoked,
                r.sequence
            ),
            (
                attested.attester,
                attested.recipient,
                attested.schema,
                attested.uid,
                500,
                false,
                42
            )
        );
        // Another contract's log is not the registry's.
        assert_eq!(decode_registry_log(Address::repeat_byte(1), &log), None);
        // An older attestation stored beside a newer one changes no slot.
        let stale = AttestationRegistry::Attested {
            latest: false,
            ..attested
        };
        let stale = decode_registry_log(registry, &log_of(registry, &stale)).unwrap();
        assert_eq!(receipt_of_log(&stale, 43), None);
        let revoked = AttestationRegistry::Revoked {
            recipient: Address::repeat_byte(2),
            attester: Address::repeat_byte(1),
            schema: B256::repeat_byte(3),
            uid: B256::repeat_byte(4),
            revocationTime: 20,
            latest: true,
        };
        let decoded = decode_registry_log(registry, &log_of(registry, &revoked)).unwrap();
        let r = receipt_of_log(&decoded, 44).unwrap();
        assert!(r.revoked);
        assert_eq!(r.uid, revoked.uid);
        let older = AttestationRegistry::Revoked {
            latest: false,
            ..revoked
        };
        let decoded = decode_registry_log(registry, &log_of(registry, &older)).unwrap();
        assert_eq!(receipt_of_log(&decoded, 45), None);
        // Another event of the registry is not understood.
        let other = Log {
            address: registry,
            data: LogData::new_unchecked(vec![B256::repeat_byte(9)], Bytes::new()),
        };
        assert_eq!(decode_registry_log(registry, &other), None);
    }
}
