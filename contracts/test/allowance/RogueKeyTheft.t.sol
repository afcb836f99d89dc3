// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {PullCodec} from "../utils/PullCodec.sol";

/// The audit's theft, now failing. A payer signed 100 a day to [merchant]. A stolen operator
/// key — or the owner, after proposing itself a new operator and waiting out the delay —
/// issues a fresh key with no signer and no allow-list, or with its own address on the list,
/// and pulls to itself: the issuance is refused, or the key gets the signed payees and the
/// pull to the thief is declined. Over two days the thief gets nothing. With an agent named,
/// no key without that agent as signer can be issued at all.
contract RogueKeyTheftTest is AllowanceBase {
    uint256 internal constant DEADLINE = 2_000_000_000;
    address internal merchant = dest;
    address internal thief = makeAddr("thief");

    /// @dev The payer signs 100/day to [merchant] (naming `agent_` when not zero); the
    ///      operator submits it.
    function _signedMandate(address agent_) internal returns (bytes32 id) {
        I.MandateTerms memory t = _terms(M_SALT, payer, 100e6, I.Interval.Daily);
        t.payees = _one(merchant);
        t.agent = agent_;
        id = asm.createMandateWithSignature(
            t, 1, DEADLINE, _sign(PAYER_KEY, _mandateDigest(address(asm), t, 1, DEADLINE))
        );
    }

    function _rogue(bytes32 salt, address[] memory list, address signer)
        internal
        view
        returns (I.KeyTerms memory)
    {
        return I.KeyTerms(salt, M, uint64(block.timestamp + 30 days), 0, list, signer);
    }

    /// @dev Everything `op` tries, on two consecutive days; returns what the thief got.
    function _attempt(address op) internal returns (uint256) {
        uint256 before = usd.balanceOf(thief);
        vm.startPrank(op);
        // Its own address on the list, with the payees the payer signed.
        vm.expectRevert(abi.encodeWithSelector(I.PayeeNotSigned.selector, thief));
        asm.issueSessionKey(_rogue("own", _one(thief), address(0)), _one(merchant));
        // Its own address as the "signed" payees.
        vm.expectRevert(abi.encodeWithSelector(I.PayeesMismatch.selector, M));
        asm.issueSessionKey(_rogue("own", _one(thief), address(0)), _one(thief));
        // No list and no payees at all.
        vm.expectRevert(abi.encodeWithSelector(I.PayeesMismatch.selector, M));
        asm.issueSessionKey(_rogue("bare", new address[](0), address(0)), new address[](0));
        // No signer, no list: the key gets the signed payees, and the pull to the thief is declined.
        bytes32 key = asm.issueSessionKey(
            _rogue(keccak256(abi.encode(op)), new address[](0), address(0)), _one(merchant)
        );
        assertTrue(asm.isDestinationAllowed(key, merchant));
        assertFalse(asm.isDestinationAllowed(key, thief));
        for (uint256 day; day < 2; ++day) {
            vm.expectRevert(abi.encodeWithSelector(I.DestinationNotAllowed.selector, key, thief));
            asm.pull(key, thief, 100e6);
            bytes memory items = _item(key, thief, 100e6);
            vm.expectEmit(address(asm));
            emit I.DebitPullDeclined(
                key, 0, abi.encodeWithSelector(I.DestinationNotAllowed.selector, key, thief)
            );
            assertEq(asm.pullBatch(items), 0);
            vm.warp(block.timestamp + 1 days);
        }
        vm.stopPrank();
        return usd.balanceOf(thief) - before;
    }

    function test_rogueKey_revert_stolenOperatorKeyGetsNothing() public {
        _signedMandate(address(0));
        assertEq(_attempt(address(this)), 0);
        assertEq(usd.balanceOf(payer), 1_000_000e6);
    }

    /// The owner cannot be the operator; it makes the thief the operator, in the open, and
    /// two days later the thief still gets nothing.
    function test_rogueKey_revert_ownerSwapsTheOperatorAndGetsNothing() public {
        _signedMandate(address(0));
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(R.OwnerIsOperator.selector));
        asm.proposeOperator(owner);
        vm.expectEmit(address(asm));
        emit R.OperatorProposed(address(this), thief, uint64(block.timestamp + 2 days));
        vm.prank(owner);
        asm.proposeOperator(thief);
        vm.expectRevert(
            abi.encodeWithSelector(R.OperatorChangeNotDue.selector, uint64(block.timestamp + 2 days))
        );
        asm.activateOperator();
        vm.warp(block.timestamp + 2 days);
        asm.activateOperator();
        assertEq(asm.operator(), thief);
        assertEq(_attempt(thief), 0);
        assertEq(usd.balanceOf(payer), 1_000_000e6);
    }

    /// What the payer signed still works: the merchant is paid, within the ceiling.
    function test_rogueKey_success_merchantStillPaid() public {
        _signedMandate(address(0));
        bytes32 key = asm.issueSessionKey(_rogue(K_SALT, new address[](0), address(0)), _one(merchant));
        asm.pull(key, merchant, 100e6);
        vm.expectRevert(
            abi.encodeWithSelector(I.MandateCeilingExceeded.selector, M, 0, uint64(MONDAY + 1 days))
        );
        asm.pull(key, merchant, 1);
        assertEq(usd.balanceOf(merchant), 100e6 + 1);
    }

    /// With an agent named, a key with no signer or another signer (the thief) is refused,
    /// and the agent's key pulls nothing without the agent's signature.
    function test_rogueKey_revert_agentNamed() public {
        _signedMandate(agent);
        vm.expectRevert(abi.encodeWithSelector(I.SignerNotAgent.selector, agent, address(0)));
        asm.issueSessionKey(_rogue("none", new address[](0), address(0)), _one(merchant));
        vm.expectRevert(abi.encodeWithSelector(I.SignerNotAgent.selector, agent, thief));
        asm.issueSessionKey(_rogue("thief", new address[](0), thief), _one(merchant));
        vm.expectRevert(abi.encodeWithSelector(I.SignerNotAgent.selector, agent, address(this)));
        asm.issueSessionKey(_rogue("operator", new address[](0), address(this)), _one(merchant));
        bytes32 key = asm.issueSessionKey(_rogue("agent", new address[](0), agent), _one(merchant));
        vm.expectRevert(abi.encodeWithSelector(I.SignatureRequired.selector, key));
        asm.pull(key, merchant, 1e6);
        assertEq(asm.pullBatch(_signedItem(uint256(keccak256("thief")), key, merchant, 1e6, 1, DEADLINE)), 0);
        // Nor with the agent's signature on an unsigned item.
        assertEq(asm.pullBatch(_item(key, merchant, 1e6)), 0);
        assertEq(asm.pullBatch(_signedItem(AGENT_KEY, key, merchant, 1e6, 1, DEADLINE)), 1);
        assertEq(usd.balanceOf(merchant), 1e6 + 1);
    }

    /// Whatever list, signer and claimed payees a rogue key has, no pull pays outside [merchant].
    function testFuzz_rogueKey_revert_neverPaysOutsideTheSignedPayees(
        address to,
        address listed,
        address signer,
        bool claimThief
    ) public {
        vm.assume(to != merchant && to != address(0) && to != address(asm));
        _signedMandate(address(0));
        address[] memory list = listed == address(0) ? new address[](0) : _one(listed);
        try asm.issueSessionKey(
            _rogue("fuzz", list, signer), claimThief ? _one(to) : _one(merchant)
        ) returns (
            bytes32 key
        ) {
            assertEq(asm.pullBatch(_item(key, to, 1e6)), 0);
            assertEq(asm.pullBatch(PullCodec.signed(key, to, 1e6, 1, DEADLINE, "")), 0);
            vm.expectRevert();
            asm.pull(key, to, 1e6);
        } catch {}
        assertEq(usd.balanceOf(payer), 1_000_000e6);
    }
}
