// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {AllowanceStateMachine} from "../../src/AllowanceStateMachine.sol";
import {IAttestationMirror} from "../../src/interfaces/IAttestationMirror.sol";

/// getMandate, getSessionKey, keyIdOf, isDestinationAllowed, remainingAllowance, and the router views (operator, paused, treasury).
contract ViewsTest is AllowanceBase {
    function setUp() public override {
        super.setUp();
        _mandate(100e6, I.Interval.Monthly);
        _key(K_SALT, 60e6);
    }

    function test_getMandateReportsTheCurrentEpoch() public {
        asm.pull(K, dest, 10e6);
        I.MandateView memory v = asm.getMandate(M);
        assertEq(uint256(v.spentThisEpoch), 10e6);
        assertEq(uint256(v.epochStart), 1_793_491_200); // 2026-11-01T00:00Z
        assertEq(uint256(v.epochEnd), 1_796_083_200); // 2026-12-01T00:00Z
        vm.warp(v.epochEnd);
        assertEq(uint256(asm.getMandate(M).spentThisEpoch), 0);
    }

    function test_getMandateRevertsForUnknown() public {
        vm.expectRevert(abi.encodeWithSelector(I.UnknownMandate.selector, bytes32("x")));
        asm.getMandate(bytes32("x"));
    }

    function test_getSessionKeyRevertsForUnknown() public {
        vm.expectRevert(abi.encodeWithSelector(I.UnknownKey.selector, bytes32("x")));
        asm.getSessionKey(bytes32("x"));
    }

    function test_isDestinationAllowed() public {
        assertFalse(asm.isDestinationAllowed(K, stranger)); // no list given: the payees
        assertTrue(asm.isDestinationAllowed(K, dest));
        assertTrue(asm.isDestinationAllowed(K, dest2));
        _keyTo(K2_SALT, 0, dest);
        assertTrue(asm.isDestinationAllowed(K2, dest));
        assertFalse(asm.isDestinationAllowed(K2, dest2));
        assertFalse(asm.isDestinationAllowed(bytes32("x"), dest));
    }

    function test_remainingAllowanceIsTheTighterCeiling() public {
        (uint256 r, uint64 resets) = asm.remainingAllowance(K);
        assertEq(r, 60e6);
        assertEq(uint256(resets), 1_796_083_200);
        _key(K2_SALT, 0);
        asm.pull(K2, dest, 70e6);
        (r,) = asm.remainingAllowance(K);
        assertEq(r, 30e6); // mandate has 30 left, key 60
    }

    function test_remainingAllowanceIsZeroForDeadKeys() public {
        (uint256 r, uint64 resets) = asm.remainingAllowance(bytes32("x"));
        assertEq(r + resets, 0);
        asm.revokeSessionKey(K);
        (r,) = asm.remainingAllowance(K);
        assertEq(r, 0);
        _key(K2_SALT, 0);
        vm.warp(asm.getSessionKey(K2).expiresAt);
        (r,) = asm.remainingAllowance(K2);
        assertEq(r, 0);
    }

    function test_routerViews() public {
        assertEq(asm.operator(), address(this));
        assertEq(asm.owner(), owner);
        assertEq(asm.treasury(), treasury);
        assertFalse(asm.paused());
        _pause();
        assertTrue(asm.paused());
    }

    function test_constructorRejectsZeroOperatorOrTreasury() public {
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        new AllowanceStateMachine(owner, address(0), treasury, IAttestationMirror(address(mirror)));
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        new AllowanceStateMachine(owner, address(this), address(0), IAttestationMirror(address(mirror)));
        // Owner and operator may not be one key.
        vm.expectRevert(abi.encodeWithSelector(R.OwnerIsOperator.selector));
        new AllowanceStateMachine(address(this), address(this), treasury, IAttestationMirror(address(mirror)));
    }
}
