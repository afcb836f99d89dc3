// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

/// @title IAttestationVerifier
/// @notice EIP-712 attestations about a subject (a wallet), signed by registered attesters:
///         identity and anti-bot credentials (W3C Verifiable Credentials hashed into `dataHash`).
interface IAttestationVerifier {
    /// @notice What an attester signs.
    struct Attestation {
        address subject;
        bytes32 schema;
        bytes32 dataHash;
        uint64 expiresAt;
        uint256 nonce;
    }

    /// @notice A stored attestation.
    struct Record {
        address subject;
        bytes32 schema;
        bytes32 dataHash;
        address issuer;
        uint64 expiresAt;
        bool revoked;
    }

    /// @notice An attester was registered.
    event AttesterAdded(address indexed attester);
    /// @notice An attester was removed; its attestations stop counting as valid.
    event AttesterRemoved(address indexed attester);
    /// @notice An attestation was recorded.
    event Attested(
        bytes32 indexed id,
        address indexed subject,
        bytes32 indexed schema,
        address issuer,
        bytes32 dataHash,
        uint64 expiresAt
    );
    /// @notice An attestation was revoked.
    event AttestationRevoked(bytes32 indexed id);

    /// @notice The signer is not a registered attester.
    error NotAttester(address signer);
    /// @notice The address is already a registered attester.
    error AlreadyAttester(address attester);
    /// @notice The signature does not recover to an address.
    error InvalidSignature();
    /// @notice The attestation has expired (or expires now).
    error AttestationExpired(uint64 expiresAt);
    /// @notice This attestation was already recorded.
    error AlreadyAttested(bytes32 id);
    /// @notice No attestation has this id.
    error UnknownAttestation(bytes32 id);
    /// @notice The attestation is already revoked.
    error AlreadyRevoked(bytes32 id);
    /// @notice Only the issuer or the owner may revoke.
    error NotIssuerOrOwner(address caller);
    /// @notice An address argument is the zero address.
    error ZeroAddress();

    /// @notice Registers an attester. Only the owner.
    function addAttester(address attester) external;
    /// @notice Removes an attester. Only the owner.
    function removeAttester(address attester) external;
    /// @notice Records an attestation signed by a registered attester; anyone may submit it.
    function attest(Attestation calldata a, bytes calldata signature) external returns (bytes32 id);
    /// @notice Revokes an attestation. Only its issuer or the owner.
    function revoke(bytes32 id) external;
    /// @notice Whether `subject` holds a valid attestation of `schema`: the latest one recorded
    ///         for the pair is not revoked, not expired, and its issuer is still registered.
    function isValid(address subject, bytes32 schema) external view returns (bool);
    /// @notice A stored attestation.
    function getAttestation(bytes32 id) external view returns (Record memory);
    /// @notice Whether `account` is a registered attester.
    function isAttester(address account) external view returns (bool);
    /// @notice The EIP-712 digest of `a` (also its id once recorded).
    function hashAttestation(Attestation calldata a) external view returns (bytes32);
}
