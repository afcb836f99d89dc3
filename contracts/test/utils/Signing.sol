// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Test} from "./Test.sol";

/// @dev EIP-712 digests and signatures computed independently of the contracts (type strings
///      and domain written out here), so a test fails if a contract hashes differently.
abstract contract Signing is Test {
    bytes32 internal constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 internal constant PAYMENT_TYPEHASH = keccak256(
        "Payment(address token,address from,address to,uint256 amount,uint256 nonce,uint256 deadline)"
    );
    bytes32 internal constant MANDATE_TYPEHASH = keccak256(
        "Mandate(bytes32 mandateId,address payer,address token,uint256 maxAmount,uint8 interval,uint256 nonce,uint256 deadline)"
    );
    bytes32 internal constant DEBIT_PULL_TYPEHASH = keccak256(
        "DebitPull(bytes32 keyId,address destination,uint256 amount,uint256 nonce,uint256 deadline)"
    );
    /// @dev secp256k1's order: `s` above half of it is the malleated twin.
    uint256 internal constant SECP256K1_N =
        0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141;

    /// @dev The domain of Openrail's contract `verifier` on the current chain.
    function _domain(address verifier) internal view returns (bytes32) {
        return keccak256(
            abi.encode(DOMAIN_TYPEHASH, keccak256("Openrail"), keccak256("1"), block.chainid, verifier)
        );
    }

    function _digest(address verifier, bytes32 structHash) internal view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", _domain(verifier), structHash));
    }

    function _paymentDigest(
        address verifier,
        address token,
        address from,
        address to,
        uint256 amount,
        uint256 nonce,
        uint256 deadline
    ) internal view returns (bytes32) {
        return _digest(
            verifier, keccak256(abi.encode(PAYMENT_TYPEHASH, token, from, to, amount, nonce, deadline))
        );
    }

    function _mandateDigest(
        address verifier,
        bytes32 mandateId,
        address payer,
        address token,
        uint256 maxAmount,
        uint8 interval,
        uint256 nonce,
        uint256 deadline
    ) internal view returns (bytes32) {
        return _digest(
            verifier,
            keccak256(
                abi.encode(MANDATE_TYPEHASH, mandateId, payer, token, maxAmount, interval, nonce, deadline)
            )
        );
    }

    function _pullDigest(
        address verifier,
        bytes32 keyId,
        address destination,
        uint256 amount,
        uint256 nonce,
        uint256 deadline
    ) internal view returns (bytes32) {
        return _digest(
            verifier, keccak256(abi.encode(DEBIT_PULL_TYPEHASH, keyId, destination, amount, nonce, deadline))
        );
    }

    /// @dev `r ‖ s ‖ v`, as wallets return it.
    function _sign(uint256 pk, bytes32 digest) internal pure returns (bytes memory) {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(pk, digest);
        return abi.encodePacked(r, s, v);
    }

    /// @dev The malleated twin of a signature: `s' = n - s`, `v` flipped. Recovers the same
    ///      signer; the contracts must refuse it.
    function _highS(bytes memory sig) internal pure returns (bytes memory) {
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly ("memory-safe") {
            r := mload(add(sig, 0x20))
            s := mload(add(sig, 0x40))
            v := byte(0, mload(add(sig, 0x60)))
        }
        return abi.encodePacked(r, bytes32(SECP256K1_N - uint256(s)), v == 27 ? uint8(28) : uint8(27));
    }
}
