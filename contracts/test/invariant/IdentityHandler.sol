// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Test} from "../utils/Test.sol";
import {Vm} from "../utils/Vm.sol";
import {AllowanceStateMachine} from "../../src/AllowanceStateMachine.sol";
import {AttestationMirror} from "../../src/AttestationMirror.sol";
import {TestStablecoin} from "../../src/TestStablecoin.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {IAttestationMirror as M} from "../../src/interfaces/IAttestationMirror.sol";
import {PullCodec} from "../utils/PullCodec.sol";

/// @dev Drives a state machine whose mandates require identity against the mirror it is
///      built with: random receipts (attest, revoke, re-attest under a new uid; expiring or
///      not), trust changes of the attester, time warps, and pulls (single and batched, on a
///      mandate requiring the payer's personhood and on one requiring it and the signer's
///      agent credential). It asks the mirror before each pull and counts what the
///      invariants forbid: a pull that moved tokens while a required attestation was not
///      valid, and a pull refused for identity while every requirement held.
contract IdentityHandler is Test {
    AllowanceStateMachine public asm;
    AttestationMirror public mirror;
    TestStablecoin public usd;
    address public constant OWNER = address(0x0e0e);
    uint256 internal constant ATTESTER_KEY = 0xA77E57;
    uint256 internal constant AGENT_KEY = 0xA6E47;
    address public attester = vm.addr(ATTESTER_KEY);
    address public agent = vm.addr(AGENT_KEY);
    address public payer = address(0xBEEF);
    address public dest = address(0xD0D0);
    bytes32 public constant PERSONHOOD = keccak256("personhood");
    bytes32 public constant AGENT = keccak256("agent");

    bytes32 public plainKey; // mandate requiring the payer's personhood; no signer
    bytes32 public agentKey; // mandate requiring personhood and the signer's agent credential

    uint64 internal _sequence;
    uint256 internal _uids;
    uint256 internal _nonce;

    uint256 public movedWithoutIdentity;
    uint256 public refusedWithIdentity;
    uint256 public pulled;
    uint256 public paidOut;
    uint256 public declinedForIdentity;

    constructor() {
        vm.warp(1_795_435_200);
        usd = new TestStablecoin("Test USD", "tUSD", address(this));
        mirror = new AttestationMirror(OWNER);
        vm.prank(OWNER);
        mirror.addAttester(attester);
        asm = new AllowanceStateMachine(OWNER, address(this), address(0x7EA5), mirror);
        usd.mint(payer, 1e15);
        vm.prank(payer);
        usd.approve(address(asm), type(uint256).max);
        _record(payer, PERSONHOOD, false, 0);
        _record(agent, AGENT, false, 0);
        address[] memory payees = new address[](1);
        payees[0] = dest;
        vm.startPrank(payer);
        bytes32 m1 = asm.createMandate(_terms(keccak256("m1"), payees, 0));
        bytes32 m2 = asm.createMandate(_terms(keccak256("m2"), payees, AGENT));
        vm.stopPrank();
        uint64 forever = uint64(block.timestamp + 3650 days);
        plainKey =
            asm.issueSessionKey(I.KeyTerms(keccak256("k1"), m1, forever, 0, payees, address(0)), payees);
        agentKey = asm.issueSessionKey(I.KeyTerms(keccak256("k2"), m2, forever, 0, payees, agent), payees);
    }

    function _terms(bytes32 salt, address[] memory payees, bytes32 agentSchema)
        internal
        view
        returns (I.MandateTerms memory)
    {
        return I.MandateTerms(
            salt,
            payer,
            address(usd),
            type(uint64).max,
            I.Interval.Daily,
            payees,
            address(0),
            keccak256("invariants"),
            I.Requirements(attester, PERSONHOOD, agentSchema)
        );
    }

    function _record(address who, bytes32 schema, bool revoked, uint64 expires) internal {
        M.Slot memory s = mirror.slotOf(attester, who, schema);
        // A revocation revokes what the slot holds; an attestation is a new uid.
        bytes32 uid = revoked && s.uid != 0 ? s.uid : keccak256(abi.encode(++_uids));
        M.Receipt memory r = M.Receipt(attester, who, schema, uid, expires, revoked, ++_sequence);
        (uint8 v, bytes32 rr, bytes32 ss) = vm.sign(ATTESTER_KEY, mirror.hashReceipt(r));
        mirror.record(r, abi.encodePacked(rr, ss, v));
    }

    /// @dev A receipt about the payer's personhood or the agent's credential: revoked, or a
    ///      new attestation expiring within a week or never.
    function receipt(bool aboutAgent, bool revoked, uint256 ttl) external {
        ttl = bound(ttl, 0, 7 days);
        uint64 expires = ttl == 0 ? 0 : uint64(block.timestamp + ttl);
        if (aboutAgent) _record(agent, AGENT, revoked, expires);
        else _record(payer, PERSONHOOD, revoked, expires);
    }

    function toggleTrust() external {
        vm.prank(OWNER);
        if (mirror.isTrusted(attester)) mirror.removeAttester(attester);
        else mirror.addAttester(attester);
    }

    function warp(uint256 by) external {
        vm.warp(block.timestamp + bound(by, 1, 3 days));
    }

    function _holds(bool withAgent) internal view returns (bool) {
        return
            mirror.isValid(attester, payer, PERSONHOOD)
                && (!withAgent || mirror.isValid(attester, agent, AGENT));
    }

    function _judge(bool holds, bool moved, bytes memory reason) internal {
        if (moved) {
            ++pulled;
            if (!holds) ++movedWithoutIdentity;
        } else if (reason.length >= 4 && bytes4(reason) == I.IdentityRequirementUnmet.selector) {
            ++declinedForIdentity;
            if (holds) ++refusedWithIdentity;
        }
    }

    /// @dev A single pull on the plain key.
    function pull(uint256 amount) external {
        amount = bound(amount, 1, 1e9);
        bool holds = _holds(false);
        uint256 before = usd.balanceOf(dest);
        try asm.pull(plainKey, dest, amount) {
            paidOut += amount;
            _judge(holds, usd.balanceOf(dest) > before, "");
        } catch (bytes memory reason) {
            _judge(holds, false, reason);
        }
    }

    /// @dev A batch of one signed item on the agent's key, and one unsigned on the plain key.
    function pullBatch(uint256 amount) external {
        amount = bound(amount, 1, 1e9);
        bool holdsPlain = _holds(false);
        bool holdsAgent = _holds(true);
        uint256 nonce = ++_nonce;
        uint256 deadline = block.timestamp + 1 hours;
        bytes memory sig = _sign(agentKey, amount, nonce, deadline);
        bytes memory items = bytes.concat(
            PullCodec.signed(agentKey, dest, amount, nonce, deadline, sig),
            PullCodec.unsigned(plainKey, dest, amount)
        );
        vm.recordLogs();
        asm.pullBatch(items);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 i; i < logs.length; ++i) {
            bytes32 topic = logs[i].topics[0];
            if (topic == I.DebitPulled.selector) {
                bytes32 key = logs[i].topics[1];
                paidOut += amount;
                _judge(key == agentKey ? holdsAgent : holdsPlain, true, "");
            } else if (topic == I.DebitPullDeclined.selector) {
                bytes32 key = logs[i].topics[1];
                bytes memory reason = abi.decode(logs[i].data, (bytes));
                _judge(key == agentKey ? holdsAgent : holdsPlain, false, reason);
            }
        }
    }

    function _sign(bytes32 key, uint256 amount, uint256 nonce, uint256 deadline)
        internal
        view
        returns (bytes memory)
    {
        bytes32 structHash = keccak256(
            abi.encode(
                keccak256(
                    "DebitPull(bytes32 keyId,address destination,uint256 amount,uint256 nonce,uint256 deadline)"
                ),
                key,
                dest,
                amount,
                nonce,
                deadline
            )
        );
        bytes32 domain = keccak256(
            abi.encode(
                keccak256(
                    "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"
                ),
                keccak256("Openrail"),
                keccak256("1"),
                block.chainid,
                address(asm)
            )
        );
        (uint8 v, bytes32 r, bytes32 s) =
            vm.sign(AGENT_KEY, keccak256(abi.encodePacked("\x19\x01", domain, structHash)));
        return abi.encodePacked(r, s, v);
    }
}
