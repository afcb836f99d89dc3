// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {ISettlementRouter} from "./interfaces/ISettlementRouter.sol";

/// @title SettlementCore
/// @notice The settlement router's logic, shared by the standalone `SettlementRouter` and the
///         `AllowanceStateMachine` (which is the router of the settlement chain).
/// @dev Tokens go straight from `from` to `to` with one `transferFrom`, so the contract never
///      holds a balance. The owner (two-step ownership) administers; the operator moves tokens.
///      The operator and the pause flag share one storage slot, so the hot paths authorize the
///      caller and check the pause with a single read.
abstract contract SettlementCore is ISettlementRouter, Ownable2Step {
    using SafeERC20 for IERC20;

    /// @dev One slot: who may move tokens, and whether moves are paused.
    struct Gate {
        address operator;
        bool paused;
    }

    Gate private _gate;
    address private _treasury;

    /// @param owner_ Owner (may pause and change the operator and treasury).
    /// @param operator_ The service's signer.
    /// @param treasury_ The treasury wallet.
    constructor(address owner_, address operator_, address treasury_) Ownable(owner_) {
        if (operator_ == address(0) || treasury_ == address(0)) revert ZeroAddress();
        _gate.operator = operator_;
        _treasury = treasury_;
        emit OperatorChanged(address(0), operator_);
        emit TreasuryChanged(address(0), treasury_);
    }

    /// @dev Only the operator, whether or not moves are paused (writes that move no token).
    modifier onlyOperator() {
        if (msg.sender != _gate.operator) revert UnauthorizedCaller(msg.sender);
        _;
    }

    /// @dev Only the operator, and only while moves are not paused (one storage read).
    modifier onlyOperatorUnpaused() {
        uint256 gate = _gateWord();
        if (msg.sender != address(uint160(gate))) revert UnauthorizedCaller(msg.sender);
        if (gate >> 160 != 0) revert RouterPaused();
        _;
    }

    /// @inheritdoc ISettlementRouter
    function settle(bytes32 ref, address token, address from, address to, uint256 amount)
        external
        onlyOperatorUnpaused
    {
        if (amount == 0) revert ZeroAmount();
        if (to == address(0) || token == address(0)) revert ZeroAddress();
        if (from == to) revert SelfTransfer();
        IERC20(token).safeTransferFrom(from, to, amount);
        emit Settled(ref, token, from, to, amount);
    }

    /// @inheritdoc ISettlementRouter
    function pause() external onlyOwner {
        _gate.paused = true;
        emit Paused(msg.sender);
    }

    /// @inheritdoc ISettlementRouter
    function unpause() external onlyOwner {
        _gate.paused = false;
        emit Unpaused(msg.sender);
    }

    /// @inheritdoc ISettlementRouter
    function setOperator(address operator_) external onlyOwner {
        if (operator_ == address(0)) revert ZeroAddress();
        emit OperatorChanged(_gate.operator, operator_);
        _gate.operator = operator_;
    }

    /// @inheritdoc ISettlementRouter
    function setTreasury(address treasury_) external onlyOwner {
        if (treasury_ == address(0)) revert ZeroAddress();
        emit TreasuryChanged(_treasury, treasury_);
        _treasury = treasury_;
    }

    /// @inheritdoc ISettlementRouter
    function operator() external view returns (address) {
        return _gate.operator;
    }

    /// @inheritdoc ISettlementRouter
    function paused() external view returns (bool) {
        return _gate.paused;
    }

    /// @inheritdoc ISettlementRouter
    function treasury() external view returns (address) {
        return _treasury;
    }

    /// @dev The operator (low 160 bits) and the pause flag (the byte above), read at once.
    function _gateWord() internal view returns (uint256 word) {
        assembly ("memory-safe") {
            word := sload(_gate.slot)
        }
    }

    /// @dev Moves tokens for a debit pull; false (nothing moved) when `to` is the payer or the
    ///      zero address, or the token call fails. Same acceptance as SafeERC20's
    ///      `trySafeTransferFrom` (a token may return nothing, or `true`), without its memory
    ///      copies: this is on the pull hot path.
    function _tryMove(address token, address from, address to, uint256 amount) internal returns (bool ok) {
        if (to == from || to == address(0)) return false;
        assembly ("memory-safe") {
            // Narrow values may carry dirty upper bits in assembly: clean the addresses.
            let mask := 0xffffffffffffffffffffffffffffffffffffffff
            token := and(token, mask)
            let m := mload(0x40)
            mstore(m, shl(224, 0x23b872dd)) // transferFrom(address,address,uint256)
            mstore(add(m, 0x04), and(from, mask))
            mstore(add(m, 0x24), and(to, mask))
            mstore(add(m, 0x44), amount)
            ok := call(gas(), token, 0, m, 0x64, 0, 0x20)
            switch returndatasize()
            case 0 { ok := and(ok, gt(extcodesize(token), 0)) }
            default { ok := and(ok, eq(mload(0), 1)) }
        }
    }
}
