// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

/// @title ISettlementRouter
/// @notice Moves ERC-20 tokens atomically between a payer wallet (which approved the router),
///         the treasury, and destination wallets. Deployed on both chains. Never keeps a balance.
/// @dev Only the AllowanceStateMachine (immutable, set at deployment; may be the zero address on
///      a chain without one) and the operator may move tokens. Pausing blocks every move; it never
///      blocks session-key revocation, which lives in the AllowanceStateMachine.
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

    /// @notice The caller is neither the allowance state machine nor the operator.
    /// @param caller The rejected caller.
    error UnauthorizedCaller(address caller);
    /// @notice The amount is zero.
    error ZeroAmount();
    /// @notice An address argument is the zero address.
    error ZeroAddress();
    /// @notice `from` and `to` are the same wallet.
    error SelfTransfer();

    /// @notice Moves `amount` of `token` from `from` to `to`. Called by the AllowanceStateMachine
    ///         for debit pulls (the pull's own event is the record, so no `Settled` is emitted).
    /// @param token The ERC-20 to move.
    /// @param from A payer wallet that approved the router, or the treasury.
    /// @param to The destination wallet or the treasury.
    /// @param amount Amount in the token's smallest unit.
    function pullFor(address token, address from, address to, uint256 amount) external;

    /// @notice Moves `amount` of `token` from `from` to `to` for the operator and emits `Settled`.
    /// @param ref The caller's reference, echoed in `Settled`.
    /// @param token The ERC-20 to move.
    /// @param from A payer wallet that approved the router, or the treasury.
    /// @param to The destination wallet or the treasury.
    /// @param amount Amount in the token's smallest unit.
    function settle(bytes32 ref, address token, address from, address to, uint256 amount) external;

    /// @notice The AllowanceStateMachine allowed to call `pullFor` (zero on a chain without one).
    /// @return The allowance state machine's address.
    function allowanceStateMachine() external view returns (address);

    /// @notice The operator allowed to call `settle` and `pullFor`.
    /// @return The operator's address.
    function operator() external view returns (address);

    /// @notice The treasury: the wallet that funds bank-funded legs and receives bank-bound legs.
    /// @return The treasury's address.
    function treasury() external view returns (address);
}
