// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {VerifierBase} from "./Base.sol";
import {IAttestationVerifier as V} from "../../src/interfaces/IAttestationVerifier.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// addAttester (and the isAttester view).
contract AddAttesterTest is VerifierBase {
    function test_registers() public {
        address a = makeAddr("new attester");
        vm.expectEmit(address(verifier));
        emit V.AttesterAdded(a);
        verifier.addAttester(a);
        assertTrue(verifier.isAttester(a));
    }

    function test_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(V.ZeroAddress.selector));
        verifier.addAttester(address(0));
        vm.expectRevert(abi.encodeWithSelector(V.AlreadyAttester.selector, attester));
        verifier.addAttester(attester);
    }

    function test_ownerOnly() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, stranger));
        verifier.addAttester(stranger);
    }
}
