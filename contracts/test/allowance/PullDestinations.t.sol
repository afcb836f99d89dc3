// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {PullCodec} from "../utils/PullCodec.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";

/// A key's destinations as a pull sees them. A key with one destination keeps it in its own
/// word (no allow-list entry is written); a key with several keeps them in the allow-list
/// mapping. Either way a pull pays only them — on the fast path (the mandate already pulled
/// this epoch) and on the reference path alike — and `isDestinationAllowed` agrees.
contract PullDestinationsTest is AllowanceBase {
    uint64 internal constant RESET = uint64(MONDAY + 1 days);
    bytes32 internal constant ONE_SALT = keccak256("one destination");
    bytes32 internal constant TWO_SALT = keccak256("two destinations");
    bytes32 internal ONE;
    bytes32 internal TWO;

    function setUp() public override {
        super.setUp();
        _mandate(100e6, I.Interval.Daily);
        _key(K2_SALT, 0); // another key of the mandate, to make its usage of today
        ONE = _keyTo(ONE_SALT, 0, dest);
        TWO = asm.issueSessionKey(_keyTerms(M, TWO_SALT, 0, _payees(), address(0)), _payees());
    }

    function _notAllowed(bytes32 key, address to) internal pure returns (bytes memory) {
        return abi.encodeWithSelector(I.DestinationNotAllowed.selector, key, to);
    }

    /// @dev Make the mandate's usage word of today, so the fast path applies to the next pull.
    function _warmMandate() internal {
        asm.pull(K2, dest, 1);
    }

    // ------------------------------------------------------------ storage

    /// One destination: in the key's word (above mandate index, expiry, revoked, flags), with no
    /// allow-list entry; several: entries, and no destination in the word.
    function test_issueSessionKey_success_oneDestinationInTheKeyWord() public view {
        uint256 word = uint256(vm.load(address(asm), _keySlot(ONE)));
        assertEq(address(uint160(word >> 88)), dest);
        assertEq((word >> 80) & 0xff, 0); // no flags: no list, no signer, no ceiling
        assertEq(uint32(word), 1); // the first mandate
        assertEq(vm.load(address(asm), _allowedSlot(ONE, dest)), bytes32(0));
        uint256 two = uint256(vm.load(address(asm), _keySlot(TWO)));
        assertEq(two >> 88, 0);
        assertEq((two >> 80) & 0xff, 1); // the list flag
        assertEq(uint256(vm.load(address(asm), _allowedSlot(TWO, dest))), 1);
        assertEq(uint256(vm.load(address(asm), _allowedSlot(TWO, dest2))), 1);
    }

    /// Issuing a one-destination key writes its word and no other slot (no allow-list entry).
    function test_issueSessionKey_success_oneDestinationWritesOneSlot() public {
        bytes32 salt = keccak256("fresh");
        bytes32 key = _keyIdOf(M, salt);
        vm.record();
        _keyTo(salt, 0, dest2);
        (, bytes32[] memory writes) = vm.accesses(address(asm));
        assertGt(writes.length, 0);
        for (uint256 i; i < writes.length; ++i) {
            assertEq(writes[i], _keySlot(key));
        }
    }

    // ------------------------------------------------------------ one destination

    function test_isDestinationAllowed_success_oneDestination() public view {
        assertTrue(asm.isDestinationAllowed(ONE, dest));
        assertFalse(asm.isDestinationAllowed(ONE, dest2)); // a payee, not this key's
        assertFalse(asm.isDestinationAllowed(ONE, stranger));
        assertFalse(asm.isDestinationAllowed(ONE, address(0)));
        assertTrue(asm.getSessionKey(ONE).hasAllowList);
    }

    /// The pull to it: first of the epoch on the reference path, then on the fast path.
    function test_pull_success_toItsOneDestination() public {
        vm.expectEmit(address(asm));
        emit I.DebitPulled(ONE, dest, 10e6);
        _referencePull(ONE, dest, 10e6);
        _fastPull(ONE, dest, 5e6);
        assertEq(usd.balanceOf(dest), 15e6 + 1);
        assertEq(uint256(asm.getMandate(M).spentThisEpoch), 15e6);
    }

    /// To anyone else, a payee of the mandate included: declined, on either path.
    function test_pull_revert_toAnotherDestination_referencePath() public {
        vm.expectRevert(_notAllowed(ONE, dest2));
        asm.pull(ONE, dest2, 1e6);
        vm.expectRevert(_notAllowed(ONE, stranger));
        asm.pull(ONE, stranger, 1e6);
        vm.expectRevert(_notAllowed(ONE, payer));
        asm.pull(ONE, payer, 1e6);
        assertEq(uint256(asm.getMandate(M).spentThisEpoch), 0);
    }

    function test_pull_revert_toAnotherDestination_fastPath() public {
        _warmMandate();
        _fastPull(ONE, dest, 1e6);
        vm.expectRevert(_notAllowed(ONE, dest2));
        asm.pull(ONE, dest2, 1e6);
        vm.expectRevert(_notAllowed(ONE, stranger));
        asm.pull(ONE, stranger, 1e6);
        assertEq(uint256(asm.getMandate(M).spentThisEpoch), 1e6 + 1);
        assertEq(usd.balanceOf(dest2) + usd.balanceOf(stranger), 0);
    }

    function test_pullBatch_revert_toAnotherDestination_bothPaths() public {
        bytes memory items =
            bytes.concat(_item(ONE, dest2, 1e6), _item(ONE, dest, 1e6), _item(ONE, stranger, 1e6));
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(ONE, 0, _notAllowed(ONE, dest2));
        vm.expectEmit(address(asm));
        emit I.DebitPulled(ONE, dest, 1e6);
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(ONE, 2, _notAllowed(ONE, stranger));
        assertEq(asm.pullBatch(items), 1);
        // The mandate is warm now: the same again, fast path for the good item.
        vm.record();
        assertEq(asm.pullBatch(_item(ONE, dest, 1e6)), 1);
        assertEq(_keyReads(ONE), 1, "fast path");
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(ONE, 0, _notAllowed(ONE, dest2));
        assertEq(asm.pullBatch(_item(ONE, dest2, 1e6)), 0);
        // A signed-kind item (reference path only) alike.
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(ONE, 0, _notAllowed(ONE, dest2));
        assertEq(asm.pullBatch(PullCodec.signed(ONE, dest2, 1e6, 0, 0, "")), 0);
        assertEq(usd.balanceOf(dest2), 0);
    }

    /// A one-destination key with its own ceiling: both rules hold on both paths.
    function test_pull_success_oneDestinationWithCeiling() public {
        bytes32 key = _keyTo(keccak256("capped"), 20e6, dest2);
        _referencePull(key, dest2, 15e6);
        _fastPull(key, dest2, 5e6);
        vm.expectRevert(abi.encodeWithSelector(I.KeyCeilingExceeded.selector, key, 0, RESET));
        asm.pull(key, dest2, 1);
        vm.expectRevert(_notAllowed(key, dest));
        asm.pull(key, dest, 1);
        assertEq(uint256(asm.getSessionKey(key).spentThisEpoch), 20e6);
    }

    /// Whatever the destination and the path, a one-destination key pays only it.
    function testFuzz_pull_revert_oneDestinationPaysOnlyIt(address to, uint256 amount, bool warm) public {
        vm.assume(to != address(0) && to != address(asm));
        amount = bound(amount, 1, 50e6);
        if (warm) _warmMandate();
        uint256 before = usd.balanceOf(to);
        if (to == dest) {
            asm.pull(ONE, to, amount);
            assertEq(usd.balanceOf(to), before + amount);
        } else {
            vm.expectRevert(_notAllowed(ONE, to));
            asm.pull(ONE, to, amount);
            assertEq(asm.pullBatch(_item(ONE, to, amount)), 0);
            assertEq(usd.balanceOf(to), before);
            assertFalse(asm.isDestinationAllowed(ONE, to));
        }
    }

    // ------------------------------------------------------------ several destinations

    function test_isDestinationAllowed_success_severalDestinations() public view {
        assertTrue(asm.isDestinationAllowed(TWO, dest));
        assertTrue(asm.isDestinationAllowed(TWO, dest2));
        assertFalse(asm.isDestinationAllowed(TWO, stranger));
        assertFalse(asm.isDestinationAllowed(TWO, address(0)));
        assertTrue(asm.getSessionKey(TWO).hasAllowList);
    }

    function test_pull_success_toEachOfSeveralDestinations() public {
        _referencePull(TWO, dest, 3e6);
        _fastPull(TWO, dest2, 4e6);
        _fastPull(TWO, dest, 5e6);
        assertEq(usd.balanceOf(dest), 8e6 + 1);
        assertEq(usd.balanceOf(dest2), 4e6);
    }

    function test_pull_revert_severalDestinationsNotAnother() public {
        vm.expectRevert(_notAllowed(TWO, stranger));
        asm.pull(TWO, stranger, 1e6);
        _warmMandate();
        vm.expectRevert(_notAllowed(TWO, stranger));
        asm.pull(TWO, stranger, 1e6);
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(TWO, 1, _notAllowed(TWO, stranger));
        assertEq(asm.pullBatch(bytes.concat(_item(TWO, dest2, 1e6), _item(TWO, stranger, 1e6))), 1);
        assertEq(usd.balanceOf(stranger), 0);
    }

    /// A key naming no destination gets the mandate's payees: several, in the allow-list.
    function test_pull_success_noListMeansThePayees() public {
        uint256 word = uint256(vm.load(address(asm), _keySlot(K2)));
        assertEq(word >> 88, 0);
        assertEq((word >> 80) & 1, 1);
        assertTrue(asm.isDestinationAllowed(K2, dest2));
        _referencePull(K2, dest, 1e6);
        _fastPull(K2, dest2, 1e6);
        vm.expectRevert(_notAllowed(K2, stranger));
        asm.pull(K2, stranger, 1e6);
    }

    /// A key with no allow-list at all (a treasury mandate names no payees): any destination
    /// but zero, the contract and the treasury itself.
    function test_pull_success_noAllowListPaysAnyone() public {
        I.MandateTerms memory t = _terms(keccak256("bank"), treasury, 50e6, I.Interval.Daily);
        t.payees = new address[](0);
        bytes32 md = asm.createMandate(t);
        bytes32 kd = asm.issueSessionKey(
            _keyTerms(md, keccak256("bank key"), 0, new address[](0), address(0)), new address[](0)
        );
        assertFalse(asm.getSessionKey(kd).hasAllowList);
        assertTrue(asm.isDestinationAllowed(kd, stranger));
        assertEq(uint256(vm.load(address(asm), _keySlot(kd))) >> 80, 0); // no flags, no destination
        asm.pull(kd, stranger, 1e6);
        asm.pull(kd, dest, 1e6);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidDestination.selector, treasury));
        asm.pull(kd, treasury, 1e6);
    }
}
