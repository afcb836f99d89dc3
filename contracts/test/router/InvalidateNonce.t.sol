// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RouterBase} from "./Base.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";

/// `invalidateNonce`: anyone burns its own nonces, even while paused; `NonceUsed` records it.
contract InvalidateNonceTest is RouterBase {
    function test_invalidateNonce_success_burnsOwnNonce() public {
        vm.expectEmit(address(router));
        emit R.NonceUsed(payer, 42);
        vm.prank(payer);
        router.invalidateNonce(42);
        assertTrue(router.nonceUsed(payer, 42));
        assertFalse(router.nonceUsed(stranger, 42));
        assertFalse(router.nonceUsed(payer, 43));
    }

    function test_invalidateNonce_revert_twice() public {
        vm.startPrank(payer);
        router.invalidateNonce(1);
        vm.expectRevert(abi.encodeWithSelector(R.NonceAlreadyUsed.selector, 1));
        router.invalidateNonce(1);
        vm.stopPrank();
    }

    function test_invalidateNonce_success_whilePaused() public {
        router.pause();
        vm.prank(payer);
        router.invalidateNonce(7);
        assertTrue(router.nonceUsed(payer, 7));
    }

    function testFuzz_invalidateNonce_success_anyNonceOnce(uint256 nonce) public {
        vm.prank(payer);
        router.invalidateNonce(nonce);
        assertTrue(router.nonceUsed(payer, nonce));
        vm.prank(payer);
        vm.expectRevert(abi.encodeWithSelector(R.NonceAlreadyUsed.selector, nonce));
        router.invalidateNonce(nonce);
    }
}
