//! The packed calldata of `AllowanceStateMachine.pullBatch(bytes items)`, sans-IO: items back
//! to back, big-endian, each starting with its kind:
//!
//! - `0x00 ‖ keyId (32) ‖ destination (20) ‖ amount (8)`: 61 bytes, a key without a signer;
//! - `0x01 ‖ keyId ‖ destination ‖ amount ‖ nonce (32) ‖ deadline (8) ‖ length (2) ‖
//!   signature`: a pull its key's agent signed.
//!
//! About a quarter of the calldata of an ABI-encoded array of structs, and nothing for the
//! contract to decode: the service's lone pull and its batches are cheaper by that much (see
//! ARCHITECTURE.md "Gas"). A value that does not fit its field is sent as one the contract
//! declines rather than as another pull: an amount above 2^64-1 as 0 (`InvalidAmount`), a
//! deadline above 2^64-1 as 2^64-1 (the signature, made over the true deadline, is then
//! `InvalidSignature`).

use alloy::primitives::{Address, B256, Bytes, U256};

/// Bytes of an item without a signature.
pub const UNSIGNED_ITEM: usize = 61;
/// Bytes a signed item adds before its signature (nonce, deadline, signature length).
pub const SIGNED_TAIL: usize = 42;

/// One item of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item<'a> {
    /// The on-chain session key.
    pub key_id: B256,
    /// Who is paid.
    pub destination: Address,
    /// Token units.
    pub amount: U256,
    /// The agent's `DebitPull` signature, for a key with a signer.
    pub agent: Option<Signed<'a>>,
}

/// The agent's part of a signed item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed<'a> {
    /// The agent's nonce.
    pub nonce: U256,
    /// Last second (unix) the signature is good for.
    pub deadline: U256,
    /// The signature (at most 65,535 bytes; see `consent::MAX_SIGNATURE_BYTES`).
    pub signature: &'a [u8],
}

/// The `items` argument of `pullBatch` for `items`, in order.
pub fn encode(items: &[Item<'_>]) -> Bytes {
    let mut out = Vec::with_capacity(items.len() * UNSIGNED_ITEM);
    for item in items {
        out.push(u8::from(item.agent.is_some()));
        out.extend_from_slice(item.key_id.as_slice());
        out.extend_from_slice(item.destination.as_slice());
        out.extend_from_slice(&u64::try_from(item.amount).unwrap_or(0).to_be_bytes());
        if let Some(a) = &item.agent {
            out.extend_from_slice(&a.nonce.to_be_bytes::<32>());
            out.extend_from_slice(&u64::try_from(a.deadline).unwrap_or(u64::MAX).to_be_bytes());
            let len = u16::try_from(a.signature.len()).unwrap_or(u16::MAX);
            out.extend_from_slice(&len.to_be_bytes());
            out.extend_from_slice(&a.signature[..usize::from(len)]);
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::{address, b256};

    const KEY: B256 = b256!("0x1111111111111111111111111111111111111111111111111111111111111111");
    const DEST: Address = address!("0x2222222222222222222222222222222222222222");

    #[test]
    fn an_unsigned_item_is_61_bytes_in_field_order() {
        let bytes = encode(&[Item {
            key_id: KEY,
            destination: DEST,
            amount: U256::from(0x0102_0304u64),
            agent: None,
        }]);
        assert_eq!(bytes.len(), UNSIGNED_ITEM);
        assert_eq!(bytes[0], 0);
        assert_eq!(&bytes[1..33], KEY.as_slice());
        assert_eq!(&bytes[33..53], DEST.as_slice());
        assert_eq!(&bytes[53..61], &[0, 0, 0, 0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_signed_item_carries_nonce_deadline_and_signature_after_the_head() {
        let sig = [7u8; 65];
        let items = [
            Item {
                key_id: KEY,
                destination: DEST,
                amount: U256::from(5u64),
                agent: Some(Signed {
                    nonce: U256::from(9u64),
                    deadline: U256::from(1_800_000_000u64),
                    signature: &sig,
                }),
            },
            Item {
                key_id: KEY,
                destination: DEST,
                amount: U256::from(6u64),
                agent: None,
            },
        ];
        let bytes = encode(&items);
        assert_eq!(bytes.len(), 2 * UNSIGNED_ITEM + SIGNED_TAIL + 65);
        assert_eq!(bytes[0], 1);
        let tail = &bytes[UNSIGNED_ITEM..];
        assert_eq!(U256::from_be_slice(&tail[..32]), U256::from(9u64));
        assert_eq!(&tail[32..40], &1_800_000_000u64.to_be_bytes());
        assert_eq!(&tail[40..42], &65u16.to_be_bytes());
        assert_eq!(&tail[42..107], &sig);
        // The next item starts right after the signature.
        assert_eq!(tail[107], 0);
    }

    #[test]
    fn values_that_do_not_fit_become_ones_the_contract_declines() {
        let bytes = encode(&[Item {
            key_id: KEY,
            destination: DEST,
            amount: U256::from(u64::MAX) + U256::from(1u64),
            agent: Some(Signed {
                nonce: U256::ZERO,
                deadline: U256::MAX,
                signature: &[1],
            }),
        }]);
        // Amount 0: declined `InvalidAmount`, never another amount.
        assert_eq!(&bytes[53..61], &[0; 8]);
        // The deadline saturates: the signature over the true one no longer matches.
        assert_eq!(&bytes[UNSIGNED_ITEM + 32..UNSIGNED_ITEM + 40], &[0xff; 8]);
    }
}
