// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RegistryBase} from "./Base.sol";
import {IAttestationRegistry as R} from "../../src/interfaces/IAttestationRegistry.sol";
import {ResolverMock} from "../utils/mocks/ResolverMock.sol";

contract RegistryAttestTest is RegistryBase {
    function test_attest_success_storesAndTakesTheSlot() public {
        R.AttestationRequest memory r = _req(schema, NOW + 30 days);
        bytes32 expected = _uidOf(r, alice, NOW);
        vm.expectEmit(address(registry));
        emit R.Attested(subject, alice, schema, expected, NOW, NOW + 30 days, true);
        bytes32 uid = _attestAs(alice, r);
        assertEq(uid, expected);
        R.Attestation memory a = registry.getAttestation(uid);
        assertEq(a.uid, uid);
        assertEq(a.schema, schema);
        assertEq(a.time, NOW);
        assertEq(a.expirationTime, NOW + 30 days);
        assertEq(a.revocationTime, 0);
        assertEq(a.refUID, bytes32(0));
        assertEq(a.recipient, subject);
        assertEq(a.attester, alice);
        assertTrue(a.revocable);
        assertEq(a.data, r.data);
        assertEq(registry.latest(alice, subject, schema), uid);
        assertTrue(registry.isValid(alice, subject, schema));
        assertTrue(registry.isAttestationValid(uid));
        // Another attester's slot is untouched.
        assertEq(registry.latest(bob, subject, schema), bytes32(0));
        assertFalse(registry.isValid(bob, subject, schema));
    }

    function test_attest_success_aLaterAttestationReplacesTheSlot() public {
        bytes32 first = _attestAs(alice, _req());
        vm.warp(NOW + 1);
        bytes32 second = _attestAs(alice, _req());
        assertEq(registry.latest(alice, subject, schema), second);
        assertTrue(first != second);
        assertTrue(registry.isAttestationValid(first)); // still stored and valid by uid
    }

    function test_attest_success_identicalInOneSecondGetsABumpedUid() public {
        bytes32 first = _attestAs(alice, _req());
        bytes32 second = _attestAs(alice, _req());
        assertTrue(first != second);
        // Within one second the one recorded later wins the slot.
        assertEq(registry.latest(alice, subject, schema), second);
    }

    function test_attest_success_refUid() public {
        bytes32 first = _attestAs(alice, _req());
        R.AttestationRequest memory r = _req();
        r.refUID = first;
        bytes32 uid = _attestAs(bob, r);
        assertEq(registry.getAttestation(uid).refUID, first);
    }

    function test_attest_success_resolverIsAsked() public {
        ResolverMock resolver = new ResolverMock();
        bytes32 s = registry.registerSchema("uint8 kind", resolver, true);
        bytes32 uid = _attestAs(alice, _req(s, 0));
        assertEq(resolver.attests(), 1);
        assertEq(resolver.lastUid(), uid);
    }

    function test_attest_revert_resolverRefuses() public {
        ResolverMock resolver = new ResolverMock();
        resolver.set(false, true);
        bytes32 s = registry.registerSchema("uint8 kind", resolver, true);
        vm.expectRevert(abi.encodeWithSelector(R.ResolverRejected.selector, resolver));
        _attestAs(alice, _req(s, 0));
        assertEq(registry.latest(alice, subject, s), bytes32(0));
    }

    function test_attest_revert_unknownSchema() public {
        bytes32 unknown = keccak256("nope");
        vm.expectRevert(abi.encodeWithSelector(R.UnknownSchema.selector, unknown));
        _attestAs(alice, _req(unknown, 0));
    }

    function test_attest_revert_zeroRecipient() public {
        R.AttestationRequest memory r = _req();
        r.recipient = address(0);
        vm.expectRevert(abi.encodeWithSelector(R.ZeroRecipient.selector));
        _attestAs(alice, r);
    }

    function testFuzz_attest_revert_expirationNotInTheFuture(uint64 expiration) public {
        expiration = uint64(bound(expiration, 1, NOW));
        vm.expectRevert(abi.encodeWithSelector(R.InvalidExpirationTime.selector, expiration));
        _attestAs(alice, _req(schema, expiration));
    }

    function testFuzz_attest_success_validUntilItExpires(uint64 ttl, uint64 later) public {
        ttl = uint64(bound(ttl, 1, 3650 days));
        later = uint64(bound(later, 0, 2 * 3650 days));
        _attestAs(alice, _req(schema, NOW + ttl));
        vm.warp(NOW + later);
        assertEq(registry.isValid(alice, subject, schema), later < ttl);
    }

    function test_attest_revert_revocableOnAnIrrevocableSchema() public {
        vm.expectRevert(abi.encodeWithSelector(R.Irrevocable.selector));
        _attestAs(alice, _req(fixedSchema, 0));
        R.AttestationRequest memory r = _req(fixedSchema, 0);
        r.revocable = false;
        _attestAs(alice, r); // an irrevocable attestation of it is fine
        assertTrue(registry.isValid(alice, subject, fixedSchema));
    }

    function test_attest_revert_unknownRefUid() public {
        R.AttestationRequest memory r = _req();
        r.refUID = keccak256("missing");
        vm.expectRevert(abi.encodeWithSelector(R.UnknownAttestation.selector, r.refUID));
        _attestAs(alice, r);
    }

    function testFuzz_attest_success_slotsOfIssuersAreApart(uint8 steps) public {
        bytes32 aliceUid = _attestAs(alice, _req());
        for (uint256 i; i < bound(steps, 1, 8); ++i) {
            vm.warp(NOW + 1 + i);
            bytes32 uid = _attestAs(bob, _req());
            if (i % 2 == 0) {
                vm.prank(bob);
                registry.revoke(schema, uid);
            }
        }
        assertEq(registry.latest(alice, subject, schema), aliceUid);
        assertTrue(registry.isValid(alice, subject, schema));
    }
}
