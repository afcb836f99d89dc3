// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Test} from "../utils/Test.sol";
import {MirrorHandler} from "./MirrorHandler.sol";

/// Stateful invariants of the attestation mirror, checked after every step of random
/// sequences of receipts (newer, equal, older; revoked or not), trust changes and time warps.
contract MirrorInvariantsTest is Test {
    MirrorHandler internal h;

    function setUp() public {
        h = new MirrorHandler();
        targetContract(address(h));
        bytes4[] memory selectors = new bytes4[](5);
        selectors[0] = MirrorHandler.record.selector;
        selectors[1] = MirrorHandler.record.selector;
        selectors[2] = MirrorHandler.record.selector; // receipts three times as often
        selectors[3] = MirrorHandler.toggleTrust.selector;
        selectors[4] = MirrorHandler.warp.selector;
        targetSelector(FuzzSelector(address(h), selectors));
    }

    /// (a) Ordering: a slot's sequence never decreases; an older receipt never overwrites it.
    function invariant_sequencesOnlyGrow() public view {
        assertEq(h.backwardMoves(), 0);
    }

    /// (b) Revocation finality: a uid a receipt revoked in a slot is revoked there for good,
    /// and the slot is never valid while it holds it.
    function invariant_revocationIsFinal() public view {
        assertEq(h.revivals(), 0);
        for (uint256 i; i < 3; ++i) {
            for (uint256 j; j < 2; ++j) {
                MirrorHandler.View memory v = h.slotView(i, j, 0);
                if (h.ghostRevoked(i, j, 0, v.slot.uid)) {
                    assertTrue(
                        h.mirror().isRevoked(h.attesters(i), h.recipients(j), h.schemas(0), v.slot.uid)
                    );
                    assertFalse(v.valid);
                }
            }
        }
    }

    /// (c) Issuer isolation: receipts of one attester, and trust changes of it, never changed
    /// another attester's slot or its validity.
    function invariant_issuersNeverShareASlot() public view {
        assertEq(h.crossIssuerChanges(), 0);
    }
}
