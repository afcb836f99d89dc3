// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Test} from "../utils/Test.sol";
import {AttestationVerifier} from "../../src/AttestationVerifier.sol";
import {IAttestationVerifier as V} from "../../src/interfaces/IAttestationVerifier.sol";

abstract contract VerifierBase is Test {
    AttestationVerifier internal verifier;
    uint256 internal constant ATTESTER_KEY = 0xA11CE;
    uint256 internal constant OTHER_KEY = 0xB0B;
    address internal attester;
    address internal subject = makeAddr("subject");
    address internal stranger = makeAddr("stranger");
    bytes32 internal constant SCHEMA = keccak256("openrail.kyc.v1");

    function setUp() public virtual {
        vm.warp(1_795_435_200);
        verifier = new AttestationVerifier(address(this));
        attester = vm.addr(ATTESTER_KEY);
        verifier.addAttester(attester);
    }

    function _att(uint64 ttl, uint256 nonce) internal view returns (V.Attestation memory) {
        return V.Attestation(subject, SCHEMA, keccak256("credential"), uint64(block.timestamp) + ttl, nonce);
    }

    function _sign(uint256 key, V.Attestation memory a) internal view returns (bytes memory) {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(key, verifier.hashAttestation(a));
        return abi.encodePacked(r, s, v);
    }
}
