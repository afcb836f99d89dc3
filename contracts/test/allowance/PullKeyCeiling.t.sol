// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";

/// A key's own ceiling. A key with one keeps it and its spend of the epoch in a second slot,
/// written at issuance and by its pulls; a key without one has no such slot (its pulls are
/// bounded by the mandate's ceiling alone, and its `spentThisEpoch` reads 0). Both kinds on
/// the fast path and the reference path, across epochs.
contract PullKeyCeilingTest is AllowanceBase {
    uint64 internal constant RESET = uint64(MONDAY + 1 days);
    uint256 internal constant TODAY = MONDAY / DAY;

    function setUp() public override {
        super.setUp();
        _mandate(100e6, I.Interval.Daily);
        _key(K_SALT, 60e6); // K: its own ceiling
        _key(K2_SALT, 0); // K2: the mandate's only
    }

    function _keyUse(bytes32 key) internal view returns (uint256 ceiling, uint256 epochEnd, uint256 spent) {
        uint256 w = uint256(vm.load(address(asm), _keyUseSlot(key)));
        return (uint64(w), uint32(w >> 64), uint64(w >> 96));
    }

    function _keyCeiling(bytes32 key, uint256 remaining, uint64 resets) internal pure returns (bytes memory) {
        return abi.encodeWithSelector(I.KeyCeilingExceeded.selector, key, remaining, resets);
    }

    function _remaining(bytes32 key) internal view returns (uint256 r) {
        (r,) = asm.remainingAllowance(key);
    }

    // ------------------------------------------------------------ storage

    function test_issueSessionKey_success_ceilingSlotOnlyForKeysWithOne() public view {
        (uint256 c, uint256 end, uint256 spent) = _keyUse(K);
        assertEq(c, 60e6);
        assertEq(end + spent, 0);
        assertEq((uint256(vm.load(address(asm), _keySlot(K))) >> 80) & 4, 4); // ceiling flag
        assertEq(vm.load(address(asm), _keyUseSlot(K2)), bytes32(0));
        assertEq((uint256(vm.load(address(asm), _keySlot(K2))) >> 80) & 4, 0);
        assertEq(uint256(asm.getSessionKey(K).maxAmount), 60e6);
        assertEq(uint256(asm.getSessionKey(K2).maxAmount), 0);
    }

    // ------------------------------------------------------------ without a ceiling

    /// Its pulls never write a key slot: only the mandate's usage, on both paths.
    function test_pull_success_withoutCeilingWritesNoKeySlot() public {
        vm.record();
        _referencePull(K2, dest, 10e6);
        (, bytes32[] memory writes) = vm.accesses(address(asm));
        for (uint256 i; i < writes.length; ++i) {
            assertTrue(writes[i] != _keyUseSlot(K2) && writes[i] != _keySlot(K2));
        }
        vm.record();
        _fastPull(K2, dest, 20e6);
        (, writes) = vm.accesses(address(asm));
        for (uint256 i; i < writes.length; ++i) {
            assertTrue(writes[i] != _keyUseSlot(K2) && writes[i] != _keySlot(K2));
        }
        assertEq(vm.load(address(asm), _keyUseSlot(K2)), bytes32(0));
        assertEq(uint256(asm.getSessionKey(K2).spentThisEpoch), 0); // not kept
        assertEq(uint256(asm.getMandate(M).spentThisEpoch), 30e6);
        assertEq(_remaining(K2), 70e6);
    }

    /// The mandate's ceiling binds it, on both paths.
    function test_pull_revert_withoutCeilingMandateCeiling() public {
        vm.expectRevert(abi.encodeWithSelector(I.MandateCeilingExceeded.selector, M, 100e6, RESET));
        asm.pull(K2, dest, 100e6 + 1);
        _referencePull(K2, dest, 90e6);
        vm.expectRevert(abi.encodeWithSelector(I.MandateCeilingExceeded.selector, M, 10e6, RESET));
        asm.pull(K2, dest, 10e6 + 1);
        _fastPull(K2, dest, 10e6);
        assertEq(_remaining(K2), 0);
    }

    /// A key without a ceiling takes the fast path on its very first pull once the mandate's
    /// usage is of today (there is no usage of its own to bring up to date).
    function test_pull_success_withoutCeilingFirstPullIsFast() public {
        _referencePull(K, dest, 1e6);
        _fastPull(K2, dest, 1e6);
    }

    function test_pull_success_withoutCeilingEpochRollover() public {
        _referencePull(K2, dest, 100e6);
        vm.warp(RESET - 1);
        vm.expectRevert(abi.encodeWithSelector(I.MandateCeilingExceeded.selector, M, 0, RESET));
        asm.pull(K2, dest, 1);
        vm.warp(RESET);
        assertEq(_remaining(K2), 100e6);
        _referencePull(K2, dest, 60e6);
        _fastPull(K2, dest, 40e6);
        vm.expectRevert(abi.encodeWithSelector(I.MandateCeilingExceeded.selector, M, 0, RESET + 1 days));
        asm.pull(K2, dest, 1);
        assertEq(uint256(asm.getSessionKey(K2).spentThisEpoch), 0);
    }

    // ------------------------------------------------------------ with a ceiling

    function test_pull_success_withCeilingReferenceThenFast() public {
        _referencePull(K, dest, 20e6);
        (uint256 c, uint256 end, uint256 spent) = _keyUse(K);
        assertEq(c, 60e6);
        assertEq(end, TODAY + 1);
        assertEq(spent, 20e6);
        _fastPull(K, dest, 30e6);
        (c, end, spent) = _keyUse(K);
        assertEq(c, 60e6);
        assertEq(end, TODAY + 1);
        assertEq(spent, 50e6);
        assertEq(uint256(asm.getSessionKey(K).spentThisEpoch), 50e6);
        assertEq(_remaining(K), 10e6);
    }

    function test_pull_revert_withCeiling_referencePath() public {
        vm.expectRevert(_keyCeiling(K, 60e6, RESET));
        asm.pull(K, dest, 60e6 + 1);
        assertEq(asm.pullBatch(_item(K, dest, 60e6 + 1)), 0);
        (, uint256 end, uint256 spent) = _keyUse(K);
        assertEq(end + spent, 0);
    }

    /// When the fast path would apply (key and mandate usage of today), a pull over the key's
    /// ceiling is still declined, with what is left.
    function test_pull_revert_withCeiling_fastPath() public {
        _referencePull(K, dest, 50e6);
        vm.expectRevert(_keyCeiling(K, 10e6, RESET));
        asm.pull(K, dest, 10e6 + 1);
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(K, 0, _keyCeiling(K, 10e6, RESET));
        assertEq(asm.pullBatch(_item(K, dest, 10e6 + 1)), 0);
        _fastPull(K, dest, 10e6);
        vm.expectRevert(_keyCeiling(K, 0, RESET));
        asm.pull(K, dest, 1);
        // The mandate has 40 left, for the key without a ceiling.
        _fastPull(K2, dest, 40e6);
    }

    /// The mandate's usage is of today (another key pulled) but this key's is not: its first
    /// pull of the epoch goes the reference path, which brings its usage up to date.
    function test_pull_success_withCeilingFirstPullOfTheEpochIsReference() public {
        _referencePull(K2, dest, 1e6);
        _referencePull(K, dest, 1e6);
        _fastPull(K, dest, 1e6);
    }

    function test_pull_success_withCeilingEpochRollover() public {
        _referencePull(K, dest, 60e6);
        vm.warp(RESET - 1);
        vm.expectRevert(_keyCeiling(K, 0, RESET));
        asm.pull(K, dest, 1);
        vm.warp(RESET);
        // The stored spend is yesterday's: the views read it as 0.
        assertEq(uint256(asm.getSessionKey(K).spentThisEpoch), 0);
        assertEq(_remaining(K), 60e6);
        _referencePull(K, dest, 60e6);
        (, uint256 end, uint256 spent) = _keyUse(K);
        assertEq(end, TODAY + 2);
        assertEq(spent, 60e6);
        vm.expectRevert(_keyCeiling(K, 0, RESET + 1 days));
        asm.pull(K, dest, 1);
    }

    /// The key's stored spend is of an earlier epoch while the mandate's is of today: the key's
    /// ceiling is fresh (yesterday's spend does not count), on the reference path.
    function test_pull_success_withCeilingStaleKeyUsageWarmMandate() public {
        _referencePull(K, dest, 60e6);
        vm.warp(RESET + 1 hours);
        _referencePull(K2, dest, 10e6); // the mandate's usage: today's
        _referencePull(K, dest, 60e6); // the key's: yesterday's, so the reference path
        assertEq(uint256(asm.getSessionKey(K).spentThisEpoch), 60e6);
        assertEq(uint256(asm.getMandate(M).spentThisEpoch), 70e6);
        vm.expectRevert(_keyCeiling(K, 0, RESET + 1 days));
        asm.pull(K, dest, 1);
    }

    /// On a weekly mandate the epoch is the week: Sunday is the same epoch as Monday.
    function test_pull_success_withCeilingWeeklyRollover() public {
        I.MandateTerms memory t = _terms(keccak256("weekly"), payer, 100e6, I.Interval.Weekly);
        vm.prank(payer);
        bytes32 mw = asm.createMandate(t);
        bytes32 kw = asm.issueSessionKey(
            _keyTerms(mw, keccak256("weekly key"), 30e6, new address[](0), address(0)), _payees()
        );
        uint64 nextMonday = uint64(MONDAY + 7 days);
        asm.pull(kw, dest, 30e6);
        vm.warp(nextMonday - 1);
        vm.expectRevert(_keyCeiling(kw, 0, nextMonday));
        asm.pull(kw, dest, 1);
        vm.warp(nextMonday);
        assertEq(uint256(asm.getSessionKey(kw).spentThisEpoch), 0);
        asm.pull(kw, dest, 30e6);
        assertEq(uint256(asm.getSessionKey(kw).spentThisEpoch), 30e6);
        assertEq(uint256(asm.getMandate(mw).spentThisEpoch), 30e6);
    }

    // ------------------------------------------------------------ against a model

    struct Model {
        uint256 day;
        uint256 mandate;
        uint256 k;
        uint256 k3;
    }

    /// Random pulls (single or batched) on a key with a ceiling, one without, and a
    /// one-destination key with a ceiling, with time moving across days: every decision and
    /// every view matches a ledger kept here.
    function testFuzz_pull_success_ceilingsMatchAModel(uint256[10] memory amounts, uint256 choices) public {
        bytes32 k3 = _keyTo(keccak256("k3"), 25e6, dest2);
        bytes32[3] memory keys = [K, K2, k3];
        address[3] memory tos = [dest, dest, dest2];
        Model memory m = Model(block.timestamp / DAY, 0, 0, 0);
        for (uint256 i; i < amounts.length; ++i) {
            uint256 c = choices >> (i * 8);
            // Up to 14 hours a step: across days, within the keys' week.
            if (c & 0xc0 == 0xc0) vm.warp(block.timestamp + (c & 0x07) * 2 hours);
            if (block.timestamp / DAY != m.day) m = Model(block.timestamp / DAY, 0, 0, 0);
            uint256 which = c % 3;
            uint256 amount = bound(amounts[i], 1, 70e6);
            bool ok = m.mandate + amount <= 100e6 && (which != 0 || m.k + amount <= 60e6)
                && (which != 2 || m.k3 + amount <= 25e6);
            bool authorized;
            if (c & 0x20 != 0) {
                authorized = asm.pullBatch(_item(keys[which], tos[which], amount)) == 1;
            } else {
                try asm.pull(keys[which], tos[which], amount) {
                    authorized = true;
                } catch {}
            }
            assertEq(authorized, ok);
            if (ok) {
                m.mandate += amount;
                if (which == 0) m.k += amount;
                if (which == 2) m.k3 += amount;
            }
            assertEq(uint256(asm.getMandate(M).spentThisEpoch), m.mandate);
            assertEq(uint256(asm.getSessionKey(K).spentThisEpoch), m.k);
            assertEq(uint256(asm.getSessionKey(K2).spentThisEpoch), 0);
            assertEq(uint256(asm.getSessionKey(k3).spentThisEpoch), m.k3);
            assertEq(_remaining(K2), 100e6 - m.mandate);
            uint256 leftK = 60e6 - m.k;
            assertEq(_remaining(K), leftK < 100e6 - m.mandate ? leftK : 100e6 - m.mandate);
        }
    }
}
