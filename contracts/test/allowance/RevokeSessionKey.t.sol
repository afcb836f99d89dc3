// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";

contract RevokeSessionKeyTest is AllowanceBase {
    function setUp() public override {
        super.setUp();
        _mandate(100e6, I.Interval.Daily);
        _key(K_SALT, 0);
        _key(K2_SALT, 0);
    }

    function test_revokesOnlyThatKey() public {
        vm.expectEmit(address(asm));
        emit I.SessionKeyRevoked(K);
        asm.revokeSessionKey(K);
        assertTrue(asm.getSessionKey(K).revoked);
        vm.expectRevert(abi.encodeWithSelector(I.KeyRevoked.selector, K));
        asm.pull(K, dest, 1);
        asm.pull(K2, dest, 1); // sibling unaffected
        assertEq(uint256(asm.getMandate(M).status), uint256(I.MandateStatus.Active));
    }

    function test_worksWhileRouterPaused() public {
        _pause();
        asm.revokeSessionKey(K);
        assertTrue(asm.getSessionKey(K).revoked);
    }

    function test_revertsForUnknownKey() public {
        vm.expectRevert(abi.encodeWithSelector(I.UnknownKey.selector, bytes32("x")));
        asm.revokeSessionKey(bytes32("x"));
    }

    function test_revertsWhenAlreadyRevoked() public {
        asm.revokeSessionKey(K);
        vm.expectRevert(abi.encodeWithSelector(I.KeyRevoked.selector, K));
        asm.revokeSessionKey(K);
    }

    function test_onlyOperatorOrPayer() public {
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, owner));
        asm.revokeSessionKey(K);
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, stranger));
        asm.revokeSessionKey(K);
    }

    /// The payer revokes a key of its mandate alone.
    function test_revokeSessionKey_success_byThePayerAlone() public {
        vm.prank(payer);
        asm.revokeSessionKey(K);
        assertTrue(asm.getSessionKey(K).revoked);
        asm.pull(K2, dest, 1);
    }
}
