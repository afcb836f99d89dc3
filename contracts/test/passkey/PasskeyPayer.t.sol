// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {PasskeyBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {PullCodec} from "../utils/PullCodec.sol";

/// End to end with a passkey smart wallet as the payer: it signs a mandate
/// (`createMandateWithSignature`) and a one-time payment (`settleWithSignature`), each
/// verified in Solidity with all the gas the transaction has.
contract PasskeyPayerTest is PasskeyBase {
    uint256 internal constant DEADLINE = 2_000_000_000;

    function test_passkeyPayer_success_signsAMandateThenIsPulled() public {
        I.MandateTerms memory t = _terms(M_SALT, address(wallet), 100e6, I.Interval.Daily);
        bytes memory sig = _signP256(PASSKEY, _mandateDigest(address(asm), t, 1, DEADLINE));
        bytes32 id = asm.createMandateWithSignature(t, 1, DEADLINE, sig);
        assertEq(id, _mandateIdOf(address(wallet), M_SALT));
        assertEq(asm.getMandate(id).payer, address(wallet));
        assertTrue(asm.nonceUsed(address(wallet), 1));
        bytes32 key = asm.issueSessionKey(_keyTerms(id, K_SALT, 0, new address[](0), address(0)), _payees());
        asm.pull(key, dest, 30e6);
        assertEq(usd.balanceOf(address(wallet)), 970e6);
        assertEq(usd.balanceOf(dest), 30e6 + 1);
    }

    function test_passkeyPayer_revert_mandateSignedByAnotherPasskey() public {
        I.MandateTerms memory t = _terms(M_SALT, address(wallet), 100e6, I.Interval.Daily);
        bytes memory sig = _signP256(OTHER_PASSKEY, _mandateDigest(address(asm), t, 1, DEADLINE));
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        asm.createMandateWithSignature(t, 1, DEADLINE, sig);
    }

    function test_passkeyPayer_success_signsAPayment() public {
        bytes memory sig = _signP256(
            PASSKEY, _paymentDigest(address(asm), address(usd), address(wallet), dest2, 12e6, 7, DEADLINE)
        );
        vm.expectEmit(address(asm));
        emit R.NonceUsed(address(wallet), 7);
        vm.expectEmit(address(asm));
        emit R.Settled(bytes32("pay"), address(usd), address(wallet), dest2, 12e6);
        asm.settleWithSignature(bytes32("pay"), address(usd), address(wallet), dest2, 12e6, 7, DEADLINE, sig);
        assertEq(usd.balanceOf(dest2), 12e6);
        assertEq(usd.balanceOf(address(wallet)), 988e6);
        // Not twice, nor for another amount.
        vm.expectRevert(abi.encodeWithSelector(R.NonceAlreadyUsed.selector, 7));
        asm.settleWithSignature(bytes32("pay"), address(usd), address(wallet), dest2, 12e6, 7, DEADLINE, sig);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        asm.settleWithSignature(bytes32("pay"), address(usd), address(wallet), dest2, 13e6, 8, DEADLINE, sig);
    }

    /// Inside a batch a signer wallet gets at most 100,000 gas, so without the RIP-7212
    /// precompile a passkey agent's `DebitPull` is declined there (`InvalidSignature`), and the
    /// batch goes on. (A limitation, stated here so it is not a surprise.)
    function test_passkeyPayer_success_passkeyAgentDeclinedInABatchWithoutPrecompile() public {
        _mandate(100e6, I.Interval.Daily);
        bytes32 key = _signerKey(K_SALT, address(wallet));
        bytes memory sig = _signP256(PASSKEY, _pullDigest(address(asm), key, dest, 1e6, 1, DEADLINE));
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(key, 0, abi.encodeWithSelector(R.InvalidSignature.selector));
        assertEq(asm.pullBatch(PullCodec.signed(key, dest, 1e6, 1, DEADLINE, sig)), 0);
    }
}
