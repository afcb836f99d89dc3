// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Test} from "../utils/Test.sol";
import {AdversaryHandler} from "./AdversaryHandler.sol";

/// The adversarial-operator suite: the operator and owner call everything with arbitrary
/// arguments next to honest payers and agents (see `AdversaryHandler`). Invariant: a payer's
/// balance decreases only by payments it signed and by pulls within the ceilings of mandates
/// it signed — and, on keys whose signer is an honest agent, only by pulls that agent signed.
contract AdversaryInvariantsTest is Test {
    AdversaryHandler internal h;

    function setUp() public {
        h = new AdversaryHandler();
        targetContract(address(h));
        bytes4[] memory s = new bytes4[](19);
        s[0] = AdversaryHandler.honestMandate.selector;
        s[1] = AdversaryHandler.honestMandate.selector;
        s[2] = AdversaryHandler.honestSignPayment.selector;
        s[3] = AdversaryHandler.honestAgentKey.selector;
        s[4] = AdversaryHandler.honestAgentPull.selector;
        s[5] = AdversaryHandler.advSettle.selector;
        s[6] = AdversaryHandler.advSettleWithSignature.selector;
        s[7] = AdversaryHandler.advSettleWithSignature.selector;
        s[8] = AdversaryHandler.advCreateMandate.selector;
        s[9] = AdversaryHandler.advCreateMandateWithSignature.selector;
        s[10] = AdversaryHandler.advIssueKey.selector;
        s[11] = AdversaryHandler.advPull.selector;
        s[12] = AdversaryHandler.advPullBatch.selector;
        s[13] = AdversaryHandler.advPullBatch.selector;
        s[14] = AdversaryHandler.advCancel.selector;
        s[15] = AdversaryHandler.advRevoke.selector;
        s[16] = AdversaryHandler.advPause.selector;
        s[17] = AdversaryHandler.advSetTreasury.selector;
        s[18] = AdversaryHandler.warp.selector;
        targetSelector(FuzzSelector(address(h), s));
        bytes4[] memory more = new bytes4[](2);
        more[0] = AdversaryHandler.advSetOperator.selector;
        more[1] = AdversaryHandler.advInvalidateNonce.selector;
        targetSelector(FuzzSelector(address(h), more));
    }

    /// A payer loses only what it signed for.
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
}
