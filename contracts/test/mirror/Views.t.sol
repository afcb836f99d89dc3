// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {MirrorBase} from "./Base.sol";
import {IAttestationMirror as M} from "../../src/interfaces/IAttestationMirror.sol";

contract MirrorViewsTest is MirrorBase {
    function test_views_emptyAndDomain() public view {
        assertFalse(mirror.isValid(alice, subject, SCHEMA));
        M.Slot memory s = mirror.slotOf(alice, subject, SCHEMA);
        assertEq(s.sequence, 0);
        assertEq(s.uid, bytes32(0));
        assertFalse(mirror.isRevoked(alice, subject, SCHEMA, keccak256("x")));
        assertTrue(mirror.isTrusted(alice));
        assertFalse(mirror.isTrusted(carol));
        assertEq(mirror.RECEIPT_TYPEHASH(), RECEIPT_TYPEHASH);
    }

    /// What a state machine pays per pull: isValid reads two storage words.
    function test_views_isValidReadsTwoWords() public {
        _record(ALICE_KEY, _receipt(alice, keccak256("uid"), 1));
        vm.record();
        assertTrue(mirror.isValid(alice, subject, SCHEMA));
        (bytes32[] memory reads,) = vm.accesses(address(mirror));
        assertEq(reads.length, 2);
    }

    function testFuzz_views_hashReceiptMatchesTheWrittenOutType(M.Receipt calldata r) public view {
        assertEq(mirror.hashReceipt(r), _digest(r));
    }
}
