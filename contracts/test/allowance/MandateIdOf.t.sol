// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";

/// `mandateIdOf`: a mandate's id is `keccak256(abi.encode(payer, salt))`, so nobody can take
/// a payer's id first: a front-runner with the same salt gets an id of its own.
contract MandateIdOfTest is AllowanceBase {
    uint256 internal constant DEADLINE = 2_000_000_000;
    address internal attacker = makeAddr("attacker");

    function test_mandateIdOf_success_derivedFromPayerAndSalt() public view {
        assertEq(asm.mandateIdOf(payer, M_SALT), keccak256(abi.encode(payer, M_SALT)));
        assertEq(asm.mandateIdOf(payer, M_SALT), M);
    }

    function testFuzz_mandateIdOf_success_distinctPayersDistinctIds(address a, address b, bytes32 salt)
        public
        view
    {
        vm.assume(a != b);
        assertTrue(asm.mandateIdOf(a, salt) != asm.mandateIdOf(b, salt));
        assertEq(asm.mandateIdOf(a, salt), _mandateIdOf(a, salt));
    }

    /// The attacker sees the victim's signed mandate in the mempool and front-runs it with the
    /// same salt: its mandate gets its own id, it cannot create one for the victim, and the
    /// victim's goes through with the id the victim expects.
    function test_mandateIdOf_success_frontRunnerCannotTakeTheId() public {
        I.MandateTerms memory victims = _terms(M_SALT, payer, 100e6, I.Interval.Daily);
        bytes memory sig = _sign(PAYER_KEY, _mandateDigest(address(asm), victims, 1, DEADLINE));

        // Same salt, its own wallet as payer: another id.
        vm.prank(attacker);
        bytes32 attackers = asm.createMandate(_terms(M_SALT, attacker, 1, I.Interval.Daily));
        assertEq(attackers, _mandateIdOf(attacker, M_SALT));
        assertTrue(attackers != M);
        // The victim as payer: refused (the attacker is neither the payer nor the operator).
        vm.prank(attacker);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, attacker));
        asm.createMandate(victims);
        // The victim's signature on other terms (its own salt, the attacker's payee) is not
        // the victim's: nothing to take first through the operator either.
        I.MandateTerms memory bent = _terms(M_SALT, payer, 100e6, I.Interval.Daily);
        bent.payees = _one(attacker);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        asm.createMandateWithSignature(bent, 1, DEADLINE, sig);

        assertEq(asm.createMandateWithSignature(victims, 1, DEADLINE, sig), M);
        assertEq(asm.getMandate(M).payer, payer);
        assertEq(asm.getMandate(attackers).payer, attacker);
    }

    /// Treasury mandates (created by the operator) live in the treasury's own namespace.
    function test_mandateIdOf_success_treasuryNamespace() public {
        I.MandateTerms memory t = _terms(M_SALT, treasury, 1, I.Interval.Daily);
        t.payees = new address[](0);
        bytes32 id = asm.createMandate(t);
        assertEq(id, asm.mandateIdOf(treasury, M_SALT));
        _mandate(1, I.Interval.Daily); // the payer's, same salt, still free
        assertEq(asm.getMandate(M).payer, payer);
    }
}
