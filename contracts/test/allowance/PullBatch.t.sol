// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";

contract PullBatchTest is AllowanceBase {
    uint64 internal constant RESET = uint64(MONDAY + 1 days);

    function setUp() public override {
        super.setUp();
        _mandate(100e6, I.Interval.Daily);
        _key(K, 60e6);
        _key(K2, 0);
    }

    function test_eachItemSucceedsOrIsDeclinedOnItsOwn() public {
        asm.revokeSessionKey(K2);
        I.PullItem[] memory items = new I.PullItem[](4);
        items[0] = _item(K, dest, 50e6);
        items[1] = _item(K, dest, 20e6); // over the key ceiling
        items[2] = _item(K2, dest, 1e6); // revoked
        items[3] = _item(K, dest, 10e6);
        vm.expectEmit(address(asm));
        emit I.DebitPulled(K, dest, 50e6);
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(K, 1, abi.encodeWithSelector(I.KeyCeilingExceeded.selector, K, 10e6, RESET));
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(K2, 2, abi.encodeWithSelector(I.KeyRevoked.selector, K2));
        vm.expectEmit(address(asm));
        emit I.DebitPulled(K, dest, 10e6);
        uint256 authorized = asm.pullBatch(items);
        assertEq(authorized, 2);
        assertEq(usd.balanceOf(dest), 60e6 + 1);
        assertEq(uint256(asm.getSessionKey(K).spentThisEpoch), 60e6);
    }

    function test_mandateCeilingAcrossItems() public {
        I.PullItem[] memory items = new I.PullItem[](3);
        items[0] = _item(K, dest, 60e6);
        items[1] = _item(K2, dest, 40e6);
        items[2] = _item(K2, dest, 1);
        vm.expectEmit(address(asm));
        emit I.DebitPulled(K, dest, 60e6);
        vm.expectEmit(address(asm));
        emit I.DebitPulled(K2, dest, 40e6);
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(
            K2, 2, abi.encodeWithSelector(I.MandateCeilingExceeded.selector, M, 0, RESET)
        );
        assertEq(asm.pullBatch(items), 2);
    }

    function test_transferFailureDeclinesAndRestoresUsage() public {
        usd.mint(stranger, 0);
        bytes32 m2 = keccak256("poor");
        vm.prank(stranger);
        asm.createMandate(m2, stranger, address(usd), 100e6, I.Interval.Daily); // no balance, no approval
        bytes32 poorKey = keccak256("poorKey");
        asm.issueSessionKey(poorKey, m2, uint64(block.timestamp + 1 days), 0, new address[](0), address(0));
        I.PullItem[] memory items = new I.PullItem[](2);
        items[0] = _item(poorKey, dest, 1e6);
        items[1] = _item(K, dest, 1e6);
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(poorKey, 0, abi.encodeWithSelector(I.TransferFailed.selector, poorKey));
        vm.expectEmit(address(asm));
        emit I.DebitPulled(K, dest, 1e6);
        assertEq(asm.pullBatch(items), 1);
        assertEq(uint256(asm.getSessionKey(poorKey).spentThisEpoch), 0);
        assertEq(uint256(asm.getMandate(m2).spentThisEpoch), 0);
    }

    function test_invalidAndUnknownItemsAreDeclined() public {
        I.PullItem[] memory items = new I.PullItem[](2);
        items[0] = _item(K, dest, 0);
        items[1] = _item(bytes32("x"), dest, 1);
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(K, 0, abi.encodeWithSelector(I.InvalidAmount.selector, 0));
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(bytes32("x"), 1, abi.encodeWithSelector(I.UnknownKey.selector, bytes32("x")));
        assertEq(asm.pullBatch(items), 0);
    }

    function test_revertsWholeBatchWhilePaused() public {
        asm.pause();
        I.PullItem[] memory items = new I.PullItem[](1);
        items[0] = _item(K, dest, 1e6);
        vm.expectRevert(abi.encodeWithSelector(R.RouterPaused.selector));
        asm.pullBatch(items);
        asm.unpause();
        assertEq(asm.pullBatch(items), 1);
    }

    function test_emptyBatch() public {
        assertEq(asm.pullBatch(new I.PullItem[](0)), 0);
    }

    function test_onlyOwner() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, stranger));
        asm.pullBatch(new I.PullItem[](0));
    }

    function testFuzz_batchNeverExceedsCeilings(uint256[10] memory amounts) public {
        I.PullItem[] memory items = new I.PullItem[](amounts.length);
        for (uint256 i; i < amounts.length; ++i) {
            items[i] = _item(i % 2 == 0 ? K : K2, dest, bound(amounts[i], 1, 40e6));
        }
        asm.pullBatch(items);
        assertLe(uint256(asm.getSessionKey(K).spentThisEpoch), 60e6);
        assertLe(uint256(asm.getMandate(M).spentThisEpoch), 100e6);
        assertEq(usd.balanceOf(dest) - 1, uint256(asm.getMandate(M).spentThisEpoch));
    }
}
