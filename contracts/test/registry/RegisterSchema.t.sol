// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RegistryBase} from "./Base.sol";
import {IAttestationRegistry as R, ISchemaResolver} from "../../src/interfaces/IAttestationRegistry.sol";
import {ResolverMock} from "../utils/mocks/ResolverMock.sol";

contract RegistryRegisterSchemaTest is RegistryBase {
    function test_registerSchema_success_uidAsEasAndRecord() public {
        ResolverMock resolver = new ResolverMock();
        bytes32 expected = keccak256(abi.encodePacked("uint8 kyc", address(resolver), true));
        vm.expectEmit(address(registry));
        emit R.SchemaRegistered(expected, relayer, resolver, true, "uint8 kyc");
        vm.prank(relayer); // anyone may register
        bytes32 uid = registry.registerSchema("uint8 kyc", resolver, true);
        assertEq(uid, expected);
        R.SchemaRecord memory s = registry.getSchema(uid);
        assertEq(s.uid, uid);
        assertEq(address(s.resolver), address(resolver));
        assertTrue(s.revocable);
        assertEq(s.schema, "uint8 kyc");
    }

    function test_registerSchema_revert_duplicate() public {
        vm.expectRevert(abi.encodeWithSelector(R.SchemaAlreadyRegistered.selector, schema));
        registry.registerSchema(SCHEMA_TEXT, ISchemaResolver(address(0)), true);
    }

    function testFuzz_registerSchema_success_eachTripleItsOwnUid(
        string calldata text,
        address resolver,
        bool revocable
    ) public {
        bytes32 uid = registry.registerSchema(text, ISchemaResolver(resolver), revocable);
        assertEq(uid, keccak256(abi.encodePacked(text, resolver, revocable)));
        // The same definition with the other flag is another schema.
        assertTrue(registry.registerSchema(text, ISchemaResolver(resolver), !revocable) != uid);
        vm.expectRevert(abi.encodeWithSelector(R.SchemaAlreadyRegistered.selector, uid));
        registry.registerSchema(text, ISchemaResolver(resolver), revocable);
    }
}
