// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// The owner (Ownable2Step, not renounceable) administers; the operator writes; they are two
/// keys. An operator change takes effect only `OPERATOR_DELAY` after the owner proposes it,
/// and then moves every write to the new operator at once.
contract StateMachineOwnershipTest is AllowanceBase {
    function test_operatorChange_success_movesWritesAfterTheDelay() public {
        address next = makeAddr("next operator");
        _mandate(1, I.Interval.Daily);
        vm.prank(owner);
        asm.proposeOperator(next);
        // Until the delay has passed, the current operator still writes and the next does not.
        vm.prank(next);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, next));
        asm.cancelMandate(M);
        vm.warp(block.timestamp + asm.OPERATOR_DELAY());
        vm.expectEmit(address(asm));
        emit R.OperatorChanged(address(this), next);
        asm.activateOperator();
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, address(this)));
        asm.cancelMandate(M);
        vm.prank(next);
        asm.cancelMandate(M);
    }

    function test_administration_revert_notTheOwner() public {
        bytes memory err = abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, stranger);
        vm.startPrank(stranger);
        vm.expectRevert(err);
        asm.proposeOperator(stranger);
        vm.expectRevert(err);
        asm.pause();
        vm.expectRevert(err);
        asm.setTreasury(stranger);
        vm.stopPrank();
        // The operator administers nothing either.
        err = abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, address(this));
        vm.expectRevert(err);
        asm.proposeOperator(stranger);
        vm.expectRevert(err);
        asm.pause();
    }

    function test_transferOwnership_success_twoSteps() public {
        address next = makeAddr("next owner");
        vm.prank(owner);
        asm.transferOwnership(next);
        assertEq(asm.owner(), owner);
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, stranger));
        asm.acceptOwnership();
        vm.prank(next);
        asm.acceptOwnership();
        assertEq(asm.owner(), next);
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, owner));
        asm.pause();
        // Ownership does not carry the operator role: this contract still writes.
        _mandate(1, I.Interval.Daily);
        _key(K_SALT, 0);
    }

    /// The operator may not become the owner: one key would hold both roles.
    function test_transferOwnership_revert_toTheOperator() public {
        vm.prank(owner);
        asm.transferOwnership(address(this));
        vm.expectRevert(abi.encodeWithSelector(R.OwnerIsOperator.selector));
        asm.acceptOwnership();
        assertEq(asm.owner(), owner);
    }

    function test_renounceOwnership_revert_always() public {
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(R.OwnershipCannotBeRenounced.selector));
        asm.renounceOwnership();
        assertEq(asm.owner(), owner);
    }

    /// What a stolen owner key can do at once: pause moves, propose an operator (which acts
    /// only two days later, in the open) and propose a treasury (which must accept). It cannot
    /// write a mandate or key, nor move a payer's tokens.
    function test_stolenOwnerKey_success_cannotMoveAPayersTokensAtOnce() public {
        _mandate(100e6, I.Interval.Daily);
        _key(K_SALT, 0);
        vm.startPrank(owner);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, owner));
        asm.pull(K, owner, 1);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, owner));
        asm.issueSessionKey(_keyTerms(M, keccak256("owner key"), 0, new address[](0), address(0)), _payees());
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, owner));
        asm.settle(bytes32(0), address(usd), owner, 1);
        vm.expectRevert(abi.encodeWithSelector(R.OwnerIsOperator.selector));
        asm.proposeOperator(owner);
        asm.setTreasury(payer);
        vm.stopPrank();
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, owner));
        vm.prank(owner);
        asm.acceptTreasury();
        assertEq(usd.balanceOf(payer), 1_000_000e6);
    }
}
