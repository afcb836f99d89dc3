// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// The owner (Ownable2Step) administers; the operator writes. Replacing the operator moves
/// every write to the new one at once; ownership moves only once accepted.
contract OwnershipTest is AllowanceBase {
    function test_setOperatorMovesWrites() public {
        address next = makeAddr("next operator");
        _mandate(1, I.Interval.Daily);
        vm.expectEmit(address(asm));
        emit R.OperatorChanged(address(this), next);
        asm.setOperator(next);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, address(this)));
        asm.cancelMandate(M);
        vm.prank(next);
        asm.cancelMandate(M);
    }

    function test_onlyOwnerAdministers() public {
        vm.startPrank(stranger);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, stranger));
        asm.setOperator(stranger);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, stranger));
        asm.pause();
        vm.stopPrank();
    }

    function test_twoStepTransfer() public {
        address next = makeAddr("next owner");
        asm.transferOwnership(next);
        assertEq(asm.owner(), address(this));
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, stranger));
        asm.acceptOwnership();
        vm.prank(next);
        asm.acceptOwnership();
        assertEq(asm.owner(), next);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, address(this)));
        asm.pause();
        // Ownership does not carry the operator role: this contract still writes.
        _mandate(1, I.Interval.Daily);
        _key(K, 0);
    }
}
