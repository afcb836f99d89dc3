// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RouterBase} from "./Base.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {SettlementRouter} from "../../src/SettlementRouter.sol";

/// The constructor and the views it sets (operator, treasury, paused).
contract ConstructorTest is RouterBase {
    function test_setsOperatorAndTreasury() public view {
        assertEq(router.owner(), address(this));
        assertEq(router.operator(), operator);
        assertEq(router.treasury(), treasury);
        assertFalse(router.paused());
    }

    function test_revertsOnZeroOperatorOrTreasury() public {
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        new SettlementRouter(address(this), address(0), treasury);
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        new SettlementRouter(address(this), operator, address(0));
    }

    /// The owner and the operator must be two keys.
    function test_revertsWhenOwnerIsOperator() public {
        vm.expectRevert(abi.encodeWithSelector(R.OwnerIsOperator.selector));
        new SettlementRouter(operator, operator, treasury);
    }

    function testFuzz_constructor_revert_ownerIsOperator(address who) public {
        vm.assume(who != address(0));
        vm.expectRevert(abi.encodeWithSelector(R.OwnerIsOperator.selector));
        new SettlementRouter(who, who, treasury);
    }
}
