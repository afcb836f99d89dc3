// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

/// @title ISchemaResolver
/// @notice An optional hook a schema names at registration: the registry asks it about every
///         attestation and revocation of the schema, after recording it, and reverts the whole
///         call when it answers false (modelled on EAS's `ISchemaResolver`, without payments).
interface ISchemaResolver {
    /// @notice Whether `attestation` (just recorded) may stand.
    /// @param attestation The new attestation, as stored.
    /// @return ok False reverts the attestation.
    function onAttest(IAttestationRegistry.Attestation calldata attestation) external returns (bool ok);

    /// @notice Whether `attestation` (just marked revoked) may be revoked.
    /// @param attestation The attestation, as stored with its revocation time.
    /// @return ok False reverts the revocation.
    function onRevoke(IAttestationRegistry.Attestation calldata attestation) external returns (bool ok);
}

/// @title IAttestationRegistry
/// @notice Attestations about a recipient (a wallet) on the attestation chain, modelled on the
///         Ethereum Attestation Service (EAS: `SchemaRegistry`, `EAS`, `EIP1271Verifier`),
///         smaller: schemas registered with a resolver and a `revocable` flag, attestations
///         made by their attester (directly, or by anyone carrying the attester's EIP-712
///         signature), revocations by the original attester only, final.
/// @dev Openrail puts a credential's digest, type and status reference in `data`, never
///      personal data. Besides every attestation by uid, the registry keeps one *slot* per
///      (attester, recipient, schema): the uid of that attester's newest attestation of the
///      schema about the recipient. A slot moves only by its own attester's actions (issuers
///      never share a slot) and only forward: an attestation replaces the slot's uid only when
///      its issue `time` is at least the slot's *floor* — the time of the attestation the slot
///      holds, or that attestation's revocation time once revoked. An older attestation (a
///      delegated one signed before, submitted after) is stored, valid by its uid, but the slot
///      keeps the newer one (`Attested.latest` is false). Times are seconds: within one second
///      the action recorded later wins.
interface IAttestationRegistry {
    /// @notice A registered schema.
    struct SchemaRecord {
        bytes32 uid; // keccak256(abi.encodePacked(schema, resolver, revocable))
        ISchemaResolver resolver; // zero: none
        bool revocable; // whether attestations of the schema may be revocable
        string schema; // the schema's definition (e.g. "bytes32 credentialDigest,uint8 kind")
    }

    /// @notice A stored attestation (the fields of EAS's `Attestation`).
    struct Attestation {
        bytes32 uid; // unique identifier
        bytes32 schema; // the schema's uid
        uint64 time; // issue time: the block's for `attest`, the signed `issuedAt` when delegated
        uint64 expirationTime; // 0: never expires
        uint64 revocationTime; // 0: not revoked
        bytes32 refUID; // a related attestation, or 0
        address recipient; // whom it is about
        address attester; // who made it
        bool revocable; // whether its attester may revoke it
        bytes data; // the schema's data (Openrail: a credential's digest/type/status reference)
    }

    /// @notice What an attester asks to record.
    struct AttestationRequest {
        bytes32 schema; // a registered schema's uid
        address recipient; // not zero
        uint64 expirationTime; // 0: never; otherwise in the future
        bool revocable; // only if the schema is revocable
        bytes32 refUID; // 0, or the uid of a stored attestation
        bytes data; // the schema's data
    }

    /// @notice An attestation signed by its attester (EIP-712 `Attest`), submitted by anyone.
    struct DelegatedAttestationRequest {
        AttestationRequest request; // what is attested
        address attester; // the signer: an EOA (ECDSA) or an ERC-1271 contract
        uint64 issuedAt; // when the attester issued it (not in the future): the attestation's `time`
        uint256 nonce; // unordered, per attester: each usable once
        uint64 deadline; // last second at which it may be submitted
        bytes signature; // the attester's signature of the `Attest` digest
    }

