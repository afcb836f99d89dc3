// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Signing} from "../utils/Signing.sol";
import {AllowanceStateMachine} from "../../src/AllowanceStateMachine.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {TestStablecoin} from "../../src/TestStablecoin.sol";

/// @dev An adversarial operator and owner next to honest payers and agents. The handler is
///      the state machine's owner and operator and calls every owner and operator function
///      with fuzzed arguments (forged, replayed and mutated signatures included); the honest
///      parties sign daily mandates, one-time payments and, for keys with a signer, pulls.
///      After every step it attributes each honest payer's balance change to that step and
///      records a violation when a payer lost anything it did not sign for: a payment not
///      signed (or signed and taken twice, or for another amount), pulls beyond the sum of the
///      daily ceilings it signed, or any pull on a key whose signer is an honest agent without
///      that agent's signature. What is allowed is derived from what the honest parties
///      signed, never from the contract's state.
contract AdversaryHandler is Signing {
    TestStablecoin public usd;
    AllowanceStateMachine public asm;
    address public treasury = address(0x7ea5);
    uint256 internal constant ADVERSARY_KEY = 0xBAD;
    uint256 internal constant DEADLINE = 4_000_000_000;

    uint256[3] internal payerKeys = [uint256(0x1001), 0x1002, 0x1003];
    address[3] public payers;
    uint256[2] internal agentKeys = [uint256(0x2001), 0x2002];
    address[2] public agents;
    address[3] public dests;

    struct SignedPayment {
        uint256 payer;
        address to;
        uint256 amount;
        uint256 nonce;
        bytes sig;
        bool taken;
    }

    bytes32[] public mandateIds;
    mapping(bytes32 => uint256) public payerOf; // mandate => payer index + 1 (honest, signed)
    bytes32[] public keyIds;
    mapping(bytes32 => uint256) public agentOf; // key => agent index + 1 (honest signer)
    SignedPayment[] internal payments;
    mapping(uint256 => uint256) public signedCap; // payer => sum of signed daily ceilings
    mapping(uint256 => mapping(uint256 => uint256)) public pulledOnDay; // payer => day => pulled
    uint256 internal nonceCounter;

    bool public violated;
    string public violation;
    uint256 public initialSupply;
    uint256 public calls;

    enum Kind {
        Other, // nothing may leave a payer
        Pull, // may take within the payer's signed daily ceilings
        AgentKeyPull, // a pull on an honest agent's key without that agent: nothing may leave
        HonestAgentPull, // the agent signed: within the ceilings
        SignedPayment // only the signed payment, exactly, once
    }

    constructor() {
        vm.warp(1_795_435_200); // Monday 2026-11-23 12:00Z
        usd = new TestStablecoin("Test USD", "tUSD", address(this));
        asm = new AllowanceStateMachine(address(this), address(this), treasury);
        for (uint256 i; i < 3; ++i) {
            payers[i] = vm.addr(payerKeys[i]);
            dests[i] = address(uint160(0xD000 + i));
            usd.mint(payers[i], 1_000e6);
            vm.prank(payers[i]);
            usd.approve(address(asm), type(uint256).max);
        }
        for (uint256 i; i < 2; ++i) {
            agents[i] = vm.addr(agentKeys[i]);
        }
        usd.mint(treasury, 1_000e6);
        vm.prank(treasury);
        usd.approve(address(asm), type(uint256).max);
        initialSupply = usd.totalSupply();
    }

    // ------------------------------------------------------------------ attribution

    uint256[3] internal before;

    function _snapshot() internal {
        for (uint256 i; i < 3; ++i) {
            before[i] = usd.balanceOf(payers[i]);
        }
    }

    function _fail(string memory why) internal {
        if (!violated) {
            violated = true;
            violation = why;
        }
    }

    /// @dev Checks each payer's decrease since `_snapshot` against what `kind` allows.
    function _attribute(Kind kind, uint256 paymentIndex) internal {
        ++calls;
        uint256 day = block.timestamp / 1 days;
        for (uint256 i; i < 3; ++i) {
            uint256 now_ = usd.balanceOf(payers[i]);
            if (now_ >= before[i]) continue;
            uint256 lost = before[i] - now_;
            if (kind == Kind.Pull || kind == Kind.HonestAgentPull) {
                pulledOnDay[i][day] += lost;
                if (pulledOnDay[i][day] > signedCap[i]) _fail("pulled beyond the ceilings the payer signed");
            } else if (kind == Kind.SignedPayment) {
                SignedPayment storage p = payments[paymentIndex];
                if (p.payer != i || p.taken || lost != p.amount) _fail("a payment the payer did not sign");
                p.taken = true;
            } else if (kind == Kind.AgentKeyPull) {
                _fail("pulled on an agent's key without the agent");
            } else {
                _fail("money left a payer without its signature");
            }
        }
    }

    function _anyAddress(uint256 seed) internal view returns (address) {
        uint256 c = seed % 8;
        if (c < 3) return payers[c];
        if (c < 6) return dests[c - 3];
        if (c == 6) return treasury;
        return address(uint160(uint256(keccak256(abi.encode(seed)))));
    }

    function _mandate(uint256 seed) internal view returns (bytes32) {
        if (mandateIds.length == 0 || seed % 5 == 0) return keccak256(abi.encode("any mandate", seed % 3));
        return mandateIds[seed % mandateIds.length];
    }

    function _key(uint256 seed) internal view returns (bytes32) {
        if (keyIds.length == 0 || seed % 7 == 0) return keccak256(abi.encode("any key", seed % 3));
        return keyIds[seed % keyIds.length];
    }

    // ------------------------------------------------------------------ honest parties

    /// A payer signs a daily mandate; the operator submits it.
    function honestMandate(uint256 pSeed, uint256 max) external {
        uint256 p = pSeed % 3;
        max = bound(max, 1, 200e6);
        bytes32 id = keccak256(abi.encode("mandate", mandateIds.length, pSeed));
        uint256 nonce = ++nonceCounter;
        bytes memory sig = _sign(
            payerKeys[p], _mandateDigest(address(asm), id, payers[p], address(usd), max, 0, nonce, DEADLINE)
        );
        _snapshot();
        try asm.createMandateWithSignature(
            id, payers[p], address(usd), max, I.Interval.Daily, nonce, DEADLINE, sig
        ) {
            mandateIds.push(id);
            payerOf[id] = p + 1;
            signedCap[p] += max;
        } catch {}
        _attribute(Kind.Other, 0);
    }

    /// A payer signs a one-time payment (not submitted: the operator may submit it, once).
    function honestSignPayment(uint256 pSeed, uint256 toSeed, uint256 amount) external {
        uint256 p = pSeed % 3;
        address to = dests[toSeed % 3];
        amount = bound(amount, 1, 50e6);
        uint256 nonce = ++nonceCounter;
        bytes memory sig = _sign(
            payerKeys[p], _paymentDigest(address(asm), address(usd), payers[p], to, amount, nonce, DEADLINE)
        );
        payments.push(SignedPayment(p, to, amount, nonce, sig, false));
    }

    /// The operator issues a key whose signer is an honest agent.
    function honestAgentKey(uint256 mSeed, uint256 aSeed) external {
        if (mandateIds.length == 0) return;
        bytes32 id = keccak256(abi.encode("agent key", keyIds.length, mSeed));
        uint256 a = aSeed % 2;
        _snapshot();
        try asm.issueSessionKey(
            id,
            mandateIds[mSeed % mandateIds.length],
            uint64(block.timestamp + 30 days),
            0,
            new address[](0),
            agents[a]
        ) {
            keyIds.push(id);
            agentOf[id] = a + 1;
        } catch {}
        _attribute(Kind.Other, 0);
    }

    /// An agent signs a pull on its key; the operator submits it.
    function honestAgentPull(uint256 kSeed, uint256 toSeed, uint256 amount) external {
        if (keyIds.length == 0) return;
        bytes32 key = keyIds[kSeed % keyIds.length];
        uint256 a = agentOf[key];
        if (a == 0) return;
        amount = bound(amount, 1, 60e6);
        address to = dests[toSeed % 3];
        uint256 nonce = ++nonceCounter;
        bytes memory sig =
            _sign(agentKeys[a - 1], _pullDigest(address(asm), key, to, amount, nonce, DEADLINE));
        I.PullItem[] memory items = new I.PullItem[](1);
        items[0] = I.PullItem(key, to, amount, nonce, DEADLINE, sig);
        _snapshot();
        try asm.pullBatch(items) {} catch {}
        _attribute(Kind.HonestAgentPull, 0);
    }

    // ------------------------------------------------------------------ the adversary

    function advSettle(uint256 toSeed, uint256 amount) external {
        _snapshot();
        try asm.settle(bytes32(0), address(usd), _anyAddress(toSeed), bound(amount, 1, 2_000e6)) {} catch {}
        _attribute(Kind.Other, 0);
    }

    /// Submits a payer's signed payment as signed (allowed once), or mutated, or forged.
    function advSettleWithSignature(uint256 iSeed, uint256 mode, uint256 x) external {
        if (payments.length == 0) return;
        uint256 i = iSeed % payments.length;
        SignedPayment memory p = payments[i];
        address from = payers[p.payer];
        mode %= 5;
        _snapshot();
        if (mode == 0) {
            try asm.settleWithSignature(
                bytes32(0), address(usd), from, p.to, p.amount, p.nonce, DEADLINE, p.sig
            ) {}
                catch {}
            _attribute(Kind.SignedPayment, i);
            return;
        }
        uint256 amount = mode == 1 ? bound(x, 1, 1_000e6) : p.amount;
        address to = mode == 2 ? _anyAddress(x) : p.to;
        bytes memory sig = mode == 3
            ? _sign(
                ADVERSARY_KEY, _paymentDigest(address(asm), address(usd), from, to, amount, p.nonce, DEADLINE)
            )
            : p.sig;
        uint256 nonce = mode == 4 ? x : p.nonce;
        if (amount == p.amount && to == p.to && nonce == p.nonce && mode != 3) amount += 1;
        try asm.settleWithSignature(bytes32(0), address(usd), from, to, amount, nonce, DEADLINE, sig) {}
            catch {}
        _attribute(Kind.Other, 0);
    }

    function advCreateMandate(uint256 pSeed, uint256 max, uint8 interval) external {
        _snapshot();
        try asm.createMandate(
            keccak256(abi.encode("adv mandate", pSeed)),
            _anyAddress(pSeed),
            address(usd),
            bound(max, 1, type(uint64).max),
            I.Interval(bound(interval, 0, 3))
        ) {
            mandateIds.push(keccak256(abi.encode("adv mandate", pSeed)));
        } catch {}
        _attribute(Kind.Other, 0);
    }

    /// A mandate "signed" by the adversary's key, or an honest signature with other terms.
    function advCreateMandateWithSignature(uint256 pSeed, uint256 max, uint256 mode) external {
        uint256 p = pSeed % 3;
        max = bound(max, 1, type(uint64).max);
        bytes32 id = keccak256(abi.encode("adv signed mandate", pSeed, max));
        uint256 nonce = ++nonceCounter;
        uint256 signedMax = mode % 2 == 0 ? max : (max > 1 ? max - 1 : 2);
        uint256 key = mode % 2 == 0 ? ADVERSARY_KEY : payerKeys[p];
        // With the payer's key, the payer signed other terms than those submitted.
        bytes memory sig = _sign(
            key, _mandateDigest(address(asm), id, payers[p], address(usd), signedMax, 0, nonce, DEADLINE)
        );
        _snapshot();
        try asm.createMandateWithSignature(
            id, payers[p], address(usd), max, I.Interval.Daily, nonce, DEADLINE, sig
        ) {
            mandateIds.push(id);
        } catch {}
        _attribute(Kind.Other, 0);
    }

    function advIssueKey(uint256 mSeed, uint256 signerSeed, uint256 ceiling, uint256 destSeed) external {
        bytes32 id = keccak256(abi.encode("adv key", keyIds.length, mSeed));
        address signer =
            signerSeed % 3 == 0 ? address(0) : signerSeed % 3 == 1 ? vm.addr(ADVERSARY_KEY) : agents[0];
        address[] memory list;
        if (destSeed % 2 == 0) {
            list = new address[](1);
            list[0] = _anyAddress(destSeed);
        }
        _snapshot();
        try asm.issueSessionKey(
            id, _mandate(mSeed), uint64(block.timestamp + 30 days), ceiling, list, signer
        ) {
            keyIds.push(id);
            if (signer == agents[0]) agentOf[id] = 1;
        } catch {}
        _attribute(Kind.Other, 0);
    }

    function advPull(uint256 kSeed, uint256 toSeed, uint256 amount) external {
        bytes32 key = _key(kSeed);
        _snapshot();
        try asm.pull(key, _anyAddress(toSeed), bound(amount, 1, 1_000e6)) {} catch {}
        _attribute(agentOf[key] != 0 ? Kind.AgentKeyPull : Kind.Pull, 0);
    }

    /// Items on one key: unsigned, signed by the adversary, or an agent's signature bent to
    /// other terms.
    function advPullBatch(uint256 kSeed, uint256 n, uint256 seed, uint256 mode) external {
        bytes32 key = _key(kSeed);
        n = bound(n, 1, 5);
        mode %= 3;
        I.PullItem[] memory items = new I.PullItem[](n);
        for (uint256 i; i < n; ++i) {
            uint256 s = uint256(keccak256(abi.encode(seed, i)));
            address to = _anyAddress(s);
            uint256 amount = bound(s >> 64, 1, 300e6);
            uint256 nonce = s >> 128;
            bytes memory sig;
            if (mode == 1) {
                sig = _sign(ADVERSARY_KEY, _pullDigest(address(asm), key, to, amount, nonce, DEADLINE));
            } else if (mode == 2) {
                // The agent signed half the amount; the adversary submits the whole.
                sig = _sign(agentKeys[0], _pullDigest(address(asm), key, to, amount / 2 + 1, nonce, DEADLINE));
                if (amount / 2 + 1 == amount) amount += 1;
            }
            items[i] = I.PullItem(key, to, amount, nonce, DEADLINE, sig);
        }
        _snapshot();
        try asm.pullBatch(items) {} catch {}
        _attribute(agentOf[key] != 0 ? Kind.AgentKeyPull : Kind.Pull, 0);
    }

    function advCancel(uint256 mSeed) external {
        _snapshot();
        try asm.cancelMandate(_mandate(mSeed)) {} catch {}
        _attribute(Kind.Other, 0);
    }

    function advRevoke(uint256 kSeed) external {
        _snapshot();
        try asm.revokeSessionKey(_key(kSeed)) {} catch {}
        _attribute(Kind.Other, 0);
    }

    function advPause(bool on) external {
        _snapshot();
        if (on) asm.pause();
        else asm.unpause();
        _attribute(Kind.Other, 0);
    }

    /// Names anyone the treasury (a payer, say); only the named one could accept.
    function advSetTreasury(uint256 seed) external {
        _snapshot();
        try asm.setTreasury(_anyAddress(seed)) {} catch {}
        _attribute(Kind.Other, 0);
    }

    /// Hands the operator role to another address and, most of the time, back.
    function advSetOperator(uint256 seed) external {
        _snapshot();
        asm.setOperator(seed % 4 == 0 ? _anyAddress(seed) : address(this));
        _attribute(Kind.Other, 0);
    }

    function advInvalidateNonce(uint256 nonce) external {
        _snapshot();
        asm.invalidateNonce(nonce);
        _attribute(Kind.Other, 0);
    }

    function warp(uint256 seed) external {
        vm.warp(block.timestamp + bound(seed, 1 hours, 3 days));
    }

    function payerBalancesSum() external view returns (uint256 sum) {
        for (uint256 i; i < 3; ++i) {
            sum += usd.balanceOf(payers[i]) + usd.balanceOf(dests[i]);
        }
    }
}
