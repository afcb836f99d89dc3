// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {ISettlementRouter} from "./ISettlementRouter.sol";

/// @title IAllowanceStateMachine
/// @notice On-chain enforcement of agentic recurring debits: mandates (a ceiling per calendar
///         epoch), session keys scoped to a mandate (expiry, optional tighter ceiling, optional
///         destination allow-list, revocation), and debit pulls checked against both ceilings.
/// @dev Amounts are in the token's smallest unit and must fit in uint64. Epochs are calendar
///      aligned in UTC: days from 00:00Z, ISO weeks from Monday 00:00Z, calendar months, calendar
///      years. Unused allowance does not carry over. Only the operator may write. The contract is
///      also the settlement chain's router (`ISettlementRouter`): payers approve it, and a pull
///      moves their tokens itself.
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
    }

    /// @notice A session key as an explorer sees it.
    struct SessionKeyView {
        bytes32 mandateId;
        uint64 expiresAt;
        uint64 maxAmount; // 0 = no key ceiling (the mandate's applies)
        bool revoked;
        bool hasAllowList;
        uint64 spentThisEpoch;
    }

    /// @notice One item of `pullBatch`.
    struct PullItem {
        bytes32 keyId;
        address destination;
        uint256 amount;
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
    /// @notice A session key was issued under a mandate.
    event SessionKeyIssued(
        bytes32 indexed keyId,
        bytes32 indexed mandateId,
        uint64 expiresAt,
        uint64 maxAmount,
        address[] allowedDestinations
    );
    /// @notice A session key was revoked.
    event SessionKeyRevoked(bytes32 indexed keyId);
    /// @notice A pull was authorized and its tokens moved. In `pullBatch`, every item emits exactly
    ///         one of `DebitPulled` or `DebitPullDeclined`, in item order.
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

    /// @notice Creates a mandate. Only the operator.
    function createMandate(
        bytes32 mandateId,
        address payer,
        address token,
        uint256 maxAmount,
        Interval interval
    ) external;
    /// @notice Cancels a mandate; its keys can no longer pull. Only the operator.
    function cancelMandate(bytes32 mandateId) external;
    /// @notice Issues a session key. `maxAmount` 0 means no key ceiling; an empty list means any
    ///         destination. Only the operator.
    function issueSessionKey(
        bytes32 keyId,
        bytes32 mandateId,
        uint64 expiresAt,
        uint256 maxAmount,
        address[] calldata allowedDestinations
    ) external;
    /// @notice Revokes a session key (works while the router is paused). Only the operator.
    function revokeSessionKey(bytes32 keyId) external;
    /// @notice Pulls `amount` from the key's mandate payer to `destination`; reverts with the
    ///         reason's custom error when declined. Only the operator; reverts `RouterPaused`
    ///         while token moves are paused.
    function pull(bytes32 keyId, address destination, uint256 amount) external;
    /// @notice Pulls many items; each succeeds or is declined on its own and never reverts the
    ///         batch; outcomes are events. Returns how many items were authorized. Only the
    ///         operator; while token moves are paused the whole batch reverts `RouterPaused`
    ///         (no item is at fault).
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
    /// @notice The bounds [start, end) of the epoch of `interval` containing `timestamp`.
    function epochBounds(Interval interval, uint256 timestamp)
        external
        pure
        returns (uint64 start, uint64 end);
}
