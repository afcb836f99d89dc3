// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {MirrorBase} from "./Base.sol";
import {IAttestationMirror as M} from "../../src/interfaces/IAttestationMirror.sol";
import {ERC1271WalletMock} from "../utils/mocks/ERC1271WalletMock.sol";

contract MirrorRecordTest is MirrorBase {
    bytes32 internal constant UID = keccak256("uid-1");

    function test_record_success_anyoneSubmitsASignedReceipt() public {
        M.Receipt memory r = M.Receipt(alice, subject, SCHEMA, UID, NOW + 30 days, false, 7);
        assertEq(mirror.hashReceipt(r), _digest(r));
        bytes memory sig = _sig(ALICE_KEY, r);
        vm.expectEmit(address(mirror));
        emit M.ReceiptRecorded(alice, subject, SCHEMA, UID, NOW + 30 days, false, 7);
        vm.prank(relayer);
        mirror.record(r, sig);
        M.Slot memory s = mirror.slotOf(alice, subject, SCHEMA);
        assertEq(s.uid, UID);
        assertEq(s.sequence, 7);
        assertEq(s.expirationTime, NOW + 30 days);
        assertFalse(s.revoked);
        assertTrue(mirror.isValid(alice, subject, SCHEMA));
        assertFalse(mirror.isValid(bob, subject, SCHEMA));
    }

    function testFuzz_record_success_onlyAHigherSequenceMovesTheSlot(uint64 first, uint64 second) public {
        first = uint64(bound(first, 1, type(uint64).max));
        second = uint64(bound(second, 1, type(uint64).max));
        _record(ALICE_KEY, _receipt(alice, keccak256("first"), first));
        M.Receipt memory r = _receipt(alice, keccak256("second"), second);
        r.revoked = true;
        bytes memory sig = _sig(ALICE_KEY, r);
        if (second <= first) vm.expectRevert(abi.encodeWithSelector(M.StaleReceipt.selector, second, first));
        mirror.record(r, sig);
        assertEq(mirror.slotOf(alice, subject, SCHEMA).sequence, second > first ? second : first);
        assertEq(mirror.isValid(alice, subject, SCHEMA), second <= first);
    }

    function test_record_success_aRevokedUidIsFinal() public {
        M.Receipt memory r = _receipt(alice, UID, 1);
        _record(ALICE_KEY, r);
        r.revoked = true;
        r.sequence = 2;
        _record(ALICE_KEY, r);
        assertTrue(mirror.isRevoked(alice, subject, SCHEMA, UID));
        assertFalse(mirror.isValid(alice, subject, SCHEMA));
        // A newer receipt claiming the same uid valid again is refused, whatever its sequence.
        r.revoked = false;
        r.sequence = 3;
        bytes memory sig = _sig(ALICE_KEY, r);
        vm.expectRevert(abi.encodeWithSelector(M.RevokedUid.selector, UID));
        mirror.record(r, sig);
        // A new attestation (another uid) is valid again.
        _record(ALICE_KEY, _receipt(alice, keccak256("uid-2"), 4));
        assertTrue(mirror.isValid(alice, subject, SCHEMA));
    }

    function test_record_success_anotherAttestersRevocationOfTheUidDoesNotTouchMine() public {
        _record(ALICE_KEY, _receipt(alice, UID, 1));
        M.Receipt memory r = _receipt(bob, UID, 1);
        r.revoked = true;
        _record(BOB_KEY, r);
        assertFalse(mirror.isRevoked(alice, subject, SCHEMA, UID));
        assertTrue(mirror.isValid(alice, subject, SCHEMA));
        _record(ALICE_KEY, _receipt(alice, UID, 2)); // Alice may still send receipts of it
    }

    function testFuzz_record_success_expires(uint64 ttl, uint64 later) public {
        ttl = uint64(bound(ttl, 1, 3650 days));
        later = uint64(bound(later, 0, 2 * 3650 days));
        M.Receipt memory r = _receipt(alice, UID, 1);
        r.expirationTime = NOW + ttl;
        _record(ALICE_KEY, r);
        vm.warp(NOW + later);
        assertEq(mirror.isValid(alice, subject, SCHEMA), later < ttl);
    }

    function test_record_success_erc1271Attester() public {
        ERC1271WalletMock wallet = new ERC1271WalletMock(alice);
        mirror.addAttester(address(wallet));
        M.Receipt memory r = _receipt(address(wallet), UID, 1);
        mirror.record(r, _sig(ALICE_KEY, r));
        assertTrue(mirror.isValid(address(wallet), subject, SCHEMA));
        r.sequence = 2;
        bytes memory sig = _sig(BOB_KEY, r);
        vm.expectRevert(abi.encodeWithSelector(M.InvalidSignature.selector));
        mirror.record(r, sig);
    }

    function test_record_revert_untrustedAttester() public {
        M.Receipt memory r = _receipt(carol, UID, 1);
        bytes memory sig = _sig(CAROL_KEY, r);
        vm.expectRevert(abi.encodeWithSelector(M.UntrustedAttester.selector, carol));
        mirror.record(r, sig);
    }

    function test_record_revert_anotherKeysSignatureOrTampered() public {
        M.Receipt memory r = _receipt(alice, UID, 1);
        bytes memory sig = _sig(BOB_KEY, r);
        vm.expectRevert(abi.encodeWithSelector(M.InvalidSignature.selector));
        mirror.record(r, sig);
        sig = _sig(ALICE_KEY, r);
        r.sequence = 1000; // a relayer cannot make a receipt look newer
        vm.expectRevert(abi.encodeWithSelector(M.InvalidSignature.selector));
        mirror.record(r, sig);
    }

    function test_record_revert_replay() public {
        M.Receipt memory r = _receipt(alice, UID, 1);
        bytes memory sig = _sig(ALICE_KEY, r);
        mirror.record(r, sig);
        vm.expectRevert(abi.encodeWithSelector(M.StaleReceipt.selector, 1, 1));
        mirror.record(r, sig);
    }

    function test_record_revert_zeroRecipientOrUid() public {
        M.Receipt memory r = _receipt(alice, bytes32(0), 1);
        bytes memory sig = _sig(ALICE_KEY, r);
        vm.expectRevert(abi.encodeWithSelector(M.ZeroUid.selector));
        mirror.record(r, sig);
        r = _receipt(alice, UID, 1);
        r.recipient = address(0);
        sig = _sig(ALICE_KEY, r);
        vm.expectRevert(abi.encodeWithSelector(M.ZeroAddress.selector));
        mirror.record(r, sig);
    }

    /// The digest the Rust signer (`chain::attestations`, test
    /// `receipt_digest_matches_the_forge_fixture`) computes for the same receipt, mirror address
    /// and chain id: both sides are checked against this one figure.
    function test_record_success_digestOfTheRustFixture() public {
        vm.chainId(31337);
        assertEq(address(mirror), FIXTURE_MIRROR);
        M.Receipt memory r = M.Receipt(
            address(0x1111111111111111111111111111111111111111),
            address(0x2222222222222222222222222222222222222222),
            bytes32(uint256(0x33)),
            bytes32(uint256(0x44)),
            1_900_000_000,
            true,
            (uint64(123_456) << 24) | 7
        );
        assertEq(mirror.hashReceipt(r), FIXTURE_DIGEST);
        assertEq(_digest(r), FIXTURE_DIGEST);
    }

    address internal constant FIXTURE_MIRROR = 0x5615dEB798BB3E4dFa0139dFa1b3D433Cc23b72f;
    bytes32 internal constant FIXTURE_DIGEST =
        0x671f28c37b360df49bddac861a2126787f4b3744ab2602ebd63a098cff28183d;
}
