// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";

/// `keyIdOf`: a key's id is `keccak256(abi.encode(mandateId, salt))`: keys of different
/// mandates never collide, whatever salts their issuers choose.
contract KeyIdOfTest is AllowanceBase {
    function test_keyIdOf_success_derivedFromMandateAndSalt() public view {
        assertEq(asm.keyIdOf(M, K_SALT), keccak256(abi.encode(M, K_SALT)));
    }

    /// Another payer's mandate with the same salts gets keys of its own.
    function test_keyIdOf_success_sameSaltOtherMandate() public {
        _mandate(100e6, I.Interval.Daily);
        vm.prank(stranger);
        bytes32 other = asm.createMandate(_terms(M_SALT, stranger, 100e6, I.Interval.Daily));
        bytes32 mine = _key(K_SALT, 0);
        vm.prank(stranger);
        bytes32 theirs =
            asm.issueSessionKey(_keyTerms(other, K_SALT, 0, new address[](0), address(0)), _payees());
        assertEq(mine, K);
        assertEq(theirs, _keyIdOf(other, K_SALT));
        assertTrue(mine != theirs);
        assertEq(asm.getSessionKey(theirs).mandateId, other);
    }

    function testFuzz_keyIdOf_success_matchesIndependentDerivation(bytes32 m, bytes32 salt) public view {
        assertEq(asm.keyIdOf(m, salt), _keyIdOf(m, salt));
    }
}
