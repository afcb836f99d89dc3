// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RouterBase} from "./Base.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

contract SetTreasuryTest is RouterBase {
    function test_replacesTheTreasury() public {
        vm.expectEmit(address(router));
        emit R.TreasuryChanged(treasury, stranger);
        router.setTreasury(stranger);
        assertEq(router.treasury(), stranger);
    }

    function test_revertsOnZeroAddress() public {
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        router.setTreasury(address(0));
    }

    function test_ownerOnly() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, stranger));
        router.setTreasury(stranger);
    }
}
