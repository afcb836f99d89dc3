// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {Vm} from "../utils/Vm.sol";
import {PullCodec} from "../utils/PullCodec.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";

/// `pullBatch`'s packed encoding: every field of both kinds decoded as documented, items
/// found back to back, and a truncated item, a signature longer than the data or an unknown
/// kind reverting the whole batch `MalformedBatch(index)` of the item at fault.
contract PullBatchEncodingTest is AllowanceBase {
    uint256 internal constant LATER = 2_000_000_000;
    bytes32 internal constant SK_SALT = keccak256("signer key");
    bytes32 internal SK;

    function setUp() public override {
        super.setUp();
        _mandate(100e6, I.Interval.Daily);
        _key(K_SALT, 60e6);
        _key(K2_SALT, 0);
        SK = _signerKey(SK_SALT, agent);
    }

    function _malformed(uint256 index) internal pure returns (bytes memory) {
        return abi.encodeWithSelector(I.MalformedBatch.selector, index);
    }

    /// @dev Nothing of a reverted batch stays: no spend, no tokens moved, no nonce used.
    function _nothingHappened() internal view {
        assertEq(usd.balanceOf(dest), 1);
        assertEq(uint256(asm.getMandate(M).spentThisEpoch), 0);
        assertEq(uint256(asm.getSessionKey(K).spentThisEpoch), 0);
        assertFalse(asm.pullNonceUsed(SK, 1));
    }

    // ------------------------------------------------------------ well formed

    function test_pullBatch_success_emptyBatchAuthorizesNothing() public {
        vm.recordLogs();
        assertEq(asm.pullBatch(""), 0);
        assertEq(vm.getRecordedLogs().length, 0);
        _nothingHappened();
    }

    /// The documented layouts byte for byte: 61 bytes unsigned, 103 plus the signature signed.
    function test_pullBatch_success_itemLayouts() public view {
        bytes memory u = _item(K, dest, 0x0102030405060708);
        assertEq(u.length, 61);
        assertEq(uint256(uint8(u[0])), 0);
        assertEq(uint256(uint8(u[53])), 0x01);
        assertEq(uint256(uint8(u[60])), 0x08);
        bytes memory sig = _pullSig(AGENT_KEY, SK, dest, 1, 2, LATER);
        bytes memory s = PullCodec.signed(SK, dest, 1, 2, LATER, sig);
        assertEq(s.length, 103 + 65);
        assertEq(uint256(uint8(s[0])), 1);
        assertEq(uint256(uint8(s[92])), 2); // nonce's last byte
        assertEq(uint256(uint8(s[101])), 0); // signature length, high byte
        assertEq(uint256(uint8(s[102])), 65); // signature length, low byte
    }

    /// Unsigned and signed items back to back: each found where the previous one ends, and each
    /// outcome carries its own index.
    function test_pullBatch_success_mixedKindsBackToBack() public {
        bytes memory items = bytes.concat(
            _item(K, dest, 1e6),
            _signedItem(AGENT_KEY, SK, dest2, 2e6, 1, LATER),
            _item(K2, dest, 0),
            _signedItem(0xB0B, SK, dest, 3e6, 2, LATER),
            _item(K2, dest2, 4e6)
        );
        vm.expectEmit(address(asm));
        emit I.DebitPulled(K, dest, 1e6);
        vm.expectEmit(address(asm));
        emit I.PullNonceUsed(SK, 1);
        vm.expectEmit(address(asm));
        emit I.DebitPulled(SK, dest2, 2e6);
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(K2, 2, abi.encodeWithSelector(I.InvalidAmount.selector, 0));
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(SK, 3, abi.encodeWithSelector(R.InvalidSignature.selector));
        vm.expectEmit(address(asm));
        emit I.DebitPulled(K2, dest2, 4e6);
        assertEq(asm.pullBatch(items), 3);
        assertEq(uint256(asm.getMandate(M).spentThisEpoch), 7e6);
    }

    /// Every field of an unsigned item: a deferred mandate at the largest ceiling and a key with
    /// no allow-list take any destination and any 8-byte amount, and the event echoes them.
    function testFuzz_pullBatch_success_unsignedFieldsDecoded(address to, uint64 amount, bytes32 salt)
        public
    {
        vm.assume(to != address(0) && to != address(asm) && to != treasury && amount != 0);
        I.MandateTerms memory t = _terms(keccak256("deferred"), treasury, type(uint64).max, I.Interval.Daily);
        t.payees = new address[](0);
        bytes32 md = asm.createMandate(t);
        bytes32 kd =
            asm.issueSessionKey(_keyTerms(md, salt, 0, new address[](0), address(0)), new address[](0));
        vm.expectEmit(address(asm));
        emit I.DebitPulled(kd, to, amount);
        assertEq(asm.pullBatch(_item(kd, to, amount)), 1);
        assertEq(uint256(asm.getMandate(md).spentThisEpoch), amount);
        // The key id alone: an unknown one is named in the decline.
        bytes32 unknown = keccak256(abi.encode(salt, "unknown"));
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(unknown, 0, abi.encodeWithSelector(I.UnknownKey.selector, unknown));
        assertEq(asm.pullBatch(_item(unknown, to, amount)), 0);
    }

    /// Every field of a signed item: the signature covers key, destination, amount, nonce and
    /// deadline as decoded; the nonce is the one marked used; the deadline the one enforced.
    function testFuzz_pullBatch_success_signedFieldsDecoded(uint256 amount, uint256 nonce, uint64 deadline)
        public
    {
        amount = bound(amount, 1, 100e6);
        deadline = uint64(bound(deadline, block.timestamp, type(uint64).max));
        vm.expectEmit(address(asm));
        emit I.PullNonceUsed(SK, nonce);
        vm.expectEmit(address(asm));
        emit I.DebitPulled(SK, dest2, amount);
        assertEq(asm.pullBatch(_signedItem(AGENT_KEY, SK, dest2, amount, nonce, deadline)), 1);
        assertTrue(asm.pullNonceUsed(SK, nonce));
        assertEq(usd.balanceOf(dest2), amount);
        if (deadline < type(uint64).max) {
            vm.warp(uint256(deadline) + 1);
            bytes memory late = _signedItem(AGENT_KEY, SK, dest2, 1, nonce ^ 1, deadline);
            vm.expectEmit(address(asm));
            emit I.DebitPullDeclined(SK, 0, abi.encodeWithSelector(R.SignatureExpired.selector, deadline));
            assertEq(asm.pullBatch(late), 0);
        }
    }

    /// A signed-kind item on a key without a signer is the unsigned pull: its signature, nonce
    /// and deadline are not read (any, even none or expired), no nonce is used — and it never
    /// takes the fast path, even when the fast path would apply: the key's word is read once,
    /// and its allow-list before the mandate's usage (the reference path's order).
    function test_pullBatch_success_signedKindOnAKeyWithoutSigner() public {
        asm.pull(K2, dest, 1e6); // the mandate's usage is of today: the fast path would apply
        vm.recordLogs();
        vm.record();
        assertEq(asm.pullBatch(PullCodec.signed(K2, dest, 2e6, 9, 0, hex"deadbeef")), 1);
        assertEq(_keyReads(K2), 1, "no fast-path attempt");
        assertTrue(_allowListBeforeUsage(K2, dest, 1), "reference path only");
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 j; j < logs.length; ++j) {
            assertTrue(logs[j].topics[0] != I.PullNonceUsed.selector);
        }
        assertFalse(asm.pullNonceUsed(K2, 9));
        assertEq(uint256(asm.getMandate(M).spentThisEpoch), 3e6);
        // The same pull unsigned takes the fast path.
        vm.record();
        assertEq(asm.pullBatch(_item(K2, dest, 2e6)), 1);
        assertEq(_keyReads(K2), 1, "fast path");
        assertFalse(_allowListBeforeUsage(K2, dest, 1), "fast path");
        // The rules are the reference path's: the key's own ceiling binds.
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(
            K, 0, abi.encodeWithSelector(I.KeyCeilingExceeded.selector, K, 60e6, uint64(MONDAY + 1 days))
        );
        assertEq(asm.pullBatch(PullCodec.signed(K, dest, 61e6, 0, 0, "")), 0);
    }

    /// An unsigned-kind item on a key with a signer is declined; the agent's signature cannot
    /// ride along in it.
    function test_pullBatch_revert_unsignedKindOnASignerKey() public {
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(SK, 0, abi.encodeWithSelector(I.SignatureRequired.selector, SK));
        assertEq(asm.pullBatch(_item(SK, dest, 1e6)), 0);
        // Relabelled unsigned, a signed item is a declined unsigned item followed by its tail
        // read as items: here one more (declined, an unknown key) and a truncated third.
        bytes memory signed = _signedItem(AGENT_KEY, SK, dest, 1e6, 1, LATER);
        signed[0] = 0x00;
        vm.expectRevert(_malformed(2));
        asm.pullBatch(signed);
        _nothingHappened();
    }

    // ------------------------------------------------------------ malformed

    /// An unsigned item cut anywhere (1 to 60 bytes) is `MalformedBatch(0)`.
    function test_pullBatch_revert_truncatedHead() public {
        bytes memory item = _item(K, dest, 1e6);
        for (uint256 n = 1; n < 61; ++n) {
            vm.expectRevert(_malformed(0));
            asm.pullBatch(PullCodec.prefix(item, n));
        }
        _nothingHappened();
    }

    /// A truncated item after good ones names its own index, and the good ones are undone.
    function test_pullBatch_revert_truncatedHeadAfterGoodItems() public {
        bytes memory good = bytes.concat(_item(K, dest, 1e6), _signedItem(AGENT_KEY, SK, dest, 1e6, 1, LATER));
        bytes memory next = _item(K2, dest, 1e6);
        for (uint256 n = 1; n < 61; n += 7) {
            vm.expectRevert(_malformed(2));
            asm.pullBatch(bytes.concat(good, PullCodec.prefix(next, n)));
        }
        // One stray byte after the last item is an item's head, truncated.
        vm.expectRevert(_malformed(2));
        asm.pullBatch(bytes.concat(good, hex"00"));
        _nothingHappened();
        assertEq(asm.pullBatch(good), 2);
    }

    /// A signed item whose head is whole but whose tail (nonce, deadline, signature length:
    /// 42 bytes) is cut.
    function test_pullBatch_revert_truncatedSignedTail() public {
        bytes memory item = _signedItem(AGENT_KEY, SK, dest, 1e6, 1, LATER);
        for (uint256 n = 61; n < 103; ++n) {
            vm.expectRevert(_malformed(0));
            asm.pullBatch(PullCodec.prefix(item, n));
        }
        bytes memory first = _item(K, dest, 1e6);
        vm.expectRevert(_malformed(1));
        asm.pullBatch(bytes.concat(first, PullCodec.prefix(item, 102)));
        _nothingHappened();
    }

    /// A signature length beyond the data: the last item's, by one byte or by the most two
    /// bytes can say, or a signature cut short.
    function test_pullBatch_revert_signatureLengthBeyondTheData() public {
        bytes memory sig = _pullSig(AGENT_KEY, SK, dest, 1e6, 1, LATER);
        bytes memory head = abi.encodePacked(uint8(1), SK, dest, uint64(1e6), uint256(1), uint64(LATER));
        vm.expectRevert(_malformed(0));
        asm.pullBatch(bytes.concat(head, abi.encodePacked(uint16(66)), sig));
        vm.expectRevert(_malformed(0));
        asm.pullBatch(bytes.concat(head, abi.encodePacked(type(uint16).max), sig));
        bytes memory whole = _signedItem(AGENT_KEY, SK, dest, 1e6, 1, LATER);
        vm.expectRevert(_malformed(0));
        asm.pullBatch(PullCodec.prefix(whole, whole.length - 1));
        vm.expectRevert(_malformed(1));
        asm.pullBatch(bytes.concat(_item(K, dest, 1e6), PullCodec.prefix(whole, 103)));
        _nothingHappened();
    }

    /// A declared length one byte too long swallows the next item's kind byte: that item is
    /// then one byte short, and it is the one at fault.
    function test_pullBatch_revert_signatureLengthSwallowsTheNextItem() public {
        bytes memory sig = _pullSig(AGENT_KEY, SK, dest, 1e6, 1, LATER);
        bytes memory overlong = bytes.concat(
            abi.encodePacked(uint8(1), SK, dest, uint64(1e6), uint256(1), uint64(LATER), uint16(66)), sig
        );
        vm.expectRevert(_malformed(1));
        asm.pullBatch(bytes.concat(overlong, _item(K, dest, 1e6)));
        _nothingHappened();
    }

    /// Kinds other than 0 and 1 are refused, wherever they are; the items before are undone.
    function test_pullBatch_revert_unknownKind() public {
        bytes memory good = _item(K, dest, 1e6);
        uint8[4] memory kinds = [2, 3, 0x80, 0xff];
        for (uint256 i; i < kinds.length; ++i) {
            bytes memory bad = _item(K2, dest, 1e6);
            bad[0] = bytes1(kinds[i]);
            vm.expectRevert(_malformed(0));
            asm.pullBatch(bad);
            vm.expectRevert(_malformed(3));
            asm.pullBatch(bytes.concat(good, good, good, bad, good));
        }
        _nothingHappened();
    }

    /// A batch cut at any byte: on an item boundary it is the shorter batch, all authorized;
    /// anywhere else it reverts naming the item that was cut.
    function testFuzz_pullBatch_revert_cutAnywhere(uint256 cut, uint256 kinds) public {
        uint256 n = 5;
        bytes memory items;
        uint256[] memory ends = new uint256[](n);
        for (uint256 i; i < n; ++i) {
            bytes memory item = (kinds >> i) & 1 == 1
                ? _signedItem(AGENT_KEY, SK, dest2, 1e6, i, LATER)
                : _item(i % 2 == 0 ? K : K2, dest2, 1e6);
            items = bytes.concat(items, item);
            ends[i] = items.length;
        }
        cut = bound(cut, 1, items.length);
        uint256 at;
        while (ends[at] < cut) ++at;
        if (ends[at] == cut) {
            assertEq(asm.pullBatch(PullCodec.prefix(items, cut)), at + 1);
            assertEq(usd.balanceOf(dest2), (at + 1) * 1e6);
        } else {
            vm.expectRevert(_malformed(at));
            asm.pullBatch(PullCodec.prefix(items, cut));
            assertEq(usd.balanceOf(dest2), 0);
        }
    }

    /// Whatever bytes the operator sends, the batch either runs (items on unknown keys are
    /// declined) or reverts `MalformedBatch`; nothing moves.
    function testFuzz_pullBatch_revert_garbageMovesNothing(bytes calldata junk) public {
        try asm.pullBatch(junk) returns (uint256 authorized) {
            assertEq(authorized, 0);
        } catch (bytes memory reason) {
            assertEq(bytes4(reason), I.MalformedBatch.selector);
        }
        assertEq(usd.balanceOf(payer), 1_000_000e6);
    }
}
