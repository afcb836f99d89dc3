// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {ISettlementRouter} from "./ISettlementRouter.sol";

/// @title IAllowanceStateMachine
/// @notice On-chain enforcement of agentic recurring debits: mandates (a ceiling per calendar
///         epoch), session keys scoped to a mandate (expiry, optional tighter ceiling, optional
///         destination allow-list, revocation), and debit pulls checked against both ceilings.
/// @dev Amounts are in the token's smallest unit and must fit in uint64. Epochs are calendar
///      aligned in UTC: days from 00:00Z, ISO weeks from Monday 00:00Z, calendar months, calendar
///      years. Unused allowance does not carry over. The payer's signature is the root of
///      authority: a mandate on a wallet exists only with the payer's EIP-712 `Mandate` signature
///      (`createMandateWithSignature`) or the payer's own transaction (`createMandate`); only
///      mandates paid by the treasury (bank-account payers) are created by the operator alone.
///      The payer can cancel its mandate and revoke its keys without the operator. A session key
///      may name an agent `signer`: its pulls then need the signer's EIP-712 `DebitPull`
///      signature (each (key, nonce) once). The contract is also the settlement chain's router
///      (`ISettlementRouter`): payers approve it, and a pull moves their tokens itself.
interface IAllowanceStateMachine is ISettlementRouter {
    /// @notice Length of a mandate's epoch.
    enum Interval {
        Daily,
        Weekly,
        Monthly,
        Yearly
    }

    /// @notice Lifecycle of a mandate. `None` means it does not exist.
    enum MandateStatus {
        None,
        Active,
        Canceled
    }

    /// @notice A mandate as an explorer sees it.
    struct MandateView {
        address payer;
        address token;
        uint64 maxAmount;
        Interval interval;
        MandateStatus status;
        uint64 spentThisEpoch;
        uint64 epochStart;
        uint64 epochEnd;
        bool deferred; // paid by the treasury: pulls authorize, the payout is a later `settle`
    }

    /// @notice A session key as an explorer sees it.
    struct SessionKeyView {
        bytes32 mandateId;
        uint64 expiresAt;
        uint64 maxAmount; // 0 = no key ceiling (the mandate's applies)
        bool revoked;
        bool hasAllowList;
        uint64 spentThisEpoch;
        address signer; // 0 = pulls need no agent signature
    }

    /// @notice One item of `pullBatch`. `nonce`, `deadline` and `signature` matter only for a key
    ///         with a `signer` (its agent's `DebitPull` signature); leave them zero and empty
    ///         otherwise.
    struct PullItem {
        bytes32 keyId;
        address destination;
        uint256 amount;
        uint256 nonce;
        uint256 deadline;
        bytes signature;
    }

    /// @notice A mandate was created.
    event MandateCreated(
        bytes32 indexed mandateId,
        address indexed payer,
        address indexed token,
        uint64 maxAmount,
        Interval interval
    );
    /// @notice A mandate was canceled; none of its keys can pull again.
    event MandateCanceled(bytes32 indexed mandateId);
    /// @notice A session key was issued under a mandate. `expiresAt` is the stored expiry.
    event SessionKeyIssued(
        bytes32 indexed keyId,
        bytes32 indexed mandateId,
        uint64 expiresAt,
        uint64 maxAmount,
        address[] allowedDestinations,
        address signer
    );
    /// @notice A session key was revoked.
    event SessionKeyRevoked(bytes32 indexed keyId);
    /// @notice A pull was authorized and its tokens moved — or, on a deferred mandate (paid by
    ///         the treasury for a bank-account payer), authorized only: the ceiling is used at
    ///         once and the treasury pays the destination later with `settle`, after the bank
    ///         debit is final. In `pullBatch`, every item emits exactly one of `DebitPulled` or
    ///         `DebitPullDeclined`, in item order.
    event DebitPulled(bytes32 indexed keyId, address indexed destination, uint256 amount);
    /// @notice A `pullBatch` item was declined; `reason` is the ABI-encoded custom error that a
    ///         single `pull` would have reverted with.
    event DebitPullDeclined(bytes32 indexed keyId, uint256 indexed index, bytes reason);

    /// @notice A mandate with this id already exists.
    error MandateAlreadyExists(bytes32 mandateId);
    /// @notice No mandate has this id.
    error UnknownMandate(bytes32 mandateId);
    /// @notice The mandate is canceled.
    error MandateNotActive(bytes32 mandateId);
    /// @notice A session key with this id already exists.
    error KeyAlreadyExists(bytes32 keyId);
    /// @notice No session key has this id.
    error UnknownKey(bytes32 keyId);
    /// @notice The session key was revoked.
    error KeyRevoked(bytes32 keyId);
    /// @notice The session key expired at `expiresAt`.
    error KeyExpired(bytes32 keyId, uint64 expiresAt);
    /// @notice The key's ceiling is above the mandate's.
    error KeyCeilingAboveMandate(uint256 keyMaxAmount, uint256 mandateMaxAmount);
    /// @notice The key's expiry is not in the future.
    error ExpiryNotInFuture(uint64 expiresAt);
    /// @notice The destination is not on the key's allow-list.
    error DestinationNotAllowed(bytes32 keyId, address destination);
    /// @notice The pull would take the key above its ceiling this epoch.
    error KeyCeilingExceeded(bytes32 keyId, uint256 remaining, uint64 resetsAt);
    /// @notice The pull would take the mandate above its ceiling this epoch.
    error MandateCeilingExceeded(bytes32 mandateId, uint256 remaining, uint64 resetsAt);
    /// @notice The token move failed (payer balance or allowance too low, or the destination is
    ///         the payer or the zero address).
    error TransferFailed(bytes32 keyId);
    /// @notice The amount is zero or does not fit in uint64.
    error InvalidAmount(uint256 amount);
    /// @notice The key names a signer and the pull carries no signature.
    error SignatureRequired(bytes32 keyId);

