// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {P256} from "@openzeppelin/contracts/utils/cryptography/P256.sol";

/// @title PasskeyWallet
/// @notice A minimal smart wallet whose owner is a P-256 (secp256r1) public key, as a WebAuthn
///         passkey holds: it signs for Openrail's payer flows through ERC-1271.
/// @dev A test and reference wallet, not a production account: it has no execution entry
///      point; at deployment it approves one spender (the settlement router, or the
///      AllowanceStateMachine) for all of one token, so the payer's signed mandates and
///      payments can move its funds. Signatures are verified with OpenZeppelin's `P256`, which
///      uses the RIP-7212 precompile where the chain has it and Solidity otherwise (a few
///      hundred thousand gas: why the state machine caps a wallet's gas only inside batches).
///      The digest is signed as is (no WebAuthn client-data wrapping).
contract PasskeyWallet is IERC1271 {
    using SafeERC20 for IERC20;

    /// @notice The answer for a signature that is not the owner's.
    bytes4 internal constant INVALID = 0xffffffff;

    /// @notice X coordinate of the owner's P-256 public key.
    bytes32 public immutable qx;
    /// @notice Y coordinate of the owner's P-256 public key.
    bytes32 public immutable qy;

    /// @notice The public key is not a point of P-256.
    error InvalidPublicKey();

    /// @notice Deploys the wallet for the passkey (`qx`, `qy`) and approves `spender` for all
    ///         of `token`.
    /// @param qx_ X coordinate of the owner's P-256 public key.
    /// @param qy_ Y coordinate of the owner's P-256 public key.
    /// @param token The ERC-20 the wallet pays in.
    /// @param spender Who may move the wallet's `token` (the router / state machine).
    constructor(bytes32 qx_, bytes32 qy_, address token, address spender) {
        if (!P256.isValidPublicKey(qx_, qy_)) revert InvalidPublicKey();
        qx = qx_;
        qy = qy_;
        IERC20(token).forceApprove(spender, type(uint256).max);
    }

    /// @notice ERC-1271: whether `signature` is the owner passkey's over `hash`.
    /// @param hash The signed digest (an EIP-712 digest for Openrail's types).
    /// @param signature `abi.encodePacked(r, s)`, 64 bytes, `s` in the lower half of the order.
    /// @return magicValue `0x1626ba7e` when valid, else `0xffffffff`.
    function isValidSignature(bytes32 hash, bytes calldata signature)
        external
        view
        returns (bytes4 magicValue)
    {
        if (signature.length != 64) return INVALID;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        return P256.verify(hash, r, s, qx, qy) ? IERC1271.isValidSignature.selector : INVALID;
    }
}
