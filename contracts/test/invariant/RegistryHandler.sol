// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Test} from "../utils/Test.sol";
import {AttestationRegistry} from "../../src/AttestationRegistry.sol";
import {IAttestationRegistry as R, ISchemaResolver} from "../../src/interfaces/IAttestationRegistry.sol";

/// @dev Drives random sequences of direct and delegated attestations (delegated ones issued up
///      to a day before they are submitted), revocations (direct and delegated, some of other
///      attesters' uids or twice) and time warps against a registry, by three attesters about
///      two recipients in one schema. Around every action it reads all six slots and
///      counts what the invariants forbid.
contract RegistryHandler is Test {
    AttestationRegistry public registry;
    uint256[3] public keys = [uint256(0xA11CE), 0xB0B, 0xCA201];
    address[3] public attesters;
    address[2] public recipients = [address(0xAAA1), address(0xAAA2)];
    bytes32[1] public schemas; // one schema: the slots vary by attester and recipient
    uint256 internal nonce;

    bytes32[] public uids; // every attestation recorded
    bytes32[] public revokedUids; // every revocation that succeeded
    mapping(bytes32 uid => uint64) public revokedAt;

    uint256 public backwardMoves; // a slot's floor or attestation time went down
    uint256 public crossIssuerChanges; // a slot changed by another attester's action
    uint256 public revivals; // a revoked uid became unrevoked, or a second revocation succeeded
    uint256 public attestations;
    uint256 public staleDelegations; // delegated attestations that did not take the slot
    uint256 public revocations;

    struct View {
        bytes32 uid;
        bool valid;
        uint64 time;
        uint64 floor;
    }

    constructor() {
        vm.warp(1_795_435_200);
        registry = new AttestationRegistry();
        for (uint256 i; i < 3; ++i) {
            attesters[i] = vm.addr(keys[i]);
        }
        schemas[0] = registry.registerSchema("bytes32 kyc", ISchemaResolver(address(0)), true);
    }

    function uidCount() external view returns (uint256) {
        return uids.length;
    }

    function revokedCount() external view returns (uint256) {
        return revokedUids.length;
    }

    /// @dev The slot of (attester i, recipient j, schema k) as the registry shows it.
    function slotView(uint256 i, uint256 j, uint256 k) public view returns (View memory v) {
        v.uid = registry.latest(attesters[i], recipients[j], schemas[k]);
        v.valid = registry.isValid(attesters[i], recipients[j], schemas[k]);
        if (v.uid != 0) {
            R.Attestation memory a = registry.getAttestation(v.uid);
            v.time = a.time;
            v.floor = a.revocationTime != 0 ? a.revocationTime : a.time;
        }
    }

    function _all() internal view returns (View[6] memory views) {
        for (uint256 n; n < 6; ++n) {
            views[n] = slotView(n / 2, n % 2, 0);
        }
    }

    /// @dev Compares every slot after an action by `actor` (an attester index) with before.
    function _check(View[6] memory before, uint256 actor) internal {
        View[6] memory now_ = _all();
        for (uint256 n; n < 6; ++n) {
            if (now_[n].floor < before[n].floor || now_[n].time < before[n].time) ++backwardMoves;
            if (n / 2 != actor && (now_[n].uid != before[n].uid || now_[n].valid != before[n].valid)) {
                ++crossIssuerChanges;
            }
        }
    }

    function _request(uint256 j, uint256 k, uint256 ttlSeed)
        internal
        view
        returns (R.AttestationRequest memory r)
    {
        uint256 ttl = bound(ttlSeed, 0, 3 days);
        r = R.AttestationRequest(
            schemas[k],
            recipients[j],
            ttl == 0 ? 0 : uint64(block.timestamp + ttl),
            true,
            bytes32(0),
            abi.encode(ttlSeed)
        );
    }

    function attest(uint256 i, uint256 j, uint256 k, uint256 ttlSeed) external {
        (i, j, k) = (bound(i, 0, 2), bound(j, 0, 1), bound(k, 0, 0));
        View[6] memory before = _all();
        vm.prank(attesters[i]);
        uids.push(registry.attest(_request(j, k, ttlSeed)));
        ++attestations;
        _check(before, i);
    }

    function attestByDelegation(uint256 i, uint256 j, uint256 k, uint256 ttlSeed, uint256 ageSeed) external {
        (i, j, k) = (bound(i, 0, 2), bound(j, 0, 1), bound(k, 0, 0));
        View[6] memory before = _all();
        uint64 issuedAt = uint64(block.timestamp - bound(ageSeed, 0, 1 days));
        R.DelegatedAttestationRequest memory d = R.DelegatedAttestationRequest(
            _request(j, k, ttlSeed), attesters[i], issuedAt, ++nonce, uint64(block.timestamp), ""
        );
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(keys[i], registry.attestDigest(d));
        d.signature = abi.encodePacked(r, s, v);
        bytes32 uid = registry.attestByDelegation(d);
        uids.push(uid);
        ++attestations;
        if (registry.latest(attesters[i], recipients[j], schemas[k]) != uid) ++staleDelegations;
        _check(before, i);
    }

    /// @dev Revokes a recorded uid as `i` — its attester or not; already revoked or not.
    function revoke(uint256 uidSeed, uint256 i, bool delegated) external {
        if (uids.length == 0) return;
        i = bound(i, 0, 2);
        bytes32 uid = uids[bound(uidSeed, 0, uids.length - 1)];
        R.Attestation memory a = registry.getAttestation(uid);
        View[6] memory before = _all();
        bool ok;
        if (delegated) {
            R.DelegatedRevocationRequest memory d = R.DelegatedRevocationRequest(
                a.schema, uid, attesters[i], ++nonce, uint64(block.timestamp), ""
            );
            (uint8 v, bytes32 r, bytes32 s) = vm.sign(keys[i], registry.revokeDigest(d));
            d.signature = abi.encodePacked(r, s, v);
            try registry.revokeByDelegation(d) {
                ok = true;
            } catch {}
        } else {
            vm.prank(attesters[i]);
            try registry.revoke(a.schema, uid) {
                ok = true;
            } catch {}
        }
        if (ok) {
            if (revokedAt[uid] != 0 || a.attester != attesters[i]) ++revivals;
            revokedAt[uid] = uint64(block.timestamp);
            revokedUids.push(uid);
            ++revocations;
        }
        _check(before, i);
    }

    function warp(uint256 secondsSeed) external {
        vm.warp(block.timestamp + bound(secondsSeed, 1, 2 days));
    }
}
