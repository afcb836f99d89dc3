//! Payer and agent consent: the EIP-712 messages the contracts check, their digests, the
//! typed-data JSON a wallet signs (`eth_signTypedData_v4`, `cast wallet sign --data`), and
//! the off-chain check of a signature before anything is sent.
//!
//! The domain is the contract's: name `Openrail`, version `1`, the chain id and the contract
//! that verifies (the allowance state machine on the settlement chain, which is also its
//! router). The type strings here are the contracts' typehashes, character for character; a
//! unit test compares the digest of the JSON (parsed as a wallet would) with the digest of
//! the static types, and the end-to-end tests check the chain accepts what this module does.
//!
//! Checking a signature is sans-IO for an account (ECDSA recovery with a low `s`, as the
//! contracts' `ECDSA.tryRecover` requires); a contract wallet (ERC-1271) needs an `eth_call`,
//! which [`crate::consent::erc1271_valid`] makes.

use alloy::primitives::{Address, B256, Bytes, Signature, U256};
use alloy::providers::Provider;
use alloy::sol;
use alloy::sol_types::{Eip712Domain, SolStruct, eip712_domain};
use serde_json::{Value, json};

sol! {
    /// A mandate a payer signs (`AllowanceStateMachine.MANDATE_TYPEHASH`).
    #[derive(Debug, PartialEq, Eq)]
    struct Mandate {
        bytes32 mandateId;
        address payer;
        address token;
        uint256 maxAmount;
        uint8 interval;
        address[] payees;
        address agent;
        string purpose;
        address identityAttester;
        bytes32 payerSchema;
        bytes32 agentSchema;
        uint256 nonce;
        uint256 deadline;
    }

    /// A one-time payment a payer signs (`SettlementCore.PAYMENT_TYPEHASH`).
    #[derive(Debug, PartialEq, Eq)]
    struct Payment {
        address token;
        address from;
        address to;
        uint256 amount;
        uint256 nonce;
        uint256 deadline;
    }

    /// A pull a session key's agent signs (`AllowanceStateMachine.DEBIT_PULL_TYPEHASH`).
    #[derive(Debug, PartialEq, Eq)]
    struct DebitPull {
        bytes32 keyId;
        address destination;
        uint256 amount;
        uint256 nonce;
        uint256 deadline;
    }

    /// ERC-1271.
    #[sol(rpc)]
    interface IERC1271 {
        function isValidSignature(bytes32 hash, bytes signature) external view returns (bytes4 magicValue);
    }
}

/// The salt of an object whose API id is `id`: `keccak256(id)`. The chain derives the
/// object's id from it ([`mandate_id`], [`key_id`]).
pub fn salt(id: &str) -> B256 {
    alloy::primitives::keccak256(id.as_bytes())
}

/// The on-chain id of `payer`'s mandate with `salt`, as `AllowanceStateMachine.mandateIdOf`
/// derives it: `keccak256(abi.encode(payer, salt))`. Nobody but the payer (or its
/// signature) can take it first.
pub fn mandate_id(payer: Address, salt: B256) -> B256 {
    use alloy::sol_types::SolValue;
    alloy::primitives::keccak256((payer, salt).abi_encode())
}

/// The on-chain id of a key of mandate `mandate_id` with `salt`, as
/// `AllowanceStateMachine.keyIdOf` derives it: `keccak256(abi.encode(mandateId, salt))`.
pub fn key_id(mandate_id: B256, salt: B256) -> B256 {
    use alloy::sol_types::SolValue;
    alloy::primitives::keccak256((mandate_id, salt).abi_encode())
}

impl Mandate {
    /// The terms `createMandateWithSignature` takes for this signed message, whose
    /// `mandateId` is `mandate_id(payer, salt)`.
    pub fn terms(&self, salt: B256) -> crate::bindings::IAllowanceStateMachine::MandateTerms {
        crate::bindings::IAllowanceStateMachine::MandateTerms {
            salt,
            payer: self.payer,
            token: self.token,
            maxAmount: self.maxAmount,
            interval: self.interval,
            payees: self.payees.clone(),
            agent: self.agent,
            purposeHash: alloy::primitives::keccak256(self.purpose.as_bytes()),
            requirements: crate::bindings::IAllowanceStateMachine::Requirements {
                attester: self.identityAttester,
                payerSchema: self.payerSchema,
                agentSchema: self.agentSchema,
            },
        }
    }
}

