// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RouterBase} from "./Base.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";

/// `activateOperator`: anyone makes the proposed operator the operator, once its delay passed.
contract ActivateOperatorTest is RouterBase {
    address internal next = makeAddr("next operator");

    function setUp() public override {
        super.setUp();
        router.proposeOperator(next);
    }

    function test_activateOperator_revert_beforeTheDelay() public {
        uint64 due = uint64(block.timestamp + 2 days);
        vm.expectRevert(abi.encodeWithSelector(R.OperatorChangeNotDue.selector, due));
        router.activateOperator();
        vm.warp(due - 1);
        vm.expectRevert(abi.encodeWithSelector(R.OperatorChangeNotDue.selector, due));
        router.activateOperator();
    }

    function test_activateOperator_success_byAnyoneAfterTheDelay() public {
        vm.warp(block.timestamp + 2 days);
        vm.expectEmit(address(router));
        emit R.OperatorChanged(operator, next);
        vm.prank(stranger);
        router.activateOperator();
        assertEq(router.operator(), next);
        (address p, uint64 at) = router.pendingOperator();
        assertEq(p, address(0));
        assertEq(uint256(at), 0);
        // The old operator can no longer move tokens; the new one can.
        vm.prank(operator);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, operator));
        router.settle(bytes32(0), address(usd), dest, 1);
        vm.prank(next);
        router.settle(bytes32(0), address(usd), dest, 1);
    }

    function test_activateOperator_revert_twice() public {
        vm.warp(block.timestamp + 2 days);
        router.activateOperator();
        vm.expectRevert(abi.encodeWithSelector(R.NoPendingOperator.selector));
        router.activateOperator();
    }

    function test_activateOperator_revert_nonePending() public {
        router.proposeOperator(address(0));
        vm.expectRevert(abi.encodeWithSelector(R.NoPendingOperator.selector));
        router.activateOperator();
    }
}
