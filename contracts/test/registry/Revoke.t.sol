// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RegistryBase} from "./Base.sol";
import {IAttestationRegistry as R} from "../../src/interfaces/IAttestationRegistry.sol";
import {ResolverMock} from "../utils/mocks/ResolverMock.sol";

contract RegistryRevokeTest is RegistryBase {
    function test_revoke_success_finalForTheUid() public {
        bytes32 uid = _attestAs(alice, _req());
        vm.warp(NOW + 5);
        vm.expectEmit(address(registry));
        emit R.Revoked(subject, alice, schema, uid, NOW + 5, true);
        vm.prank(alice);
        registry.revoke(schema, uid);
        assertEq(registry.getAttestation(uid).revocationTime, NOW + 5);
        assertFalse(registry.isAttestationValid(uid));
        assertFalse(registry.isValid(alice, subject, schema));
        assertEq(registry.latest(alice, subject, schema), uid);
        vm.expectRevert(abi.encodeWithSelector(R.AlreadyRevoked.selector, uid));
        vm.prank(alice);
        registry.revoke(schema, uid);
    }

    function test_revoke_success_aNewAttestationAfterwardsTakesTheSlot() public {
        bytes32 uid = _attestAs(alice, _req());
        vm.prank(alice);
        registry.revoke(schema, uid);
        bytes32 next = _attestAs(alice, _req()); // same second: the later action wins
        assertEq(registry.latest(alice, subject, schema), next);
        assertTrue(registry.isValid(alice, subject, schema));
        assertFalse(registry.isAttestationValid(uid));
    }

    function test_revoke_success_anOlderStoredOneLeavesTheSlotAlone() public {
        bytes32 older = registry.attestByDelegation(_delegated(ALICE_KEY, _req(), NOW - 10, 1));
        vm.warp(NOW + 1);
        bytes32 current = _attestAs(alice, _req());
        bytes32 stale = registry.attestByDelegation(_delegated(ALICE_KEY, _req(), NOW - 5, 2));
        assertTrue(stale != older);
        vm.expectEmit(address(registry));
        emit R.Revoked(subject, alice, schema, stale, NOW + 1, false);
        vm.prank(alice);
        registry.revoke(schema, stale);
        assertEq(registry.latest(alice, subject, schema), current);
        assertTrue(registry.isValid(alice, subject, schema));
    }

    function test_revoke_success_anotherIssuersRevocationLeavesMySlot() public {
        bytes32 mine = _attestAs(alice, _req());
        bytes32 theirs = _attestAs(bob, _req());
        vm.prank(bob);
        registry.revoke(schema, theirs);
        assertEq(registry.latest(alice, subject, schema), mine);
        assertTrue(registry.isValid(alice, subject, schema));
        assertFalse(registry.isValid(bob, subject, schema));
    }

    function test_revoke_success_resolverIsAsked() public {
        ResolverMock resolver = new ResolverMock();
        bytes32 s = registry.registerSchema("uint8 kind", resolver, true);
        bytes32 uid = _attestAs(alice, _req(s, 0));
        vm.prank(alice);
        registry.revoke(s, uid);
        assertEq(resolver.revokes(), 1);
        assertEq(resolver.lastRevocationTime(), NOW);
    }

    function test_revoke_revert_resolverRefuses() public {
        ResolverMock resolver = new ResolverMock();
        bytes32 s = registry.registerSchema("uint8 kind", resolver, true);
        bytes32 uid = _attestAs(alice, _req(s, 0));
        resolver.set(true, false);
        vm.expectRevert(abi.encodeWithSelector(R.ResolverRejected.selector, resolver));
        vm.prank(alice);
        registry.revoke(s, uid);
        assertTrue(registry.isValid(alice, subject, s));
    }

    function testFuzz_revoke_revert_notTheAttester(address caller) public {
        vm.assume(caller != alice);
        bytes32 uid = _attestAs(alice, _req());
        vm.expectRevert(abi.encodeWithSelector(R.NotAttester.selector, caller, alice));
        vm.prank(caller);
        registry.revoke(schema, uid);
    }

    function test_revoke_revert_unknown() public {
        bytes32 uid = keccak256("missing");
        vm.expectRevert(abi.encodeWithSelector(R.UnknownAttestation.selector, uid));
        vm.prank(alice);
        registry.revoke(schema, uid);
    }

    function test_revoke_revert_wrongSchema() public {
        bytes32 uid = _attestAs(alice, _req());
        vm.expectRevert(abi.encodeWithSelector(R.WrongSchema.selector, uid, fixedSchema));
        vm.prank(alice);
        registry.revoke(fixedSchema, uid);
    }

    function test_revoke_revert_irrevocable() public {
        R.AttestationRequest memory r = _req();
        r.revocable = false;
        bytes32 uid = _attestAs(alice, r);
        vm.expectRevert(abi.encodeWithSelector(R.Irrevocable.selector));
        vm.prank(alice);
        registry.revoke(schema, uid);
    }
}
