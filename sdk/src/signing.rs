//! EIP-712 signing with a local key (alloy's `PrivateKeySigner`): a payer's consent to a
//! mandate or a payment (the `authorization.typed_data` the API answers, exactly what
//! `eth_signTypedData_v4` takes) and an agent's signature of a pull on a key with a
//! `signer`. A browser or hardware wallet signs the same documents itself.

use alloy::dyn_abi::TypedData;
use alloy::primitives::U256;
use alloy::signers::SignerSync;
pub use alloy::signers::local::PrivateKeySigner;
use serde_json::{Value, json};

use crate::Error;

/// The token's decimals (the test stablecoins': `5000000` is 5.00).
pub const TOKEN_DECIMALS: u32 = 6;

/// Signs `typed_data` (an `eth_signTypedData_v4` document) with `signer`; returns the
/// 65-byte signature as 0x hex.
pub fn sign_typed_data(signer: &PrivateKeySigner, typed_data: &Value) -> Result<String, Error> {
    let td: TypedData = serde_json::from_value(typed_data.clone())
        .map_err(|e| Error::Signing(format!("typed data: {e}")))?;
    let hash = td
        .eip712_signing_hash()
        .map_err(|e| Error::Signing(format!("typed data: {e}")))?;
    let sig = signer
        .sign_hash_sync(&hash)
        .map_err(|e| Error::Signing(e.to_string()))?;
    Ok(format!("0x{}", hex::encode(sig.as_bytes())))
}

/// `amount` (decimal major units, `"5.00"`) in token units, exactly (no floats); `None`
/// when it is no amount or has more than [`TOKEN_DECIMALS`] decimals.
pub fn token_units(amount: &str) -> Option<U256> {
    let (whole, frac) = amount.split_once('.').unwrap_or((amount, ""));
    if whole.is_empty()
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || frac.len() > TOKEN_DECIMALS as usize
        || (amount.contains('.') && frac.is_empty())
    {
        return None;
    }
    let digits = format!("{whole}{frac:0<width$}", width = TOKEN_DECIMALS as usize);
    U256::from_str_radix(&digits, 10).ok()
}

/// What an agent signs to pull on a key with a `signer`.
#[derive(Debug, Clone)]
pub struct PullTerms<'a> {
    /// The key's `eip712_domain`, as the API shows it.
    pub domain: &'a Value,
    /// The key's `onchain.id` (bytes32).
    pub key_onchain_id: &'a str,
    /// The wallet paid.
    pub destination: &'a str,
    /// Decimal major units, as the pull will say (`"5.00"`).
    pub amount: &'a str,
    /// A number not used before on this key.
    pub nonce: u64,
    /// Unix seconds after which the signature is void.
    pub deadline: u64,
}

/// The agent's signature of `terms`:
/// `DebitPull(bytes32 keyId,address destination,uint256 amount,uint256 nonce,uint256 deadline)`
/// in the key's domain. The pull then carries `signature`, `nonce` and `deadline`.
pub fn sign_pull(agent: &PrivateKeySigner, terms: &PullTerms<'_>) -> Result<String, Error> {
    let units = token_units(terms.amount)
        .ok_or_else(|| Error::Signing(format!("{:?} is no amount", terms.amount)))?;
    let typed = json!({
        "types": {
            "EIP712Domain": [
                {"name": "name", "type": "string"},
                {"name": "version", "type": "string"},
                {"name": "chainId", "type": "uint256"},
                {"name": "verifyingContract", "type": "address"}
            ],
            "DebitPull": [
                {"name": "keyId", "type": "bytes32"},
                {"name": "destination", "type": "address"},
                {"name": "amount", "type": "uint256"},
                {"name": "nonce", "type": "uint256"},
                {"name": "deadline", "type": "uint256"}
            ]
        },
        "primaryType": "DebitPull",
        "domain": terms.domain,
        "message": {
            "keyId": terms.key_onchain_id,
            "destination": terms.destination,
            "amount": units.to_string(),
            "nonce": terms.nonce.to_string(),
            "deadline": terms.deadline.to_string()
        }
    });
    sign_typed_data(agent, &typed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_become_token_units_exactly() {
        assert_eq!(token_units("5"), Some(U256::from(5_000_000u64)));
        assert_eq!(token_units("5.00"), Some(U256::from(5_000_000u64)));
        assert_eq!(token_units("0.000001"), Some(U256::from(1u64)));
        assert_eq!(token_units("12.5"), Some(U256::from(12_500_000u64)));
        for bad in ["", ".5", "5.", "1e3", "-1", "0.0000001", "1,5", " 1"] {
            assert_eq!(token_units(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_pull_signature_recovers_to_the_agent() {
        let agent = PrivateKeySigner::random();
        let domain = json!({"name": "Openrail", "version": "1", "chainId": 31337,
            "verifyingContract": "0x5FbDB2315678afecb367f032d93F642f64180aa3"});
        let terms = PullTerms {
            domain: &domain,
            key_onchain_id: "0x1111111111111111111111111111111111111111111111111111111111111111",
            destination: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
            amount: "5.00",
            nonce: 1,
            deadline: 2_000_000_000,
        };
        let sig = sign_pull(&agent, &terms).unwrap();
        let bytes = hex::decode(sig.trim_start_matches("0x")).unwrap();
        let sig = alloy::primitives::Signature::try_from(bytes.as_slice()).unwrap();
        let typed: TypedData = serde_json::from_value(json!({
            "types": {"EIP712Domain": [{"name": "name", "type": "string"}, {"name": "version", "type": "string"},
                {"name": "chainId", "type": "uint256"}, {"name": "verifyingContract", "type": "address"}],
                "DebitPull": [{"name": "keyId", "type": "bytes32"}, {"name": "destination", "type": "address"},
                {"name": "amount", "type": "uint256"}, {"name": "nonce", "type": "uint256"}, {"name": "deadline", "type": "uint256"}]},
            "primaryType": "DebitPull", "domain": domain,
            "message": {"keyId": terms.key_onchain_id, "destination": terms.destination, "amount": "5000000", "nonce": "1", "deadline": "2000000000"}
        }))
        .unwrap();
        let hash = typed.eip712_signing_hash().unwrap();
        assert_eq!(
            sig.recover_address_from_prehash(&hash).unwrap(),
            agent.address()
        );
        // Other terms recover to someone else.
        let other = PullTerms {
            amount: "5.01",
            ..terms
        };
        let sig2 = sign_pull(&agent, &other).unwrap();
        assert_ne!(sig2, format!("0x{}", hex::encode(sig.as_bytes())));
    }
}
