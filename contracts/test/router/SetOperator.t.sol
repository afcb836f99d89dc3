// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RouterBase} from "./Base.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

contract SetOperatorTest is RouterBase {
    function test_replacesTheOperator() public {
        vm.expectEmit(address(router));
        emit R.OperatorChanged(operator, stranger);
        router.setOperator(stranger);
        assertEq(router.operator(), stranger);
        // The old operator can no longer move tokens; the new one can.
        vm.prank(operator);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, operator));
        router.settle(bytes32(0), address(usd), dest, 1);
        vm.prank(stranger);
        router.settle(bytes32(0), address(usd), dest, 1);
    }

    function test_revertsOnZeroAddress() public {
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        router.setOperator(address(0));
    }

    function test_ownerOnly() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, stranger));
        router.setOperator(stranger);
    }
}
