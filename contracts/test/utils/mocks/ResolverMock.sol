// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {IAttestationRegistry, ISchemaResolver} from "../../../src/interfaces/IAttestationRegistry.sol";

/// @dev A schema resolver that answers what it is told and remembers what it was asked.
contract ResolverMock is ISchemaResolver {
    bool public acceptAttest = true;
    bool public acceptRevoke = true;
    uint256 public attests;
    uint256 public revokes;
    bytes32 public lastUid;
    uint64 public lastRevocationTime;

    function set(bool attest_, bool revoke_) external {
        acceptAttest = attest_;
        acceptRevoke = revoke_;
    }

    function onAttest(IAttestationRegistry.Attestation calldata a) external returns (bool) {
        ++attests;
        lastUid = a.uid;
        return acceptAttest;
    }

    function onRevoke(IAttestationRegistry.Attestation calldata a) external returns (bool) {
        ++revokes;
        lastUid = a.uid;
        lastRevocationTime = a.revocationTime;
        return acceptRevoke;
    }
}