/// The requirements of a mandate that requires no identity (all zero).
pub fn no_requirements() -> crate::bindings::IAllowanceStateMachine::Requirements {
    crate::bindings::IAllowanceStateMachine::Requirements {
        attester: Address::ZERO,
        payerSchema: B256::ZERO,
        agentSchema: B256::ZERO,
    }
}

/// The terms of a mandate its payer sends itself (`createMandate`: its own transaction is
/// its consent): paying only `payees`, no agent, no purpose.
pub fn own_mandate_terms(
    salt: B256,
    payer: Address,
    token: Address,
    max_amount: U256,
    interval: u8,
    payees: Vec<Address>,
) -> crate::bindings::IAllowanceStateMachine::MandateTerms {
    crate::bindings::IAllowanceStateMachine::MandateTerms {
        salt,
        payer,
        token,
        maxAmount: max_amount,
        interval,
        payees,
        agent: Address::ZERO,
        purposeHash: alloy::primitives::keccak256(""),
        requirements: no_requirements(),
    }
}

/// The EIP-712 domain of Openrail's contract `verifying_contract` on chain `chain_id`.
pub fn domain(chain_id: u64, verifying_contract: Address) -> Eip712Domain {
    eip712_domain! {
        name: "Openrail",
        version: "1",
        chain_id: chain_id,
        verifying_contract: verifying_contract,
    }
}

/// The domain as JSON (`domain` of typed data), and its type list.
pub fn domain_json(chain_id: u64, verifying_contract: Address) -> Value {
    json!({
        "name": "Openrail",
        "version": "1",
        "chainId": chain_id,
        "verifyingContract": verifying_contract.to_checksum(None),
    })
}

fn domain_type() -> Value {
    json!([
        {"name": "name", "type": "string"},
        {"name": "version", "type": "string"},
        {"name": "chainId", "type": "uint256"},
        {"name": "verifyingContract", "type": "address"},
    ])
}

/// Typed data as `eth_signTypedData_v4` takes it: `types` (with `EIP712Domain`),
/// `primaryType`, `domain`, `message`. Integers are decimal strings (exact in every JSON
/// reader), addresses checksummed, `bytes32` as 0x hex.
pub trait TypedMessage: SolStruct {
    /// The message's fields, in the type's order, as `(name, type, value)`.
    fn fields(&self) -> Vec<(&'static str, &'static str, Value)>;

    /// The whole typed-data object for `domain`.
    fn typed_data(&self, chain_id: u64, verifying_contract: Address) -> Value {
        let fields = self.fields();
        let types: Vec<Value> = fields
            .iter()
            .map(|(n, t, _)| json!({"name": n, "type": t}))
            .collect();
        let message: serde_json::Map<String, Value> = fields
            .into_iter()
            .map(|(n, _, v)| (n.to_string(), v))
            .collect();
        json!({
            "types": {
                "EIP712Domain": domain_type(),
                (Self::NAME): types,
            },
            "primaryType": Self::NAME,
            "domain": domain_json(chain_id, verifying_contract),
            "message": message,
        })
    }

    /// The digest a signature covers.
    fn digest(&self, chain_id: u64, verifying_contract: Address) -> B256 {
        self.eip712_signing_hash(&domain(chain_id, verifying_contract))
    }
}

fn addr(a: Address) -> Value {
    Value::String(a.to_checksum(None))
}

fn uint(u: U256) -> Value {
    Value::String(u.to_string())
}

impl TypedMessage for Mandate {
    fn fields(&self) -> Vec<(&'static str, &'static str, Value)> {
        vec![
            (
                "mandateId",
                "bytes32",
                Value::String(self.mandateId.to_string()),
            ),
            ("payer", "address", addr(self.payer)),
            ("token", "address", addr(self.token)),
            ("maxAmount", "uint256", uint(self.maxAmount)),
            ("interval", "uint8", json!(self.interval)),
            (
                "payees",
                "address[]",
                Value::Array(self.payees.iter().map(|a| addr(*a)).collect()),
            ),
            ("agent", "address", addr(self.agent)),
            ("purpose", "string", Value::String(self.purpose.clone())),
            ("identityAttester", "address", addr(self.identityAttester)),
            (
                "payerSchema",
                "bytes32",
                Value::String(self.payerSchema.to_string()),
            ),
            (
                "agentSchema",
                "bytes32",
                Value::String(self.agentSchema.to_string()),
            ),
            ("nonce", "uint256", uint(self.nonce)),
            ("deadline", "uint256", uint(self.deadline)),
        ]
    }
}

