// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";

/// `createMandate`: without a signature, only the payer itself — or the operator for the
/// treasury (bank-account payers), whose mandates are deferred.
contract CreateMandateTest is AllowanceBase {
    function test_createMandate_success_byThePayer() public {
        vm.expectEmit(address(asm));
        emit I.MandateCreated(M, payer, address(usd), 100e6, I.Interval.Weekly);
        vm.prank(payer);
        asm.createMandate(M, payer, address(usd), 100e6, I.Interval.Weekly);
        I.MandateView memory v = asm.getMandate(M);
        assertEq(v.payer, payer);
        assertEq(v.token, address(usd));
        assertEq(uint256(v.maxAmount), 100e6);
        assertEq(uint256(v.interval), uint256(I.Interval.Weekly));
        assertEq(uint256(v.status), uint256(I.MandateStatus.Active));
        assertEq(uint256(v.spentThisEpoch), 0);
        assertFalse(v.deferred);
    }

    function test_createMandate_success_operatorForTheTreasuryIsDeferred() public {
        asm.createMandate(M, treasury, address(usd), 100e6, I.Interval.Daily);
        I.MandateView memory v = asm.getMandate(M);
        assertEq(v.payer, treasury);
        assertTrue(v.deferred);
    }

    /// The operator alone can never put a mandate on a payer's wallet.
    function test_createMandate_revert_operatorForAPayer() public {
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, address(this)));
        asm.createMandate(M, payer, address(usd), 1, I.Interval.Daily);
    }

    function test_createMandate_revert_strangerForAPayer() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, stranger));
        asm.createMandate(M, payer, address(usd), 1, I.Interval.Daily);
    }

    function test_createMandate_revert_idExists() public {
        _mandate(1, I.Interval.Daily);
        vm.expectRevert(abi.encodeWithSelector(I.MandateAlreadyExists.selector, M));
        _mandate(1, I.Interval.Daily);
    }

    function test_createMandate_revert_zeroToken() public {
        vm.prank(payer);
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        asm.createMandate(M, payer, address(0), 1, I.Interval.Daily);
    }

    function test_createMandate_revert_zeroOrHugeCeiling() public {
        vm.startPrank(payer);
        vm.expectRevert(abi.encodeWithSelector(I.InvalidAmount.selector, 0));
        asm.createMandate(M, payer, address(usd), 0, I.Interval.Daily);
        uint256 huge = uint256(type(uint64).max) + 1;
        vm.expectRevert(abi.encodeWithSelector(I.InvalidAmount.selector, huge));
        asm.createMandate(M, payer, address(usd), huge, I.Interval.Daily);
        vm.stopPrank();
    }

    function testFuzz_createMandate_success_anyValidCeiling(uint256 max, uint8 interval) public {
        max = bound(max, 1, type(uint64).max);
        I.Interval iv = I.Interval(bound(interval, 0, 3));
        vm.prank(payer);
        asm.createMandate(M, payer, address(usd), max, iv);
        assertEq(uint256(asm.getMandate(M).maxAmount), max);
    }

    function testFuzz_createMandate_revert_nobodyButThePayer(address caller) public {
        vm.assume(caller != payer);
        vm.prank(caller);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, caller));
        asm.createMandate(M, payer, address(usd), 1, I.Interval.Daily);
    }
}
