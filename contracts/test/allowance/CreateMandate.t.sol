// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";

contract CreateMandateTest is AllowanceBase {
    function test_createsAnActiveMandate() public {
        vm.expectEmit(address(asm));
        emit I.MandateCreated(M, payer, address(usd), 100e6, I.Interval.Weekly);
        asm.createMandate(M, payer, address(usd), 100e6, I.Interval.Weekly);
        I.MandateView memory v = asm.getMandate(M);
        assertEq(v.payer, payer);
        assertEq(v.token, address(usd));
        assertEq(uint256(v.maxAmount), 100e6);
        assertEq(uint256(v.interval), uint256(I.Interval.Weekly));
        assertEq(uint256(v.status), uint256(I.MandateStatus.Active));
        assertEq(uint256(v.spentThisEpoch), 0);
    }

    function test_revertsWhenIdExists() public {
        _mandate(1, I.Interval.Daily);
        vm.expectRevert(abi.encodeWithSelector(I.MandateAlreadyExists.selector, M));
        _mandate(1, I.Interval.Daily);
    }

    function test_revertsOnZeroPayerOrToken() public {
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        asm.createMandate(M, address(0), address(usd), 1, I.Interval.Daily);
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        asm.createMandate(M, payer, address(0), 1, I.Interval.Daily);
    }

    function test_revertsOnZeroOrHugeCeiling() public {
        vm.expectRevert(abi.encodeWithSelector(I.InvalidAmount.selector, 0));
        asm.createMandate(M, payer, address(usd), 0, I.Interval.Daily);
        uint256 huge = uint256(type(uint64).max) + 1;
        vm.expectRevert(abi.encodeWithSelector(I.InvalidAmount.selector, huge));
        asm.createMandate(M, payer, address(usd), huge, I.Interval.Daily);
    }

    function test_onlyOwner() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, stranger));
        asm.createMandate(M, payer, address(usd), 1, I.Interval.Daily);
    }

    function testFuzz_anyValidCeiling(uint256 max, uint8 interval) public {
        max = bound(max, 1, type(uint64).max);
        I.Interval iv = I.Interval(bound(interval, 0, 3));
        asm.createMandate(M, payer, address(usd), max, iv);
        assertEq(uint256(asm.getMandate(M).maxAmount), max);
    }
}
