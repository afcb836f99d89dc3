// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RouterBase} from "./Base.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {SettlementRouter} from "../../src/SettlementRouter.sol";
import {NoBoolToken} from "../utils/mocks/NoBoolToken.sol";

contract PullForTest is RouterBase {
    function test_stateMachineMovesPayerToDestination() public {
        vm.prank(asmAddr);
        router.pullFor(address(usd), payer, dest, 10e6);
        assertEq(usd.balanceOf(dest), 10e6);
        assertEq(usd.balanceOf(payer), 990e6);
        assertEq(usd.balanceOf(address(router)), 0);
    }

    function test_operatorMayCallToo() public {
        vm.prank(operator);
        router.pullFor(address(usd), treasury, dest, 1e6);
        assertEq(usd.balanceOf(dest), 1e6);
    }

    function test_revertsForOtherCallers() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, stranger));
        router.pullFor(address(usd), payer, dest, 1);
    }

    function test_revertsOnZeroAmountZeroAddressesAndSelfTransfer() public {
        vm.startPrank(asmAddr);
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAmount.selector));
        router.pullFor(address(usd), payer, dest, 0);
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        router.pullFor(address(usd), payer, address(0), 1);
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        router.pullFor(address(0), payer, dest, 1);
        vm.expectRevert(abi.encodeWithSelector(R.SelfTransfer.selector));
        router.pullFor(address(usd), payer, payer, 1);
        vm.stopPrank();
    }

    function test_revertsWhenPaused() public {
        router.pause();
        vm.prank(asmAddr);
        vm.expectRevert(abi.encodeWithSelector(SettlementRouter.RouterPaused.selector));
        router.pullFor(address(usd), payer, dest, 1);
    }

    function test_tokenWithoutReturnValue() public {
        NoBoolToken t = new NoBoolToken();
        t.mint(payer, 5);
        vm.prank(payer);
        t.approve(address(router), 5);
        vm.prank(asmAddr);
        router.pullFor(address(t), payer, dest, 5);
        assertEq(t.balanceOf(dest), 5);
        vm.prank(asmAddr);
        vm.expectRevert();
        router.pullFor(address(t), payer, dest, 1);
    }

    function testFuzz_neverKeepsABalance(uint256 amount) public {
        amount = bound(amount, 1, 1_000e6);
        vm.prank(asmAddr);
        router.pullFor(address(usd), payer, dest, amount);
        assertEq(usd.balanceOf(address(router)), 0);
        assertEq(usd.balanceOf(dest) + usd.balanceOf(payer), 1_000e6);
    }
}
