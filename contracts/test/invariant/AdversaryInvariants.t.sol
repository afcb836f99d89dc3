// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Test} from "../utils/Test.sol";
import {AdversaryHandler} from "./AdversaryHandler.sol";

/// The adversarial-operator suite: an owner that swaps in any operator (the thief included)
/// after the delay, and operators that call everything with arbitrary arguments — rogue keys
/// with any destinations and signers among them — next to honest payers and agents (see
/// `AdversaryHandler`). Invariant: a payer's balance decreases only by payments it signed and
/// by pulls within the ceilings of mandates it signed, to payees it signed — and, on keys of
/// a mandate naming an agent or whose signer is an honest agent, only by pulls that agent
/// signed.
contract AdversaryInvariantsTest is Test {
    AdversaryHandler internal h;

    function setUp() public {
        h = new AdversaryHandler();
        targetContract(address(h));
        bytes4[] memory s = new bytes4[](24);
        s[0] = AdversaryHandler.honestMandate.selector;
        s[1] = AdversaryHandler.honestMandate.selector;
        s[2] = AdversaryHandler.honestSignPayment.selector;
        s[3] = AdversaryHandler.honestAgentKey.selector;
        s[4] = AdversaryHandler.honestAgentPull.selector;
        s[5] = AdversaryHandler.honestAgentPull.selector;
        s[6] = AdversaryHandler.advSettle.selector;
        s[7] = AdversaryHandler.advSettleWithSignature.selector;
        s[8] = AdversaryHandler.advSettleWithSignature.selector;
        s[9] = AdversaryHandler.advCreateMandate.selector;
        s[10] = AdversaryHandler.advCreateMandateWithSignature.selector;
        s[11] = AdversaryHandler.advIssueKey.selector;
        s[12] = AdversaryHandler.advIssueKey.selector;
        s[13] = AdversaryHandler.advPull.selector;
        s[14] = AdversaryHandler.advPull.selector;
        s[15] = AdversaryHandler.advPullBatch.selector;
        s[16] = AdversaryHandler.advPullBatch.selector;
        s[17] = AdversaryHandler.advCancel.selector;
        s[18] = AdversaryHandler.advRevoke.selector;
        s[19] = AdversaryHandler.advPause.selector;
        s[20] = AdversaryHandler.advSetTreasury.selector;
        s[21] = AdversaryHandler.advProposeOperator.selector;
        s[22] = AdversaryHandler.advActivateOperator.selector;
        s[23] = AdversaryHandler.warp.selector;
        targetSelector(FuzzSelector(address(h), s));
        bytes4[] memory more = new bytes4[](1);
        more[0] = AdversaryHandler.advInvalidateNonce.selector;
        targetSelector(FuzzSelector(address(h), more));
    }

    /// A payer loses only what it signed for: signed payments, and pulls to its signed payees
    /// within its signed ceilings (and its agent's signatures).
    function invariant_payerLosesOnlyWhatItSigned() public view {
        assertFalse(h.violated(), h.violation());
    }

    /// The state machine (the router) never keeps a token balance.
    function invariant_routerHoldsNothing() public view {
        assertEq(h.usd().balanceOf(address(h.asm())), 0);
    }

    /// No token is created or destroyed.
    function invariant_supplyConserved() public view {
        assertEq(h.usd().totalSupply(), h.initialSupply());
    }

    // ------------------------------------------------------------ the detector itself

    /// The attribution is not vacuous: tokens leaving a payer without its signature are caught.
    function test_adversaryHandler_detectsAnUnsignedLoss() public {
        AdversaryHandler fresh = new AdversaryHandler();
        fresh.selfCheckUnsignedLoss();
        assertTrue(fresh.violated());
        assertEq(fresh.violation(), "money left a payer without its signature");
    }

    /// A pull to a payee the ghost does not record as signed is caught; the same pull with the
    /// true record is not (so the rogue operator path really pays signed payees).
    function test_adversaryHandler_detectsAPullToAnUnsignedPayee() public {
        AdversaryHandler fresh = new AdversaryHandler();
        // Payer 0 signs 100 a day to dests[0], no agent; a rogue key with no list takes it.
        fresh.honestMandate(0, 100e6, 0, 1);
        fresh.advIssueKey(1, 0, 0, 0);
        fresh.advPull(1, 3, 1e6); // to dests[0], a signed payee
        assertFalse(fresh.violated(), fresh.violation());
        assertEq(fresh.honestPulls(), 1);
        fresh.selfCheckForgetPayees();
        fresh.advPull(1, 3, 1e6);
        assertTrue(fresh.violated());
        assertEq(fresh.violation(), "paid someone the payer did not sign");
    }
}
