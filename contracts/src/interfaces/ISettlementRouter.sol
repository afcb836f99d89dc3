// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

/// @title ISettlementRouter
/// @notice Moves ERC-20 tokens atomically between a payer wallet (which approved the router),
///         the treasury, and destination wallets. Deployed on both chains. Never keeps a balance.
/// @dev Only the operator moves tokens. On the settlement chain the router is the
///      AllowanceStateMachine itself (it extends this interface), so a debit pull moves tokens
///      without a call to a second contract; see ARCHITECTURE.md "Gas". Pausing blocks every
///      move (`settle`, `pull`, `pullBatch`); it never blocks session-key revocation.
interface ISettlementRouter {
    /// @notice A move was settled on behalf of the operator (one-time payments, bank legs).
    /// @param ref The caller's reference (the payment's id hash).
    /// @param token The ERC-20 moved.
    /// @param from The wallet the tokens left (a payer wallet or the treasury).
    /// @param to The wallet the tokens reached (a destination wallet or the treasury).
    /// @param amount Amount in the token's smallest unit.
    event Settled(bytes32 indexed ref, address indexed token, address from, address to, uint256 amount);

    /// @notice The treasury address changed.
    /// @param previous The old treasury.
    /// @param current The new treasury.
    event TreasuryChanged(address indexed previous, address indexed current);

    /// @notice The operator address changed.
    /// @param previous The old operator.
    /// @param current The new operator.
    event OperatorChanged(address indexed previous, address indexed current);

    /// @notice The owner paused every token move.
    /// @param by The owner.
    event Paused(address indexed by);

    /// @notice The owner allowed token moves again.
    /// @param by The owner.
    event Unpaused(address indexed by);

    /// @notice The caller is not the operator.
    /// @param caller The rejected caller.
    error UnauthorizedCaller(address caller);
    /// @notice The amount is zero.
    error ZeroAmount();
    /// @notice An address argument is the zero address.
    error ZeroAddress();
    /// @notice `from` and `to` are the same wallet.
    error SelfTransfer();
    /// @notice Token moves are paused.
    error RouterPaused();

    /// @notice Moves `amount` of `token` from `from` to `to` for the operator and emits `Settled`.
    /// @param ref The caller's reference, echoed in `Settled`.
    /// @param token The ERC-20 to move.
    /// @param from A payer wallet that approved the router, or the treasury.
    /// @param to The destination wallet or the treasury.
    /// @param amount Amount in the token's smallest unit.
    function settle(bytes32 ref, address token, address from, address to, uint256 amount) external;

    /// @notice Blocks every token move until `unpause`. Revocations keep working. Only the owner.
    function pause() external;

    /// @notice Allows token moves again. Only the owner.
    function unpause() external;

    /// @notice Replaces the operator. Only the owner.
    /// @param operator_ The new operator.
    function setOperator(address operator_) external;

    /// @notice Replaces the treasury. Only the owner.
    /// @param treasury_ The new treasury.
    function setTreasury(address treasury_) external;

    /// @notice The operator: the service's signer, the only account that moves tokens (and, on
    ///         the settlement chain, the only one that writes mandates, keys and pulls).
    /// @return The operator's address.
    function operator() external view returns (address);

    /// @notice Whether token moves are paused.
    /// @return True while paused.
    function paused() external view returns (bool);

    /// @notice The treasury: the wallet that funds bank-funded legs and receives bank-bound legs.
    /// @return The treasury's address.
    function treasury() external view returns (address);
}
