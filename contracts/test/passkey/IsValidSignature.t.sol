// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {PasskeyBase} from "./Base.sol";

/// `PasskeyWallet.isValidSignature`: the magic value for its passkey's P-256 signature over
/// the hash, `0xffffffff` for anything else.
contract PasskeyIsValidSignatureTest is PasskeyBase {
    bytes4 internal constant MAGIC = 0x1626ba7e;
    bytes4 internal constant INVALID = 0xffffffff;
    bytes32 internal constant HASH = keccak256("a digest");

    function test_isValidSignature_success_ownersSignature() public view {
        assertEq(bytes32(wallet.isValidSignature(HASH, _signP256(PASSKEY, HASH))), bytes32(MAGIC));
    }

    /// Verified in Solidity (no RIP-7212 precompile on this chain), a check costs far more than
    /// the 100,000 gas a batch grants a wallet — why the cap applies only inside `pullBatch`.
    function test_isValidSignature_success_costsMoreThanTheBatchCap() public view {
        bytes memory sig = _signP256(PASSKEY, HASH);
        uint256 start = gasleft();
        bytes4 answer = wallet.isValidSignature(HASH, sig);
        uint256 used = start - gasleft();
        assertEq(bytes32(answer), bytes32(MAGIC));
        assertGt(used, 100_000);
    }

    function test_isValidSignature_revert_otherPasskey() public view {
        assertEq(bytes32(wallet.isValidSignature(HASH, _signP256(OTHER_PASSKEY, HASH))), bytes32(INVALID));
    }

    function test_isValidSignature_revert_otherHash() public view {
        bytes memory sig = _signP256(PASSKEY, HASH);
        assertEq(bytes32(wallet.isValidSignature(keccak256("another"), sig)), bytes32(INVALID));
    }

    /// The malleated twin (`s' = n - s`) is refused, as are signatures of the wrong length.
    function test_isValidSignature_revert_highSOrWrongLength() public view {
        bytes memory sig = _signP256(PASSKEY, HASH);
        (bytes32 r, bytes32 s) = abi.decode(sig, (bytes32, bytes32));
        assertEq(
            bytes32(wallet.isValidSignature(HASH, abi.encodePacked(r, bytes32(P256_N - uint256(s))))),
            bytes32(INVALID)
        );
        assertEq(bytes32(wallet.isValidSignature(HASH, abi.encodePacked(sig, uint8(27)))), bytes32(INVALID));
        assertEq(bytes32(wallet.isValidSignature(HASH, abi.encodePacked(r))), bytes32(INVALID));
        assertEq(bytes32(wallet.isValidSignature(HASH, "")), bytes32(INVALID));
    }

    function testFuzz_isValidSignature_success_anyHash(bytes32 hash) public view {
        assertEq(bytes32(wallet.isValidSignature(hash, _signP256(PASSKEY, hash))), bytes32(MAGIC));
    }
}
