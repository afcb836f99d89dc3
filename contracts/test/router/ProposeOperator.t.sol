// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RouterBase} from "./Base.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// `proposeOperator` and `pendingOperator`: the owner proposes, in the open, an operator that
/// can take over only `OPERATOR_DELAY` later; zero withdraws; never the owner itself.
contract ProposeOperatorTest is RouterBase {
    function test_proposeOperator_success_pendingWithDelay() public {
        uint64 due = uint64(block.timestamp + 2 days);
        vm.expectEmit(address(router));
        emit R.OperatorProposed(operator, stranger, due);
        router.proposeOperator(stranger);
        (address p, uint64 at) = router.pendingOperator();
        assertEq(p, stranger);
        assertEq(uint256(at), due);
        assertEq(router.operator(), operator); // nothing changes yet
        assertEq(router.OPERATOR_DELAY(), 2 days);
    }

    function test_proposeOperator_success_zeroWithdraws() public {
        router.proposeOperator(stranger);
        vm.expectEmit(address(router));
        emit R.OperatorProposed(operator, address(0), 0);
        router.proposeOperator(address(0));
        (address p, uint64 at) = router.pendingOperator();
        assertEq(p, address(0));
        assertEq(uint256(at), 0);
        vm.warp(block.timestamp + 3 days);
        vm.expectRevert(abi.encodeWithSelector(R.NoPendingOperator.selector));
        router.activateOperator();
        assertEq(router.operator(), operator);
    }

    /// A new proposal replaces the pending one and restarts the delay.
    function test_proposeOperator_success_reproposalRestartsTheDelay() public {
        router.proposeOperator(stranger);
        vm.warp(block.timestamp + 1 days);
        router.proposeOperator(dest);
        vm.warp(block.timestamp + 1 days);
        uint64 due = uint64(block.timestamp + 1 days);
        vm.expectRevert(abi.encodeWithSelector(R.OperatorChangeNotDue.selector, due));
        router.activateOperator();
        vm.warp(due);
        router.activateOperator();
        assertEq(router.operator(), dest);
    }

    function test_proposeOperator_revert_ownerItself() public {
        vm.expectRevert(abi.encodeWithSelector(R.OwnerIsOperator.selector));
        router.proposeOperator(address(this));
    }

    function testFuzz_proposeOperator_revert_notTheOwner(address caller) public {
        vm.assume(caller != address(this));
        vm.prank(caller);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, caller));
        router.proposeOperator(caller);
    }

    function testFuzz_proposeOperator_success_anyDelayAfterwards(address next, uint256 wait) public {
        vm.assume(next != address(0) && next != address(this));
        wait = bound(wait, 0, 10 days);
        router.proposeOperator(next);
        uint256 due = block.timestamp + 2 days;
        vm.warp(block.timestamp + wait);
        if (block.timestamp < due) {
            vm.expectRevert(abi.encodeWithSelector(R.OperatorChangeNotDue.selector, uint64(due)));
            router.activateOperator();
            assertEq(router.operator(), operator);
        } else {
            router.activateOperator();
            assertEq(router.operator(), next);
        }
    }
}
