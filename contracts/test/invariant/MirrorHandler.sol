// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Test} from "../utils/Test.sol";
import {AttestationMirror} from "../../src/AttestationMirror.sol";
import {IAttestationMirror as M} from "../../src/interfaces/IAttestationMirror.sol";

/// @dev Drives random receipts (newer, equal and older sequences; revoked or not; four uids
///      shared by all attesters), trust changes and warps against a mirror it owns, for three
///      attesters, two recipients and one schema, counting what the invariants forbid.
contract MirrorHandler is Test {
    AttestationMirror public mirror;
    uint256[3] public keys = [uint256(0xA11CE), 0xB0B, 0xCA201];
    address[3] public attesters;
    address[2] public recipients = [address(0xAAA1), address(0xAAA2)];
    bytes32[1] public schemas = [keccak256("kyc")]; // the slots vary by attester and recipient

    mapping(bytes32 slotUid => bool) internal _ghostRevoked; // (attester, recipient, schema, uid)
    uint256 public backwardMoves;
    uint256 public crossIssuerChanges;
    uint256 public revivals; // a receipt made a uid its attester revoked valid again
    uint256 public recorded;
    uint256 public refused;

    struct View {
        M.Slot slot;
        bool valid;
    }

    constructor() {
        vm.warp(1_795_435_200);
        mirror = new AttestationMirror(address(this));
        for (uint256 i; i < 3; ++i) {
            attesters[i] = vm.addr(keys[i]);
            mirror.addAttester(attesters[i]);
        }
    }

    /// @dev Whether a receipt recorded for slot (i, j, k) said `uid` is revoked.
    function ghostRevoked(uint256 i, uint256 j, uint256 k, bytes32 uid) public view returns (bool) {
        return _ghostRevoked[keccak256(abi.encode(attesters[i], recipients[j], schemas[k], uid))];
    }

    function slotView(uint256 i, uint256 j, uint256 k) public view returns (View memory v) {
        v.slot = mirror.slotOf(attesters[i], recipients[j], schemas[k]);
        v.valid = mirror.isValid(attesters[i], recipients[j], schemas[k]);
    }

    function _all() internal view returns (View[6] memory views) {
        for (uint256 n; n < 6; ++n) {
            views[n] = slotView(n / 2, n % 2, 0);
        }
    }

    function _check(View[6] memory before, uint256 actor) internal {
        View[6] memory now_ = _all();
        for (uint256 n; n < 6; ++n) {
            if (now_[n].slot.sequence < before[n].slot.sequence) ++backwardMoves;
            bool changed = now_[n].slot.uid != before[n].slot.uid || now_[n].valid != before[n].valid
                || now_[n].slot.sequence != before[n].slot.sequence;
            if (n / 2 != actor && changed) ++crossIssuerChanges;
            if (now_[n].valid && ghostRevoked(n / 2, n % 2, 0, now_[n].slot.uid)) ++revivals;
        }
    }

    function record(uint256 i, uint256 j, uint256 k, uint256 uidSeed, bool revoked, uint256 step, uint256 ttl)
        external
    {
        (i, j, k) = (bound(i, 0, 2), bound(j, 0, 1), bound(k, 0, 0));
        View[6] memory before = _all();
        uint64 current = before[i * 2 + j].slot.sequence;
        // From two below the slot's sequence to three above: stale and equal receipts too.
        uint256 sequence = current + bound(step, 0, 5);
        sequence = sequence < 2 ? 1 : sequence - 2;
        ttl = bound(ttl, 0, 3 days);
        M.Receipt memory r = M.Receipt(
            attesters[i],
            recipients[j],
            schemas[k],
            keccak256(abi.encode(bound(uidSeed, 0, 3))),
            ttl == 0 ? 0 : uint64(block.timestamp + ttl),
            revoked,
            uint64(sequence)
        );
        try mirror.record(r, _sign(keys[i], mirror.hashReceipt(r))) {
            ++recorded;
            if (revoked) {
                _ghostRevoked[keccak256(abi.encode(r.attester, r.recipient, r.schema, r.uid))] = true;
            }
        } catch {
            ++refused;
        }
        _check(before, i);
    }

    function _sign(uint256 key, bytes32 digest) internal pure returns (bytes memory) {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(key, digest);
        return abi.encodePacked(r, s, v);
    }

    /// @dev The owner stops trusting attester `i`, or trusts it again.
    function toggleTrust(uint256 i) external {
        i = bound(i, 0, 2);
        View[6] memory before = _all();
        if (mirror.isTrusted(attesters[i])) mirror.removeAttester(attesters[i]);
        else mirror.addAttester(attesters[i]);
        _check(before, i);
    }

    function warp(uint256 secondsSeed) external {
        vm.warp(block.timestamp + bound(secondsSeed, 1, 2 days));
    }
}
