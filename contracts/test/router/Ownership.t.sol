// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RouterBase} from "./Base.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// transferOwnership and acceptOwnership (Ownable2Step).
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
}
