// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Test} from "../utils/Test.sol";
import {AllowanceHandler} from "./AllowanceHandler.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";

/// Stateful invariants of the allowance state machine, checked after every step of random
/// sequences of issue / pull / batch pull / revoke / cancel / time warps.
contract AllowanceInvariantsTest is Test {
    AllowanceHandler internal h;

    function setUp() public {
        h = new AllowanceHandler();
        targetContract(address(h));
        bytes4[] memory selectors = new bytes4[](8);
        selectors[0] = AllowanceHandler.createMandate.selector;
        selectors[1] = AllowanceHandler.issueKey.selector;
        selectors[2] = AllowanceHandler.pull.selector;
        selectors[3] = AllowanceHandler.pull.selector; // pulls twice as often
        selectors[4] = AllowanceHandler.pullBatch.selector;
        selectors[5] = AllowanceHandler.revoke.selector;
        selectors[6] = AllowanceHandler.cancel.selector;
        selectors[7] = AllowanceHandler.warp.selector;
        targetSelector(FuzzSelector(address(h), selectors));
    }

    /// Within one epoch, a mandate's authorized pulls never sum above its maxAmount.
    function invariant_mandateCeilingPerEpoch() public view {
        assertFalse(h.mandateOverspent());
    }

    /// Within one epoch, a key's authorized pulls never exceed its own ceiling.
    function invariant_keyCeilingPerEpoch() public view {
        assertFalse(h.keyOverspent());
    }

    /// A revoked or expired key, or a key of a canceled mandate, never pulls again.
    function invariant_deadKeysNeverPull() public view {
        assertEq(h.deadKeyPulls(), 0);
    }

    /// The router (the state machine itself on the settlement chain) never keeps a token balance.
    function invariant_routerHoldsNothing() public view {
        assertEq(h.usd().balanceOf(address(h.asm())), 0);
        assertEq(h.eur().balanceOf(address(h.asm())), 0);
    }

    /// Tokens are conserved across payers, treasury and destinations.
    function invariant_tokensConserved() public view {
        assertEq(h.usd().totalSupply(), h.initialSupply());
        assertEq(h.balancesSum(h.usd()), h.initialSupply());
        assertEq(h.eur().totalSupply(), h.initialSupply());
        assertEq(h.balancesSum(h.eur()), h.initialSupply());
    }

    /// The chain's spend of the current epoch equals the ghost ledger's, for every mandate.
    function invariant_chainSpendMatchesLedger() public view {
        for (uint256 i; i < h.mandateCount(); ++i) {
            (bytes32 id,, I.Interval interval,) = h.mandates(i);
            assertEq(uint256(h.asm().getMandate(id).spentThisEpoch), h.mandateSpent(id, h.epochOf(interval)));
        }
    }

    /// The chain's spend of the current epoch equals the ghost ledger's for every key with a
    /// ceiling of its own (kept in its own slot), and is 0 for a key without one (not kept);
    /// a live key's remaining allowance is the tighter of its ceiling's and its mandate's.
    function invariant_keySpendMatchesLedger() public view {
        for (uint256 i; i < h.keyCount(); ++i) {
            (bytes32 id, uint256 mi, uint256 ceiling,,) = h.keys(i);
            (bytes32 mid, uint256 max, I.Interval interval,) = h.mandates(mi);
            uint256 epoch = h.epochOf(interval);
            uint256 keySpent = ceiling == 0 ? 0 : h.keySpent(id, epoch);
            assertEq(uint256(h.asm().getSessionKey(id).spentThisEpoch), keySpent);
            (uint256 remaining,) = h.asm().remainingAllowance(id);
            if (h.isDead(i)) {
                assertEq(remaining, 0);
            } else {
                uint256 left = max - h.mandateSpent(mid, epoch);
                if (ceiling != 0 && ceiling - keySpent < left) left = ceiling - keySpent;
                assertEq(remaining, left);
            }
        }
    }
}
