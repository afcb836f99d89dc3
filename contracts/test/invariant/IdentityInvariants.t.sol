// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Test} from "../utils/Test.sol";
import {IdentityHandler} from "./IdentityHandler.sol";

/// Stateful invariants of mandates that require identity, checked after every step of
/// random sequences of receipts (attest, revoke, re-attest; expiring), trust changes of the
/// attester, time warps and pulls (single and batched, with and without an agent
/// requirement): the state machine moves a payer's tokens exactly when the mirror says
/// every required attestation is valid.
contract IdentityInvariantsTest is Test {
    IdentityHandler internal h;

    function setUp() public {
        h = new IdentityHandler();
        targetContract(address(h));
        bytes4[] memory selectors = new bytes4[](6);
        selectors[0] = IdentityHandler.receipt.selector;
        selectors[1] = IdentityHandler.toggleTrust.selector;
        selectors[2] = IdentityHandler.warp.selector;
        selectors[3] = IdentityHandler.pull.selector;
        selectors[4] = IdentityHandler.pullBatch.selector;
        selectors[5] = IdentityHandler.pull.selector; // pulls twice as often
        targetSelector(FuzzSelector(address(h), selectors));
    }

    /// No pull moves tokens while a required attestation is revoked, expired, missing or
    /// its attester distrusted.
    function invariant_noPullWithoutIdentity() public view {
        assertEq(h.movedWithoutIdentity(), 0);
    }

    /// No pull is refused for identity while every requirement holds.
    function invariant_identityRefusesOnlyWhenUnmet() public view {
        assertEq(h.refusedWithIdentity(), 0);
    }

    /// The payer's tokens left only by the pulls the handler saw succeed.
    function invariant_tokensMoveOnlyByPulls() public view {
        assertEq(h.usd().balanceOf(h.dest()), h.paidOut());
        assertEq(h.usd().balanceOf(h.payer()), 1e15 - h.paidOut());
    }

    /// The handler sees both outcomes: a pull while the attestations hold moves tokens, one
    /// after the payer's revocation is refused for identity (the invariants above are not
    /// vacuous).
    function test_handlerSeesBothOutcomes() public {
        h.pull(5);
        h.pullBatch(7);
        assertEq(h.pulled(), 3);
        h.receipt(false, true, 0);
        h.pull(5);
        h.pullBatch(7);
        assertEq(h.pulled(), 3);
        assertEq(h.declinedForIdentity(), 3);
        h.receipt(false, false, 0);
        h.receipt(true, true, 0);
        h.pullBatch(7);
        assertEq(h.pulled(), 4);
        assertEq(h.declinedForIdentity(), 4);
        assertEq(h.movedWithoutIdentity() + h.refusedWithIdentity(), 0);
    }
}
