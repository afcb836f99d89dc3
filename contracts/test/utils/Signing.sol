// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Test} from "./Test.sol";
import {IAllowanceStateMachine} from "../../src/interfaces/IAllowanceStateMachine.sol";

/// @dev EIP-712 digests and signatures computed independently of the contracts (type strings
///      and domain written out here), so a test fails if a contract hashes differently.
abstract contract Signing is Test {
    bytes32 internal constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 internal constant PAYMENT_TYPEHASH = keccak256(
        "Payment(address token,address from,address to,uint256 amount,uint256 nonce,uint256 deadline)"
    );
    bytes32 internal constant MANDATE_TYPEHASH = keccak256(
        "Mandate(bytes32 mandateId,address payer,address token,uint256 maxAmount,uint8 interval,address[] payees,address agent,string purpose,address identityAttester,bytes32 payerSchema,bytes32 agentSchema,uint256 nonce,uint256 deadline)"
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

    /// @dev The mandate id the payer's terms derive: `keccak256(abi.encode(payer, salt))`.
    function _mandateIdOf(address payer, bytes32 salt) internal pure returns (bytes32) {
        return keccak256(abi.encode(payer, salt));
    }

    /// @dev The key id a mandate's key derives: `keccak256(abi.encode(mandateId, salt))`.
    function _keyIdOf(bytes32 mandateId, bytes32 salt) internal pure returns (bytes32) {
        return keccak256(abi.encode(mandateId, salt));
    }

    /// @dev EIP-712 encoding of an `address[]`: keccak256 of the elements, each a full word.
    function _addressArrayHash(address[] memory list) internal pure returns (bytes32) {
        bytes memory words;
        for (uint256 i; i < list.length; ++i) {
            words = bytes.concat(words, bytes32(uint256(uint160(list[i]))));
        }
        return keccak256(words);
    }

    /// @dev The digest of the `Mandate` a payer signs for `t` (its id derived from payer and
    ///      salt, the payees as an EIP-712 array, the purpose as the hash of its string).
    function _mandateDigest(
        address verifier,
        IAllowanceStateMachine.MandateTerms memory t,
        uint256 nonce,
        uint256 deadline
    ) internal view returns (bytes32) {
        bytes memory head = abi.encode(
            MANDATE_TYPEHASH,
            _mandateIdOf(t.payer, t.salt),
            t.payer,
            t.token,
            t.maxAmount,
            uint8(t.interval),
            _addressArrayHash(t.payees)
        );
        return _digest(
            verifier,
            keccak256(
                bytes.concat(
                    head,
                    abi.encode(
                        t.agent,
                        t.purposeHash,
                        t.requirements.attester,
                        t.requirements.payerSchema,
                        t.requirements.agentSchema
                    ),
                    abi.encode(nonce, deadline)
                )
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
