// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {MirrorBase} from "./Base.sol";
import {IAttestationMirror as M} from "../../src/interfaces/IAttestationMirror.sol";

/// One call of each kind, for the gas report (`forge test --gas-report --match-contract
/// MirrorGasTest`) and the snapshot. Nothing here asserts gas; each checks only the effect.
contract MirrorGasTest is MirrorBase {
    function test_gas_record_firstOfTheSlot() public {
        M.Receipt memory r = _receipt(alice, keccak256("uid"), 1);
        bytes memory sig = _sig(ALICE_KEY, r);
        mirror.record(r, sig);
        assertTrue(mirror.isValid(alice, subject, SCHEMA));
    }

    function test_gas_record_newerAttestation() public {
        _record(ALICE_KEY, _receipt(alice, keccak256("uid"), 1));
        M.Receipt memory r = _receipt(alice, keccak256("uid-2"), 2);
        bytes memory sig = _sig(ALICE_KEY, r);
        mirror.record(r, sig);
        assertEq(mirror.slotOf(alice, subject, SCHEMA).uid, keccak256("uid-2"));
    }

    function test_gas_record_revocation() public {
        M.Receipt memory r = _receipt(alice, keccak256("uid"), 1);
        _record(ALICE_KEY, r);
        r.revoked = true;
        r.sequence = 2;
        bytes memory sig = _sig(ALICE_KEY, r);
        mirror.record(r, sig);
        assertFalse(mirror.isValid(alice, subject, SCHEMA));
    }

    function test_gas_isValid() public {
        _record(ALICE_KEY, _receipt(alice, keccak256("uid"), 1));
        assertTrue(mirror.isValid(alice, subject, SCHEMA));
    }
}
