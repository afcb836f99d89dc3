// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";

/// `pull` and `pullBatch` on a mandate that requires identity: every pull asks the attestation
/// mirror whether the payer (and, for an agent requirement, the key's signer) still holds a
/// valid attestation; a revoked, expired or distrusted one declines it, before any token moves.
contract PullIdentityTest is AllowanceBase {
    bytes32 internal constant P_UID = keccak256("payer personhood");
    bytes32 internal constant A_UID = keccak256("agent credential");
    uint64 internal expires;

    /// `M` requires personhood of the payer; `K` is an unsigned key on it. `N` requires
    /// personhood of the payer and an agent credential of every key's signer; `S` is `agent`'s
    /// key on it.
    bytes32 internal N;
    bytes32 internal S;

    function setUp() public override {
        super.setUp();
        expires = uint64(block.timestamp + 30 days);
        _attest(payer, PERSONHOOD, P_UID, expires, false, 1);
        _attest(agent, AGENT, A_UID, 0, false, 1);
        vm.startPrank(payer);
        asm.createMandate(_identityTerms(M_SALT, payer, PERSONHOOD, 0));
        N = asm.createMandate(_identityTerms(keccak256("agentic"), payer, PERSONHOOD, AGENT));
        vm.stopPrank();
        // A key that outlives every attestation here (the default key lasts a week).
        K = asm.issueSessionKey(
            I.KeyTerms(K_SALT, M, uint64(block.timestamp + 800 days), 0, new address[](0), address(0)),
            _payees()
        );
        S = asm.issueSessionKey(_keyTerms(N, K_SALT, 0, new address[](0), agent), _payees());
    }

    function test_pull_success_whileTheAttestationHolds() public {
        uint256 before = usd.balanceOf(dest);
        asm.pull(K, dest, 10e6);
        assertEq(usd.balanceOf(dest) - before, 10e6);
    }

    function test_pull_revert_payerAttestationRevoked() public {
        _attest(payer, PERSONHOOD, P_UID, 0, true, 2);
        vm.expectRevert(abi.encodeWithSelector(I.IdentityRequirementUnmet.selector, payer, PERSONHOOD));
        asm.pull(K, dest, 10e6);
    }

    function test_pull_revert_payerAttestationExpired() public {
        asm.pull(K, dest, 1e6);
        vm.warp(expires);
        vm.expectRevert(abi.encodeWithSelector(I.IdentityRequirementUnmet.selector, payer, PERSONHOOD));
        asm.pull(K, dest, 1e6);
    }

    function test_pull_revert_attesterNoLongerTrusted() public {
        vm.prank(owner);
        mirror.removeAttester(attester);
        vm.expectRevert(abi.encodeWithSelector(I.IdentityRequirementUnmet.selector, payer, PERSONHOOD));
        asm.pull(K, dest, 10e6);
    }

    /// A new attestation (another uid, a later receipt) restores what a revocation took away.
    function test_pull_success_newAttestationAfterRevocation() public {
        _attest(payer, PERSONHOOD, P_UID, 0, true, 2);
        _attest(payer, PERSONHOOD, keccak256("renewed"), 0, false, 3);
        asm.pull(K, dest, 10e6);
        assertEq(asm.getMandate(M).spentThisEpoch, 10e6);
    }

    /// The identity check runs before the ceilings and uses none of them: a declined pull
    /// leaves the usage as it was.
    function test_pull_revert_declineUsesNoAllowance() public {
        asm.pull(K, dest, 30e6);
        _attest(payer, PERSONHOOD, P_UID, 0, true, 2);
        vm.expectRevert(abi.encodeWithSelector(I.IdentityRequirementUnmet.selector, payer, PERSONHOOD));
        asm.pull(K, dest, 10e6);
        assertEq(asm.getMandate(M).spentThisEpoch, 30e6);
    }

    function test_pullBatch_success_agentSignedWhileBothHold() public {
        bytes memory item = _signedItem(AGENT_KEY, S, dest, 5e6, 7, block.timestamp + 1 hours);
        vm.expectEmit(address(asm));
        emit I.DebitPulled(S, dest, 5e6);
        assertEq(asm.pullBatch(item), 1);
        assertTrue(asm.pullNonceUsed(S, 7));
    }

    function test_pullBatch_declined_agentAttestationRevoked() public {
        _attest(agent, AGENT, A_UID, 0, true, 2);
        bytes memory item = _signedItem(AGENT_KEY, S, dest, 5e6, 7, block.timestamp + 1 hours);
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(
            S, 0, abi.encodeWithSelector(I.IdentityRequirementUnmet.selector, agent, AGENT)
        );
        assertEq(asm.pullBatch(item), 0);
        assertFalse(asm.pullNonceUsed(S, 7));
        assertEq(asm.getMandate(N).spentThisEpoch, 0);
    }

    /// In a batch, an item of an identity mandate whose payer lost the attestation is declined
    /// on its own; an item of another mandate beside it passes.
    function test_pullBatch_declined_onlyTheItemsThatFail() public {
        _attest(payer, PERSONHOOD, P_UID, 0, true, 2);
        vm.prank(payer);
        bytes32 plain = asm.createMandate(_terms(keccak256("plain"), payer, 100e6, I.Interval.Daily));
        bytes32 pk = asm.issueSessionKey(_keyTerms(plain, K_SALT, 0, new address[](0), address(0)), _payees());
        bytes memory items = bytes.concat(_item(K, dest, 1e6), _item(pk, dest, 2e6));
        vm.expectEmit(address(asm));
        emit I.DebitPullDeclined(
            K, 0, abi.encodeWithSelector(I.IdentityRequirementUnmet.selector, payer, PERSONHOOD)
        );
        vm.expectEmit(address(asm));
        emit I.DebitPulled(pk, dest, 2e6);
        assertEq(asm.pullBatch(items), 1);
    }

    /// Whatever the attestation's expiry and the clock, a pull passes exactly when the mirror
    /// says the payer's attestation is valid.
    function testFuzz_pull_passesExactlyWhenTheMirrorSaysValid(uint64 expiry, uint256 later, bool revoked)
        public
    {
        expiry = uint64(bound(expiry, 0, block.timestamp + 400 days));
        later = bound(later, 0, 365 days);
        _attest(payer, PERSONHOOD, keccak256("fuzzed"), expiry, revoked, 2);
        vm.warp(block.timestamp + later);
        bool valid = mirror.isValid(attester, payer, PERSONHOOD);
        assertEq(valid, !revoked && (expiry == 0 || expiry > block.timestamp));
        if (!valid) {
            vm.expectRevert(abi.encodeWithSelector(I.IdentityRequirementUnmet.selector, payer, PERSONHOOD));
        }
        asm.pull(K, dest, 1e6);
    }
}
