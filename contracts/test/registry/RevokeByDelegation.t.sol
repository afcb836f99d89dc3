// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RegistryBase} from "./Base.sol";
import {IAttestationRegistry as R} from "../../src/interfaces/IAttestationRegistry.sol";
import {ERC1271WalletMock} from "../utils/mocks/ERC1271WalletMock.sol";

contract RegistryRevokeByDelegationTest is RegistryBase {
    function test_revokeByDelegation_success_anyoneSubmits() public {
        bytes32 uid = _attestAs(alice, _req());
        R.DelegatedRevocationRequest memory d = _delegatedRevoke(ALICE_KEY, schema, uid, 3);
        assertEq(registry.revokeDigest(d), _revokeDigest(d));
        vm.expectEmit(address(registry));
        emit R.Revoked(subject, alice, schema, uid, NOW, true);
        vm.prank(relayer);
        registry.revokeByDelegation(d);
        assertFalse(registry.isValid(alice, subject, schema));
        assertTrue(registry.nonceUsed(alice, 3));
    }

    function test_revokeByDelegation_success_erc1271Attester() public {
        ERC1271WalletMock wallet = new ERC1271WalletMock(alice);
        bytes32 uid = _attestAs(address(wallet), _req());
        R.DelegatedRevocationRequest memory d =
            R.DelegatedRevocationRequest(schema, uid, address(wallet), 1, NOW + 1 hours, "");
        d.signature = _sig(ALICE_KEY, _revokeDigest(d));
        registry.revokeByDelegation(d);
        assertFalse(registry.isValid(address(wallet), subject, schema));
    }

    function test_revokeByDelegation_revert_anotherAttestersSignature() public {
        bytes32 uid = _attestAs(alice, _req());
        // Bob signs a revocation of Alice's attestation: his signature is valid, he is not its attester.
        R.DelegatedRevocationRequest memory d = _delegatedRevoke(BOB_KEY, schema, uid, 1);
        vm.expectRevert(abi.encodeWithSelector(R.NotAttester.selector, bob, alice));
        registry.revokeByDelegation(d);
        // Bob's signature presented as Alice's.
        d.revoker = alice;
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        registry.revokeByDelegation(d);
        assertTrue(registry.isValid(alice, subject, schema));
    }

    function test_revokeByDelegation_revert_replayAndTwice() public {
        bytes32 uid = _attestAs(alice, _req());
        R.DelegatedRevocationRequest memory d = _delegatedRevoke(ALICE_KEY, schema, uid, 1);
        registry.revokeByDelegation(d);
        vm.expectRevert(abi.encodeWithSelector(R.NonceAlreadyUsed.selector, 1));
        registry.revokeByDelegation(d);
        vm.expectRevert(abi.encodeWithSelector(R.AlreadyRevoked.selector, uid));
        registry.revokeByDelegation(_delegatedRevoke(ALICE_KEY, schema, uid, 2));
    }

    function testFuzz_revokeByDelegation_revert_afterTheDeadline(uint64 late) public {
        bytes32 uid = _attestAs(alice, _req());
        R.DelegatedRevocationRequest memory d = _delegatedRevoke(ALICE_KEY, schema, uid, 1);
        vm.warp(uint256(d.deadline) + bound(late, 1, 365 days));
        vm.expectRevert(abi.encodeWithSelector(R.DeadlineExpired.selector, d.deadline));
        registry.revokeByDelegation(d);
    }
}
