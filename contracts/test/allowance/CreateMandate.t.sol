// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAttestationMirror} from "../../src/interfaces/IAttestationMirror.sol";
import {AllowanceStateMachine} from "../../src/AllowanceStateMachine.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";

/// `createMandate`: without a signature, only the payer itself — or the operator for the
/// treasury (bank-account payers), whose mandates are deferred. A mandate on a wallet names
/// its payees; its id is derived from the payer and the salt.
contract CreateMandateTest is AllowanceBase {
    function test_createMandate_success_byThePayer() public {
        I.MandateTerms memory t = _terms(M_SALT, payer, 100e6, I.Interval.Weekly);
        vm.expectEmit(address(asm));
        emit I.MandateCreated(
            M,
            payer,
            address(usd),
            100e6,
            I.Interval.Weekly,
            M_SALT,
            _payees(),
            address(0),
            keccak256(bytes(PURPOSE))
        );
        vm.prank(payer);
        bytes32 id = asm.createMandate(t);
        assertEq(id, M);
        I.MandateView memory v = asm.getMandate(M);
        assertEq(v.payer, payer);
        assertEq(v.token, address(usd));
        assertEq(uint256(v.maxAmount), 100e6);
        assertEq(uint256(v.interval), uint256(I.Interval.Weekly));
        assertEq(uint256(v.status), uint256(I.MandateStatus.Active));
        assertEq(uint256(v.spentThisEpoch), 0);
        assertFalse(v.deferred);
        assertEq(v.payeesHash, _addressArrayHash(_payees()));
        assertEq(v.agent, address(0));
    }

    function test_createMandate_success_namesAnAgent() public {
        I.MandateTerms memory t = _terms(M_SALT, payer, 100e6, I.Interval.Daily);
        t.agent = agent;
        vm.prank(payer);
        asm.createMandate(t);
        assertEq(asm.getMandate(M).agent, agent);
    }

    function test_createMandate_success_operatorForTheTreasuryIsDeferred() public {
        I.MandateTerms memory t = _terms(M_SALT, treasury, 100e6, I.Interval.Daily);
        t.payees = new address[](0);
        bytes32 id = asm.createMandate(t);
        assertEq(id, _mandateIdOf(treasury, M_SALT));
        I.MandateView memory v = asm.getMandate(id);
        assertEq(v.payer, treasury);
        assertTrue(v.deferred);
        assertEq(v.payeesHash, bytes32(0));
    }

    /// The operator alone can never put a mandate on a payer's wallet.
    function test_createMandate_revert_operatorForAPayer() public {
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, address(this)));
        asm.createMandate(_terms(M_SALT, payer, 1, I.Interval.Daily));
    }

    function test_createMandate_revert_strangerForAPayer() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, stranger));
        asm.createMandate(_terms(M_SALT, payer, 1, I.Interval.Daily));
    }

    function test_createMandate_revert_idExists() public {
        _mandate(1, I.Interval.Daily);
        vm.expectRevert(abi.encodeWithSelector(I.MandateAlreadyExists.selector, M));
        _mandate(1, I.Interval.Daily);
    }

    function test_createMandate_revert_zeroToken() public {
        I.MandateTerms memory t = _terms(M_SALT, payer, 1, I.Interval.Daily);
        t.token = address(0);
        vm.prank(payer);
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        asm.createMandate(t);
    }

    function test_createMandate_revert_zeroOrHugeCeiling() public {
        vm.startPrank(payer);
        vm.expectRevert(abi.encodeWithSelector(I.InvalidAmount.selector, 0));
        asm.createMandate(_terms(M_SALT, payer, 0, I.Interval.Daily));
        uint256 huge = uint256(type(uint64).max) + 1;
        vm.expectRevert(abi.encodeWithSelector(I.InvalidAmount.selector, huge));
        asm.createMandate(_terms(M_SALT, payer, huge, I.Interval.Daily));
        vm.stopPrank();
    }

    /// A mandate on a wallet must say who may be paid.
    function test_createMandate_revert_walletWithoutPayees() public {
        I.MandateTerms memory t = _terms(M_SALT, payer, 1, I.Interval.Daily);
        t.payees = new address[](0);
        vm.prank(payer);
        vm.expectRevert(abi.encodeWithSelector(I.PayeesRequired.selector));
        asm.createMandate(t);
    }

    function test_createMandate_revert_zeroOrContractPayee() public {
        I.MandateTerms memory t = _terms(M_SALT, payer, 1, I.Interval.Daily);
        t.payees[1] = address(0);
        vm.startPrank(payer);
        vm.expectRevert(abi.encodeWithSelector(R.ZeroAddress.selector));
        asm.createMandate(t);
        t.payees[1] = address(asm);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidDestination.selector, address(asm)));
        asm.createMandate(t);
        vm.stopPrank();
    }

    function testFuzz_createMandate_success_anyValidCeiling(uint256 max, uint8 interval) public {
        max = bound(max, 1, type(uint64).max);
        I.Interval iv = I.Interval(bound(interval, 0, 3));
        vm.prank(payer);
        asm.createMandate(_terms(M_SALT, payer, max, iv));
        assertEq(uint256(asm.getMandate(M).maxAmount), max);
    }

    function testFuzz_createMandate_revert_nobodyButThePayer(address caller) public {
        vm.assume(caller != payer);
        vm.prank(caller);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, caller));
        asm.createMandate(_terms(M_SALT, payer, 1, I.Interval.Daily));
    }

    /// A mandate that requires identity exists only while its payer meets its own requirement;
    /// the requirements are stored, shown and announced.
    function test_createMandate_success_requiresIdentity() public {
        _attest(payer, PERSONHOOD, keccak256("uid"), 0, false, 1);
        I.MandateTerms memory t = _identityTerms(M_SALT, payer, PERSONHOOD, AGENT);
        vm.expectEmit(address(asm));
        emit I.MandateRequirements(M, attester, PERSONHOOD, AGENT);
        vm.prank(payer);
        asm.createMandate(t);
        I.Requirements memory r = asm.getMandate(M).requirements;
        assertEq(r.attester, attester);
        assertEq(r.payerSchema, PERSONHOOD);
        assertEq(r.agentSchema, AGENT);
        assertEq(asm.attestationMirror(), address(mirror));
    }

    function test_createMandate_revert_payerLacksTheAttestation() public {
        I.MandateTerms memory t = _identityTerms(M_SALT, payer, PERSONHOOD, 0);
        vm.prank(payer);
        vm.expectRevert(abi.encodeWithSelector(I.IdentityRequirementUnmet.selector, payer, PERSONHOOD));
        asm.createMandate(t);
        // Another attester's attestation does not count.
        vm.prank(owner);
        mirror.addAttester(stranger);
        _attest(stranger, PERSONHOOD, keccak256("x"), 0, false, 1);
        vm.prank(payer);
        vm.expectRevert(abi.encodeWithSelector(I.IdentityRequirementUnmet.selector, payer, PERSONHOOD));
        asm.createMandate(t);
    }

    /// Requirements without an attester, an attester without requirements, or any on a state
    /// machine without a mirror: refused rather than silently requiring nothing.
    function test_createMandate_revert_identityUnsupported() public {
        I.MandateTerms memory t = _identityTerms(M_SALT, payer, PERSONHOOD, 0);
        t.requirements.attester = address(0);
        vm.prank(payer);
        vm.expectRevert(I.IdentityUnsupported.selector);
        asm.createMandate(t);
        t = _identityTerms(M_SALT, payer, 0, 0);
        vm.prank(payer);
        vm.expectRevert(I.IdentityUnsupported.selector);
        asm.createMandate(t);
        AllowanceStateMachine bare =
            new AllowanceStateMachine(owner, address(this), treasury, IAttestationMirror(address(0)));
        vm.prank(payer);
        vm.expectRevert(I.IdentityUnsupported.selector);
        bare.createMandate(_identityTerms(M_SALT, payer, PERSONHOOD, 0));
    }
}
