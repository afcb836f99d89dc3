// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RouterBase} from "./Base.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {NoBoolToken} from "../utils/mocks/NoBoolToken.sol";

/// `settle`: the operator moves the treasury's own tokens, and nothing else.
contract SettleTest is RouterBase {
    function test_settle_success_treasuryPaysWithEvent() public {
        vm.expectEmit(address(router));
        emit R.Settled(bytes32("pay_1"), address(usd), treasury, dest, 7e6);
        vm.prank(operator);
        router.settle(bytes32("pay_1"), address(usd), dest, 7e6);
        assertEq(usd.balanceOf(dest), 7e6);
        assertEq(usd.balanceOf(treasury), 993e6);
        assertEq(usd.balanceOf(address(router)), 0);
    }

    function test_settle_revert_otherCallers() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, stranger));
        router.settle(bytes32(0), address(usd), dest, 1);
    }

    function test_settle_revert_pausedOrInsufficient() public {
        vm.prank(operator);
        vm.expectRevert();
        router.settle(bytes32(0), address(usd), dest, 2_000e6);
        router.pause();
        vm.prank(operator);
        vm.expectRevert(abi.encodeWithSelector(R.RouterPaused.selector));
        router.settle(bytes32(0), address(usd), dest, 1);
    }

    /// Whatever the operator asks, a payer that approved the router loses nothing by `settle`.
    function testFuzz_settle_success_neverTouchesAPayer(address to, uint256 amount) public {
        vm.assume(to != address(0) && to != address(router) && to != treasury);
        amount = bound(amount, 1, 1_000e6);
        vm.prank(operator);
        router.settle(bytes32(0), address(usd), to, amount);
        assertEq(usd.balanceOf(payer), to == payer ? 1_000e6 + amount : 1_000e6);
        assertEq(usd.balanceOf(treasury), 1_000e6 - amount);
        assertEq(usd.balanceOf(address(router)), 0);
    }

    function test_settle_revert_zeroAmountZeroAddressesSelfAndRouter() public {
        vm.startPrank(operator);
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAmount.selector));
        router.settle(bytes32(0), address(usd), dest, 0);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidDestination.selector, address(0)));
        router.settle(bytes32(0), address(usd), address(0), 1);
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        router.settle(bytes32(0), address(0), dest, 1);
        vm.expectRevert(abi.encodeWithSelector(R.SelfTransfer.selector));
        router.settle(bytes32(0), address(usd), treasury, 1);
        // Tokens sent to the router itself would be locked for good.
        vm.expectRevert(abi.encodeWithSelector(R.InvalidDestination.selector, address(router)));
        router.settle(bytes32(0), address(usd), address(router), 1);
        vm.stopPrank();
    }

    function test_settle_success_tokenWithoutReturnValue() public {
        NoBoolToken t = new NoBoolToken();
        t.mint(treasury, 5);
        vm.prank(treasury);
        t.approve(address(router), 5);
        vm.prank(operator);
        router.settle(bytes32(0), address(t), dest, 5);
        assertEq(t.balanceOf(dest), 5);
        vm.prank(operator);
        vm.expectRevert();
        router.settle(bytes32(0), address(t), dest, 1);
    }
}
