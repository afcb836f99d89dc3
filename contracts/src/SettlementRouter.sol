// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {ISettlementRouter} from "./interfaces/ISettlementRouter.sol";

/// @title SettlementRouter
/// @notice Moves tokens atomically from a payer wallet (ERC-20 allowance to the router) or the
///         treasury to a wallet or the treasury. Tokens go straight from `from` to `to` with one
///         `transferFrom`, so the router never holds a balance.
/// @dev The allowance state machine is an immutable: the hot path of a pull reads no storage for
///      authorization, only the pause flag (packed with the operator).
contract SettlementRouter is ISettlementRouter, Ownable2Step {
    using SafeERC20 for IERC20;

    /// @notice The router is paused: no token moves.
    error RouterPaused();

    /// @notice The router was paused by the owner.
    /// @param by The owner.
    event Paused(address indexed by);
    /// @notice The router was unpaused by the owner.
    /// @param by The owner.
    event Unpaused(address indexed by);

    /// @inheritdoc ISettlementRouter
    address public immutable allowanceStateMachine;
    /// @inheritdoc ISettlementRouter
    address public operator;
    /// @notice Whether token moves are blocked.
    bool public paused;
    /// @inheritdoc ISettlementRouter
    address public treasury;

    /// @notice Deploys the router.
    /// @param owner_ Owner (may pause and change the operator and treasury).
    /// @param operator_ The service's signer.
    /// @param treasury_ The treasury wallet.
    /// @param allowanceStateMachine_ The allowance state machine (zero on a chain without one).
    constructor(address owner_, address operator_, address treasury_, address allowanceStateMachine_)
        Ownable(owner_)
    {
        if (operator_ == address(0) || treasury_ == address(0)) revert ZeroAddress();
        operator = operator_;
        treasury = treasury_;
        allowanceStateMachine = allowanceStateMachine_;
        emit OperatorChanged(address(0), operator_);
        emit TreasuryChanged(address(0), treasury_);
    }

    /// @inheritdoc ISettlementRouter
    function pullFor(address token, address from, address to, uint256 amount) external {
        if (msg.sender != allowanceStateMachine && msg.sender != operator) {
            revert UnauthorizedCaller(msg.sender);
        }
        _move(token, from, to, amount);
    }

    /// @inheritdoc ISettlementRouter
    function settle(bytes32 ref, address token, address from, address to, uint256 amount) external {
        if (msg.sender != operator && msg.sender != allowanceStateMachine) {
            revert UnauthorizedCaller(msg.sender);
        }
        _move(token, from, to, amount);
        emit Settled(ref, token, from, to, amount);
    }

    /// @notice Blocks every token move until `unpause`. Revocations (in the allowance state
    ///         machine) keep working. Only the owner.
    function pause() external onlyOwner {
        paused = true;
        emit Paused(msg.sender);
    }

    /// @notice Allows token moves again. Only the owner.
    function unpause() external onlyOwner {
        paused = false;
        emit Unpaused(msg.sender);
    }

    /// @notice Replaces the operator. Only the owner.
    /// @param operator_ The new operator.
    function setOperator(address operator_) external onlyOwner {
        if (operator_ == address(0)) revert ZeroAddress();
        emit OperatorChanged(operator, operator_);
        operator = operator_;
    }

    /// @notice Replaces the treasury. Only the owner.
    /// @param treasury_ The new treasury.
    function setTreasury(address treasury_) external onlyOwner {
        if (treasury_ == address(0)) revert ZeroAddress();
        emit TreasuryChanged(treasury, treasury_);
        treasury = treasury_;
    }

    function _move(address token, address from, address to, uint256 amount) private {
        if (paused) revert RouterPaused();
        if (amount == 0) revert ZeroAmount();
        if (to == address(0) || token == address(0)) revert ZeroAddress();
        if (from == to) revert SelfTransfer();
        IERC20(token).safeTransferFrom(from, to, amount);
    }
}
