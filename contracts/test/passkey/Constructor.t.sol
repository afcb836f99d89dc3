// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {PasskeyBase} from "./Base.sol";
import {PasskeyWallet} from "../../src/PasskeyWallet.sol";

/// `PasskeyWallet`'s constructor: the owner's P-256 key, and all of the token approved to the
/// spender.
contract PasskeyConstructorTest is PasskeyBase {
    function test_constructor_success_keyAndApproval() public view {
        assertEq(wallet.qx(), qx);
        assertEq(wallet.qy(), qy);
        assertEq(usd.allowance(address(wallet), address(asm)), type(uint256).max);
    }

    function test_constructor_revert_notAPoint() public {
        vm.expectRevert(abi.encodeWithSelector(PasskeyWallet.InvalidPublicKey.selector));
        new PasskeyWallet(qx, bytes32(uint256(qy) ^ 1), address(usd), address(asm));
        vm.expectRevert(abi.encodeWithSelector(PasskeyWallet.InvalidPublicKey.selector));
        new PasskeyWallet(bytes32(0), bytes32(0), address(usd), address(asm));
    }
}