impl TypedMessage for Payment {
    fn fields(&self) -> Vec<(&'static str, &'static str, Value)> {
        vec![
            ("token", "address", addr(self.token)),
            ("from", "address", addr(self.from)),
            ("to", "address", addr(self.to)),
            ("amount", "uint256", uint(self.amount)),
            ("nonce", "uint256", uint(self.nonce)),
            ("deadline", "uint256", uint(self.deadline)),
        ]
    }
}

impl TypedMessage for DebitPull {
    fn fields(&self) -> Vec<(&'static str, &'static str, Value)> {
        vec![
            ("keyId", "bytes32", Value::String(self.keyId.to_string())),
            ("destination", "address", addr(self.destination)),
            ("amount", "uint256", uint(self.amount)),
            ("nonce", "uint256", uint(self.nonce)),
            ("deadline", "uint256", uint(self.deadline)),
        ]
    }
}

/// Signs `message` for the domain of `verifying_contract` on `chain_id` with a local key
/// (development, tests and benches: the demo payer and test agents).
pub fn sign_with<M: TypedMessage>(
    message: &M,
    chain_id: u64,
    verifying_contract: Address,
    signer: &alloy::signers::local::PrivateKeySigner,
) -> Bytes {
    use alloy::signers::SignerSync;
    let sig = signer
        .sign_hash_sync(&message.digest(chain_id, verifying_contract))
        .expect("a local key signs any digest");
    Bytes::from(sig.as_bytes().to_vec())
}

/// Signs typed data as the API shows it (`authorization.typed_data`), the way a wallet's
/// `eth_signTypedData_v4` does, with a local key; returns 0x hex. For development, tests
/// and benches.
pub fn sign_typed_data_json(
    typed_data: &Value,
    signer: &alloy::signers::local::PrivateKeySigner,
) -> Result<String, String> {
    use alloy::signers::SignerSync;
    let td: alloy::dyn_abi::TypedData =
        serde_json::from_value(typed_data.clone()).map_err(|e| format!("typed data: {e}"))?;
    let hash = td
        .eip712_signing_hash()
        .map_err(|e| format!("typed data: {e}"))?;
    let sig = signer.sign_hash_sync(&hash).map_err(|e| e.to_string())?;
    Ok(format!(
        "0x{}",
        alloy::primitives::hex::encode(sig.as_bytes())
    ))
}

/// Why a signature is not the expected signer's, as far as can be told without a chain.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// Not 0x-prefixed hex of 1 to [`MAX_SIGNATURE_BYTES`] bytes, or (for an account's
    /// ECDSA signature) not 65 bytes of `r ‖ s ‖ v`.
    #[error(
        "a signature is 0x-prefixed hex: 65 bytes (r, s, v) from an account, or what a contract wallet checks (at most 4096 bytes)"
    )]
    Malformed,
    /// `s` is in the upper half of the curve order: a malleated signature, which the
    /// contracts refuse.
    #[error("the signature's s value is not canonical (high s); sign again")]
    HighS,
    /// It recovers to another address.
    #[error("the signature was made by {recovered}, not by {expected}")]
    WrongSigner {
        /// Who signed.
        recovered: Address,
        /// Who had to.
        expected: Address,
    },
}

/// Most bytes a signature may have: a contract wallet's format (a passkey's WebAuthn
/// assertion, a multisig's several signatures) is longer than an account's 65.
pub const MAX_SIGNATURE_BYTES: usize = 4096;

/// Parses `0x` + an even number of hex digits, 1 to [`MAX_SIGNATURE_BYTES`] bytes: an
/// account's 65-byte ECDSA signature, or whatever a contract wallet checks (ERC-1271).
pub fn parse_signature(hex: &str) -> Result<Bytes, SignatureError> {
    let digits = hex.strip_prefix("0x").ok_or(SignatureError::Malformed)?;
    if digits.is_empty()
        || digits.len() % 2 != 0
        || digits.len() > 2 * MAX_SIGNATURE_BYTES
        || !digits.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return Err(SignatureError::Malformed);
    }
    digits
        .parse::<Bytes>()
        .map_err(|_| SignatureError::Malformed)
}

