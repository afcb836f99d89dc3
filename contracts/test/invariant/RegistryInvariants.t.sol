// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Test} from "../utils/Test.sol";
import {RegistryHandler} from "./RegistryHandler.sol";
import {IAttestationRegistry as R} from "../../src/interfaces/IAttestationRegistry.sol";

/// Stateful invariants of the attestation registry, checked after every step of random
/// sequences of attest / attestByDelegation (issued earlier, submitted later) / revoke /
/// revokeByDelegation / time warps by three attesters.
contract RegistryInvariantsTest is Test {
    RegistryHandler internal h;

    function setUp() public {
        h = new RegistryHandler();
        targetContract(address(h));
        bytes4[] memory selectors = new bytes4[](5);
        selectors[0] = RegistryHandler.attest.selector;
        selectors[1] = RegistryHandler.attestByDelegation.selector;
        selectors[2] = RegistryHandler.revoke.selector;
        selectors[3] = RegistryHandler.revoke.selector; // revokes twice as often
        selectors[4] = RegistryHandler.warp.selector;
        targetSelector(FuzzSelector(address(h), selectors));
    }

    /// (a) Ordering: a slot's attestation time and its floor (that time, or the revocation's)
    /// never decrease, however late an older delegated attestation is submitted.
    function invariant_slotsOnlyMoveForward() public view {
        assertEq(h.backwardMoves(), 0);
    }

    /// (b) Revocation finality: every revoked uid stays revoked at its revocation time, is not
    /// valid, and a slot holding it is not valid; no uid was revoked twice or by another.
    function invariant_revocationIsFinal() public view {
        assertEq(h.revivals(), 0);
        for (uint256 n; n < h.revokedCount(); ++n) {
            bytes32 uid = h.revokedUids(n);
            R.Attestation memory a = h.registry().getAttestation(uid);
            assertEq(uint256(a.revocationTime), uint256(h.revokedAt(uid)));
            assertFalse(h.registry().isAttestationValid(uid));
        }
        for (uint256 i; i < 3; ++i) {
            for (uint256 j; j < 2; ++j) {
                RegistryHandler.View memory v = h.slotView(i, j, 0);
                if (v.uid != 0 && h.revokedAt(v.uid) != 0) assertFalse(v.valid);
            }
        }
    }

    /// (c) Issuer isolation: no action of one attester changed another attester's slot
    /// (`latest` or `isValid`), and every slot holds its own attester's attestation of its
    /// recipient and schema.
    function invariant_issuersNeverShareASlot() public view {
        assertEq(h.crossIssuerChanges(), 0);
        for (uint256 i; i < 3; ++i) {
            for (uint256 j; j < 2; ++j) {
                RegistryHandler.View memory v = h.slotView(i, j, 0);
                if (v.uid == 0) continue;
                R.Attestation memory a = h.registry().getAttestation(v.uid);
                assertEq(a.attester, h.attesters(i));
                assertEq(a.recipient, h.recipients(j));
                assertEq(a.schema, h.schemas(0));
            }
        }
    }
}
