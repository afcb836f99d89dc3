// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RouterBase} from "./Base.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// transferOwnership, acceptOwnership (Ownable2Step) and renounceOwnership (refused).
contract OwnershipTest is RouterBase {
    function test_twoStepOwnership() public {
        router.transferOwnership(stranger);
        assertEq(router.owner(), address(this));
        vm.prank(operator);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, operator));
        router.acceptOwnership();
        vm.prank(stranger);
        router.acceptOwnership();
        assertEq(router.owner(), stranger);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, address(this)));
        router.pause();
    }

    /// Ownership cannot go to the operator: one key would propose and act at once.
    function test_transferOwnership_revert_toTheOperator() public {
        router.transferOwnership(operator);
        vm.prank(operator);
        vm.expectRevert(abi.encodeWithSelector(R.OwnerIsOperator.selector));
        router.acceptOwnership();
        assertEq(router.owner(), address(this));
    }

    /// An operator that became the pending owner cannot become the operator as well, whichever
    /// order the steps come in.
    function test_activateOperator_revert_pendingOwnerBecameOwner() public {
        router.proposeOperator(stranger);
        router.transferOwnership(stranger);
        vm.prank(stranger);
        router.acceptOwnership();
        vm.warp(block.timestamp + router.OPERATOR_DELAY());
        vm.expectRevert(abi.encodeWithSelector(R.OwnerIsOperator.selector));
        router.activateOperator();
        assertEq(router.operator(), operator);
    }

    function test_renounceOwnership_revert_always() public {
        vm.expectRevert(abi.encodeWithSelector(R.OwnershipCannotBeRenounced.selector));
        router.renounceOwnership();
        assertEq(router.owner(), address(this));
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, stranger));
        router.renounceOwnership();
    }
}
