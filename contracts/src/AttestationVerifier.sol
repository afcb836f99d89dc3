// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {IAttestationVerifier} from "./interfaces/IAttestationVerifier.sol";

/// @title AttestationVerifier
/// @notice Keeps EIP-712 attestations signed by registered attesters; `isValid` answers whether
///         a subject currently holds a valid attestation of a schema.
contract AttestationVerifier is IAttestationVerifier, Ownable2Step, EIP712 {
    /// @notice The EIP-712 type hash of `Attestation`.
    bytes32 public constant ATTESTATION_TYPEHASH = keccak256(
        "Attestation(address subject,bytes32 schema,bytes32 dataHash,uint64 expiresAt,uint256 nonce)"
    );

    mapping(address account => bool) private _attesters;
    mapping(bytes32 id => Record) private _records;
    mapping(address subject => mapping(bytes32 schema => bytes32 id)) private _latest;

    /// @notice Deploys the verifier.
    /// @param owner_ The owner, who registers attesters.
    constructor(address owner_) Ownable(owner_) EIP712("Openrail AttestationVerifier", "1") {}

    /// @inheritdoc IAttestationVerifier
    function addAttester(address attester) external onlyOwner {
        if (attester == address(0)) revert ZeroAddress();
        if (_attesters[attester]) revert AlreadyAttester(attester);
        _attesters[attester] = true;
        emit AttesterAdded(attester);
    }

    /// @inheritdoc IAttestationVerifier
    function removeAttester(address attester) external onlyOwner {
        if (!_attesters[attester]) revert NotAttester(attester);
        _attesters[attester] = false;
        emit AttesterRemoved(attester);
    }

    /// @inheritdoc IAttestationVerifier
    function attest(Attestation calldata a, bytes calldata signature) external returns (bytes32 id) {
        if (a.subject == address(0)) revert ZeroAddress();
        if (a.expiresAt <= block.timestamp) revert AttestationExpired(a.expiresAt);
        id = _hash(a);
        (address signer, ECDSA.RecoverError err,) = ECDSA.tryRecover(id, signature);
        if (err != ECDSA.RecoverError.NoError) revert InvalidSignature();
        if (!_attesters[signer]) revert NotAttester(signer);
        if (_records[id].issuer != address(0)) revert AlreadyAttested(id);
        _records[id] = Record(a.subject, a.schema, a.dataHash, signer, a.expiresAt, false);
        _latest[a.subject][a.schema] = id;
        emit Attested(id, a.subject, a.schema, signer, a.dataHash, a.expiresAt);
    }

    /// @inheritdoc IAttestationVerifier
    function revoke(bytes32 id) external {
        Record storage r = _records[id];
        if (r.issuer == address(0)) revert UnknownAttestation(id);
        if (msg.sender != r.issuer && msg.sender != owner()) revert NotIssuerOrOwner(msg.sender);
        if (r.revoked) revert AlreadyRevoked(id);
        r.revoked = true;
        emit AttestationRevoked(id);
    }

    /// @inheritdoc IAttestationVerifier
    function isValid(address subject, bytes32 schema) external view returns (bool) {
        Record memory r = _records[_latest[subject][schema]];
        return r.issuer != address(0) && !r.revoked && block.timestamp < r.expiresAt && _attesters[r.issuer];
    }

    /// @inheritdoc IAttestationVerifier
    function getAttestation(bytes32 id) external view returns (Record memory) {
        Record memory r = _records[id];
        if (r.issuer == address(0)) revert UnknownAttestation(id);
        return r;
    }

    /// @inheritdoc IAttestationVerifier
    function isAttester(address account) external view returns (bool) {
        return _attesters[account];
    }

    /// @inheritdoc IAttestationVerifier
    function hashAttestation(Attestation calldata a) external view returns (bytes32) {
        return _hash(a);
    }

    /// @notice The EIP-712 domain separator.
    /// @return The separator of this chain and contract.
    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    function _hash(Attestation calldata a) private view returns (bytes32) {
        return _hashTypedDataV4(
            keccak256(abi.encode(ATTESTATION_TYPEHASH, a.subject, a.schema, a.dataHash, a.expiresAt, a.nonce))
        );
    }
}
