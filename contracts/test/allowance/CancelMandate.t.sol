// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";

contract CancelMandateTest is AllowanceBase {
    function setUp() public override {
        super.setUp();
        _mandate(100e6, I.Interval.Daily);
        _key(K_SALT, 0);
    }

    function test_cancelsAndCascadesToKeys() public {
        vm.expectEmit(address(asm));
        emit I.MandateCanceled(M);
        asm.cancelMandate(M);
        assertEq(uint256(asm.getMandate(M).status), uint256(I.MandateStatus.Canceled));
        vm.expectRevert(abi.encodeWithSelector(I.MandateNotActive.selector, M));
        asm.pull(K, dest, 1);
        (uint256 remaining,) = asm.remainingAllowance(K);
        assertEq(remaining, 0);
    }

    function test_revertsForUnknownMandate() public {
        vm.expectRevert(abi.encodeWithSelector(I.UnknownMandate.selector, bytes32("nope")));
        asm.cancelMandate(bytes32("nope"));
    }

    function test_revertsWhenAlreadyCanceled() public {
        asm.cancelMandate(M);
        vm.expectRevert(abi.encodeWithSelector(I.MandateNotActive.selector, M));
        asm.cancelMandate(M);
    }

    function test_onlyOperatorOrPayer() public {
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, owner));
        asm.cancelMandate(M);
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, stranger));
        asm.cancelMandate(M);
    }

    /// The payer ends its mandate alone, with no operator, even while paused.
    function test_cancelMandate_success_byThePayerAlone() public {
        _pause();
        vm.expectEmit(address(asm));
        emit I.MandateCanceled(M);
        vm.prank(payer);
        asm.cancelMandate(M);
        assertEq(uint256(asm.getMandate(M).status), uint256(I.MandateStatus.Canceled));
        _unpause();
        vm.expectRevert(abi.encodeWithSelector(I.MandateNotActive.selector, M));
        asm.pull(K, dest, 1);
    }
}
