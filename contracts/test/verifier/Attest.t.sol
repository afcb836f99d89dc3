// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {VerifierBase} from "./Base.sol";
import {IAttestationVerifier as V} from "../../src/interfaces/IAttestationVerifier.sol";

contract AttestTest is VerifierBase {
    function test_recordsAValidAttestation() public {
        V.Attestation memory a = _att(1 days, 1);
        bytes32 id = verifier.hashAttestation(a);
        vm.expectEmit(address(verifier));
        emit V.Attested(id, subject, SCHEMA, attester, a.dataHash, a.expiresAt);
        vm.prank(stranger); // anyone may submit a signed attestation
        assertEq(verifier.attest(a, _sign(ATTESTER_KEY, a)), id);
        V.Record memory r = verifier.getAttestation(id);
        assertEq(r.issuer, attester);
        assertEq(r.subject, subject);
        assertTrue(verifier.isValid(subject, SCHEMA));
    }

    function test_revertsForUnregisteredSigner() public {
        V.Attestation memory a = _att(1 days, 1);
        bytes memory sig = _sign(OTHER_KEY, a);
        vm.expectRevert(abi.encodeWithSelector(V.NotAttester.selector, vm.addr(OTHER_KEY)));
        verifier.attest(a, sig);
    }

    function test_revertsForBadSignature() public {
        vm.expectRevert(abi.encodeWithSelector(V.InvalidSignature.selector));
        verifier.attest(_att(1 days, 1), hex"1234");
    }

    function test_revertsWhenExpired() public {
        V.Attestation memory a = _att(0, 1);
        bytes memory sig = _sign(ATTESTER_KEY, a);
        vm.expectRevert(abi.encodeWithSelector(V.AttestationExpired.selector, a.expiresAt));
        verifier.attest(a, sig);
    }

    function test_revertsOnReplay() public {
        V.Attestation memory a = _att(1 days, 1);
        bytes memory sig = _sign(ATTESTER_KEY, a);
        bytes32 id = verifier.attest(a, sig);
        vm.expectRevert(abi.encodeWithSelector(V.AlreadyAttested.selector, id));
        verifier.attest(a, sig);
    }

    function test_revertsForZeroSubject() public {
        V.Attestation memory a = _att(1 days, 1);
        a.subject = address(0);
        bytes memory sig = _sign(ATTESTER_KEY, a);
        vm.expectRevert(abi.encodeWithSelector(V.ZeroAddress.selector));
        verifier.attest(a, sig);
    }

    function test_tamperedFieldsRecoverAnotherSigner() public {
        V.Attestation memory a = _att(1 days, 1);
        bytes memory sig = _sign(ATTESTER_KEY, a);
        a.dataHash = keccak256("forged");
        vm.expectRevert(); // recovers to some unregistered address
        verifier.attest(a, sig);
    }
}
