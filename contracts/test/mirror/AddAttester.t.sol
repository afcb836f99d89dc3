// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {MirrorBase} from "./Base.sol";
import {IAttestationMirror as M} from "../../src/interfaces/IAttestationMirror.sol";

contract MirrorAddAttesterTest is MirrorBase {
    function test_addAttester_success_trusts() public {
        vm.expectEmit(address(mirror));
        emit M.AttesterTrusted(carol);
        mirror.addAttester(carol);
        assertTrue(mirror.isTrusted(carol));
    }

    function testFuzz_addAttester_revert_notTheOwner(address caller) public {
        vm.assume(caller != address(this));
        vm.expectRevert(abi.encodeWithSignature("OwnableUnauthorizedAccount(address)", caller));
        vm.prank(caller);
        mirror.addAttester(carol);
    }

    function test_addAttester_revert_zeroOrTwice() public {
        vm.expectRevert(abi.encodeWithSelector(M.ZeroAddress.selector));
        mirror.addAttester(address(0));
        vm.expectRevert(abi.encodeWithSelector(M.AlreadyTrusted.selector, alice));
        mirror.addAttester(alice);
    }
}