    /// @notice Creates a mandate without a signature: by the payer itself (any payer), or by the
    ///         operator for a mandate whose payer is the treasury (bank-account payers). A
    ///         mandate whose payer is the treasury is deferred: its pulls use the ceiling and
    ///         move nothing; the operator pays out of the treasury with `settle` once the bank
    ///         leg is final.
    /// @param mandateId The mandate's id.
    /// @param payer The wallet pulls are paid from.
    /// @param token The ERC-20 pulled.
    /// @param maxAmount Ceiling per epoch in token units (1 … 2^64-1).
    /// @param interval The epoch.
    function createMandate(
        bytes32 mandateId,
        address payer,
        address token,
        uint256 maxAmount,
        Interval interval
    ) external;
    /// @notice Creates a mandate the payer signed: its EIP-712
    ///         `Mandate(bytes32 mandateId,address payer,address token,uint256 maxAmount,uint8 interval,uint256 nonce,uint256 deadline)`
    ///         (ECDSA, or ERC-1271 for a contract wallet; the payer's nonce is used once, shared
    ///         with its payment nonces; not after `deadline`). Only the operator submits it.
    /// @param mandateId The mandate's id.
    /// @param payer The signer, whose wallet pulls are paid from.
    /// @param token The ERC-20 pulled.
    /// @param maxAmount Ceiling per epoch in token units.
    /// @param interval The epoch.
    /// @param nonce The payer's unordered nonce.
    /// @param deadline Last second (unix) the signature is good for.
    /// @param signature The payer's signature.
    function createMandateWithSignature(
        bytes32 mandateId,
        address payer,
        address token,
        uint256 maxAmount,
        Interval interval,
        uint256 nonce,
        uint256 deadline,
        bytes calldata signature
    ) external;
    /// @notice Cancels a mandate; its keys can no longer pull. The operator or the mandate's payer
    ///         (works while paused).
    /// @param mandateId The mandate.
    function cancelMandate(bytes32 mandateId) external;
    /// @notice Issues a session key under an active mandate. The operator or the mandate's payer.
    /// @param keyId The key's id.
    /// @param mandateId Its mandate.
    /// @param expiresAt Expiry, unix seconds, in the future (stored clamped to 2^40-1).
    /// @param maxAmount The key's ceiling per epoch in token units; 0 = none (the mandate's).
    /// @param allowedDestinations Destinations the key may pay; empty = any.
    /// @param signer The agent whose `DebitPull` signature each pull needs; 0 = none.
    function issueSessionKey(
        bytes32 keyId,
        bytes32 mandateId,
        uint64 expiresAt,
        uint256 maxAmount,
        address[] calldata allowedDestinations,
        address signer
    ) external;
    /// @notice Revokes a session key (works while paused). The operator or the mandate's payer.
    /// @param keyId The key.
    function revokeSessionKey(bytes32 keyId) external;
    /// @notice Pulls `amount` from the key's mandate payer to `destination`; reverts with the
    ///         reason's custom error when declined (`SignatureRequired` for a key with a
    ///         signer). Only the operator; reverts `RouterPaused` while token moves are paused.
    /// @param keyId The session key.
    /// @param destination Who is paid.
    /// @param amount Token units.
    function pull(bytes32 keyId, address destination, uint256 amount) external;
    /// @notice Pulls many items; each succeeds or is declined on its own and never reverts the
    ///         batch; outcomes are events. An item on a key with a signer needs the signer's
    ///         EIP-712 `DebitPull(bytes32 keyId,address destination,uint256 amount,uint256 nonce,uint256 deadline)`
    ///         signature; its nonce is used only when the item is authorized. Each item's token
    ///         call gets bounded gas. Returns how many items were authorized. Only the operator;
    ///         while token moves are paused the whole batch reverts `RouterPaused`.
    /// @param items The pulls.
    /// @return authorized How many were authorized.
    function pullBatch(PullItem[] calldata items) external returns (uint256 authorized);

    /// @notice A mandate's state.
    function getMandate(bytes32 mandateId) external view returns (MandateView memory);
    /// @notice A session key's state.
    function getSessionKey(bytes32 keyId) external view returns (SessionKeyView memory);
    /// @notice Whether `destination` may receive pulls of the key (true when the key has no list).
    function isDestinationAllowed(bytes32 keyId, address destination) external view returns (bool);
    /// @notice What the key may still pull in the current epoch (0 when it cannot pull at all),
    ///         and when the epoch resets.
    function remainingAllowance(bytes32 keyId) external view returns (uint256 remaining, uint64 resetsAt);
    /// @notice Whether `nonce` of key `keyId` was used by an authorized signed pull.
    function pullNonceUsed(bytes32 keyId, uint256 nonce) external view returns (bool);
    /// @notice The bounds [start, end) of the epoch of `interval` containing `timestamp`.
    function epochBounds(Interval interval, uint256 timestamp)
        external
        pure
        returns (uint64 start, uint64 end);
}
