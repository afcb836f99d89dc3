// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

/// @title ISettlementRouter
/// @notice Moves ERC-20 tokens atomically between a payer wallet (which approved the router),
///         the treasury, and destination wallets. Deployed on both chains. Never keeps a balance.
/// @dev Only the operator submits moves, and it can move a payer's tokens only with the payer's
///      EIP-712 `Payment` signature (`settleWithSignature`, ECDSA or ERC-1271, each nonce once);
///      without one it moves only the treasury's own tokens (`settle`). No move may pay the
///      router itself or the zero address. On the settlement chain the router is the
///      AllowanceStateMachine itself (it extends this interface), so a debit pull moves tokens
///      without a call to a second contract; see ARCHITECTURE.md "Gas". Pausing blocks every
///      move (`settle`, `settleWithSignature`, `pull`, `pullBatch`); it never blocks
///      cancellation or revocation. EIP-712 domain: name "Openrail", version "1", the chain's
///      id, this contract.
interface ISettlementRouter {
    /// @notice A move was settled (one-time payments, bank legs).
    /// @param ref The caller's reference (the payment's id hash).
    /// @param token The ERC-20 moved.
    /// @param from The wallet the tokens left (a payer wallet or the treasury).
    /// @param to The wallet the tokens reached (a destination wallet or the treasury).
    /// @param amount Amount in the token's smallest unit.
    event Settled(bytes32 indexed ref, address indexed token, address from, address to, uint256 amount);

    /// @notice The owner proposed a new treasury; it takes over once it accepts.
    /// @param current The treasury now.
    /// @param proposed The proposed treasury.
    event TreasuryProposed(address indexed current, address indexed proposed);

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

    /// @notice The destination is the zero address or this contract (tokens would be lost).
    /// @param destination The refused destination.
    error InvalidDestination(address destination);
    /// @notice The signature is malformed, malleable, or not the expected signer's.
    error InvalidSignature();
    /// @notice The signed authorization's deadline has passed.
    /// @param deadline The deadline it carried (unix seconds).
    error SignatureExpired(uint256 deadline);
    /// @notice The nonce was used (or invalidated) already.
    /// @param nonce The nonce.
    error NonceAlreadyUsed(uint256 nonce);
    /// @notice Less gas is left than a token call may need; the transaction needs a higher limit.
    error InsufficientGas();

    /// @notice One of `owner`'s signature nonces was used: by a signed mandate or payment, or
    ///         burned by `invalidateNonce`. Nothing signed with it can be used again; the events
    ///         rebuild every nonce bitmap.
    /// @param owner The signer.
    /// @param nonce The nonce.
    event NonceUsed(address indexed owner, uint256 nonce);
    /// @notice The owner proposed a new operator, which can take over from `effectiveAt` on
    ///         (`activateOperator`); a zero `proposed` withdraws a proposal.
    /// @param current The operator now.
    /// @param proposed The proposed operator.
    /// @param effectiveAt When it may take over (unix seconds; 0 for a withdrawal).
    event OperatorProposed(address indexed current, address indexed proposed, uint64 effectiveAt);
    /// @notice The owner and the operator would be one key.
    error OwnerIsOperator();
    /// @notice No operator change is pending.
    error NoPendingOperator();
    /// @notice The pending operator change may take effect only at `effectiveAt`.
    /// @param effectiveAt When it may.
    error OperatorChangeNotDue(uint64 effectiveAt);
    /// @notice Ownership cannot be renounced.
    error OwnershipCannotBeRenounced();

    /// @notice Moves `amount` of `token` from the treasury to `to` and emits `Settled`. Only the
    ///         operator: the one move that needs no payer signature, because the tokens are the
    ///         treasury's own.
    /// @param ref The caller's reference, echoed in `Settled`.
    /// @param token The ERC-20 to move.
    /// @param to The destination wallet.
    /// @param amount Amount in the token's smallest unit.
    function settle(bytes32 ref, address token, address to, uint256 amount) external;

