// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {IAttestationRegistry, ISchemaResolver} from "./interfaces/IAttestationRegistry.sol";

/// @title AttestationRegistry
/// @notice The attestation chain's registry of schemas and attestations, with one slot per
///         (attester, recipient, schema) that only its attester moves, and only forward. See
///         `IAttestationRegistry` for the rules.
/// @dev Modelled on EAS (github.com/ethereum-attestation-service/eas-contracts, MIT: `EAS.sol`,
///      `SchemaRegistry.sol`, `eip1271/EIP1271Verifier.sol`): the same `Attestation` fields,
///      schema and attestation uids computed as EAS does, revocation by the original attester
///      only. Left out: payments to resolvers, batches, off-chain revocations and timestamps,
///      a separate schema registry contract. Changed: delegated requests carry their issue time
///      and an unordered nonce (EAS: a sequential one), and the per-issuer slots.
contract AttestationRegistry is IAttestationRegistry, EIP712 {
    /// @notice The EIP-712 type hash of the delegated attestation an attester signs.
    bytes32 public constant ATTEST_TYPEHASH = keccak256(
        "Attest(address attester,bytes32 schema,address recipient,uint64 expirationTime,bool revocable,bytes32 refUID,bytes data,uint64 issuedAt,uint256 nonce,uint64 deadline)"
    );
    /// @notice The EIP-712 type hash of the delegated revocation an attester signs.
    bytes32 public constant REVOKE_TYPEHASH =
        keccak256("Revoke(address revoker,bytes32 schema,bytes32 uid,uint256 nonce,uint64 deadline)");

    mapping(bytes32 uid => SchemaRecord) private _schemas;
    mapping(bytes32 uid => Attestation) private _attestations;
    mapping(address attester => mapping(address recipient => mapping(bytes32 schema => bytes32 uid))) private
        _slots;
    mapping(address signer => mapping(uint256 word => uint256 bits)) private _nonceBitmap;

    /// @notice Deploys the registry; it has no owner.
    constructor() EIP712("Openrail AttestationRegistry", "1") {}

    /// @inheritdoc IAttestationRegistry
    function registerSchema(string calldata schema, ISchemaResolver resolver, bool revocable)
        external
        returns (bytes32 uid)
    {
        uid = keccak256(abi.encodePacked(schema, resolver, revocable));
        if (_schemas[uid].uid != 0) revert SchemaAlreadyRegistered(uid);
        _schemas[uid] = SchemaRecord(uid, resolver, revocable, schema);
        emit SchemaRegistered(uid, msg.sender, resolver, revocable, schema);
    }

    /// @inheritdoc IAttestationRegistry
    function attest(AttestationRequest calldata request) external returns (bytes32 uid) {
        return _attest(request, msg.sender, uint64(block.timestamp));
    }

    /// @inheritdoc IAttestationRegistry
    function attestByDelegation(DelegatedAttestationRequest calldata delegated)
        external
        returns (bytes32 uid)
    {
        if (delegated.deadline < block.timestamp) {
            revert DeadlineExpired(delegated.deadline);
        }
        if (delegated.issuedAt > block.timestamp) revert IssuedInFuture(delegated.issuedAt);
        _checkSigned(delegated.attester, _attestDigest(delegated), delegated.signature, delegated.nonce);
        return _attest(delegated.request, delegated.attester, delegated.issuedAt);
    }

    /// @inheritdoc IAttestationRegistry
    function revoke(bytes32 schema, bytes32 uid) external {
        _revoke(schema, uid, msg.sender);
    }

    /// @inheritdoc IAttestationRegistry
    function revokeByDelegation(DelegatedRevocationRequest calldata delegated) external {
        if (delegated.deadline < block.timestamp) revert DeadlineExpired(delegated.deadline);
        _checkSigned(delegated.revoker, _revokeDigest(delegated), delegated.signature, delegated.nonce);
        _revoke(delegated.schema, delegated.uid, delegated.revoker);
    }

    /// @inheritdoc IAttestationRegistry
    function invalidateNonce(uint256 nonce) external {
        _useNonce(msg.sender, nonce);
    }

    /// @inheritdoc IAttestationRegistry
    function latest(address attester, address recipient, bytes32 schema) external view returns (bytes32) {
        return _slots[attester][recipient][schema];
    }

    /// @inheritdoc IAttestationRegistry
    function isValid(address attester, address recipient, bytes32 schema) external view returns (bool) {
        bytes32 uid = _slots[attester][recipient][schema];
        return uid != 0 && _live(_attestations[uid]);
    }

    /// @inheritdoc IAttestationRegistry
    function isAttestationValid(bytes32 uid) external view returns (bool) {
        Attestation storage a = _attestations[uid];
        return a.attester != address(0) && _live(a);
    }

    /// @inheritdoc IAttestationRegistry
    function getAttestation(bytes32 uid) external view returns (Attestation memory a) {
        a = _attestations[uid];
        if (a.attester != address(0)) a.uid = uid; // the key, not stored twice
    }

    /// @inheritdoc IAttestationRegistry
    function getSchema(bytes32 uid) external view returns (SchemaRecord memory) {
        return _schemas[uid];
    }

    /// @inheritdoc IAttestationRegistry
    function nonceUsed(address signer, uint256 nonce) external view returns (bool) {
        return _nonceBitmap[signer][nonce >> 8] & (1 << (nonce & 0xff)) != 0;
    }

    /// @inheritdoc IAttestationRegistry
    function attestDigest(DelegatedAttestationRequest calldata delegated) external view returns (bytes32) {
        return _attestDigest(delegated);
    }

    /// @inheritdoc IAttestationRegistry
    function revokeDigest(DelegatedRevocationRequest calldata delegated) external view returns (bytes32) {
        return _revokeDigest(delegated);
    }

    /// @notice The EIP-712 domain separator.
    /// @return The separator of this chain and contract.
    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    /// @dev Records `r` by `attester` issued at `time`, moves the slot when `time` is not below
    ///      its floor, then asks the schema's resolver.
    function _attest(AttestationRequest calldata r, address attester, uint64 time)
        private
        returns (bytes32 uid)
    {
        SchemaRecord storage schema = _schemas[r.schema];
        if (schema.uid == 0) revert UnknownSchema(r.schema);
        if (r.recipient == address(0)) revert ZeroRecipient();
        if (r.expirationTime != 0 && r.expirationTime <= block.timestamp) {
            revert InvalidExpirationTime(r.expirationTime);
        }
        if (r.revocable && !schema.revocable) revert Irrevocable();
        if (r.refUID != 0 && _attestations[r.refUID].attester == address(0)) {
            revert UnknownAttestation(r.refUID);
        }
        // EAS's uid, bumped in the rare case of an identical attestation in the same second.
        uint32 bump;
        while (true) {
            uid = keccak256(
                abi.encodePacked(
                    r.schema,
                    r.recipient,
                    attester,
                    time,
                    r.expirationTime,
                    r.revocable,
                    r.refUID,
                    r.data,
                    bump
                )
            );
            if (_attestations[uid].attester == address(0)) break;
            unchecked {
                ++bump;
            }
        }
        Attestation storage a = _attestations[uid];
        a.schema = r.schema;
        a.time = time;
        a.expirationTime = r.expirationTime;
        a.refUID = r.refUID;
        a.recipient = r.recipient;
        a.attester = attester;
        a.revocable = r.revocable;
        a.data = r.data;
        mapping(bytes32 => bytes32) storage slots = _slots[attester][r.recipient];
        bytes32 current = slots[r.schema];
        bool newest = current == 0 || time >= _floor(_attestations[current]);
        if (newest) slots[r.schema] = uid;
        emit Attested(r.recipient, attester, r.schema, uid, time, r.expirationTime, newest);
        ISchemaResolver resolver = schema.resolver;
        if (address(resolver) != address(0) && !resolver.onAttest(_copy(a, uid))) {
            revert ResolverRejected(resolver);
        }
    }

    /// @dev Revokes `uid` of `schema` on behalf of `revoker`, who must be its attester.
    function _revoke(bytes32 schema, bytes32 uid, address revoker) private {
        Attestation storage a = _attestations[uid];
        if (a.attester == address(0)) revert UnknownAttestation(uid);
        if (a.schema != schema) revert WrongSchema(uid, schema);
        if (a.attester != revoker) revert NotAttester(revoker, a.attester);
        if (!a.revocable) revert Irrevocable();
        if (a.revocationTime != 0) revert AlreadyRevoked(uid);
        a.revocationTime = uint64(block.timestamp);
        address recipient = a.recipient;
        bool held = _slots[revoker][recipient][schema] == uid;
        emit Revoked(recipient, revoker, schema, uid, uint64(block.timestamp), held);
        ISchemaResolver resolver = _schemas[schema].resolver;
        if (address(resolver) != address(0) && !resolver.onRevoke(_copy(a, uid))) {
            revert ResolverRejected(resolver);
        }
    }

    /// @dev `a` in memory with its uid (the mapping's key: the stored `uid` field stays zero,
    ///      an attestation exists when its attester is set).
    function _copy(Attestation storage a, bytes32 uid) private view returns (Attestation memory m) {
        m = a;
        m.uid = uid;
    }

    /// @dev The time below which an attestation cannot replace `a` in its slot: its issue time,
    ///      or its revocation time once revoked (a revocation is never older than its issue).
    function _floor(Attestation storage a) private view returns (uint64) {
        uint64 revoked = a.revocationTime;
        return revoked != 0 ? revoked : a.time;
    }

    /// @dev Not revoked and not expired (one storage word: time, expiration, revocation).
    function _live(Attestation storage a) private view returns (bool) {
        uint64 expires = a.expirationTime;
        return a.revocationTime == 0 && (expires == 0 || expires > block.timestamp);
    }

    /// @dev Reverts unless `signature` is `signer`'s over `digest` (ECDSA with low `s`, or
    ///      ERC-1271 when `signer` has code); then uses the nonce.
    function _checkSigned(address signer, bytes32 digest, bytes calldata signature, uint256 nonce) private {
        if (!SignatureChecker.isValidSignatureNow(signer, digest, signature)) revert InvalidSignature();
        _useNonce(signer, nonce);
    }

    /// @dev Marks `signer`'s `nonce` used; reverts `NonceAlreadyUsed` if it was.
    function _useNonce(address signer, uint256 nonce) private {
        uint256 bit = 1 << (nonce & 0xff);
        uint256 flipped = _nonceBitmap[signer][nonce >> 8] ^= bit;
        if (flipped & bit == 0) revert NonceAlreadyUsed(nonce);
        emit NonceUsed(signer, nonce);
    }

    function _attestDigest(DelegatedAttestationRequest calldata d) private view returns (bytes32) {
        AttestationRequest calldata r = d.request;
        bytes memory head = abi.encode(
            ATTEST_TYPEHASH, d.attester, r.schema, r.recipient, r.expirationTime, r.revocable, r.refUID
        );
        return _hashTypedDataV4(
            keccak256(bytes.concat(head, abi.encode(keccak256(r.data), d.issuedAt, d.nonce, d.deadline)))
        );
    }

    function _revokeDigest(DelegatedRevocationRequest calldata d) private view returns (bytes32) {
        return _hashTypedDataV4(
            keccak256(abi.encode(REVOKE_TYPEHASH, d.revoker, d.schema, d.uid, d.nonce, d.deadline))
        );
    }
}
