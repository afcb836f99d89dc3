//! Deterministic deployment through the canonical CREATE2 deployer
//! (`0x4e59b44847b379578588920ca78fbf26c0b4956c`, Arachnid's, predeployed on anvil and on
//! most public chains): a contract's address is
//! `keccak256(0xff ‖ deployer ‖ salt ‖ keccak256(initCode))[12..]`, so the same salt and
//! constructor arguments give the same address on every chain, and a rerun finds the
//! contract already there and sends nothing.

use alloy::primitives::{Address, B256, Bytes, address, keccak256};
use alloy::providers::Provider;
use alloy::rpc::types::TransactionRequest;
use serde::{Deserialize, Serialize};

use crate::ChainError;

/// The canonical CREATE2 deployer: its calldata is `salt ‖ initCode`.
pub const DEPLOYER: Address = address!("0x4e59b44847b379578588920ca78fbf26c0b4956c");

/// Where `init_code` deployed with `salt` through [`DEPLOYER`] lives (sans-IO).
pub fn address_of(salt: B256, init_code: &[u8]) -> Address {
    DEPLOYER.create2(salt, keccak256(init_code))
}

/// One contract placed at its deterministic address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placed {
    /// The contract's name (its artifact).
    pub name: String,
    /// Where it lives.
    pub address: Address,
    /// `keccak256` of its init code (bytecode ‖ constructor arguments).
    pub init_code_hash: B256,
    /// The deploying transaction; `None` when the contract was already there (a rerun).
    pub tx_hash: Option<B256>,
    /// Its ABI-encoded constructor arguments (the end of its init code), which an explorer
    /// needs to verify it.
    #[serde(default)]
    pub constructor_args: Bytes,
}

impl Placed {
    /// The artifact it was built from: the name's first word ("TestStablecoin USD").
    pub fn artifact(&self) -> &str {
        self.name.split_whitespace().next().unwrap_or_default()
    }
}

/// Places `bytecode ‖ args` (the init code) at its deterministic address for `salt`,
/// sending the deployment only when no code is there yet. Fails when the chain has no
/// CREATE2 deployer, or the transaction left no code at the address.
pub async fn place<P: Provider>(
    provider: &P,
    name: &str,
    salt: B256,
    bytecode: &[u8],
    args: Vec<u8>,
) -> Result<Placed, ChainError> {
    let init_code: Bytes = [bytecode, &args].concat().into();
    let address = address_of(salt, &init_code);
    let init_code_hash = keccak256(&init_code);
    let placed = |tx_hash| Placed {
        name: name.to_string(),
        address,
        init_code_hash,
        tx_hash,
        constructor_args: args.clone().into(),
    };
    if !provider.get_code_at(address).await?.is_empty() {
        return Ok(placed(None));
    }
    if provider.get_code_at(DEPLOYER).await?.is_empty() {
        return Err(ChainError::Deployment(format!(
            "no CREATE2 deployer at {DEPLOYER} on this chain (deploy it first: see https://github.com/Arachnid/deterministic-deployment-proxy)"
        )));
    }
    let input: Vec<u8> = [salt.as_slice(), &init_code].concat();
    let tx = TransactionRequest::default()
        .to(DEPLOYER)
        .input(Bytes::from(input).into());
    let receipt = mined(provider.send_transaction(tx).await?).await?;
    if provider.get_code_at(address).await?.is_empty() {
        return Err(ChainError::Deployment(format!(
            "{name}: the CREATE2 deployment in {} left no code at {address} (a constructor reverted?)",
            receipt.transaction_hash
        )));
    }
    Ok(placed(Some(receipt.transaction_hash)))
}

/// Waits for a sent transaction's receipt and fails when it reverted.
pub async fn mined(
    pending: alloy::providers::PendingTransactionBuilder<alloy::network::Ethereum>,
) -> Result<alloy::rpc::types::TransactionReceipt, ChainError> {
    let receipt = pending.get_receipt().await?;
    if receipt.status() {
        Ok(receipt)
    } else {
        Err(ChainError::Reverted(receipt.transaction_hash))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::{b256, hex};

    /// EIP-1014's worked examples, with the canonical deployer as the sender: the
    /// address is the standard's formula.
    #[test]
    fn addresses_follow_eip_1014() {
        // Example 0 of EIP-1014: deployer 0x00…00, salt 0, init code 0x00.
        let zero = Address::ZERO.create2(B256::ZERO, keccak256(hex!("00")));
        assert_eq!(zero, address!("0x4D1A2e2bB4F88F0250f26Ffff098B0b30B26BF38"));
        // Ours: the formula over the canonical deployer.
        let salt = b256!("0x0000000000000000000000000000000000000000000000000000000000000001");
        let code = hex!("600a600c600039600a6000f3602a60005260206000f3");
        let mut pre = vec![0xffu8];
        pre.extend_from_slice(DEPLOYER.as_slice());
        pre.extend_from_slice(salt.as_slice());
        pre.extend_from_slice(keccak256(code).as_slice());
        assert_eq!(
            address_of(salt, &code),
            Address::from_slice(&keccak256(pre)[12..])
        );
        // Another salt or other code: another address.
        assert_ne!(address_of(B256::ZERO, &code), address_of(salt, &code));
        assert_ne!(address_of(salt, &code[1..]), address_of(salt, &code));
    }
}
