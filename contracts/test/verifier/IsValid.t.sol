// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {VerifierBase} from "./Base.sol";
import {IAttestationVerifier as V} from "../../src/interfaces/IAttestationVerifier.sol";

/// isValid, hashAttestation and DOMAIN_SEPARATOR.
contract IsValidTest is VerifierBase {
    function testFuzz_validUntilExpiry(uint64 ttl, uint256 elapsed) public {
        ttl = uint64(bound(ttl, 1, 365 days));
        elapsed = bound(elapsed, 0, 2 * 365 days);
        V.Attestation memory a = _att(ttl, 7);
        verifier.attest(a, _sign(ATTESTER_KEY, a));
        vm.warp(block.timestamp + elapsed);
        assertEq(verifier.isValid(subject, SCHEMA), elapsed < ttl);
    }

    function test_falseWithoutAttestationOrForOtherSchema() public {
        assertFalse(verifier.isValid(subject, SCHEMA));
        V.Attestation memory a = _att(1 days, 1);
        verifier.attest(a, _sign(ATTESTER_KEY, a));
        assertFalse(verifier.isValid(subject, keccak256("other")));
        assertFalse(verifier.isValid(stranger, SCHEMA));
    }

    function test_falseOnceTheAttesterIsRemoved() public {
        V.Attestation memory a = _att(1 days, 1);
        verifier.attest(a, _sign(ATTESTER_KEY, a));
        verifier.removeAttester(attester);
        assertFalse(verifier.isValid(subject, SCHEMA));
    }

    function test_latestAttestationDecides() public {
        V.Attestation memory a = _att(1 days, 1);
        bytes32 first = verifier.attest(a, _sign(ATTESTER_KEY, a));
        V.Attestation memory b = _att(2 days, 2);
        bytes32 second = verifier.attest(b, _sign(ATTESTER_KEY, b));
        verifier.revoke(first);
        assertTrue(verifier.isValid(subject, SCHEMA));
        verifier.revoke(second);
        assertFalse(verifier.isValid(subject, SCHEMA));
    }

    function test_digestIsEip712() public view {
        V.Attestation memory a = _att(1 days, 1);
        bytes32 structHash = keccak256(
            abi.encode(verifier.ATTESTATION_TYPEHASH(), a.subject, a.schema, a.dataHash, a.expiresAt, a.nonce)
        );
        bytes32 digest = keccak256(abi.encodePacked(hex"1901", verifier.DOMAIN_SEPARATOR(), structHash));
        assertEq(verifier.hashAttestation(a), digest);
    }
}
