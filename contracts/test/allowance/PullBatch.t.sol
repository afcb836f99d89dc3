// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {Vm} from "../utils/Vm.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {GasBurnerToken} from "../utils/mocks/GasBurnerToken.sol";
import {ERC1271WalletMock} from "../utils/mocks/ERC1271WalletMock.sol";
import {RevokingPayer, CallbackToken} from "../utils/mocks/RevokingPayer.sol";
import {PullCodec} from "../utils/PullCodec.sol";

/// `pullBatch`: packed items (see `PullCodec`), each authorized or declined on its own. The
/// encoding itself (malformed batches, every field decoded) is in PullBatchEncoding.t.sol.
contract PullBatchTest is AllowanceBase {
    uint64 internal constant RESET = uint64(MONDAY + 1 days);

    function setUp() public override {
        super.setUp();
        _mandate(100e6, I.Interval.Daily);
        _key(K_SALT, 60e6);
        _key(K2_SALT, 0);
        SK = _keyIdOf(M, SK_SALT);
    }

    function test_eachItemSucceedsOrIsDeclinedOnItsOwn() public {
        asm.revokeSessionKey(K2);
        bytes memory items = bytes.concat(
            _item(K, dest, 50e6),
            _item(K, dest, 20e6), // over the key ceiling
            _item(K2, dest, 1e6), // revoked
            _item(K, dest, 10e6)
        );
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
        bytes memory items = bytes.concat(_item(K, dest, 60e6), _item(K2, dest, 40e6), _item(K2, dest, 1));
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
        vm.prank(stranger);
        // no balance, no approval
        bytes32 m2 = asm.createMandate(_terms(keccak256("poor"), stranger, 100e6, I.Interval.Daily));
        bytes32 poorKey = asm.issueSessionKey(
            _keyTerms(m2, keccak256("poorKey"), 0, new address[](0), address(0)), _payees()
        );
        bytes memory items = bytes.concat(_item(poorKey, dest, 1e6), _item(K, dest, 1e6));
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(poorKey, 0, abi.encodeWithSelector(I.TransferFailed.selector, poorKey));
        vm.expectEmit(address(asm));
        emit I.DebitPulled(K, dest, 1e6);
        assertEq(asm.pullBatch(items), 1);
        assertEq(uint256(asm.getMandate(m2).spentThisEpoch), 0);
        assertEq(uint256(asm.getMandate(M).spentThisEpoch), 1e6);
    }

    function test_invalidAndUnknownItemsAreDeclined() public {
        bytes memory items = bytes.concat(_item(K, dest, 0), _item(bytes32("x"), dest, 1));
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(K, 0, abi.encodeWithSelector(I.InvalidAmount.selector, 0));
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(bytes32("x"), 1, abi.encodeWithSelector(I.UnknownKey.selector, bytes32("x")));
        assertEq(asm.pullBatch(items), 0);
    }

    function test_revertsWholeBatchWhilePaused() public {
        _pause();
        bytes memory items = _item(K, dest, 1e6);
        vm.expectRevert(abi.encodeWithSelector(R.RouterPaused.selector));
        asm.pullBatch(items);
        _unpause();
        assertEq(asm.pullBatch(items), 1);
    }

    function test_emptyBatch() public {
        vm.recordLogs();
        assertEq(asm.pullBatch(""), 0);
        assertEq(vm.getRecordedLogs().length, 0);
    }

    function test_onlyOperator() public {
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, owner));
        asm.pullBatch("");
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, stranger));
        asm.pullBatch("");
    }

    function testFuzz_batchNeverExceedsCeilings(uint256[10] memory amounts) public {
        bytes memory items;
        for (uint256 i; i < amounts.length; ++i) {
            items = bytes.concat(items, _item(i % 2 == 0 ? K : K2, dest, bound(amounts[i], 1, 40e6)));
        }
        asm.pullBatch(items);
        assertLe(uint256(asm.getSessionKey(K).spentThisEpoch), 60e6);
        assertLe(uint256(asm.getMandate(M).spentThisEpoch), 100e6);
        assertEq(usd.balanceOf(dest) - 1, uint256(asm.getMandate(M).spentThisEpoch));
    }

    // ------------------------------------------------------------ agent-signed keys

    bytes32 internal constant SK_SALT = keccak256("signer key");
    bytes32 internal SK;
    uint256 internal constant LATER = 2_000_000_000;

    function test_pullBatch_success_agentSigned() public {
        _signerKey(SK_SALT, agent);
        vm.expectEmit(address(asm));
        emit I.PullNonceUsed(SK, 77);
        vm.expectEmit(address(asm));
        emit I.DebitPulled(SK, dest, 5e6);
        assertEq(asm.pullBatch(_signedItem(AGENT_KEY, SK, dest, 5e6, 77, LATER)), 1);
        assertTrue(asm.pullNonceUsed(SK, 77));
        assertEq(usd.balanceOf(dest), 5e6 + 1);
    }

    /// Neither the operator nor anyone else pulls on a signer key without the agent.
    function test_pullBatch_revert_signerKeyWithoutOrWithWrongSignature() public {
        _signerKey(SK_SALT, agent);
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(SK, 0, abi.encodeWithSelector(I.SignatureRequired.selector, SK));
        assertEq(asm.pullBatch(_item(SK, dest, 1e6)), 0);
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(SK, 0, abi.encodeWithSelector(R.InvalidSignature.selector));
        assertEq(asm.pullBatch(_signedItem(0xB0B, SK, dest, 1e6, 1, LATER)), 0);
        // Signed for another amount, destination, nonce or deadline.
        bytes memory sig = _pullSig(AGENT_KEY, SK, dest, 1e6, 1, LATER);
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(SK, 0, abi.encodeWithSelector(R.InvalidSignature.selector));
        assertEq(asm.pullBatch(PullCodec.signed(SK, dest, 2e6, 1, LATER, sig)), 0);
        assertEq(asm.pullBatch(PullCodec.signed(SK, dest2, 1e6, 1, LATER, sig)), 0);
        assertEq(asm.pullBatch(PullCodec.signed(SK, dest, 1e6, 2, LATER, sig)), 0);
        assertEq(asm.pullBatch(PullCodec.signed(SK, dest, 1e6, 1, LATER + 1, sig)), 0);
        // Or for another key with the same signer.
        bytes32 other = _signerKey(keccak256("other signer key"), agent);
        assertEq(asm.pullBatch(PullCodec.signed(other, dest, 1e6, 1, LATER, sig)), 0);
        assertEq(usd.balanceOf(dest) + usd.balanceOf(dest2), 1);
        // The single pull has no signature: declined too.
        vm.expectRevert(abi.encodeWithSelector(I.SignatureRequired.selector, SK));
        asm.pull(SK, dest, 1e6);
    }

    function test_pullBatch_revert_replayedExpiredMalleableOrForeignSignature() public {
        _signerKey(SK_SALT, agent);
        bytes memory item = _signedItem(AGENT_KEY, SK, dest, 1e6, 5, LATER);
        assertEq(asm.pullBatch(item), 1);
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(SK, 0, abi.encodeWithSelector(R.NonceAlreadyUsed.selector, 5));
        assertEq(asm.pullBatch(item), 0);

        uint256 soon = block.timestamp + 10;
        bytes memory late = _signedItem(AGENT_KEY, SK, dest, 1e6, 6, soon);
        vm.warp(soon + 1);
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(SK, 0, abi.encodeWithSelector(R.SignatureExpired.selector, soon));
        assertEq(asm.pullBatch(late), 0);

        bytes memory twin =
            PullCodec.signed(SK, dest, 1e6, 7, LATER, _highS(_pullSig(AGENT_KEY, SK, dest, 1e6, 7, LATER)));
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(SK, 0, abi.encodeWithSelector(R.InvalidSignature.selector));
        assertEq(asm.pullBatch(twin), 0);

        bytes memory foreign = _signedItem(AGENT_KEY, SK, dest, 1e6, 8, LATER);
        vm.chainId(block.chainid + 1);
        assertEq(asm.pullBatch(foreign), 0);
        assertFalse(asm.pullNonceUsed(SK, 7));
        assertFalse(asm.pullNonceUsed(SK, 8));
    }

    /// A declined signed item does not use its nonce; nor does one whose transfer fails.
    function test_pullBatch_success_nonceUsedOnlyWhenAuthorized() public {
        _signerKey(SK_SALT, agent);
        assertEq(asm.pullBatch(_signedItem(AGENT_KEY, SK, dest, 200e6, 9, LATER)), 0); // over ceiling
        assertFalse(asm.pullNonceUsed(SK, 9));
        vm.prank(payer);
        usd.approve(address(asm), 0);
        assertEq(asm.pullBatch(_signedItem(AGENT_KEY, SK, dest, 1e6, 9, LATER)), 0); // transfer fails
        assertFalse(asm.pullNonceUsed(SK, 9));
        vm.prank(payer);
        usd.approve(address(asm), type(uint256).max);
        assertEq(asm.pullBatch(_signedItem(AGENT_KEY, SK, dest, 1e6, 9, LATER)), 1);
    }

    function testFuzz_pullBatch_success_agentSignedAmounts(uint256 amount, uint256 nonce) public {
        _signerKey(SK_SALT, agent);
        amount = bound(amount, 1, 100e6);
        assertEq(asm.pullBatch(_signedItem(AGENT_KEY, SK, dest, amount, nonce, LATER)), 1);
        assertEq(usd.balanceOf(dest), amount + 1);
        assertTrue(asm.pullNonceUsed(SK, nonce));
    }

    // ------------------------------------------------------------ audit findings

    /// One item whose token burns all gas fails alone; the others finish.
    function test_pullBatch_success_gasBurningTokenFailsOnlyItsItem() public {
        GasBurnerToken burner = new GasBurnerToken();
        I.MandateTerms memory t = _terms(keccak256("burner mandate"), payer, 100e6, I.Interval.Daily);
        t.token = address(burner);
        vm.prank(payer);
        bytes32 mb = asm.createMandate(t);
        bytes32 kb = asm.issueSessionKey(
            _keyTerms(mb, keccak256("burner key"), 0, new address[](0), address(0)), _payees()
        );
        bytes memory items = bytes.concat(_item(K, dest, 1e6), _item(kb, dest, 1e6), _item(K2, dest, 2e6));
        vm.expectEmit(address(asm));
        emit I.DebitPulled(K, dest, 1e6);
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(kb, 1, abi.encodeWithSelector(I.TransferFailed.selector, kb));
        vm.expectEmit(address(asm));
        emit I.DebitPulled(K2, dest, 2e6);
        assertEq(asm.pullBatch{gas: 2_000_000}(items), 2);
        assertEq(uint256(asm.getMandate(mb).spentThisEpoch), 0);
    }

    function test_pullBatch_revert_tooLittleGasRevertsRatherThanBlameAnItem() public {
        bytes memory items = _item(K, dest, 1e6);
        vm.expectRevert(abi.encodeWithSelector(R.InsufficientGas.selector));
        asm.pullBatch{gas: 90_000}(items);
    }

    function test_pullBatch_revert_contractAsDestination() public {
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(K, 0, abi.encodeWithSelector(R.InvalidDestination.selector, address(asm)));
        assertEq(asm.pullBatch(_item(K, address(asm), 1e6)), 0);
    }

    // ------------------------------------------------------------ deferred mandates

    /// A mandate paid by the treasury authorizes and uses its ceiling, and moves nothing.
    function test_pullBatch_success_deferredMandateMovesNothing() public {
        usd.mint(treasury, 1_000e6);
        vm.prank(treasury);
        usd.approve(address(asm), type(uint256).max);
        I.MandateTerms memory t = _terms(keccak256("bank funded"), treasury, 50e6, I.Interval.Daily);
        t.payees = new address[](0);
        bytes32 md = asm.createMandate(t);
        bytes32 kd = asm.issueSessionKey(
            _keyTerms(md, keccak256("bank funded key"), 0, new address[](0), address(0)), new address[](0)
        );
        vm.expectEmit(address(asm));
        emit I.DebitPulled(kd, dest, 20e6);
        assertEq(asm.pullBatch(_item(kd, dest, 20e6)), 1);
        assertEq(usd.balanceOf(dest), 1);
        assertEq(usd.balanceOf(treasury), 1_000e6);
        assertEq(uint256(asm.getMandate(md).spentThisEpoch), 20e6);
        // The ceiling binds as for any mandate, and the treasury may not be the destination.
        assertEq(asm.pullBatch(_item(kd, dest, 31e6)), 0);
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(kd, 0, abi.encodeWithSelector(R.InvalidDestination.selector, treasury));
        assertEq(asm.pullBatch(_item(kd, treasury, 1e6)), 0);
        // The single pull alike.
        asm.pull(kd, dest, 5e6);
        assertEq(usd.balanceOf(dest), 1);
    }

    /// A key whose signer is a contract wallet (ERC-1271): its owner's signature works,
    /// another key's does not.
    function test_pullBatch_success_contractWalletSigner() public {
        ERC1271WalletMock wallet = new ERC1271WalletMock(agent);
        _signerKey(SK_SALT, address(wallet));
        assertEq(asm.pullBatch(_signedItem(0xB0B, SK, dest, 1e6, 1, LATER)), 0);
        assertEq(asm.pullBatch(_signedItem(AGENT_KEY, SK, dest, 1e6, 1, LATER)), 1);
        assertEq(usd.balanceOf(dest), 1e6 + 1);
    }

    // ------------------------------------------------------------ nonce events

    /// A declined signed item (over the ceiling, bad signature, transfer failed) emits no
    /// `PullNonceUsed`; an authorized one emits exactly one, before its `DebitPulled`.
    function test_pullBatch_success_pullNonceUsedOnlyForAuthorizedItems() public {
        _signerKey(SK_SALT, agent);
        vm.prank(payer);
        usd.approve(address(asm), 0);
        bytes memory transferFails = _signedItem(AGENT_KEY, SK, dest, 1e6, 3, LATER);
        bytes memory items = bytes.concat(
            _signedItem(AGENT_KEY, SK, dest, 200e6, 1, LATER), // over the ceiling
            _signedItem(0xB0B, SK, dest, 1e6, 2, LATER), // not the agent
            transferFails
        );
        vm.recordLogs();
        assertEq(asm.pullBatch(items), 0);
        assertEq(_count(vm.getRecordedLogs(), I.PullNonceUsed.selector), 0);
        vm.prank(payer);
        usd.approve(address(asm), type(uint256).max);
        vm.recordLogs();
        assertEq(asm.pullBatch(transferFails), 1);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        assertEq(_count(logs, I.PullNonceUsed.selector), 1);
        uint256 used;
        uint256 pulled;
        for (uint256 j; j < logs.length; ++j) {
            if (logs[j].topics[0] == I.PullNonceUsed.selector) {
                used = j;
                assertEq(logs[j].topics[1], SK);
                assertEq(abi.decode(logs[j].data, (uint256)), 3);
            }
            if (logs[j].topics[0] == I.DebitPulled.selector) pulled = j;
        }
        assertLt(used, pulled);
        assertTrue(asm.pullNonceUsed(SK, 3));
        assertFalse(asm.pullNonceUsed(SK, 1));
        assertFalse(asm.pullNonceUsed(SK, 2));
    }

    /// Unsigned items on keys without a signer use no nonce and emit no `PullNonceUsed`.
    function test_pullBatch_success_noNonceEventForUnsignedItems() public {
        vm.recordLogs();
        assertEq(asm.pullBatch(_item(K, dest, 1e6)), 1);
        assertEq(_count(vm.getRecordedLogs(), I.PullNonceUsed.selector), 0);
    }

    function _count(Vm.Log[] memory logs, bytes32 topic) internal view returns (uint256 n) {
        for (uint256 j; j < logs.length; ++j) {
            if (logs[j].emitter == address(asm) && logs[j].topics[0] == topic) ++n;
        }
    }

    // ------------------------------------------------------------ failed items write back only their spend

    CallbackToken internal cbt;
    RevokingPayer internal rwallet;
    bytes32 internal wm;
    bytes32 internal wk;

    /// @dev A contract payer on a callback token: mandate 100/day to [dest, dest2], one key.
    function _walletPayer() internal {
        cbt = new CallbackToken();
        rwallet = new RevokingPayer(I(address(asm)));
        cbt.mint(address(rwallet), 1_000e6);
        vm.prank(address(rwallet));
        cbt.approve(address(asm), type(uint256).max);
        I.MandateTerms memory t =
            _terms(keccak256("wallet mandate"), address(rwallet), 100e6, I.Interval.Daily);
        t.token = address(cbt);
        wm = rwallet.createMandate(t);
        wk = asm.issueSessionKey(
            _keyTerms(wm, keccak256("wallet key"), 50e6, new address[](0), address(0)), _payees()
        );
    }

    /// Fast path (the key already pulled this epoch): the payer revokes the key during the
    /// token call and the call fails. The revocation stands; only the item's spend is undone.
    function test_pullBatch_success_revocationDuringAFailedTransferStands_fastPath() public {
        _walletPayer();
        assertEq(asm.pullBatch(_item(wk, dest, 10e6)), 1);
        cbt.setHostile(true);
        rwallet.arm(wk, 0);
        vm.expectEmit(address(asm));
        emit I.SessionKeyRevoked(wk);
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(wk, 0, abi.encodeWithSelector(I.TransferFailed.selector, wk));
        assertEq(asm.pullBatch(_item(wk, dest, 20e6)), 0);
        I.SessionKeyView memory v = asm.getSessionKey(wk);
        assertTrue(v.revoked);
        assertEq(uint256(v.spentThisEpoch), 10e6);
        assertEq(uint256(asm.getMandate(wm).spentThisEpoch), 10e6);
        cbt.setHostile(false);
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(wk, 0, abi.encodeWithSelector(I.KeyRevoked.selector, wk));
        assertEq(asm.pullBatch(_item(wk, dest, 1e6)), 0);
    }

    /// Reference path (the key's first pull of the epoch), and a mandate cancellation instead.
    function test_pullBatch_success_cancellationDuringAFailedTransferStands_referencePath() public {
        _walletPayer();
        cbt.setHostile(true);
        rwallet.arm(0, wm);
        assertEq(asm.pullBatch(_item(wk, dest, 20e6)), 0);
        assertEq(uint256(asm.getMandate(wm).status), uint256(I.MandateStatus.Canceled));
        assertEq(uint256(asm.getMandate(wm).spentThisEpoch), 0);
        assertEq(uint256(asm.getSessionKey(wk).spentThisEpoch), 0);
        assertFalse(asm.getSessionKey(wk).revoked);
    }

    /// An agent-signed item (on a key with its own ceiling): the revocation stands, the spend
    /// (the key's and the mandate's) and the nonce are given back.
    function test_pullBatch_success_revocationDuringAFailedSignedItemStands() public {
        _walletPayer();
        bytes32 sk = asm.issueSessionKey(
            _keyTerms(wm, keccak256("wallet agent key"), 40e6, new address[](0), agent), _payees()
        );
        assertEq(asm.pullBatch(_signedItem(AGENT_KEY, sk, dest, 5e6, 1, LATER)), 1);
        cbt.setHostile(true);
        rwallet.arm(sk, 0);
        vm.recordLogs();
        assertEq(asm.pullBatch(_signedItem(AGENT_KEY, sk, dest, 7e6, 2, LATER)), 0);
        assertEq(_count(vm.getRecordedLogs(), I.PullNonceUsed.selector), 0);
        assertTrue(asm.getSessionKey(sk).revoked);
        assertEq(uint256(asm.getSessionKey(sk).spentThisEpoch), 5e6);
        assertEq(uint256(asm.getMandate(wm).spentThisEpoch), 5e6);
        assertFalse(asm.pullNonceUsed(sk, 2));
        assertTrue(asm.pullNonceUsed(sk, 1));
    }

    /// Whatever was spent before, a failed item with a revocation during its token call leaves
    /// exactly the earlier spend and the key revoked.
    function testFuzz_pullBatch_success_failedItemUndoesOnlyItsOwnSpend(uint256 first, uint256 second)
        public
    {
        _walletPayer();
        first = bound(first, 1, 25e6);
        second = bound(second, 1, 25e6);
        assertEq(asm.pullBatch(_item(wk, dest, first)), 1);
        cbt.setHostile(true);
        rwallet.arm(wk, 0);
        assertEq(asm.pullBatch(_item(wk, dest2, second)), 0);
        assertTrue(asm.getSessionKey(wk).revoked);
        assertEq(uint256(asm.getSessionKey(wk).spentThisEpoch), first);
        assertEq(uint256(asm.getMandate(wm).spentThisEpoch), first);
    }
}