/// Checks an ECDSA signature of `digest` by `expected` the way the contracts do (65 bytes,
/// `v` 27/28 or 0/1, low `s`).
pub fn check_ecdsa(
    digest: B256,
    signature: &[u8],
    expected: Address,
) -> Result<(), SignatureError> {
    let sig = Signature::try_from(signature).map_err(|_| SignatureError::Malformed)?;
    if sig.normalize_s().is_some() {
        return Err(SignatureError::HighS);
    }
    let recovered = sig
        .recover_address_from_prehash(&digest)
        .map_err(|_| SignatureError::Malformed)?;
    if recovered == expected {
        Ok(())
    } else {
        Err(SignatureError::WrongSigner {
            recovered,
            expected,
        })
    }
}

/// The ERC-1271 answer that means "signed": the magic value `0x1626ba7e` left-aligned in a
/// word of zeros. The whole word must match, as the contracts require (a contract that
/// echoes its calldata starts its answer with the selector too).
const ERC1271_MAGIC_WORD: B256 =
    alloy::primitives::b256!("0x1626ba7e00000000000000000000000000000000000000000000000000000000");

/// Whether contract wallet `wallet` accepts `signature` over `digest` (an `eth_call` of
/// `isValidSignature` whose first 32 bytes of answer must be the magic word); `Ok(false)`
/// when `wallet` has no code or refuses.
pub async fn erc1271_valid<P: Provider>(
    provider: &P,
    wallet: Address,
    digest: B256,
    signature: Bytes,
) -> Result<bool, crate::ChainError> {
    use alloy::sol_types::SolCall;
    let code = provider
        .get_code_at(wallet)
        .await
        .map_err(crate::ChainError::Rpc)?;
    if code.is_empty() {
        return Ok(false);
    }
    let input = IERC1271::isValidSignatureCall {
        hash: digest,
        signature,
    }
    .abi_encode();
    let tx = alloy::rpc::types::TransactionRequest::default()
        .to(wallet)
        .input(input.into());
    match provider.call(tx).await {
        Ok(answer) => Ok(is_magic_answer(&answer)),
        Err(alloy::transports::RpcError::ErrorResp(_)) => Ok(false),
        Err(e) => Err(crate::ChainError::Rpc(e)),
    }
}

