// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RouterBase} from "./Base.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {SettlementRouter} from "../../src/SettlementRouter.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// pause, unpause, setOperator, setTreasury, ownership and the constructor.
contract AdminTest is RouterBase {
    function test_pauseAndUnpause() public {
        vm.expectEmit(address(router));
        emit R.Paused(address(this));
        router.pause();
        assertTrue(router.paused());
        vm.expectEmit(address(router));
        emit R.Unpaused(address(this));
        router.unpause();
        assertFalse(router.paused());
    }

    function test_setOperator() public {
        vm.expectEmit(address(router));
        emit R.OperatorChanged(operator, stranger);
        router.setOperator(stranger);
        assertEq(router.operator(), stranger);
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        router.setOperator(address(0));
    }

    function test_setTreasury() public {
        vm.expectEmit(address(router));
        emit R.TreasuryChanged(treasury, stranger);
        router.setTreasury(stranger);
        assertEq(router.treasury(), stranger);
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        router.setTreasury(address(0));
    }

    function test_adminIsOwnerOnly() public {
        bytes memory err = abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, stranger);
        vm.startPrank(stranger);
        vm.expectRevert(err);
        router.pause();
        vm.expectRevert(err);
        router.unpause();
        vm.expectRevert(err);
        router.setOperator(stranger);
        vm.expectRevert(err);
        router.setTreasury(stranger);
        vm.stopPrank();
    }

    function test_twoStepOwnership() public {
        router.transferOwnership(stranger);
        assertEq(router.owner(), address(this));
        vm.prank(stranger);
        router.acceptOwnership();
        assertEq(router.owner(), stranger);
    }

    function test_constructorRejectsZeroOperatorOrTreasury() public {
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        new SettlementRouter(address(this), address(0), treasury);
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        new SettlementRouter(address(this), operator, address(0));
    }

    function test_views() public view {
        assertEq(router.operator(), operator);
        assertEq(router.treasury(), treasury);
        assertFalse(router.paused());
    }
}
