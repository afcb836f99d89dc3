// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

/// @dev Packs `pullBatch` items as `IAllowanceStateMachine.pullBatch` documents them, written
///      out here independently of the contract (which only decodes), so a test fails if the
///      two disagree. Items are concatenated back to back (`bytes.concat`, or `batch`), each
///      big-endian and starting with its kind:
///      - unsigned: `0x00 ‖ keyId (32) ‖ destination (20) ‖ amount (8)`, 61 bytes;
///      - signed: `0x01 ‖ keyId (32) ‖ destination (20) ‖ amount (8) ‖ nonce (32) ‖
///        deadline (8) ‖ signatureLength (2) ‖ signature`, 103 bytes plus the signature.
///      Values that do not fit their field are refused here (a test that wants a malformed
///      item builds its bytes itself) rather than silently truncated.
library PullCodec {
    uint8 internal constant UNSIGNED = 0;
    uint8 internal constant SIGNED = 1;
    /// @dev Bytes of an unsigned item, and of a signed item's head before its signature.
    uint256 internal constant UNSIGNED_LENGTH = 61;
    uint256 internal constant SIGNED_HEAD_LENGTH = 103;

    /// @dev An unsigned item (a key without a signer).
    function unsigned(bytes32 keyId, address destination, uint256 amount)
        internal
        pure
        returns (bytes memory)
    {
        require(amount <= type(uint64).max, "PullCodec: amount beyond 8 bytes");
        return abi.encodePacked(UNSIGNED, keyId, destination, uint64(amount));
    }

    /// @dev A signed item carrying `signature` (the key's signer's `DebitPull`).
    function signed(
        bytes32 keyId,
        address destination,
        uint256 amount,
        uint256 nonce,
        uint256 deadline,
        bytes memory signature
    ) internal pure returns (bytes memory) {
        require(amount <= type(uint64).max, "PullCodec: amount beyond 8 bytes");
        require(deadline <= type(uint64).max, "PullCodec: deadline beyond 8 bytes");
        require(signature.length <= type(uint16).max, "PullCodec: signature beyond 2-byte length");
        return abi.encodePacked(
            SIGNED,
            keyId,
            destination,
            uint64(amount),
            nonce,
            uint64(deadline),
            uint16(signature.length),
            signature
        );
    }

    /// @dev The items concatenated, in order.
    function batch(bytes[] memory items) internal pure returns (bytes memory packed) {
        for (uint256 i; i < items.length; ++i) {
            packed = bytes.concat(packed, items[i]);
        }
    }

    /// @dev The first `length` bytes of `data` (a truncated batch).
    function prefix(bytes memory data, uint256 length) internal pure returns (bytes memory out) {
        require(length <= data.length, "PullCodec: prefix beyond the data");
        out = new bytes(length);
        for (uint256 i; i < length; ++i) {
            out[i] = data[i];
        }
    }
}
