// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

/// @dev A contract wallet that signs nothing but answers every call with its own calldata, so
///      the first word it returns to `isValidSignature(hash, sig)` starts with the ERC-1271
///      magic value (the selector) followed by 28 bytes of the hash. It approved `spender` for
///      all of `token`: a router that checks only 4 bytes would let its tokens be moved.
contract EchoWallet {
    constructor(address token, address spender) {
        (bool ok,) =
            token.call(abi.encodeWithSignature("approve(address,uint256)", spender, type(uint256).max));
        require(ok, "approve failed");
    }

    fallback() external {
        assembly ("memory-safe") {
            calldatacopy(0, 0, calldatasize())
            return(0, calldatasize())
        }
    }
}

/// @dev A contract wallet whose ERC-1271 answer is the magic value in its first 4 bytes and
///      `garbage` (non-zero) in the other 28: not the whole magic word, so not a signature.
contract MagicGarbageWallet {
    bytes32 internal immutable answer;

    constructor(address token, address spender, uint224 garbage) {
        answer = bytes32(uint256(uint32(0x1626ba7e)) << 224 | uint256(garbage));
        (bool ok,) =
            token.call(abi.encodeWithSignature("approve(address,uint256)", spender, type(uint256).max));
        require(ok, "approve failed");
    }

    function isValidSignature(bytes32, bytes calldata) external view returns (bytes32) {
        return answer;
    }
}
