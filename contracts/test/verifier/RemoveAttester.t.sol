// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {VerifierBase} from "./Base.sol";
import {IAttestationVerifier as V} from "../../src/interfaces/IAttestationVerifier.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// removeAttester (its effect on isValid is in IsValid.t.sol).
contract RemoveAttesterTest is VerifierBase {
    function test_removes() public {
        vm.expectEmit(address(verifier));
        emit V.AttesterRemoved(attester);
        verifier.removeAttester(attester);
        assertFalse(verifier.isAttester(attester));
    }

    function test_revertsForNonAttester() public {
        vm.expectRevert(abi.encodeWithSelector(V.NotAttester.selector, stranger));
        verifier.removeAttester(stranger);
    }

    function test_ownerOnly() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, stranger));
        verifier.removeAttester(attester);
    }
}
