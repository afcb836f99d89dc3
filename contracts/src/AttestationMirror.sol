// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {IAttestationMirror} from "./interfaces/IAttestationMirror.sol";

/// @title AttestationMirror
/// @notice Mirrors, on the settlement chain, the per-issuer attestation slots of the attestation
///         chain's `AttestationRegistry`, from receipts its trusted attesters sign. See
///         `IAttestationMirror` for the rules and how a state machine calls it.
contract AttestationMirror is IAttestationMirror, Ownable2Step, EIP712 {
    /// @notice The EIP-712 type hash of `AttestationReceipt`.
    bytes32 public constant RECEIPT_TYPEHASH = keccak256(
        "AttestationReceipt(address attester,address recipient,bytes32 schema,bytes32 uid,uint64 expirationTime,bool revoked,uint64 sequence)"
    );

    mapping(address attester => bool) private _trusted;
    mapping(address attester => mapping(address recipient => mapping(bytes32 schema => Slot))) private _slots;
    mapping(bytes32 slotUid => bool) private _revoked; // keccak256(attester, recipient, schema, uid)

    /// @notice Deploys the mirror.
    /// @param owner_ The owner, who trusts and distrusts attesters.
    constructor(address owner_) Ownable(owner_) EIP712("Openrail AttestationMirror", "1") {}

    /// @inheritdoc IAttestationMirror
    function addAttester(address attester) external onlyOwner {
        if (attester == address(0)) revert ZeroAddress();
        if (_trusted[attester]) revert AlreadyTrusted(attester);
        _trusted[attester] = true;
        emit AttesterTrusted(attester);
    }

    /// @inheritdoc IAttestationMirror
    function removeAttester(address attester) external onlyOwner {
        if (!_trusted[attester]) revert UntrustedAttester(attester);
        _trusted[attester] = false;
        emit AttesterUntrusted(attester);
    }

    /// @inheritdoc IAttestationMirror
    function record(Receipt calldata receipt, bytes calldata signature) external {
        if (!_trusted[receipt.attester]) revert UntrustedAttester(receipt.attester);
        if (receipt.recipient == address(0)) revert ZeroAddress();
        if (receipt.uid == 0) revert ZeroUid();
        if (!SignatureChecker.isValidSignatureNow(receipt.attester, _hash(receipt), signature)) {
            revert InvalidSignature();
        }
        Slot storage slot = _slots[receipt.attester][receipt.recipient][receipt.schema];
        uint64 current = slot.sequence;
        if (receipt.sequence <= current) revert StaleReceipt(receipt.sequence, current);
        bytes32 key = keccak256(abi.encode(receipt.attester, receipt.recipient, receipt.schema, receipt.uid));
        if (receipt.revoked) _revoked[key] = true;
        else if (_revoked[key]) revert RevokedUid(receipt.uid);
        slot.expirationTime = receipt.expirationTime;
        slot.sequence = receipt.sequence;
        slot.revoked = receipt.revoked;
        slot.uid = receipt.uid;
        emit ReceiptRecorded(
            receipt.attester,
            receipt.recipient,
            receipt.schema,
            receipt.uid,
            receipt.expirationTime,
            receipt.revoked,
            receipt.sequence
        );
    }

    /// @inheritdoc IAttestationMirror
    function isValid(address attester, address recipient, bytes32 schema) external view returns (bool) {
        if (!_trusted[attester]) return false;
        Slot storage slot = _slots[attester][recipient][schema];
        // One read of the packed word: expirationTime (bits 0-63), sequence (64-127), revoked (128-135).
        uint256 word;
        assembly ("memory-safe") {
            word := sload(slot.slot)
        }
        uint64 expires = uint64(word);
        bool revoked = (word >> 128) & 0xff != 0;
        return uint64(word >> 64) != 0 && !revoked && (expires == 0 || expires > block.timestamp);
    }

    /// @inheritdoc IAttestationMirror
    function slotOf(address attester, address recipient, bytes32 schema) external view returns (Slot memory) {
        return _slots[attester][recipient][schema];
    }

    /// @inheritdoc IAttestationMirror
    function isRevoked(address attester, address recipient, bytes32 schema, bytes32 uid)
        external
        view
        returns (bool)
    {
        return _revoked[keccak256(abi.encode(attester, recipient, schema, uid))];
    }

    /// @inheritdoc IAttestationMirror
    function isTrusted(address attester) external view returns (bool) {
        return _trusted[attester];
    }

    /// @inheritdoc IAttestationMirror
    function hashReceipt(Receipt calldata receipt) external view returns (bytes32) {
        return _hash(receipt);
    }

    /// @notice The EIP-712 domain separator.
    /// @return The separator of this chain and contract.
    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    function _hash(Receipt calldata r) private view returns (bytes32) {
        return _hashTypedDataV4(
            keccak256(
                abi.encode(
                    RECEIPT_TYPEHASH,
                    r.attester,
                    r.recipient,
                    r.schema,
                    r.uid,
                    r.expirationTime,
                    r.revoked,
                    r.sequence
                )
            )
        );
    }
}