    /// @notice Moves `amount` of `token` from `from` to `to` as `from` signed it, and emits
    ///         `Settled`. Only the operator submits it. The signature is `from`'s EIP-712
    ///         `Payment(address token,address from,address to,uint256 amount,uint256 nonce,uint256 deadline)`
    ///         (ECDSA for an account, ERC-1271 for a contract wallet); each nonce of `from` works
    ///         once, in any order, and not after `deadline`.
    /// @param ref The caller's reference, echoed in `Settled` (not signed).
    /// @param token The ERC-20 to move.
    /// @param from The payer wallet (approved the router).
    /// @param to The destination wallet or the treasury.
    /// @param amount Amount in the token's smallest unit.
    /// @param nonce The payer's unordered nonce.
    /// @param deadline Last second (unix) the signature is good for.
    /// @param signature The payer's signature (65 bytes, or a contract wallet's format).
    function settleWithSignature(
        bytes32 ref,
        address token,
        address from,
        address to,
        uint256 amount,
        uint256 nonce,
        uint256 deadline,
        bytes calldata signature
    ) external;

    /// @notice Marks one of the caller's nonces used, so a payment or mandate it signed with it
    ///         can never be submitted. Anyone, for their own nonces; works while paused.
    /// @param nonce The nonce to burn.
    function invalidateNonce(uint256 nonce) external;

    /// @notice Whether `owner`'s `nonce` was used or invalidated.
    /// @param owner The signer.
    /// @param nonce The nonce.
    /// @return True when it can no longer be used.
    function nonceUsed(address owner, uint256 nonce) external view returns (bool);

    /// @notice The EIP-712 domain separator of this contract on this chain.
    /// @return The separator.
    function DOMAIN_SEPARATOR() external view returns (bytes32);

    /// @notice Blocks every token move until `unpause`. Revocations keep working. Only the owner.
    function pause() external;

    /// @notice Allows token moves again. Only the owner.
    function unpause() external;

    /// @notice Proposes a new operator, who can take over `OPERATOR_DELAY` later
    ///         (`activateOperator`), so payers see the change coming (`OperatorProposed`) and can
    ///         cancel mandates and revoke keys first. Zero withdraws a pending proposal. The owner
    ///         may not propose itself. Only the owner.
    /// @param operator_ The proposed operator, or zero.
    function proposeOperator(address operator_) external;
    /// @notice Makes the proposed operator the operator once its delay has passed. Anyone.
    function activateOperator() external;
    /// @notice The proposed operator and when it may take over; zeros when none.
    /// @return operator_ The proposed operator.
    /// @return effectiveAt Unix seconds from which `activateOperator` succeeds.
    function pendingOperator() external view returns (address operator_, uint64 effectiveAt);

    /// @notice Proposes a new treasury. Only the owner. It takes over only when it accepts
    ///         (`acceptTreasury`), so the owner cannot make a payer's wallet the treasury and
    ///         have the operator move its tokens as the treasury's.
    ///         Zero withdraws a pending proposal.
    /// @param treasury_ The proposed treasury, or zero.
    function setTreasury(address treasury_) external;

    /// @notice The proposed treasury accepts and becomes the treasury. Only the proposed one.
    function acceptTreasury() external;

    /// @notice The proposed treasury, zero when none.
    /// @return The address.
    function pendingTreasury() external view returns (address);

    /// @notice The operator: the service's signer, the only account that submits moves (and, on
    ///         the settlement chain, pulls and key issuance).
    /// @return The operator's address.
    function operator() external view returns (address);

    /// @notice Whether token moves are paused.
    /// @return True while paused.
    function paused() external view returns (bool);

    /// @notice The treasury: the wallet that funds bank-funded legs and receives bank-bound legs.
    /// @return The treasury's address.
    function treasury() external view returns (address);
}