    /// @notice A revocation signed by the attestation's attester (EIP-712 `Revoke`).
    struct DelegatedRevocationRequest {
        bytes32 schema; // the attestation's schema
        bytes32 uid; // the attestation
        address revoker; // the signer, who must be the attestation's attester
        uint256 nonce; // unordered, per signer, shared with `Attest`
        uint64 deadline; // last second at which it may be submitted
        bytes signature; // the revoker's signature of the `Revoke` digest
    }

    /// @notice A schema was registered.
    /// @param uid The schema's uid.
    /// @param registerer Who registered it.
    /// @param resolver Its resolver (zero: none).
    /// @param revocable Whether its attestations may be revocable.
    /// @param schema Its definition.
    event SchemaRegistered(
        bytes32 indexed uid,
        address indexed registerer,
        ISchemaResolver indexed resolver,
        bool revocable,
        string schema
    );

    /// @notice An attestation was recorded.
    /// @param recipient Whom it is about.
    /// @param attester Who made it.
    /// @param schema Its schema's uid.
    /// @param uid Its uid.
    /// @param time Its issue time.
    /// @param expirationTime When it expires (0: never).
    /// @param latest Whether it now holds the (attester, recipient, schema) slot; false when
    ///        the slot holds a newer attestation or a later revocation.
    event Attested(
        address indexed recipient,
        address indexed attester,
        bytes32 indexed schema,
        bytes32 uid,
        uint64 time,
        uint64 expirationTime,
        bool latest
    );

    /// @notice An attestation was revoked (for good).
    /// @param recipient Whom it is about.
    /// @param attester Its attester, who revoked it.
    /// @param schema Its schema's uid.
    /// @param uid Its uid.
    /// @param revocationTime When.
    /// @param latest Whether its (attester, recipient, schema) slot holds it (the slot is now
    ///        invalid until a newer attestation); false for an older attestation the slot
    ///        had already moved past.
    event Revoked(
        address indexed recipient,
        address indexed attester,
        bytes32 indexed schema,
        bytes32 uid,
        uint64 revocationTime,
        bool latest
    );

    /// @notice A signer's nonce was used (by a delegated request or `invalidateNonce`).
    /// @param signer The signer.
    /// @param nonce The nonce.
    event NonceUsed(address indexed signer, uint256 nonce);

    /// @notice This schema (same definition, resolver and flag) is already registered.
    error SchemaAlreadyRegistered(bytes32 uid);
    /// @notice No schema has this uid.
    error UnknownSchema(bytes32 uid);
    /// @notice No attestation has this uid.
    error UnknownAttestation(bytes32 uid);
    /// @notice The recipient is the zero address.
    error ZeroRecipient();
    /// @notice The expiration time is not in the future.
    error InvalidExpirationTime(uint64 expirationTime);
    /// @notice A revocable attestation of an irrevocable schema, or a revocation of an
    ///         irrevocable attestation.
    error Irrevocable();
    /// @notice The attestation belongs to another schema than the one named.
    error WrongSchema(bytes32 uid, bytes32 schema);
    /// @notice Only an attestation's attester may revoke it.
    error NotAttester(address caller, address attester);
    /// @notice The attestation is already revoked; revocation is final.
    error AlreadyRevoked(bytes32 uid);
    /// @notice The schema's resolver refused.
    error ResolverRejected(ISchemaResolver resolver);
    /// @notice A delegated request's deadline has passed.
    error DeadlineExpired(uint64 deadline);
    /// @notice A delegated attestation's issue time is in the future.
    error IssuedInFuture(uint64 issuedAt);
    /// @notice The signature is not the signer's over the request.
    error InvalidSignature();
    /// @notice The signer already used this nonce.
    error NonceAlreadyUsed(uint256 nonce);

    /// @notice Registers a schema; anyone may.
    /// @param schema Its definition.
    /// @param resolver A resolver consulted on every attestation and revocation, or zero.
    /// @param revocable Whether its attestations may be revocable.
    /// @return uid keccak256(abi.encodePacked(schema, resolver, revocable)); reverts
    ///         `SchemaAlreadyRegistered` if taken.
    function registerSchema(string calldata schema, ISchemaResolver resolver, bool revocable)
        external
        returns (bytes32 uid);

