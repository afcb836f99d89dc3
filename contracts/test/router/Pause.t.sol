// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RouterBase} from "./Base.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// pause and unpause (their effect on settle is in Settle.t.sol).
contract PauseTest is RouterBase {
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

    function test_ownerOnly() public {
        bytes memory err = abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, stranger);
        vm.startPrank(stranger);
        vm.expectRevert(err);
        router.pause();
        vm.expectRevert(err);
        router.unpause();
        vm.stopPrank();
    }
}
