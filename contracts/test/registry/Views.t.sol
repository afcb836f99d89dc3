// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RegistryBase} from "./Base.sol";
import {IAttestationRegistry as R} from "../../src/interfaces/IAttestationRegistry.sol";

contract RegistryViewsTest is RegistryBase {
    function test_views_unknownIsEmptyAndInvalid() public view {
        bytes32 uid = keccak256("missing");
        assertEq(registry.getAttestation(uid).uid, bytes32(0));
        assertEq(registry.getSchema(uid).uid, bytes32(0));
        assertFalse(registry.isAttestationValid(uid));
        assertFalse(registry.isValid(alice, subject, schema));
        assertEq(registry.latest(alice, subject, schema), bytes32(0));
    }

    function test_views_typeHashesAndDomain() public view {
        assertEq(registry.ATTEST_TYPEHASH(), ATTEST_TYPEHASH);
        assertEq(registry.REVOKE_TYPEHASH(), REVOKE_TYPEHASH);
        assertEq(registry.DOMAIN_SEPARATOR(), _domain());
    }

    function testFuzz_views_digestsMatchTheWrittenOutTypes(
        address recipient,
        uint64 expiration,
        bytes32 ref,
        bytes calldata data,
        uint64 issuedAt,
        uint256 nonce
    ) public view {
        R.DelegatedAttestationRequest memory d = R.DelegatedAttestationRequest(
            R.AttestationRequest(schema, recipient, expiration, true, ref, data),
            alice,
            issuedAt,
            nonce,
            9,
            ""
        );
        assertEq(registry.attestDigest(d), _attestDigest(d));
        R.DelegatedRevocationRequest memory v = R.DelegatedRevocationRequest(schema, ref, alice, nonce, 9, "");
        assertEq(registry.revokeDigest(v), _revokeDigest(v));
    }

    /// isValid reads two storage words: the slot and the attestation's time word.
    function test_views_isValidReadsTwoWords() public {
        _attestAs(alice, _req(schema, NOW + 1 days));
        vm.record();
        assertTrue(registry.isValid(alice, subject, schema));
        (bytes32[] memory reads,) = vm.accesses(address(registry));
        assertEq(reads.length, 2);
    }
}
