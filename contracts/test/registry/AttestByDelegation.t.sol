// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RegistryBase} from "./Base.sol";
import {IAttestationRegistry as R} from "../../src/interfaces/IAttestationRegistry.sol";
import {ERC1271WalletMock} from "../utils/mocks/ERC1271WalletMock.sol";

contract RegistryAttestByDelegationTest is RegistryBase {
    uint256 internal constant SECP256K1_N =
        0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141;

    function test_attestByDelegation_success_anyoneSubmitsTheAttestersSignature() public {
        R.DelegatedAttestationRequest memory d = _delegated(ALICE_KEY, _req(), NOW - 60, 7);
        assertEq(registry.attestDigest(d), _attestDigest(d));
        bytes32 expected = _uidOf(d.request, alice, NOW - 60);
        vm.expectEmit(address(registry));
        emit R.NonceUsed(alice, 7);
        vm.expectEmit(address(registry));
        emit R.Attested(subject, alice, schema, expected, NOW - 60, 0, true);
        vm.prank(relayer);
        bytes32 uid = registry.attestByDelegation(d);
        assertEq(uid, expected);
        R.Attestation memory a = registry.getAttestation(uid);
        assertEq(a.attester, alice);
        assertEq(a.time, NOW - 60); // the signed issue time
        assertEq(registry.latest(alice, subject, schema), uid);
        assertTrue(registry.isValid(alice, subject, schema));
        assertTrue(registry.nonceUsed(alice, 7));
    }

    function test_attestByDelegation_success_anOlderOneIsStoredButNeverTakesTheSlot() public {
        R.DelegatedAttestationRequest memory old = _delegated(ALICE_KEY, _req(), NOW - 100, 1);
        bytes32 newer = _attestAs(alice, _req()); // issued NOW
        vm.expectEmit(address(registry));
        emit R.Attested(subject, alice, schema, _uidOf(old.request, alice, NOW - 100), NOW - 100, 0, false);
        bytes32 uid = registry.attestByDelegation(old);
        assertEq(registry.latest(alice, subject, schema), newer);
        assertTrue(registry.isAttestationValid(uid)); // stored, valid by its uid
    }

    function test_attestByDelegation_success_anOlderOneNeverRevalidatesARevokedSlot() public {
        // The audit's case: signed at NOW, revoked later, then the older one is submitted.
        R.DelegatedAttestationRequest memory old = _delegated(ALICE_KEY, _req(), NOW, 1);
        bytes32 current = _attestAs(alice, _req());
        vm.warp(NOW + 10);
        vm.prank(alice);
        registry.revoke(schema, current);
        registry.attestByDelegation(old);
        assertEq(registry.latest(alice, subject, schema), current);
        assertFalse(registry.isValid(alice, subject, schema));
        // One issued after the revocation does take the slot.
        bytes32 fresh = registry.attestByDelegation(_delegated(ALICE_KEY, _req(), NOW + 10, 2));
        assertEq(registry.latest(alice, subject, schema), fresh);
        assertTrue(registry.isValid(alice, subject, schema));
    }

    function testFuzz_attestByDelegation_success_theSlotMovesOnlyForward(uint64 first, uint64 second) public {
        vm.warp(NOW + 1_000_000);
        first = uint64(bound(first, NOW, NOW + 1_000_000));
        second = uint64(bound(second, NOW, NOW + 1_000_000));
        bytes32 a = registry.attestByDelegation(_delegated(ALICE_KEY, _req(), first, 1));
        R.AttestationRequest memory r = _req();
        r.data = "other";
        bytes32 b = registry.attestByDelegation(_delegated(ALICE_KEY, r, second, 2));
        assertEq(registry.latest(alice, subject, schema), second >= first ? b : a);
        assertEq(
            registry.getAttestation(registry.latest(alice, subject, schema)).time,
            second >= first ? second : first
        );
    }

    function test_attestByDelegation_success_erc1271Attester() public {
        ERC1271WalletMock wallet = new ERC1271WalletMock(alice);
        R.DelegatedAttestationRequest memory d =
            R.DelegatedAttestationRequest(_req(), address(wallet), NOW, 1, NOW + 1 hours, "");
        d.signature = _sig(ALICE_KEY, _attestDigest(d));
        bytes32 uid = registry.attestByDelegation(d);
        assertEq(registry.getAttestation(uid).attester, address(wallet));
        assertTrue(registry.isValid(address(wallet), subject, schema));
        assertFalse(registry.isValid(alice, subject, schema));
        // The wallet refuses another key's signature.
        d.nonce = 2;
        d.signature = _sig(BOB_KEY, _attestDigest(d));
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        registry.attestByDelegation(d);
    }

    function test_attestByDelegation_revert_replay() public {
        R.DelegatedAttestationRequest memory d = _delegated(ALICE_KEY, _req(), NOW, 5);
        registry.attestByDelegation(d);
        vm.expectRevert(abi.encodeWithSelector(R.NonceAlreadyUsed.selector, 5));
        registry.attestByDelegation(d);
    }

    function test_attestByDelegation_revert_invalidatedNonce() public {
        R.DelegatedAttestationRequest memory d = _delegated(ALICE_KEY, _req(), NOW, 5);
        vm.prank(alice);
        registry.invalidateNonce(5);
        vm.expectRevert(abi.encodeWithSelector(R.NonceAlreadyUsed.selector, 5));
        registry.attestByDelegation(d);
    }

    function testFuzz_attestByDelegation_revert_afterTheDeadline(uint64 late) public {
        R.DelegatedAttestationRequest memory d = _delegated(ALICE_KEY, _req(), NOW, 1);
        vm.warp(uint256(d.deadline) + bound(late, 1, 365 days));
        vm.expectRevert(abi.encodeWithSelector(R.DeadlineExpired.selector, d.deadline));
        registry.attestByDelegation(d);
    }

    function testFuzz_attestByDelegation_revert_issuedInTheFuture(uint64 ahead) public {
        uint64 issuedAt = uint64(NOW + bound(ahead, 1, 30 days));
        R.DelegatedAttestationRequest memory d = _delegated(ALICE_KEY, _req(), issuedAt, 1);
        vm.expectRevert(abi.encodeWithSelector(R.IssuedInFuture.selector, issuedAt));
        registry.attestByDelegation(d);
    }

    function test_attestByDelegation_revert_anotherKeysSignature() public {
        R.DelegatedAttestationRequest memory d = _delegated(ALICE_KEY, _req(), NOW, 1);
        d.signature = _sig(BOB_KEY, _attestDigest(d));
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        registry.attestByDelegation(d);
    }

    function test_attestByDelegation_revert_tamperedFields() public {
        R.DelegatedAttestationRequest memory d = _delegated(ALICE_KEY, _req(), NOW - 5, 1);
        d.issuedAt = NOW; // an attester's older request made to look newer
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        registry.attestByDelegation(d);
        d = _delegated(ALICE_KEY, _req(), NOW, 1);
        d.request.recipient = bob;
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        registry.attestByDelegation(d);
    }

    function test_attestByDelegation_revert_malleatedSignature() public {
        R.DelegatedAttestationRequest memory d = _delegated(ALICE_KEY, _req(), NOW, 1);
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(ALICE_KEY, _attestDigest(d));
        d.signature = abi.encodePacked(r, bytes32(SECP256K1_N - uint256(s)), v == 27 ? uint8(28) : uint8(27));
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        registry.attestByDelegation(d);
    }
}