/// Whether an `isValidSignature` answer says "signed": at least a word, the first one the
/// magic word.
fn is_magic_answer(answer: &[u8]) -> bool {
    answer.len() >= 32 && answer[..32] == ERC1271_MAGIC_WORD[..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::dyn_abi::TypedData;
    use alloy::primitives::{address, b256, keccak256};
    use alloy::signers::SignerSync;
    use alloy::signers::local::PrivateKeySigner;

    const ASM: Address = address!("0x5FbDB2315678afecb367f032d93F642f64180aa3");

    fn mandate() -> Mandate {
        Mandate {
            mandateId: keccak256("man_1"),
            payer: address!("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"),
            token: address!("0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"),
            maxAmount: U256::from(100_000_000u64),
            interval: 0,
            payees: vec![address!("0x70997970C51812dc3A010C7d01b50e0d17dc79C8")],
            agent: Address::ZERO,
            purpose: "agent budget".into(),
            identityAttester: address!("0x90F79bf6EB2c4f870365E785982E1f101E93b906"),
            payerSchema: keccak256("personhood"),
            agentSchema: B256::ZERO,
            nonce: U256::from(7u64) << 200,
            deadline: U256::from(1_795_435_200u64),
        }
    }

    /// The type strings are the contracts' typehashes.
    #[test]
    fn type_strings_are_the_contracts() {
        assert_eq!(
            Mandate::eip712_encode_type(),
            "Mandate(bytes32 mandateId,address payer,address token,uint256 maxAmount,uint8 interval,address[] payees,address agent,string purpose,address identityAttester,bytes32 payerSchema,bytes32 agentSchema,uint256 nonce,uint256 deadline)"
        );
        assert_eq!(
            Payment::eip712_encode_type(),
            "Payment(address token,address from,address to,uint256 amount,uint256 nonce,uint256 deadline)"
        );
        assert_eq!(
            DebitPull::eip712_encode_type(),
            "DebitPull(bytes32 keyId,address destination,uint256 amount,uint256 nonce,uint256 deadline)"
        );
    }

    /// What a wallet computes from the JSON is the digest the contract checks.
    #[test]
    fn typed_data_json_hashes_like_the_static_type() {
        let m = mandate();
        let json = m.typed_data(31337, ASM);
        let parsed: TypedData = serde_json::from_value(json).unwrap();
        assert_eq!(parsed.eip712_signing_hash().unwrap(), m.digest(31337, ASM));
        let p = DebitPull {
            keyId: b256!("0x1111111111111111111111111111111111111111111111111111111111111111"),
            destination: ASM,
            amount: U256::from(1u64),
            nonce: U256::MAX,
            deadline: U256::from(2u64),
        };
        let parsed: TypedData = serde_json::from_value(p.typed_data(1, ASM)).unwrap();
        assert_eq!(parsed.eip712_signing_hash().unwrap(), p.digest(1, ASM));
        // Another chain or contract is another digest.
        assert_ne!(p.digest(1, ASM), p.digest(2, ASM));
        assert_ne!(p.digest(1, ASM), p.digest(1, Address::ZERO));
    }

    #[test]
    fn ids_are_derived_as_the_contract_derives_them() {
        // keccak256(abi.encode(payer, salt)): two words, the address left-padded.
        let payer = address!("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC");
        let s = salt("man_1");
        let mut words = [0u8; 64];
        words[12..32].copy_from_slice(payer.as_slice());
        words[32..].copy_from_slice(s.as_slice());
        assert_eq!(mandate_id(payer, s), keccak256(words));
        // Another payer with the same salt gets another id: nobody takes a payer's id first.
        assert_ne!(mandate_id(Address::ZERO, s), mandate_id(payer, s));
        let m = mandate_id(payer, s);
        assert_eq!(
            key_id(m, salt("sk_1")),
            keccak256([m.0, salt("sk_1").0].concat())
        );
    }

    #[test]
    fn only_the_whole_magic_word_is_a_signature() {
        let mut answer = ERC1271_MAGIC_WORD.to_vec();
        assert!(is_magic_answer(&answer));
        // A wallet that echoes its calldata answers with the selector and then the digest.
        answer[31] = 1;
        assert!(!is_magic_answer(&answer));
        assert!(!is_magic_answer(&ERC1271_MAGIC_WORD[..4]));
    }

    #[test]
    fn signatures_are_checked_like_the_contracts_do() {
        let payer = PrivateKeySigner::random();
        let other = PrivateKeySigner::random();
        let digest = mandate().digest(31337, ASM);
        let good = payer.sign_hash_sync(&digest).unwrap().as_bytes();
        assert_eq!(check_ecdsa(digest, &good, payer.address()), Ok(()));
        assert!(matches!(
            check_ecdsa(digest, &good, other.address()),
            Err(SignatureError::WrongSigner { .. })
        ));
        // The malleated twin (s' = n - s, v flipped) recovers the same key; refused.
        let sig = Signature::try_from(&good[..]).unwrap();
        let n = U256::from_be_bytes(alloy::primitives::hex!(
            "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"
        ));
        let twin = Signature::new(sig.r(), n - sig.s(), !sig.v()).as_bytes();
        assert_eq!(
            check_ecdsa(digest, &twin, payer.address()),
            Err(SignatureError::HighS)
        );
        assert_eq!(
            check_ecdsa(digest, &good[..64], payer.address()),
            Err(SignatureError::Malformed)
        );
        assert_eq!(parse_signature("0x1"), Err(SignatureError::Malformed));
        assert_eq!(parse_signature("0x"), Err(SignatureError::Malformed));
        assert_eq!(parse_signature("12"), Err(SignatureError::Malformed));
        // A contract wallet's signature may have another length (a P-256 passkey's 64).
        assert_eq!(
            parse_signature(&format!("0x{}", "ab".repeat(64)))
                .unwrap()
                .len(),
            64
        );
        assert!(parse_signature(&format!("0x{}", "ab".repeat(MAX_SIGNATURE_BYTES + 1))).is_err());
        let hex = format!("0x{}", alloy::primitives::hex::encode(good));
        assert_eq!(parse_signature(&hex).unwrap().as_ref(), &good[..]);
    }
}
