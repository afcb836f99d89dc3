// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

/// @title IAttestationMirror
/// @notice The settlement chain's view of attestations made on the attestation chain. The
///         first chain cannot read the second, so a trusted attester carries each change of its
///         slots over as an EIP-712 `AttestationReceipt` it signs (for this mirror's domain:
///         this chain and address); anyone may submit it. Per (attester, recipient, schema) the
///         mirror keeps the receipt with the highest `sequence`: an older receipt never
///         overwrites a newer one, and once a receipt says a uid is revoked, no receipt makes
///         that uid valid again in that slot. (Revocations are kept per slot: on the attestation
///         chain a uid belongs to one slot — it hashes its attester, recipient and schema — so
///         one attester's receipts can never mark another's or another slot's uid.)
/// @dev How a state machine consults it: a mandate that requires a credential names
///      (mirror, attester, schema); on every pull the state machine calls
///      `IAttestationMirror(mirror).isValid(attester, payer, schema)` — a view of two storage
///      reads (the attester's trust, one packed word of the slot) — and declines when false.
///      `sequence` must grow with the attester's actions on the attestation chain; Openrail
///      derives it from the position of the registry's `Attested`/`Revoked` log there
///      (`block << 24 | logIndex`, see `chain::attestations::receipt_sequence`), so the
///      mirror's order is the attestation chain's.
interface IAttestationMirror {
    /// @notice What a trusted attester signs (EIP-712 `AttestationReceipt`): the state of its
    ///         slot (attester, recipient, schema) on the attestation chain.
    struct Receipt {
        address attester; // the signer, a trusted attester
        address recipient; // whom the attestation is about
        bytes32 schema; // the schema's uid on the attestation chain
        bytes32 uid; // the attestation now in the slot
        uint64 expirationTime; // 0: never
        bool revoked; // whether that attestation is revoked
        uint64 sequence; // order of the attester's receipts for the slot (higher is newer)
    }

    /// @notice The mirrored state of one slot: one storage word and the uid.
    struct Slot {
        uint64 expirationTime; // of the slot's attestation (0: never)
        uint64 sequence; // of the receipt recorded (0: none yet)
        bool revoked; // whether the slot's attestation is revoked
        bytes32 uid; // the slot's attestation
    }

    /// @notice An attester became trusted.
    /// @param attester The attester.
    event AttesterTrusted(address indexed attester);
    /// @notice An attester stopped being trusted; its slots stop counting as valid.
    /// @param attester The attester.
    event AttesterUntrusted(address indexed attester);
    /// @notice A receipt was recorded.
    /// @param attester Its attester.
    /// @param recipient Its recipient.
    /// @param schema Its schema.
    /// @param uid Its attestation.
    /// @param expirationTime Its expiration (0: never).
    /// @param revoked Whether it says the attestation is revoked.
    /// @param sequence Its sequence.
    event ReceiptRecorded(
        address indexed attester,
        address indexed recipient,
        bytes32 indexed schema,
        bytes32 uid,
        uint64 expirationTime,
        bool revoked,
        uint64 sequence
    );

    /// @notice An address argument is the zero address.
    error ZeroAddress();
    /// @notice The receipt's uid is zero.
    error ZeroUid();
    /// @notice The attester is already trusted.
    error AlreadyTrusted(address attester);
    /// @notice The attester is not trusted.
    error UntrustedAttester(address attester);
    /// @notice The signature is not the attester's over the receipt.
    error InvalidSignature();
    /// @notice The slot already holds a receipt with this sequence or a higher one.
    error StaleReceipt(uint64 sequence, uint64 current);
    /// @notice A receipt for this slot already said this uid is revoked; that is final.
    error RevokedUid(bytes32 uid);

    /// @notice Trusts `attester`. Only the owner.
    /// @param attester The attester.
    function addAttester(address attester) external;

    /// @notice Stops trusting `attester`: its slots stop counting (those of others do not
    ///         change). Only the owner.
    /// @param attester The attester.
    function removeAttester(address attester) external;

    /// @notice Records `receipt` signed by its (trusted) attester; anyone may submit it.
    ///         Reverts `StaleReceipt` unless its sequence is above the slot's, and `RevokedUid`
    ///         for a non-revoked receipt of a uid a receipt for the same slot said was revoked.
    /// @param receipt The receipt.
    /// @param signature The attester's signature (ECDSA with low `s`, or ERC-1271).
    function record(Receipt calldata receipt, bytes calldata signature) external;

    /// @notice Whether `attester` is trusted and its slot for (recipient, schema) holds a
    ///         receipt of an attestation neither revoked nor expired. Two storage reads.
    /// @param attester The attester.
    /// @param recipient The recipient.
    /// @param schema The schema's uid on the attestation chain.
    /// @return valid Whether the recipient holds the attester's credential of that schema.
    function isValid(address attester, address recipient, bytes32 schema) external view returns (bool valid);

    /// @notice The mirrored slot of (attester, recipient, schema).
    /// @param attester The attester.
    /// @param recipient The recipient.
    /// @param schema The schema's uid.
    /// @return slot The slot (all zero when no receipt was recorded).
    function slotOf(address attester, address recipient, bytes32 schema)
        external
        view
        returns (Slot memory slot);

    /// @notice Whether a receipt for the slot (attester, recipient, schema) said `uid` is revoked.
    /// @param attester The attester.
    /// @param recipient The recipient.
    /// @param schema The schema's uid.
    /// @param uid The attestation.
    /// @return revoked Whether it is revoked for good in that slot.
    function isRevoked(address attester, address recipient, bytes32 schema, bytes32 uid)
        external
        view
        returns (bool revoked);

    /// @notice Whether `attester` is trusted.
    /// @param attester The address.
    /// @return trusted Whether its receipts are accepted and count.
    function isTrusted(address attester) external view returns (bool trusted);

    /// @notice The EIP-712 digest an attester signs for `receipt`.
    /// @param receipt The receipt.
    /// @return digest The `AttestationReceipt` digest under this mirror's domain.
    function hashReceipt(Receipt calldata receipt) external view returns (bytes32 digest);
}
