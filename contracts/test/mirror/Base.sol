// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Test} from "../utils/Test.sol";
import {AttestationMirror} from "../../src/AttestationMirror.sol";
import {IAttestationMirror as M} from "../../src/interfaces/IAttestationMirror.sol";

/// @dev A mirror owned by the test, Alice trusted, Bob trusted, Carol not; receipt digests
///      computed here from the type string written out.
abstract contract MirrorBase is Test {
    bytes32 internal constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 internal constant RECEIPT_TYPEHASH = keccak256(
        "AttestationReceipt(address attester,address recipient,bytes32 schema,bytes32 uid,uint64 expirationTime,bool revoked,uint64 sequence)"
    );
    AttestationMirror internal mirror;
    uint256 internal constant ALICE_KEY = 0xA11CE;
    uint256 internal constant BOB_KEY = 0xB0B;
    uint256 internal constant CAROL_KEY = 0xCA201;
    address internal alice;
    address internal bob;
    address internal carol;
    address internal subject = makeAddr("subject");
    address internal relayer = makeAddr("relayer");
    bytes32 internal constant SCHEMA = keccak256("openrail.kyc.v1");
    uint64 internal constant NOW = 1_795_435_200;

    function setUp() public virtual {
        vm.warp(NOW);
        mirror = new AttestationMirror(address(this));
        alice = vm.addr(ALICE_KEY);
        bob = vm.addr(BOB_KEY);
        carol = vm.addr(CAROL_KEY);
        mirror.addAttester(alice);
        mirror.addAttester(bob);
    }

    function _receipt(address attester, bytes32 uid, uint64 sequence)
        internal
        view
        returns (M.Receipt memory)
    {
        return M.Receipt(attester, subject, SCHEMA, uid, 0, false, sequence);
    }

    function _digest(M.Receipt memory r) internal view returns (bytes32) {
        bytes32 domain = keccak256(
            abi.encode(
                DOMAIN_TYPEHASH,
                keccak256("Openrail AttestationMirror"),
                keccak256("1"),
                block.chainid,
                address(mirror)
            )
        );
        bytes32 structHash = keccak256(
            abi.encode(
                RECEIPT_TYPEHASH,
                r.attester,
                r.recipient,
                r.schema,
                r.uid,
                r.expirationTime,
                r.revoked,
                r.sequence
            )
        );
        return keccak256(abi.encodePacked("\x19\x01", domain, structHash));
    }

    function _sig(uint256 key, M.Receipt memory r) internal view returns (bytes memory) {
        (uint8 v, bytes32 rr, bytes32 s) = vm.sign(key, _digest(r));
        return abi.encodePacked(rr, s, v);
    }

    function _record(uint256 key, M.Receipt memory r) internal {
        mirror.record(r, _sig(key, r));
    }
}
