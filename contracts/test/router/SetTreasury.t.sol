// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RouterBase} from "./Base.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// `setTreasury` proposes; `acceptTreasury` (by the proposed one) changes it. So the owner
/// cannot make a payer's wallet the treasury and have the operator `settle` its tokens.
contract SetTreasuryTest is RouterBase {
    function test_setTreasury_success_proposesOnly() public {
        vm.expectEmit(address(router));
        emit R.TreasuryProposed(treasury, stranger);
        router.setTreasury(stranger);
        assertEq(router.treasury(), treasury);
        assertEq(router.pendingTreasury(), stranger);
    }

    function test_acceptTreasury_success_byTheProposed() public {
        router.setTreasury(stranger);
        vm.expectEmit(address(router));
        emit R.TreasuryChanged(treasury, stranger);
        vm.prank(stranger);
        router.acceptTreasury();
        assertEq(router.treasury(), stranger);
        assertEq(router.pendingTreasury(), address(0));
    }

    function test_acceptTreasury_revert_anyoneElse() public {
        router.setTreasury(stranger);
        vm.prank(operator);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, operator));
        router.acceptTreasury();
    }

    /// With none proposed (or the proposal withdrawn) the pending treasury is zero: the zero
    /// address (a call "from" it, as some chains' system calls appear) cannot accept it.
    function test_acceptTreasury_revert_zeroSenderWhenNonePending() public {
        vm.prank(address(0));
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, address(0)));
        router.acceptTreasury();
        router.setTreasury(stranger);
        router.setTreasury(address(0));
        vm.prank(address(0));
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, address(0)));
        router.acceptTreasury();
        assertEq(router.treasury(), treasury);
    }

    /// The attack the two steps stop: a payer named treasury never accepts, so `settle`
    /// still moves only the real treasury's tokens.
    function test_setTreasury_success_payerNamedTreasuryLosesNothing() public {
        router.setTreasury(payer);
        vm.prank(operator);
        router.settle(bytes32(0), address(usd), dest, 1e6);
        assertEq(usd.balanceOf(payer), 1_000e6);
        assertEq(usd.balanceOf(treasury), 999e6);
    }

    /// Zero withdraws a pending proposal: the one proposed can no longer accept.
    function test_setTreasury_success_zeroWithdrawsThePending() public {
        router.setTreasury(stranger);
        vm.expectEmit(address(router));
        emit R.TreasuryProposed(treasury, address(0));
        router.setTreasury(address(0));
        assertEq(router.pendingTreasury(), address(0));
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, stranger));
        router.acceptTreasury();
        assertEq(router.treasury(), treasury);
    }

    function test_setTreasury_revert_ownerOnly() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, stranger));
        router.setTreasury(stranger);
    }
}