    /// @notice Records an attestation by `msg.sender`, issued now; moves the sender's slot
    ///         (sender, recipient, schema) to it (its time is now, never below the floor).
    /// @param request What is attested.
    /// @return uid The new attestation's uid.
    function attest(AttestationRequest calldata request) external returns (bytes32 uid);

    /// @notice Records an attestation signed by `delegated.attester`; anyone may submit it. Its
    ///         time is the signed `issuedAt`: it moves the attester's slot only if it is not older
    ///         than the slot's floor (else it is stored and `Attested.latest` is false).
    /// @param delegated The request, the attester, issue time, nonce, deadline and signature.
    /// @return uid The new attestation's uid.
    function attestByDelegation(DelegatedAttestationRequest calldata delegated) external returns (bytes32 uid);

    /// @notice Revokes an attestation of `msg.sender`, for good: revoking again reverts, and
    ///         the uid can never be valid again. The slot holding it becomes invalid and its
    ///         floor moves to now.
    /// @param schema The attestation's schema.
    /// @param uid The attestation.
    function revoke(bytes32 schema, bytes32 uid) external;

    /// @notice `revoke` signed by the attestation's attester; anyone may submit it.
    /// @param delegated The revocation, the revoker, nonce, deadline and signature.
    function revokeByDelegation(DelegatedRevocationRequest calldata delegated) external;

    /// @notice Uses `nonce` of `msg.sender`, so a delegated request signed with it can never be
    ///         submitted.
    /// @param nonce The nonce.
    function invalidateNonce(uint256 nonce) external;

    /// @notice The uid in the slot of (attester, recipient, schema): the attester's newest
    ///         attestation of the schema about the recipient (0: none).
    /// @param attester The attester.
    /// @param recipient The recipient.
    /// @param schema The schema's uid.
    /// @return uid The slot's attestation.
    function latest(address attester, address recipient, bytes32 schema) external view returns (bytes32 uid);

    /// @notice Whether the slot of (attester, recipient, schema) holds an attestation that is
    ///         not revoked and not expired. Two storage reads.
    /// @param attester The attester.
    /// @param recipient The recipient.
    /// @param schema The schema's uid.
    /// @return valid Whether the attester currently attests the schema about the recipient.
    function isValid(address attester, address recipient, bytes32 schema) external view returns (bool valid);

    /// @notice Whether the attestation `uid` exists, is not revoked and not expired.
    /// @param uid The attestation.
    /// @return valid Its validity now.
    function isAttestationValid(bytes32 uid) external view returns (bool valid);

    /// @notice A stored attestation (all fields zero when unknown, as EAS).
    /// @param uid The attestation.
    /// @return attestation The attestation.
    function getAttestation(bytes32 uid) external view returns (Attestation memory attestation);

    /// @notice A registered schema (all fields zero when unknown).
    /// @param uid The schema's uid.
    /// @return record The schema.
    function getSchema(bytes32 uid) external view returns (SchemaRecord memory record);

    /// @notice Whether `signer` used `nonce`.
    /// @param signer The signer.
    /// @param nonce The nonce.
    /// @return used Whether it is used.
    function nonceUsed(address signer, uint256 nonce) external view returns (bool used);

    /// @notice The EIP-712 digest an attester signs for `delegated` (its `signature` ignored).
    /// @param delegated The delegated request.
    /// @return digest The `Attest` digest under this registry's domain.
    function attestDigest(DelegatedAttestationRequest calldata delegated)
        external
        view
        returns (bytes32 digest);

    /// @notice The EIP-712 digest a revoker signs for `delegated` (its `signature` ignored).
    /// @param delegated The delegated revocation.
    /// @return digest The `Revoke` digest under this registry's domain.
    function revokeDigest(DelegatedRevocationRequest calldata delegated)
        external
        view
        returns (bytes32 digest);
}
