// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {MirrorBase} from "./Base.sol";
import {IAttestationMirror as M} from "../../src/interfaces/IAttestationMirror.sol";

contract MirrorRemoveAttesterTest is MirrorBase {
    function test_removeAttester_success_onlyThatAttestersSlotsStopCounting() public {
        _record(ALICE_KEY, _receipt(alice, keccak256("a"), 1));
        _record(BOB_KEY, _receipt(bob, keccak256("b"), 1));
        vm.expectEmit(address(mirror));
        emit M.AttesterUntrusted(alice);
        mirror.removeAttester(alice);
        assertFalse(mirror.isTrusted(alice));
        assertFalse(mirror.isValid(alice, subject, SCHEMA));
        assertTrue(mirror.isValid(bob, subject, SCHEMA)); // another issuer's credential stays
        // Trusted again, its slot counts again (it was never erased).
        mirror.addAttester(alice);
        assertTrue(mirror.isValid(alice, subject, SCHEMA));
    }

    function test_removeAttester_revert_notTrustedOrNotOwner() public {
        vm.expectRevert(abi.encodeWithSelector(M.UntrustedAttester.selector, carol));
        mirror.removeAttester(carol);
        vm.expectRevert(abi.encodeWithSignature("OwnableUnauthorizedAccount(address)", relayer));
        vm.prank(relayer);
        mirror.removeAttester(alice);
    }
}
