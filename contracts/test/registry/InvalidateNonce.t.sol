// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RegistryBase} from "./Base.sol";
import {IAttestationRegistry as R} from "../../src/interfaces/IAttestationRegistry.sol";

contract RegistryInvalidateNonceTest is RegistryBase {
    function testFuzz_invalidateNonce_success_onlyTheSendersNonce(uint256 nonce) public {
        vm.expectEmit(address(registry));
        emit R.NonceUsed(alice, nonce);
        vm.prank(alice);
        registry.invalidateNonce(nonce);
        assertTrue(registry.nonceUsed(alice, nonce));
        assertFalse(registry.nonceUsed(bob, nonce));
        assertFalse(registry.nonceUsed(alice, nonce ^ 1));
        vm.expectRevert(abi.encodeWithSelector(R.NonceAlreadyUsed.selector, nonce));
        vm.prank(alice);
        registry.invalidateNonce(nonce);
    }
}
