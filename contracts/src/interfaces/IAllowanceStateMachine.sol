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
///      What a payer signs names who may be paid (its payees) and, optionally, the only agent
///      whose keys may pull: no operator, honest or stolen, can send a payer's tokens elsewhere.
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
        bytes32 payeesHash; // EIP-712 hash of the signed payees; 0 = none named (treasury only)
        address agent; // every key's signer must be this agent; 0 = none named
        Requirements requirements; // identity the mandate requires; all zero = none
    }

    /// @notice Identity a mandate requires, checked against the attestation mirror
    ///         (`attestationMirror()`) when the mandate and each key are created and on every
    ///         pull: the payer must hold a valid attestation of `payerSchema` by `attester`, and
    ///         each key's signer one of `agentSchema` (a zero schema requires nothing). The payer
    ///         signs them with the mandate.
    struct Requirements {
        address attester; // whose attestations count (a trusted attester of the mirror)
        bytes32 payerSchema; // the attestation-chain schema the payer must hold; 0 = none
        bytes32 agentSchema; // the schema every key's signer must hold; 0 = none
    }

    /// @notice The terms of a mandate. Its id is `mandateIdOf(payer, salt)`: nobody but the
    ///         payer (or its signature) can take it first.
    struct MandateTerms {
        bytes32 salt; // the caller's reference (Openrail: keccak256 of the API id)
        address payer; // the wallet pulls are paid from (or the treasury)
        address token; // the ERC-20 pulled
        uint256 maxAmount; // ceiling per epoch in token units (1 … 2^64-1)
        Interval interval; // the epoch
        address[] payees; // who may be paid; required unless the payer is the treasury
        address agent; // when not zero, every key on the mandate must have this signer
        bytes32 purposeHash; // keccak256 of the purpose text the payer was shown (signed)
        Requirements requirements; // identity required of the payer and the keys' signers
    }

    /// @notice The terms of a session key. Its id is `keyIdOf(mandateId, salt)`.
    struct KeyTerms {
        bytes32 salt; // the caller's reference (Openrail: keccak256 of the API id)
        bytes32 mandateId; // its mandate
        uint64 expiresAt; // unix seconds, in the future (stored clamped to 2^40-1)
        uint256 maxAmount; // the key's ceiling per epoch; 0 = none (the mandate's)
        address[] allowedDestinations; // a part of the mandate's payees; empty = all of them
        address signer; // the agent whose `DebitPull` signature each pull needs; 0 = none
    }

    /// @notice A session key as an explorer sees it.
    struct SessionKeyView {
        bytes32 mandateId;
        uint64 expiresAt;
        uint64 maxAmount; // 0 = no key ceiling (the mandate's applies)
        bool revoked;
        bool hasAllowList;
        uint64 spentThisEpoch; // tracked for a key with its own ceiling only (else 0)
        address signer; // 0 = pulls need no agent signature
    }

    /// @notice A mandate was created, with everything its payer agreed to.
    event MandateCreated(
        bytes32 indexed mandateId,
        address indexed payer,
        address indexed token,
        uint64 maxAmount,
        Interval interval,
        bytes32 salt,
        address[] payees,
        address agent,
        bytes32 purposeHash
    );
    /// @notice A mandate requires identity (emitted after its `MandateCreated`, only when it
    ///         requires any).
    event MandateRequirements(
        bytes32 indexed mandateId, address indexed attester, bytes32 payerSchema, bytes32 agentSchema
    );
    /// @notice A mandate was canceled; none of its keys can pull again.
    event MandateCanceled(bytes32 indexed mandateId);
    /// @notice A session key was issued under a mandate. `expiresAt` is the stored expiry;
    ///         `allowedDestinations` the stored list (the mandate's payees when none was given).
    event SessionKeyIssued(
        bytes32 indexed keyId,
        bytes32 indexed mandateId,
        uint64 expiresAt,
        uint64 maxAmount,
        address[] allowedDestinations,
        address signer,
        bytes32 salt
    );
    /// @notice A signed pull used nonce `nonce` of key `keyId` (emitted before its
    ///         `DebitPulled`); the events rebuild every key's nonce bitmap.
    event PullNonceUsed(bytes32 indexed keyId, uint256 nonce);
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
    /// @notice A mandate on a wallet must name its payees.
    error PayeesRequired();
    /// @notice The payees given are not the ones the mandate's payer signed.
    error PayeesMismatch(bytes32 mandateId);
    /// @notice A key destination is not one of the payees the mandate's payer signed.
    error PayeeNotSigned(address destination);
    /// @notice The mandate names an agent and the key's signer is not that agent.
    error SignerNotAgent(address agent, address signer);
    /// @notice `subject` holds no valid attestation of `schema` by the mandate's attester (none,
    ///         revoked, expired, or the attester is no longer trusted by the mirror).
    error IdentityRequirementUnmet(address subject, bytes32 schema);
    /// @notice The mandate requires identity but names no attester, or this contract has no
    ///         attestation mirror.
    error IdentityUnsupported();
    /// @notice The mandate requires an agent credential of every key's signer; the key has none.
    error SignerRequired();
    /// @notice Batch item `index` is truncated or of an unknown kind.
    error MalformedBatch(uint256 index);

    /// @notice Creates a mandate without a signature: by the payer itself (any payer), or by the
    ///         operator for a mandate whose payer is the treasury (bank-account payers). A
    ///         mandate whose payer is the treasury is deferred: its pulls use the ceiling and
    ///         move nothing; the operator pays out of the treasury with `settle` once the bank
    ///         leg is final. A mandate on a wallet must name its payees (`PayeesRequired`).
    /// @param terms The mandate's terms.
    /// @return mandateId `mandateIdOf(terms.payer, terms.salt)`.
    function createMandate(MandateTerms calldata terms) external returns (bytes32 mandateId);
    /// @notice Creates a mandate the payer signed: its EIP-712
    ///         `Mandate(bytes32 mandateId,address payer,address token,uint256 maxAmount,uint8 interval,address[] payees,address agent,string purpose,address identityAttester,bytes32 payerSchema,bytes32 agentSchema,uint256 nonce,uint256 deadline)`
    ///         where `mandateId` is `mandateIdOf(payer, salt)` and `purpose` hashes to
    ///         `terms.purposeHash` (ECDSA, or ERC-1271 for a contract wallet with all the gas
    ///         the transaction has; the payer's nonce is used once, shared with its payment
    ///         nonces; not after `deadline`). Only the operator submits it.
    /// @param terms The mandate's terms, as signed.
    /// @param nonce The payer's unordered nonce.
    /// @param deadline Last second (unix) the signature is good for.
    /// @param signature The payer's signature.
    /// @return mandateId `mandateIdOf(terms.payer, terms.salt)`.
    function createMandateWithSignature(
        MandateTerms calldata terms,
        uint256 nonce,
        uint256 deadline,
        bytes calldata signature
    ) external returns (bytes32 mandateId);
    /// @notice The id of `payer`'s mandate with `salt`: `keccak256(abi.encode(payer, salt))`.
    /// @param payer The payer.
    /// @param salt The creator's reference.
    /// @return The mandate id.
    function mandateIdOf(address payer, bytes32 salt) external pure returns (bytes32);
    /// @notice The id of a key of `mandateId` with `salt`: `keccak256(abi.encode(mandateId, salt))`.
    /// @param mandateId The mandate.
    /// @param salt The issuer's reference.
    /// @return The key id.
    function keyIdOf(bytes32 mandateId, bytes32 salt) external pure returns (bytes32);
    /// @notice Cancels a mandate; its keys can no longer pull. The operator or the mandate's payer
    ///         (works while paused).
    /// @param mandateId The mandate.
    function cancelMandate(bytes32 mandateId) external;
    /// @notice Issues a session key under an active mandate. The operator or the mandate's payer.
    ///         When the mandate names payees, the key pays only among them
    ///         (`PayeeNotSigned`); when it names an agent, the key's signer must be that agent
    ///         (`SignerNotAgent`).
    /// @param terms The key's terms.
    /// @param payees The mandate's signed payees, checked against its stored hash
    ///        (`PayeesMismatch`); ignored (pass none) when the mandate names none.
    /// @return keyId `keyIdOf(terms.mandateId, terms.salt)`.
    function issueSessionKey(KeyTerms calldata terms, address[] calldata payees)
        external
        returns (bytes32 keyId);
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
    ///         batch; outcomes are events (`DebitPulled` or `DebitPullDeclined`, one per item,
    ///         in order). Items are packed back to back, big-endian, each starting with its kind:
    ///         - `0x00 ‖ keyId (32) ‖ destination (20) ‖ amount (8)`: 61 bytes, a key without a
    ///           signer;
    ///         - `0x01 ‖ keyId ‖ destination ‖ amount ‖ nonce (32) ‖ deadline (8) ‖
    ///           signatureLength (2) ‖ signature`: a key with a signer, whose EIP-712
    ///           `DebitPull(bytes32 keyId,address destination,uint256 amount,uint256 nonce,uint256 deadline)`
    ///           signature the item carries; its nonce is used only when the item is authorized.
    ///         A truncated item or an unknown kind reverts `MalformedBatch` (the service's own
    ///         encoding, never a payer's input). Each item's token call (and a contract signer's
    ///         ERC-1271 call) gets bounded gas. Returns how many items were authorized. Only the
    ///         operator; while token moves are paused the whole batch reverts `RouterPaused`.
    /// @param items The packed pulls.
    /// @return authorized How many were authorized.
    function pullBatch(bytes calldata items) external returns (uint256 authorized);

    /// @notice The settlement chain's attestation mirror that identity requirements are checked
    ///         against (0: mandates cannot require identity).
    function attestationMirror() external view returns (address);
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
