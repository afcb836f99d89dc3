// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RegistryBase} from "./Base.sol";
import {IAttestationRegistry as R} from "../../src/interfaces/IAttestationRegistry.sol";

/// One call of each kind Openrail makes, in the state it makes it, for the gas report
/// (`forge test --gas-report --match-contract RegistryGasTest`) and the snapshot. Nothing here
/// asserts gas; each checks only the call's effect. The data is one word, as Openrail's
/// credential digest.
contract RegistryGasTest is RegistryBase {
    function test_gas_attest_firstOfTheSlot() public {
        bytes32 uid = _attestAs(alice, _req());
        assertEq(registry.latest(alice, subject, schema), uid);
    }

    function test_gas_attest_replacingTheSlot() public {
        _attestAs(alice, _req());
        vm.warp(NOW + 1);
        bytes32 uid = _attestAs(alice, _req());
        assertEq(registry.latest(alice, subject, schema), uid);
    }

    function test_gas_attestByDelegation_firstOfTheSlot() public {
        R.DelegatedAttestationRequest memory d = _delegated(ALICE_KEY, _req(), NOW, 1);
        vm.prank(relayer);
        bytes32 uid = registry.attestByDelegation(d);
        assertEq(registry.latest(alice, subject, schema), uid);
    }

    function test_gas_revoke_theSlots() public {
        bytes32 uid = _attestAs(alice, _req());
        vm.prank(alice);
        registry.revoke(schema, uid);
        assertFalse(registry.isValid(alice, subject, schema));
    }

    function test_gas_isValid() public {
        _attestAs(alice, _req());
        assertTrue(registry.isValid(alice, subject, schema));
    }
}
