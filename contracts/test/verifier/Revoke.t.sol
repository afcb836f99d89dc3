// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {VerifierBase} from "./Base.sol";
import {IAttestationVerifier as V} from "../../src/interfaces/IAttestationVerifier.sol";

contract RevokeTest is VerifierBase {
    bytes32 internal id;

    function setUp() public override {
        super.setUp();
        V.Attestation memory a = _att(1 days, 1);
        id = verifier.attest(a, _sign(ATTESTER_KEY, a));
    }

    function test_issuerRevokes() public {
        vm.expectEmit(address(verifier));
        emit V.AttestationRevoked(id);
        vm.prank(attester);
        verifier.revoke(id);
        assertTrue(verifier.getAttestation(id).revoked);
        assertFalse(verifier.isValid(subject, SCHEMA));
    }

    function test_ownerRevokes() public {
        verifier.revoke(id);
        assertFalse(verifier.isValid(subject, SCHEMA));
    }

    function test_reverts() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(V.NotIssuerOrOwner.selector, stranger));
        verifier.revoke(id);
        vm.expectRevert(abi.encodeWithSelector(V.UnknownAttestation.selector, bytes32("x")));
        verifier.revoke(bytes32("x"));
        verifier.revoke(id);
        vm.expectRevert(abi.encodeWithSelector(V.AlreadyRevoked.selector, id));
        verifier.revoke(id);
    }

    function test_getAttestationRevertsForUnknown() public {
        vm.expectRevert(abi.encodeWithSelector(V.UnknownAttestation.selector, bytes32("x")));
        verifier.getAttestation(bytes32("x"));
    }
}
