// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";

contract IssueSessionKeyTest is AllowanceBase {
    function setUp() public override {
        super.setUp();
        _mandate(100e6, I.Interval.Daily);
    }

    function test_issuesWithCeilingAndAllowList() public {
        address[] memory list = new address[](2);
        list[0] = dest;
        list[1] = dest2;
        uint64 exp = uint64(block.timestamp + 1 hours);
        vm.expectEmit(address(asm));
        emit I.SessionKeyIssued(K, M, exp, 60e6, list, address(0));
        asm.issueSessionKey(K, M, exp, 60e6, list, address(0));
        I.SessionKeyView memory v = asm.getSessionKey(K);
        assertEq(v.mandateId, M);
        assertEq(uint256(v.expiresAt), exp);
        assertEq(uint256(v.maxAmount), 60e6);
        assertTrue(v.hasAllowList);
        assertFalse(v.revoked);
        assertTrue(asm.isDestinationAllowed(K, dest2));
        assertFalse(asm.isDestinationAllowed(K, stranger));
    }

    function test_ceilingEqualToMandateIsAllowed() public {
        _key(K, 100e6);
        assertEq(uint256(asm.getSessionKey(K).maxAmount), 100e6);
    }

    function test_revertsWhenKeyExists() public {
        _key(K, 0);
        vm.expectRevert(abi.encodeWithSelector(I.KeyAlreadyExists.selector, K));
        _key(K, 0);
    }

    function test_revertsForUnknownMandate() public {
        vm.expectRevert(abi.encodeWithSelector(I.UnknownMandate.selector, bytes32("x")));
        asm.issueSessionKey(K, bytes32("x"), uint64(block.timestamp + 1), 0, new address[](0), address(0));
    }

    function test_revertsForCanceledMandate() public {
        asm.cancelMandate(M);
        vm.expectRevert(abi.encodeWithSelector(I.MandateNotActive.selector, M));
        _key(K, 0);
    }

    function test_revertsWhenExpiryNotInFuture() public {
        uint64 now_ = uint64(block.timestamp);
        vm.expectRevert(abi.encodeWithSelector(I.ExpiryNotInFuture.selector, now_));
        asm.issueSessionKey(K, M, now_, 0, new address[](0), address(0));
    }

    function test_revertsWhenCeilingAboveMandate() public {
        vm.expectRevert(abi.encodeWithSelector(I.KeyCeilingAboveMandate.selector, 100e6 + 1, 100e6));
        _key(K, 100e6 + 1);
    }

    function test_revertsOnZeroDestination() public {
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        _keyTo(K, 0, address(0));
    }

    function test_onlyOwner() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, stranger));
        _key(K, 0);
    }

    function testFuzz_ceilingCheckedAgainstMandate(uint256 ceiling) public {
        ceiling = bound(ceiling, 0, 200e6);
        if (ceiling > 100e6) {
            vm.expectRevert(abi.encodeWithSelector(I.KeyCeilingAboveMandate.selector, ceiling, 100e6));
        }
        _key(K, ceiling);
    }

    /// The event carries the expiry as stored (clamped to 40 bits), not as asked.
    function test_issueSessionKey_success_emitsTheStoredExpiry() public {
        uint64 far = type(uint64).max;
        uint64 stored = uint64(type(uint40).max);
        vm.expectEmit(address(asm));
        emit I.SessionKeyIssued(K, M, stored, 0, new address[](0), address(0));
        asm.issueSessionKey(K, M, far, 0, new address[](0), address(0));
        assertEq(uint256(asm.getSessionKey(K).expiresAt), stored);
    }

    function test_issueSessionKey_success_withSignerByThePayer() public {
        vm.prank(payer);
        asm.issueSessionKey(K, M, uint64(block.timestamp + 1 hours), 0, new address[](0), agent);
        assertEq(asm.getSessionKey(K).signer, agent);
    }

    function test_issueSessionKey_revert_stranger() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, stranger));
        asm.issueSessionKey(K, M, uint64(block.timestamp + 1 hours), 0, new address[](0), address(0));
    }

    function test_issueSessionKey_revert_contractOnTheAllowList() public {
        address[] memory list = new address[](1);
        list[0] = address(asm);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidDestination.selector, address(asm)));
        asm.issueSessionKey(K, M, uint64(block.timestamp + 1 hours), 0, list, address(0));
    }
}
