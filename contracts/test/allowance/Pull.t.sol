// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {AllowanceStateMachine} from "../../src/AllowanceStateMachine.sol";
import {IAttestationMirror} from "../../src/interfaces/IAttestationMirror.sol";
import {PullCodec} from "../utils/PullCodec.sol";
import {Vm} from "../utils/Vm.sol";

contract PullTest is AllowanceBase {
    uint64 internal constant RESET = uint64(MONDAY + 1 days);

    function setUp() public override {
        super.setUp();
        _mandate(100e6, I.Interval.Daily);
        _key(K_SALT, 60e6);
        _key(K2_SALT, 0);
    }

    function test_movesTokensAndCountsUsage() public {
        vm.expectEmit(address(asm));
        emit I.DebitPulled(K, dest, 25e6);
        asm.pull(K, dest, 25e6);
        assertEq(usd.balanceOf(dest), 25e6 + 1);
        assertEq(usd.balanceOf(payer), 1_000_000e6 - 25e6);
        assertEq(usd.balanceOf(address(asm)), 0);
        assertEq(uint256(asm.getSessionKey(K).spentThisEpoch), 25e6);
        assertEq(uint256(asm.getMandate(M).spentThisEpoch), 25e6);
    }

    function test_revertsForUnknownKey() public {
        vm.expectRevert(abi.encodeWithSelector(I.UnknownKey.selector, bytes32("x")));
        asm.pull(bytes32("x"), dest, 1);
    }

    function test_revertsForRevokedKey() public {
        asm.revokeSessionKey(K);
        vm.expectRevert(abi.encodeWithSelector(I.KeyRevoked.selector, K));
        asm.pull(K, dest, 1);
    }

    function test_revertsForExpiredKey() public {
        uint64 exp = asm.getSessionKey(K).expiresAt;
        vm.warp(exp);
        vm.expectRevert(abi.encodeWithSelector(I.KeyExpired.selector, K, exp));
        asm.pull(K, dest, 1);
    }

    function test_revertsForCanceledMandate() public {
        asm.cancelMandate(M);
        vm.expectRevert(abi.encodeWithSelector(I.MandateNotActive.selector, M));
        asm.pull(K, dest, 1);
    }

    function test_revertsForDestinationNotAllowed() public {
        bytes32 k3 = _keyTo(keccak256("k3"), 0, dest);
        asm.pull(k3, dest, 1);
        vm.expectRevert(abi.encodeWithSelector(I.DestinationNotAllowed.selector, k3, dest2));
        asm.pull(k3, dest2, 1);
    }

    function test_keyCeiling() public {
        asm.pull(K, dest, 25e6);
        asm.pull(K, dest, 25e6);
        vm.expectRevert(abi.encodeWithSelector(I.KeyCeilingExceeded.selector, K, 10e6, RESET));
        asm.pull(K, dest, 25e6);
    }

    function test_mandateCeilingSharedByKeys() public {
        asm.pull(K, dest, 60e6);
        asm.pull(K2, dest, 35e6);
        vm.expectRevert(abi.encodeWithSelector(I.MandateCeilingExceeded.selector, M, 5e6, RESET));
        asm.pull(K2, dest, 10e6);
        asm.pull(K2, dest, 5e6);
    }

    function test_allowanceIsFreshInTheNextEpoch() public {
        asm.pull(K, dest, 60e6);
        vm.warp(RESET);
        asm.pull(K, dest, 60e6);
        assertEq(uint256(asm.getSessionKey(K).spentThisEpoch), 60e6);
    }

    function test_revertsOnZeroOrHugeAmount() public {
        vm.expectRevert(abi.encodeWithSelector(I.InvalidAmount.selector, 0));
        asm.pull(K, dest, 0);
        uint256 huge = uint256(type(uint64).max) + 1;
        vm.expectRevert(abi.encodeWithSelector(I.InvalidAmount.selector, huge));
        asm.pull(K, dest, huge);
    }

    function test_transferFailureRevertsWithTransferFailed() public {
        vm.prank(payer);
        usd.approve(address(asm), 0);
        vm.expectRevert(abi.encodeWithSelector(I.TransferFailed.selector, K));
        asm.pull(K, dest, 1e6);
        assertEq(uint256(asm.getSessionKey(K).spentThisEpoch), 0);
    }

    function test_pauseBlocksPulls() public {
        _pause();
        vm.expectRevert(abi.encodeWithSelector(R.RouterPaused.selector));
        asm.pull(K, dest, 1e6);
        _unpause();
        asm.pull(K, dest, 1e6);
    }

    function test_onlyOperator() public {
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, owner));
        asm.pull(K, dest, 1);
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, stranger));
        asm.pull(K, dest, 1);
    }

    /// Whatever the sequence of amounts, a key never exceeds its ceiling and the mandate never
    /// exceeds its own within an epoch.
    function testFuzz_ceilingsHold(uint256[8] memory amounts, uint256 which) public {
        uint256 spentK;
        uint256 spentAll;
        for (uint256 i; i < amounts.length; ++i) {
            uint256 a = bound(amounts[i], 1, 70e6);
            bool useK = (which >> i) & 1 == 1;
            bytes32 key = useK ? K : K2;
            bool keyOk = !useK || spentK + a <= 60e6;
            bool mandateOk = spentAll + a <= 100e6;
            if (keyOk && mandateOk) {
                asm.pull(key, dest, a);
                spentAll += a;
                if (useK) spentK += a;
            } else {
                vm.expectRevert();
                asm.pull(key, dest, a);
            }
        }
        assertLe(uint256(asm.getSessionKey(K).spentThisEpoch), 60e6);
        assertLe(uint256(asm.getMandate(M).spentThisEpoch), 100e6);
        assertEq(uint256(asm.getMandate(M).spentThisEpoch), spentAll);
        assertEq(usd.balanceOf(dest), spentAll + 1);
    }

    /// `pull` and `pullBatch` have a fast path for the common case. Driven through the same
    /// random sequence (amounts, keys with and without a ceiling and with one destination or
    /// several, destinations, time warps across epochs, a revocation), they must reach the
    /// same decision, with the same reason, and leave the same usage behind as the reference
    /// path alone on a twin (`_referenceOnly`).
    function testFuzz_fastPathMatchesReferencePath(uint256[12] memory amounts, uint256 choices) public {
        AllowanceStateMachine twin =
            new AllowanceStateMachine(owner, address(this), treasury, IAttestationMirror(address(mirror)));
        vm.prank(payer);
        usd.approve(address(twin), type(uint256).max);
        vm.prank(payer);
        twin.createMandate(_terms(M_SALT, payer, 100e6, I.Interval.Daily));
        twin.issueSessionKey(_keyTerms(M, K_SALT, 60e6, new address[](0), address(0)), _payees());
        twin.issueSessionKey(_keyTerms(M, K2_SALT, 0, new address[](0), address(0)), _payees());
        bytes32 k3 = _keyTo(keccak256("key3"), 30e6, dest);
        twin.issueSessionKey(_keyTerms(M, keccak256("key3"), 30e6, _one(dest), address(0)), _payees());
        bytes32 k4 = _keyTo(keccak256("key4"), 0, dest2);
        twin.issueSessionKey(_keyTerms(M, keccak256("key4"), 0, _one(dest2), address(0)), _payees());

        bytes32[4] memory keys = [K, K2, k3, k4];
        for (uint256 i; i < amounts.length; ++i) {
            uint256 c = choices >> (i * 8);
            if (c & 0xc0 == 0xc0) vm.warp(block.timestamp + (c & 0x3f) * 3 hours);
            if (i == 9 && c & 1 == 1) {
                asm.revokeSessionKey(K);
                twin.revokeSessionKey(K);
            }
            bytes32 key = keys[c % 4];
            uint256 d = (c >> 2) & 3;
            address to = d == 0 ? dest2 : d == 1 ? stranger : dest;

            _sameDecision(twin, key, to, bound(amounts[i], 0, 80e6), c & 0x20 != 0);
            for (uint256 j; j < 4; ++j) {
                assertEq(
                    asm.getSessionKey(keys[j]).spentThisEpoch, twin.getSessionKey(keys[j]).spentThisEpoch
                );
            }
            assertEq(asm.getMandate(M).spentThisEpoch, twin.getMandate(M).spentThisEpoch);
            for (uint256 j; j < 4; ++j) {
                (uint256 a,) = asm.remainingAllowance(keys[j]);
                (uint256 b,) = twin.remainingAllowance(keys[j]);
                assertEq(a, b);
            }
        }
    }

    /// @dev A pull on `twin` decided by the reference path alone. A batch item of the signed kind
    ///      never takes the fast path; on a key without a signer its signature is not read
    ///      (PullBatchEncoding.t.sol shows both), so it is the unsigned pull, decided by `_authorize`.
    function _referenceOnly(AllowanceStateMachine twin, bytes32 key, address to, uint256 amount)
        private
        returns (bytes memory reason)
    {
        vm.recordLogs();
        uint256 ok = twin.pullBatch(PullCodec.signed(key, to, amount, 0, 0, ""));
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 j; j < logs.length; ++j) {
            if (logs[j].emitter == address(twin) && logs[j].topics[0] == I.DebitPullDeclined.selector) {
                reason = abi.decode(logs[j].data, (bytes));
            }
        }
        assertEq(ok == 1, reason.length == 0);
    }

    /// One pull on `asm` (as `pull` or as a one-item `pullBatch`, fast path when it applies)
    /// and the same pull on `twin` through the reference path only: same outcome, same reason.
    function _sameDecision(AllowanceStateMachine twin, bytes32 key, address to, uint256 amount, bool asBatch)
        private
    {
        bytes memory fastReason;
        if (asBatch) {
            vm.recordLogs();
            uint256 ok = asm.pullBatch(_item(key, to, amount));
            Vm.Log[] memory logs = vm.getRecordedLogs();
            for (uint256 j; j < logs.length; ++j) {
                if (logs[j].emitter == address(asm) && logs[j].topics[0] == I.DebitPullDeclined.selector) {
                    fastReason = abi.decode(logs[j].data, (bytes));
                }
            }
            assertEq(ok == 1, fastReason.length == 0);
        } else {
            try asm.pull(key, to, amount) {}
            catch (bytes memory reason) {
                fastReason = reason;
            }
        }
        assertEq(fastReason, _referenceOnly(twin, key, to, amount));
    }
}
