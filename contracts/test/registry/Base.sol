// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Test} from "../utils/Test.sol";
import {AttestationRegistry} from "../../src/AttestationRegistry.sol";
import {IAttestationRegistry as R, ISchemaResolver} from "../../src/interfaces/IAttestationRegistry.sol";

/// @dev A registry, two attesters with keys, a revocable and an irrevocable schema, and EIP-712
///      digests computed here from the type strings written out (so a test fails if the
///      registry hashes differently).
abstract contract RegistryBase is Test {
    bytes32 internal constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 internal constant ATTEST_TYPEHASH = keccak256(
        "Attest(address attester,bytes32 schema,address recipient,uint64 expirationTime,bool revocable,bytes32 refUID,bytes data,uint64 issuedAt,uint256 nonce,uint64 deadline)"
    );
    bytes32 internal constant REVOKE_TYPEHASH =
        keccak256("Revoke(address revoker,bytes32 schema,bytes32 uid,uint256 nonce,uint64 deadline)");
    string internal constant SCHEMA_TEXT = "bytes32 credentialDigest,uint8 kind,bytes32 statusRef";

    AttestationRegistry internal registry;
    uint256 internal constant ALICE_KEY = 0xA11CE;
    uint256 internal constant BOB_KEY = 0xB0B;
    address internal alice; // attester
    address internal bob; // another attester
    address internal subject = makeAddr("subject");
    address internal relayer = makeAddr("relayer");
    bytes32 internal schema; // revocable, no resolver
    bytes32 internal fixedSchema; // irrevocable, no resolver
    uint64 internal constant NOW = 1_795_435_200;

    function setUp() public virtual {
        vm.warp(NOW);
        registry = new AttestationRegistry();
        alice = vm.addr(ALICE_KEY);
        bob = vm.addr(BOB_KEY);
        schema = registry.registerSchema(SCHEMA_TEXT, ISchemaResolver(address(0)), true);
        fixedSchema = registry.registerSchema(SCHEMA_TEXT, ISchemaResolver(address(0)), false);
    }

    function _req(bytes32 schema_, uint64 expirationTime)
        internal
        view
        returns (R.AttestationRequest memory)
    {
        return R.AttestationRequest(
            schema_, subject, expirationTime, true, bytes32(0), abi.encode(keccak256("vc"))
        );
    }

    function _req() internal view returns (R.AttestationRequest memory) {
        return _req(schema, 0);
    }

    function _attestAs(address who, R.AttestationRequest memory r) internal returns (bytes32 uid) {
        vm.prank(who);
        uid = registry.attest(r);
    }

    function _domain() internal view returns (bytes32) {
        return keccak256(
            abi.encode(
                DOMAIN_TYPEHASH,
                keccak256("Openrail AttestationRegistry"),
                keccak256("1"),
                block.chainid,
                address(registry)
            )
        );
    }

    function _attestDigest(R.DelegatedAttestationRequest memory d) internal view returns (bytes32) {
        R.AttestationRequest memory r = d.request;
        bytes memory head = abi.encode(
            ATTEST_TYPEHASH, d.attester, r.schema, r.recipient, r.expirationTime, r.revocable, r.refUID
        );
        bytes32 structHash =
            keccak256(bytes.concat(head, abi.encode(keccak256(r.data), d.issuedAt, d.nonce, d.deadline)));
        return keccak256(abi.encodePacked("\x19\x01", _domain(), structHash));
    }

    function _revokeDigest(R.DelegatedRevocationRequest memory d) internal view returns (bytes32) {
        bytes32 structHash =
            keccak256(abi.encode(REVOKE_TYPEHASH, d.revoker, d.schema, d.uid, d.nonce, d.deadline));
        return keccak256(abi.encodePacked("\x19\x01", _domain(), structHash));
    }

    function _sig(uint256 key, bytes32 digest) internal pure returns (bytes memory) {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(key, digest);
        return abi.encodePacked(r, s, v);
    }

    /// @dev A delegated attestation of `r` by `key`'s address, issued at `issuedAt`, signed.
    function _delegated(uint256 key, R.AttestationRequest memory r, uint64 issuedAt, uint256 nonce)
        internal
        view
        returns (R.DelegatedAttestationRequest memory d)
    {
        d = R.DelegatedAttestationRequest(
            r, vm.addr(key), issuedAt, nonce, uint64(block.timestamp + 1 hours), ""
        );
        d.signature = _sig(key, _attestDigest(d));
    }

    function _delegatedRevoke(uint256 key, bytes32 schema_, bytes32 uid, uint256 nonce)
        internal
        view
        returns (R.DelegatedRevocationRequest memory d)
    {
        d = R.DelegatedRevocationRequest(
            schema_, uid, vm.addr(key), nonce, uint64(block.timestamp + 1 hours), ""
        );
        d.signature = _sig(key, _revokeDigest(d));
    }

    /// @dev EAS's attestation uid (bump 0).
    function _uidOf(R.AttestationRequest memory r, address attester, uint64 time)
        internal
        pure
        returns (bytes32)
    {
        return keccak256(
            abi.encodePacked(
                r.schema,
                r.recipient,
                attester,
                time,
                r.expirationTime,
                r.revocable,
                r.refUID,
                r.data,
                uint32(0)
            )
        );
    }
}
