// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";

/// `issueSessionKey`: a key of an active mandate, by the operator or the payer, paying only
/// among the payees the payer signed and, when the mandate names an agent, signed by it.
contract IssueSessionKeyTest is AllowanceBase {
    function setUp() public override {
        super.setUp();
        _mandate(100e6, I.Interval.Daily);
    }

    function test_issueSessionKey_success_withCeilingAndAllowList() public {
        address[] memory list = _one(dest2);
        uint64 exp = uint64(block.timestamp + 1 hours);
        vm.expectEmit(address(asm));
        emit I.SessionKeyIssued(K, M, exp, 60e6, list, address(0), K_SALT);
        bytes32 id = asm.issueSessionKey(I.KeyTerms(K_SALT, M, exp, 60e6, list, address(0)), _payees());
        assertEq(id, K);
        assertEq(id, asm.keyIdOf(M, K_SALT));
        I.SessionKeyView memory v = asm.getSessionKey(K);
        assertEq(v.mandateId, M);
        assertEq(uint256(v.expiresAt), exp);
        assertEq(uint256(v.maxAmount), 60e6);
        assertTrue(v.hasAllowList);
        assertFalse(v.revoked);
        assertTrue(asm.isDestinationAllowed(K, dest2));
        assertFalse(asm.isDestinationAllowed(K, dest));
        assertFalse(asm.isDestinationAllowed(K, stranger));
    }

    /// A key that names no destination gets the mandate's payees, and the event says so.
    function test_issueSessionKey_success_emptyListBecomesThePayees() public {
        uint64 exp = uint64(block.timestamp + 7 days);
        vm.expectEmit(address(asm));
        emit I.SessionKeyIssued(K, M, exp, 0, _payees(), address(0), K_SALT);
        _key(K_SALT, 0);
        assertTrue(asm.getSessionKey(K).hasAllowList);
        assertTrue(asm.isDestinationAllowed(K, dest));
        assertTrue(asm.isDestinationAllowed(K, dest2));
        assertFalse(asm.isDestinationAllowed(K, stranger));
    }

    function test_issueSessionKey_success_ceilingEqualToMandate() public {
        _key(K_SALT, 100e6);
        assertEq(uint256(asm.getSessionKey(K).maxAmount), 100e6);
    }

    function test_issueSessionKey_revert_keyExists() public {
        _key(K_SALT, 0);
        vm.expectRevert(abi.encodeWithSelector(I.KeyAlreadyExists.selector, K));
        _key(K_SALT, 0);
    }

    function test_issueSessionKey_revert_unknownMandate() public {
        vm.expectRevert(abi.encodeWithSelector(I.UnknownMandate.selector, bytes32("x")));
        asm.issueSessionKey(_keyTerms(bytes32("x"), K_SALT, 0, new address[](0), address(0)), _payees());
    }

    function test_issueSessionKey_revert_canceledMandate() public {
        asm.cancelMandate(M);
        vm.expectRevert(abi.encodeWithSelector(I.MandateNotActive.selector, M));
        _key(K_SALT, 0);
    }

    function test_issueSessionKey_revert_expiryNotInFuture() public {
        uint64 now_ = uint64(block.timestamp);
        I.KeyTerms memory t = _keyTerms(M, K_SALT, 0, new address[](0), address(0));
        t.expiresAt = now_;
        vm.expectRevert(abi.encodeWithSelector(I.ExpiryNotInFuture.selector, now_));
        asm.issueSessionKey(t, _payees());
    }

    function test_issueSessionKey_revert_ceilingAboveMandate() public {
        vm.expectRevert(abi.encodeWithSelector(I.KeyCeilingAboveMandate.selector, 100e6 + 1, 100e6));
        _key(K_SALT, 100e6 + 1);
    }

    function test_issueSessionKey_revert_zeroDestination() public {
        vm.expectRevert(abi.encodeWithSelector(I.PayeeNotSigned.selector, address(0)));
        _keyTo(K_SALT, 0, address(0));
    }

    function test_issueSessionKey_revert_stranger() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, stranger));
        _key(K_SALT, 0);
    }

    /// The owner is not the operator: it issues nothing.
    function test_issueSessionKey_revert_owner() public {
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, owner));
        _key(K_SALT, 0);
    }

    function testFuzz_issueSessionKey_success_ceilingCheckedAgainstMandate(uint256 ceiling) public {
        ceiling = bound(ceiling, 0, 200e6);
        if (ceiling > 100e6) {
            vm.expectRevert(abi.encodeWithSelector(I.KeyCeilingAboveMandate.selector, ceiling, 100e6));
        }
        _key(K_SALT, ceiling);
    }

    /// The event carries the expiry as stored (clamped to 40 bits), not as asked.
    function test_issueSessionKey_success_emitsTheStoredExpiry() public {
        uint64 stored = uint64(type(uint40).max);
        I.KeyTerms memory t = _keyTerms(M, K_SALT, 0, new address[](0), address(0));
        t.expiresAt = type(uint64).max;
        vm.expectEmit(address(asm));
        emit I.SessionKeyIssued(K, M, stored, 0, _payees(), address(0), K_SALT);
        asm.issueSessionKey(t, _payees());
        assertEq(uint256(asm.getSessionKey(K).expiresAt), stored);
    }

    function test_issueSessionKey_success_withSignerByThePayer() public {
        vm.prank(payer);
        _signerKey(K_SALT, agent);
        assertEq(asm.getSessionKey(K).signer, agent);
    }

    function test_issueSessionKey_revert_contractOnTheAllowList() public {
        vm.expectRevert(abi.encodeWithSelector(I.PayeeNotSigned.selector, address(asm)));
        _keyTo(K_SALT, 0, address(asm));
    }

    // ------------------------------------------------------------ payees and agent

    /// A destination the payer did not sign is refused, whoever issues the key.
    function testFuzz_issueSessionKey_revert_payeeNotSigned(address to, bool byPayer) public {
        vm.assume(to != dest && to != dest2);
        address[] memory list = new address[](2);
        list[0] = dest;
        list[1] = to;
        if (byPayer) vm.prank(payer);
        vm.expectRevert(abi.encodeWithSelector(I.PayeeNotSigned.selector, to));
        asm.issueSessionKey(_keyTerms(M, K_SALT, 0, list, address(0)), _payees());
    }

    /// The payees passed must be exactly the list the payer signed (order included).
    function test_issueSessionKey_revert_payeesMismatch() public {
        bytes memory err = abi.encodeWithSelector(I.PayeesMismatch.selector, M);
        I.KeyTerms memory t = _keyTerms(M, K_SALT, 0, _one(stranger), address(0));
        // The operator claims the payer signed [stranger].
        vm.expectRevert(err);
        asm.issueSessionKey(t, _one(stranger));
        // Or [dest, dest2, stranger], or nothing, or the signed payees reordered.
        address[] memory more = new address[](3);
        (more[0], more[1], more[2]) = (dest, dest2, stranger);
        vm.expectRevert(err);
        asm.issueSessionKey(t, more);
        t.allowedDestinations = new address[](0);
        vm.expectRevert(err);
        asm.issueSessionKey(t, new address[](0));
        address[] memory swapped = new address[](2);
        (swapped[0], swapped[1]) = (dest2, dest);
        vm.expectRevert(err);
        asm.issueSessionKey(t, swapped);
    }

    /// On a mandate naming an agent, every key's signer is that agent.
    function test_issueSessionKey_revert_signerNotAgent() public {
        I.MandateTerms memory mt = _terms(keccak256("agent mandate"), payer, 100e6, I.Interval.Daily);
        mt.agent = agent;
        vm.prank(payer);
        bytes32 am = asm.createMandate(mt);
        vm.expectRevert(abi.encodeWithSelector(I.SignerNotAgent.selector, agent, address(0)));
        asm.issueSessionKey(_keyTerms(am, K_SALT, 0, new address[](0), address(0)), _payees());
        vm.expectRevert(abi.encodeWithSelector(I.SignerNotAgent.selector, agent, stranger));
        asm.issueSessionKey(_keyTerms(am, K_SALT, 0, new address[](0), stranger), _payees());
        // Not even the payer may issue one with another signer.
        vm.prank(payer);
        vm.expectRevert(abi.encodeWithSelector(I.SignerNotAgent.selector, agent, address(0)));
        asm.issueSessionKey(_keyTerms(am, K_SALT, 0, new address[](0), address(0)), _payees());
        bytes32 id = asm.issueSessionKey(_keyTerms(am, K_SALT, 0, new address[](0), agent), _payees());
        assertEq(asm.getSessionKey(id).signer, agent);
    }

    /// The treasury's (deferred) mandates may name no payees: their keys may have no list.
    function test_issueSessionKey_success_treasuryMandateWithoutPayees() public {
        I.MandateTerms memory mt = _terms(M_SALT, treasury, 100e6, I.Interval.Daily);
        mt.payees = new address[](0);
        bytes32 tm = asm.createMandate(mt);
        bytes32 id =
            asm.issueSessionKey(_keyTerms(tm, K_SALT, 0, new address[](0), address(0)), new address[](0));
        assertFalse(asm.getSessionKey(id).hasAllowList);
        assertTrue(asm.isDestinationAllowed(id, stranger));
    }

    /// On a mandate requiring an agent credential, a key needs a signer that holds one, and
    /// the payer must still hold its own.
    function test_issueSessionKey_identity() public {
        _attest(payer, PERSONHOOD, keccak256("p"), 0, false, 1);
        vm.prank(payer);
        bytes32 n = asm.createMandate(_identityTerms(keccak256("n"), payer, PERSONHOOD, AGENT));
        vm.expectRevert(I.SignerRequired.selector);
        asm.issueSessionKey(_keyTerms(n, K_SALT, 0, new address[](0), address(0)), _payees());
        vm.expectRevert(abi.encodeWithSelector(I.IdentityRequirementUnmet.selector, agent, AGENT));
        asm.issueSessionKey(_keyTerms(n, K_SALT, 0, new address[](0), agent), _payees());
        _attest(agent, AGENT, keccak256("a"), 0, false, 1);
        _attest(payer, PERSONHOOD, keccak256("p"), 0, true, 2);
        vm.expectRevert(abi.encodeWithSelector(I.IdentityRequirementUnmet.selector, payer, PERSONHOOD));
        asm.issueSessionKey(_keyTerms(n, K_SALT, 0, new address[](0), agent), _payees());
        _attest(payer, PERSONHOOD, keccak256("p2"), 0, false, 3);
        bytes32 id = asm.issueSessionKey(_keyTerms(n, K_SALT, 0, new address[](0), agent), _payees());
        assertEq(asm.getSessionKey(id).signer, agent);
    }
}
