// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {VerifierBase} from "./Base.sol";
import {IAttestationVerifier as V} from "../../src/interfaces/IAttestationVerifier.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// addAttester, removeAttester, isAttester.
contract AttestersTest is VerifierBase {
    function test_addAndRemove() public {
        address a = makeAddr("new attester");
        vm.expectEmit(address(verifier));
        emit V.AttesterAdded(a);
        verifier.addAttester(a);
        assertTrue(verifier.isAttester(a));
        vm.expectEmit(address(verifier));
        emit V.AttesterRemoved(a);
        verifier.removeAttester(a);
        assertFalse(verifier.isAttester(a));
    }

    function test_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(V.ZeroAddress.selector));
        verifier.addAttester(address(0));
        vm.expectRevert(abi.encodeWithSelector(V.AlreadyAttester.selector, attester));
        verifier.addAttester(attester);
        vm.expectRevert(abi.encodeWithSelector(V.NotAttester.selector, stranger));
        verifier.removeAttester(stranger);
    }

    function test_ownerOnly() public {
        bytes memory err = abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, stranger);
        vm.startPrank(stranger);
        vm.expectRevert(err);
        verifier.addAttester(stranger);
        vm.expectRevert(err);
        verifier.removeAttester(attester);
        vm.stopPrank();
    }
}
