// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {PullCodec} from "../utils/PullCodec.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";

/// A batch item whose token move fails is declined `TransferFailed` and gives back exactly
/// its own spend: the mandate's and, for a key with a ceiling of its own, the key's (a key
/// without one has no usage slot, and none is written). On the fast path and the reference
/// path, for both kinds of key, the state after the failed item is the state before it.
contract PullBatchWriteBackTest is AllowanceBase {
    uint64 internal constant RESET = uint64(MONDAY + 1 days);

    function setUp() public override {
        super.setUp();
        _mandate(100e6, I.Interval.Daily);
        _key(K_SALT, 60e6); // K: its own ceiling
        _key(K2_SALT, 0); // K2: none
    }

    function _failTransfers() internal {
        vm.prank(payer);
        usd.approve(address(asm), 0);
    }

    function _restoreTransfers() internal {
        vm.prank(payer);
        usd.approve(address(asm), type(uint256).max);
    }

    function _declinedTransfer(bytes32 key, uint256 index) internal {
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(key, index, abi.encodeWithSelector(I.TransferFailed.selector, key));
    }

    /// @dev The raw usage words: the key's own (0 for a key without a ceiling) and the mandate's.
    function _words(bytes32 key) internal view returns (bytes32 keyUse, bytes32 mandateUse) {
        keyUse = vm.load(address(asm), _keyUseSlot(key));
        // `_usage` is slot 13, keyed by the mandate's index (1).
        mandateUse = vm.load(address(asm), keccak256(abi.encode(uint256(1), uint256(13))));
    }

    /// With a ceiling, on the fast path: the key's and the mandate's words are as before.
    function test_pullBatch_success_failedItemGivesBackKeyAndMandateSpend_fastPath() public {
        assertEq(asm.pullBatch(_item(K, dest, 10e6)), 1);
        (bytes32 ku, bytes32 mu) = _words(K);
        _failTransfers();
        vm.record();
        _declinedTransfer(K, 0);
        assertEq(asm.pullBatch(_item(K, dest, 20e6)), 0);
        assertEq(_keyReads(K), 1, "fast path");
        (bytes32 ku2, bytes32 mu2) = _words(K);
        assertEq(ku2, ku);
        assertEq(mu2, mu);
        assertEq(uint256(asm.getSessionKey(K).spentThisEpoch), 10e6);
        _restoreTransfers();
        assertEq(asm.pullBatch(_item(K, dest, 50e6)), 1);
        assertEq(uint256(asm.getSessionKey(K).spentThisEpoch), 60e6);
    }

    /// With a ceiling, on the reference path (its first pull of the epoch): the spend goes back
    /// to 0 of the new epoch.
    function test_pullBatch_success_failedItemGivesBackKeyAndMandateSpend_referencePath() public {
        _failTransfers();
        vm.record();
        _declinedTransfer(K, 0);
        assertEq(asm.pullBatch(_item(K, dest, 20e6)), 0);
        assertEq(_keyReads(K), 2, "reference path");
        assertEq(uint256(asm.getSessionKey(K).spentThisEpoch), 0);
        assertEq(uint256(asm.getMandate(M).spentThisEpoch), 0);
        (uint256 r,) = asm.remainingAllowance(K);
        assertEq(r, 60e6);
        _restoreTransfers();
        assertEq(asm.pullBatch(_item(K, dest, 60e6)), 1);
    }

    /// Without a ceiling, on both paths: only the mandate's word changes and goes back; the key
    /// has no usage slot before, during or after.
    function test_pullBatch_success_failedItemWithoutCeiling_bothPaths() public {
        _failTransfers();
        vm.record();
        _declinedTransfer(K2, 0);
        assertEq(asm.pullBatch(_item(K2, dest, 20e6)), 0);
        assertEq(_keyReads(K2), 2, "reference path");
        (bytes32 ku, bytes32 mu) = _words(K2);
        assertEq(ku, bytes32(0));
        assertEq(uint256(mu) >> 192, 0); // the mandate's spend
        _restoreTransfers();
        assertEq(asm.pullBatch(_item(K2, dest, 30e6)), 1);
        (, mu) = _words(K2);
        _failTransfers();
        vm.record();
        _declinedTransfer(K2, 0);
        assertEq(asm.pullBatch(_item(K2, dest, 20e6)), 0);
        assertEq(_keyReads(K2), 1, "fast path");
        (bytes32 ku2, bytes32 mu2) = _words(K2);
        assertEq(ku2, bytes32(0));
        assertEq(mu2, mu);
        assertEq(uint256(asm.getMandate(M).spentThisEpoch), 30e6);
    }

    /// A failed item among good ones on both kinds of key: each good item counts, the failed
    /// ones do not, and the items after a failure see the spend without it.
    function test_pullBatch_success_failedItemsAmongGoodOnes() public {
        // A second payer whose pulls fail: no approval.
        address poor = makeAddr("poor");
        usd.mint(poor, 1_000e6);
        vm.prank(poor);
        bytes32 mp = asm.createMandate(_terms(keccak256("poor"), poor, 100e6, I.Interval.Daily));
        bytes32 pk = asm.issueSessionKey(
            _keyTerms(mp, keccak256("pk"), 50e6, new address[](0), address(0)), _payees()
        );
        bytes32 pk2 =
            asm.issueSessionKey(_keyTerms(mp, keccak256("pk2"), 0, new address[](0), address(0)), _payees());
        bytes memory items = bytes.concat(
            _item(K, dest, 30e6),
            _item(pk, dest, 40e6),
            _item(K2, dest, 30e6),
            _item(pk2, dest, 50e6),
            _item(pk, dest, 50e6), // would exceed pk's ceiling had the failed 40 counted
            _item(K, dest, 30e6)
        );
        vm.expectEmit(address(asm));
        emit I.DebitPulled(K, dest, 30e6);
        _declinedTransfer(pk, 1);
        vm.expectEmit(address(asm));
        emit I.DebitPulled(K2, dest, 30e6);
        _declinedTransfer(pk2, 3);
        _declinedTransfer(pk, 4);
        vm.expectEmit(address(asm));
        emit I.DebitPulled(K, dest, 30e6);
        assertEq(asm.pullBatch(items), 3);
        assertEq(uint256(asm.getSessionKey(K).spentThisEpoch), 60e6);
        assertEq(uint256(asm.getMandate(M).spentThisEpoch), 90e6);
        assertEq(uint256(asm.getSessionKey(pk).spentThisEpoch), 0);
        assertEq(uint256(asm.getMandate(mp).spentThisEpoch), 0);
        assertEq(vm.load(address(asm), _keyUseSlot(pk2)), bytes32(0));
    }

    /// `pull` reverts the whole call instead: nothing of it stays, on either kind of key.
    function test_pull_revert_failedTransferLeavesNothing() public {
        asm.pull(K, dest, 5e6);
        asm.pull(K2, dest, 5e6);
        (bytes32 ku, bytes32 mu) = _words(K);
        _failTransfers();
        vm.expectRevert(abi.encodeWithSelector(I.TransferFailed.selector, K));
        asm.pull(K, dest, 5e6);
        vm.expectRevert(abi.encodeWithSelector(I.TransferFailed.selector, K2));
        asm.pull(K2, dest, 5e6);
        (bytes32 ku2, bytes32 mu2) = _words(K);
        assertEq(ku2, ku);
        assertEq(mu2, mu);
    }

    /// Whatever was spent before (by either key, or nothing yet, or yesterday), whichever kind
    /// of key the failed item is on, fast or reference path, signed kind or not: after the
    /// failed item the views are as before it, and the same item then succeeds in full.
    function testFuzz_pullBatch_success_failedItemUndoesOnlyItsOwnSpend(
        uint256 spentK,
        uint256 spentK2,
        uint256 amount,
        uint256 flags
    ) public {
        spentK = bound(spentK, 0, 30e6);
        spentK2 = bound(spentK2, 0, 30e6);
        amount = bound(amount, 1, 30e6);
        if (spentK != 0) asm.pull(K, dest, spentK);
        if (spentK2 != 0) asm.pull(K2, dest, spentK2);
        if (flags & 1 != 0) vm.warp(RESET + 1 hours); // the spend is yesterday's
        bytes32 key = flags & 2 != 0 ? K : K2;
        bytes memory item =
            flags & 4 != 0 ? PullCodec.signed(key, dest2, amount, 0, 0, "") : _item(key, dest2, amount);
        uint256 keyBefore = asm.getSessionKey(K).spentThisEpoch;
        uint256 mandateBefore = asm.getMandate(M).spentThisEpoch;
        (uint256 remainingBefore,) = asm.remainingAllowance(key);
        _failTransfers();
        _declinedTransfer(key, 0);
        assertEq(asm.pullBatch(item), 0);
        assertEq(uint256(asm.getSessionKey(K).spentThisEpoch), keyBefore);
        assertEq(uint256(asm.getSessionKey(K2).spentThisEpoch), 0);
        assertEq(uint256(asm.getMandate(M).spentThisEpoch), mandateBefore);
        (uint256 remainingAfter,) = asm.remainingAllowance(key);
        assertEq(remainingAfter, remainingBefore);
        if (key == K2) assertEq(vm.load(address(asm), _keyUseSlot(K2)), bytes32(0));
        _restoreTransfers();
        assertEq(asm.pullBatch(item), 1);
        assertEq(uint256(asm.getMandate(M).spentThisEpoch), mandateBefore + amount);
        assertEq(uint256(asm.getSessionKey(K).spentThisEpoch), key == K ? keyBefore + amount : keyBefore);
        assertEq(usd.balanceOf(dest2), amount);
    }
}
