// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RouterBase} from "./Base.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {NoBoolToken} from "../utils/mocks/NoBoolToken.sol";

contract SettleTest is RouterBase {
    function test_operatorSettlesWithEvent() public {
        vm.expectEmit(address(router));
        emit R.Settled(bytes32("pay_1"), address(usd), treasury, dest, 7e6);
        vm.prank(operator);
        router.settle(bytes32("pay_1"), address(usd), treasury, dest, 7e6);
        assertEq(usd.balanceOf(dest), 7e6);
        assertEq(usd.balanceOf(address(router)), 0);
    }

    function test_walletToTreasury() public {
        vm.prank(operator);
        router.settle(bytes32("pay_2"), address(usd), payer, treasury, 3e6);
        assertEq(usd.balanceOf(treasury), 1_003e6);
    }

    function test_revertsForOtherCallers() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, stranger));
        router.settle(bytes32(0), address(usd), payer, dest, 1);
    }

    function test_revertsWhenPausedOrInsufficient() public {
        vm.prank(operator);
        vm.expectRevert();
        router.settle(bytes32(0), address(usd), payer, dest, 2_000e6);
        router.pause();
        vm.prank(operator);
        vm.expectRevert(abi.encodeWithSelector(R.RouterPaused.selector));
        router.settle(bytes32(0), address(usd), payer, dest, 1);
    }

    function testFuzz_conservesTokens(uint256 amount) public {
        amount = bound(amount, 1, 1_000e6);
        vm.prank(operator);
        router.settle(bytes32(0), address(usd), payer, dest, amount);
        assertEq(usd.balanceOf(payer) + usd.balanceOf(dest), 1_000e6);
        assertEq(usd.balanceOf(address(router)), 0);
    }

    function test_revertsOnZeroAmountZeroAddressesAndSelfTransfer() public {
        vm.startPrank(operator);
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAmount.selector));
        router.settle(bytes32(0), address(usd), payer, dest, 0);
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        router.settle(bytes32(0), address(usd), payer, address(0), 1);
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        router.settle(bytes32(0), address(0), payer, dest, 1);
        vm.expectRevert(abi.encodeWithSelector(R.SelfTransfer.selector));
        router.settle(bytes32(0), address(usd), payer, payer, 1);
        vm.stopPrank();
    }

    function test_tokenWithoutReturnValue() public {
        NoBoolToken t = new NoBoolToken();
        t.mint(payer, 5);
        vm.prank(payer);
        t.approve(address(router), 5);
        vm.prank(operator);
        router.settle(bytes32(0), address(t), payer, dest, 5);
        assertEq(t.balanceOf(dest), 5);
        vm.prank(operator);
        vm.expectRevert();
        router.settle(bytes32(0), address(t), payer, dest, 1);
    }
}
