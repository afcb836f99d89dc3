// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// Ownable2Step: the operator is the owner; a transfer takes effect only once accepted.
contract OwnershipTest is AllowanceBase {
    function test_twoStepTransfer() public {
        address next = makeAddr("next operator");
        asm.transferOwnership(next);
        assertEq(asm.owner(), address(this));
        asm.createMandate(M, payer, address(usd), 1, I.Interval.Daily); // still the operator
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, stranger));
        asm.acceptOwnership();
        vm.prank(next);
        asm.acceptOwnership();
        assertEq(asm.owner(), next);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, address(this)));
        asm.cancelMandate(M);
        vm.prank(next);
        asm.cancelMandate(M);
    }
}
