// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Signing} from "../utils/Signing.sol";
import {Vm} from "../utils/Vm.sol";
import {AllowanceStateMachine} from "../../src/AllowanceStateMachine.sol";
import {IAttestationMirror} from "../../src/interfaces/IAttestationMirror.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {TestStablecoin} from "../../src/TestStablecoin.sol";
import {PullCodec} from "../utils/PullCodec.sol";

/// @dev An adversarial operator and owner next to honest payers and agents. The owner
///      (`owner`, a key of its own) pauses, names treasuries, proposes operators — the thief
///      among them — and, past the two-day delay, activates them; whoever is the operator
///      then calls every operator function with fuzzed arguments: rogue keys with any
///      destinations (its own address included), any signer (itself included), a false
///      payees list, pulls to anyone, forged, replayed and mutated signatures. The honest
///      payers sign daily mandates naming payees (and sometimes an agent) and one-time
///      payments; honest agents sign pulls on their keys.
///      After every step it reads the step's logs and each honest payer's balance and records
///      a violation when a payer lost anything it did not sign for. Every token `Transfer`
///      out of an honest payer must be either the signed payment the step submitted (exactly,
///      once) or the token move of a `DebitPulled` on a key of a mandate that payer signed —
///      to one of the payees it signed, within the daily ceiling it signed and, on a mandate
///      naming an agent or a key whose signer is an honest agent, only as that agent signed
///      the pull. And each payer's balance must change by exactly its transfers. What is
///      allowed is derived from what the honest parties signed, never from the contract's
///      state.
contract AdversaryHandler is Signing {
    TestStablecoin public usd;
    AllowanceStateMachine public asm;
    address public treasury = address(0x7ea5);
    address public owner = address(0x0A11);
    uint256 internal constant ADVERSARY_KEY = 0xBAD;
    address public thief;
    uint256 internal constant DEADLINE = 4_000_000_000;
    bytes32 internal constant TRANSFER = keccak256("Transfer(address,address,uint256)");

    uint256[3] internal payerKeys = [uint256(0x1001), 0x1002, 0x1003];
    address[3] public payers;
    uint256[2] internal agentKeys = [uint256(0x2001), 0x2002];
    address[2] public agents;
    /// @dev The first three are the payees honest payers sign; the others never are.
    address[6] public dests;
    /// @dev Whom the owner may make operator: this handler (the first), the thief, another.
    address[3] public operators;

    struct SignedPayment {
        uint256 payer;
        address to;
        uint256 amount;
        uint256 nonce;
        bytes sig;
        bool taken;
    }

    /// @dev A mandate as its payer signed it.
    struct SignedMandate {
        uint256 payer; // index + 1; 0 = not a mandate an honest payer signed
        uint256 max; // per day
        address[] payees;
        address agent;
    }

    bytes32[] public mandateIds;
    mapping(bytes32 mandateId => SignedMandate) internal signed;
    bytes32[] public keyIds;
    mapping(bytes32 keyId => bytes32) public keyMandate;
    mapping(bytes32 keyId => address) public keySigner;
    SignedPayment[] internal payments;
    mapping(bytes32 mandateId => mapping(uint256 day => uint256)) public pulledOnDay;
    uint256 internal nonceCounter;

    bool public violated;
    string public violation;
    uint256 public initialSupply;
    uint256 public calls;
    /// @dev Coverage: pulls paid from honest payers, rogue keys that issued, operator changes.
    uint256 public honestPulls;
    uint256 public rogueKeys;
    uint256 public operatorChanges;

    enum Kind {
        Other, // nothing may leave a payer
        Pull, // pulls on signed mandates, to signed payees, within signed ceilings; no agent keys
        HonestAgentPull, // as Pull, and the one pull the agent signed on its key
        SignedPayment // only the signed payment, exactly, once
    }

    constructor() {
        vm.warp(1_795_435_200); // Monday 2026-11-23 12:00Z
        thief = vm.addr(ADVERSARY_KEY);
        operators = [address(this), thief, address(0x0FE2)];
        usd = new TestStablecoin("Test USD", "tUSD", address(this));
        asm = new AllowanceStateMachine(owner, address(this), treasury, IAttestationMirror(address(0)));
        for (uint256 i; i < 3; ++i) {
            payers[i] = vm.addr(payerKeys[i]);
            usd.mint(payers[i], 1_000e6);
            vm.prank(payers[i]);
            usd.approve(address(asm), type(uint256).max);
        }
        for (uint256 i; i < 6; ++i) {
            dests[i] = address(uint160(0xD000 + i));
        }
        for (uint256 i; i < 2; ++i) {
            agents[i] = vm.addr(agentKeys[i]);
        }
        usd.mint(treasury, 1_000e6);
        vm.prank(treasury);
        usd.approve(address(asm), type(uint256).max);
        // The thief's own wallet approved too: a payer it could impersonate is not the point.
        initialSupply = usd.totalSupply();
    }

    // ------------------------------------------------------------------ attribution

    uint256[3] internal before;

    function _begin() internal {
        for (uint256 i; i < 3; ++i) {
            before[i] = usd.balanceOf(payers[i]);
        }
        vm.recordLogs();
    }

    function _fail(string memory why) internal {
        if (!violated) {
            violated = true;
            violation = why;
        }
    }

    function _payerIndex(address a) internal view returns (uint256) {
        for (uint256 i; i < 3; ++i) {
            if (payers[i] == a) return i + 1;
        }
        return 0;
    }

    function _isSignedPayee(bytes32 m, address to) internal view returns (bool) {
        address[] storage list = signed[m].payees;
        for (uint256 i; i < list.length; ++i) {
            if (list[i] == to) return true;
        }
        return false;
    }

    function _isAgent(address a) internal view returns (bool) {
        return a != address(0) && (a == agents[0] || a == agents[1]);
    }

    /// @dev The pull the honest agent signed in this step (HonestAgentPull only).
    struct AgentPull {
        bytes32 key;
        address to;
        uint256 amount;
    }

    /// @dev A transfer out of an honest payer waiting for the `DebitPulled` it belongs to.
    struct Pending {
        bool open;
        uint256 payer; // index + 1
        address to;
        uint256 amount;
    }

    /// @dev What `_end` accumulates over a step's logs.
    struct Step {
        Kind kind;
        uint256 paymentIndex;
        AgentPull agentPull;
        bool agentPullSeen;
        Pending pending;
        uint256[3] out;
        uint256[3] inn;
    }

    function _end(Kind kind, uint256 paymentIndex, AgentPull memory agentPull) internal {
        ++calls;
        Vm.Log[] memory logs = vm.getRecordedLogs();
        Step memory st;
        st.kind = kind;
        st.paymentIndex = paymentIndex;
        st.agentPull = agentPull;
        for (uint256 j; j < logs.length; ++j) {
            Vm.Log memory l = logs[j];
            if (l.emitter == address(usd) && l.topics[0] == TRANSFER) _onTransfer(st, l);
            else if (l.emitter == address(asm) && l.topics[0] == I.DebitPulled.selector) _onPulled(st, l);
        }
        if (st.pending.open) _fail("a payer's tokens moved with no pull to show for it");
        for (uint256 i; i < 3; ++i) {
            if (usd.balanceOf(payers[i]) + st.out[i] != before[i] + st.inn[i]) {
                _fail("a payer's balance changed by other than its transfers");
            }
        }
    }

    /// @dev A token transfer: out of an honest payer, it is the signed payment or waits for
    ///      its `DebitPulled`; any other kind of step may move nothing of a payer's.
    function _onTransfer(Step memory st, Vm.Log memory l) internal {
        uint256 from = _payerIndex(address(uint160(uint256(l.topics[1]))));
        address to = address(uint160(uint256(l.topics[2])));
        uint256 amount = abi.decode(l.data, (uint256));
        uint256 toPayer = _payerIndex(to);
        if (toPayer != 0) st.inn[toPayer - 1] += amount;
        if (from == 0) return;
        st.out[from - 1] += amount;
        if (st.kind == Kind.SignedPayment) {
            SignedPayment storage p = payments[st.paymentIndex];
            if (p.payer != from - 1 || p.taken || to != p.to || amount != p.amount) {
                _fail("a payment the payer did not sign");
            }
            p.taken = true;
        } else if (st.kind == Kind.Pull || st.kind == Kind.HonestAgentPull) {
            if (st.pending.open) _fail("a payer's tokens moved with no pull to show for it");
            st.pending = Pending(true, from, to, amount);
        } else {
            _fail("money left a payer without its signature");
        }
    }

    /// @dev A pull: on a mandate an honest payer signed, it must be the transfer just seen, to
    ///      a signed payee, within the signed daily ceiling, and as the agent signed when one
    ///      is involved; on any other mandate it may not have moved a payer's tokens.
    function _onPulled(Step memory st, Vm.Log memory l) internal {
        bytes32 key = l.topics[1];
        address to = address(uint160(uint256(l.topics[2])));
        uint256 amount = abi.decode(l.data, (uint256));
        bytes32 m = keyMandate[key];
        SignedMandate storage sm = signed[m];
        if (sm.payer == 0) {
            if (st.pending.open) _fail("a payer's tokens went to a pull on a mandate it never signed");
            st.pending.open = false;
            return;
        }
        Pending memory p = st.pending;
        if (!p.open || p.payer != sm.payer || p.to != to || p.amount != amount) {
            _fail("a pull on a signed mandate moved other tokens than it says");
        }
        st.pending.open = false;
        if (!_isSignedPayee(m, to)) _fail("paid someone the payer did not sign");
        uint256 day = block.timestamp / 1 days;
        pulledOnDay[m][day] += amount;
        if (pulledOnDay[m][day] > sm.max) _fail("pulled beyond the ceiling the payer signed");
        if (sm.agent != address(0) || _isAgent(keySigner[key])) {
            AgentPull memory a = st.agentPull;
            bool asSigned = st.kind == Kind.HonestAgentPull && !st.agentPullSeen && key == a.key && to == a.to
                && amount == a.amount;
            if (!asSigned) _fail("pulled on an agent's key without the agent");
            st.agentPullSeen = true;
        }
        ++honestPulls;
    }

    function _endOther() internal {
        _end(Kind.Other, 0, AgentPull(0, address(0), 0));
    }

    function _anyAddress(uint256 seed) internal view returns (address) {
        uint256 c = seed % 14;
        if (c < 3) return payers[c];
        if (c < 9) return dests[c - 3];
        if (c == 9) return treasury;
        if (c == 10) return thief;
        if (c == 11) return owner;
        if (c == 12) return asm.operator();
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

    /// @dev A non-empty part of the three payees honest payers name, from the low 3 bits.
    function _payeeSet(uint256 bits) internal view returns (address[] memory list) {
        bits = bits % 7 + 1;
        uint256 n;
        for (uint256 i; i < 3; ++i) {
            if (bits >> i & 1 == 1) ++n;
        }
        list = new address[](n);
        n = 0;
        for (uint256 i; i < 3; ++i) {
            if (bits >> i & 1 == 1) list[n++] = dests[i];
        }
    }

    function _daily(bytes32 salt, address who, uint256 max, address[] memory payees, address agent)
        internal
        view
        returns (I.MandateTerms memory)
    {
        return I.MandateTerms(
            salt,
            who,
            address(usd),
            max,
            I.Interval.Daily,
            payees,
            agent,
            keccak256("groceries"),
            I.Requirements(address(0), 0, 0)
        );
    }

    function _recordKey(bytes32 id, bytes32 m, address signer) internal {
        keyIds.push(id);
        keyMandate[id] = m;
        keySigner[id] = signer;
    }

    // ------------------------------------------------------------------ honest parties

    /// A payer signs a daily mandate naming some of the payees and sometimes an agent; the
    /// operator (whoever it is) submits it.
    function honestMandate(uint256 pSeed, uint256 max, uint256 payeeBits, uint256 agentSeed) external {
        uint256 p = pSeed % 3;
        max = bound(max, 1, 200e6);
        address agent = agentSeed % 3 == 0 ? agents[agentSeed % 2] : address(0);
        I.MandateTerms memory t = _daily(
            keccak256(abi.encode("mandate", mandateIds.length, pSeed)),
            payers[p],
            max,
            _payeeSet(payeeBits),
            agent
        );
        uint256 nonce = ++nonceCounter;
        bytes memory sig = _sign(payerKeys[p], _mandateDigest(address(asm), t, nonce, DEADLINE));
        address op = asm.operator();
        _begin();
        vm.prank(op);
        try asm.createMandateWithSignature(t, nonce, DEADLINE, sig) returns (bytes32 id) {
            mandateIds.push(id);
            signed[id] = SignedMandate(p + 1, max, t.payees, agent);
        } catch {}
        _endOther();
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

    /// The operator issues a key whose signer is an honest agent (the mandate's, if named).
    function honestAgentKey(uint256 mSeed, uint256 aSeed) external {
        if (mandateIds.length == 0) return;
        bytes32 m = mandateIds[mSeed % mandateIds.length];
        address signer = signed[m].agent != address(0) ? signed[m].agent : agents[aSeed % 2];
        I.KeyTerms memory t = I.KeyTerms(
            keccak256(abi.encode("agent key", keyIds.length, mSeed)),
            m,
            uint64(block.timestamp + 30 days),
            0,
            new address[](0),
            signer
        );
        address[] memory payees = signed[m].payees;
        address op = asm.operator();
        _begin();
        vm.prank(op);
        try asm.issueSessionKey(t, payees) returns (bytes32 id) {
            _recordKey(id, m, signer);
        } catch {}
        _endOther();
    }

    /// An agent signs a pull on its key to one of the destinations (signed payee or not); the
    /// operator submits it.
    function honestAgentPull(uint256 kSeed, uint256 toSeed, uint256 amount) external {
        if (keyIds.length == 0) return;
        bytes32 key = keyIds[kSeed % keyIds.length];
        address signer = keySigner[key];
        uint256 a = signer == agents[0] ? 1 : signer == agents[1] ? 2 : 0;
        if (a == 0) return;
        amount = bound(amount, 1, 60e6);
        address to = dests[toSeed % 6];
        uint256 nonce = ++nonceCounter;
        bytes memory sig =
            _sign(agentKeys[a - 1], _pullDigest(address(asm), key, to, amount, nonce, DEADLINE));
        address op = asm.operator();
        _begin();
        vm.prank(op);
        try asm.pullBatch(PullCodec.signed(key, to, amount, nonce, DEADLINE, sig)) {} catch {}
        _end(Kind.HonestAgentPull, 0, AgentPull(key, to, amount));
    }

    // ------------------------------------------------------------------ the operator

    function advSettle(uint256 toSeed, uint256 amount) external {
        address to = _anyAddress(toSeed);
        amount = bound(amount, 1, 2_000e6);
        address op = asm.operator();
        _begin();
        vm.prank(op);
        try asm.settle(bytes32(0), address(usd), to, amount) {} catch {}
        _endOther();
    }

    /// Submits a payer's signed payment as signed (allowed once), or mutated, or forged.
    function advSettleWithSignature(uint256 iSeed, uint256 mode, uint256 x) external {
        if (payments.length == 0) return;
        uint256 i = iSeed % payments.length;
        SignedPayment memory p = payments[i];
        address from = payers[p.payer];
        mode %= 5;
        address op = asm.operator();
        if (mode == 0) {
            _begin();
            vm.prank(op);
            try asm.settleWithSignature(
                bytes32(0), address(usd), from, p.to, p.amount, p.nonce, DEADLINE, p.sig
            ) {}
                catch {}
            _end(Kind.SignedPayment, i, AgentPull(0, address(0), 0));
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
        _begin();
        vm.prank(op);
        try asm.settleWithSignature(bytes32(0), address(usd), from, to, amount, nonce, DEADLINE, sig) {}
            catch {}
        _endOther();
    }

    /// A mandate without a signature, on anyone, naming anyone (the thief included).
    function advCreateMandate(uint256 pSeed, uint256 max, uint256 payeeSeed) external {
        address who = _anyAddress(pSeed);
        address[] memory payees = payeeSeed % 3 == 0 ? new address[](0) : _one(_anyAddress(payeeSeed));
        I.MandateTerms memory t =
            _daily(keccak256(abi.encode("adv mandate", pSeed)), who, 1, payees, address(0));
        t.maxAmount = bound(max, 1, type(uint64).max);
        address op = asm.operator();
        _begin();
        vm.prank(op);
        try asm.createMandate(t) returns (bytes32 id) {
            mandateIds.push(id);
        } catch {}
        _endOther();
    }

    /// A mandate "signed" by the thief's key, or an honest signature submitted with other
    /// terms (the thief as payee or agent, another ceiling).
    function advCreateMandateWithSignature(uint256 pSeed, uint256 max, uint256 mode) external {
        uint256 p = pSeed % 3;
        max = bound(max, 1, type(uint64).max);
        I.MandateTerms memory t = _daily(
            keccak256(abi.encode("adv signed mandate", pSeed, max)),
            payers[p],
            max,
            _one(dests[0]),
            address(0)
        );
        uint256 nonce = ++nonceCounter;
        mode %= 4;
        bytes memory sig =
            _sign(mode == 0 ? ADVERSARY_KEY : payerKeys[p], _mandateDigest(address(asm), t, nonce, DEADLINE));
        if (mode == 0) t.payees[0] = thief;
        else if (mode == 1) t.payees = _two(dests[0], thief);
        else if (mode == 2) t.agent = thief;
        else t.maxAmount = max == 1 ? 2 : max - 1;
        address op = asm.operator();
        _begin();
        vm.prank(op);
        try asm.createMandateWithSignature(t, nonce, DEADLINE, sig) returns (bytes32 id) {
            mandateIds.push(id);
        } catch {}
        _endOther();
    }

    function _one(address a) internal pure returns (address[] memory list) {
        list = new address[](1);
        list[0] = a;
    }

    function _two(address a, address b) internal pure returns (address[] memory list) {
        list = new address[](2);
        (list[0], list[1]) = (a, b);
    }

    /// A rogue key: on any mandate, any ceiling, any signer (none, the thief, the operator
    /// itself, an honest agent), any destinations (none, the thief, the operator itself,
    /// anyone, a signed payee), with the true signed payees or a false list.
    function advIssueKey(uint256 mSeed, uint256 signerSeed, uint256 ceiling, uint256 destSeed) external {
        bytes32 m = _mandate(mSeed);
        address op = asm.operator();
        uint256 sc = signerSeed % 5;
        address signer = sc == 0 ? address(0) : sc == 1 ? thief : sc == 2 ? op : agents[signerSeed % 2];
        address[] memory list;
        uint256 dc = destSeed % 5;
        if (dc == 1) list = _one(thief);
        else if (dc == 2) list = _one(op);
        else if (dc == 3) list = _one(_anyAddress(destSeed >> 8));
        else if (dc == 4) list = _two(dests[destSeed % 3], thief);
        address[] memory payees = signed[m].payees;
        uint256 pc = (destSeed >> 4) % 4;
        if (pc == 1) payees = _one(thief);
        else if (pc == 2) payees = new address[](0);
        else if (pc == 3 && payees.length != 0) payees = _two(payees[0], thief);
        I.KeyTerms memory t = I.KeyTerms(
            keccak256(abi.encode("adv key", keyIds.length, mSeed)),
            m,
            uint64(block.timestamp + 30 days),
            bound(ceiling, 0, type(uint64).max),
            list,
            signer
        );
        _begin();
        vm.prank(op);
        try asm.issueSessionKey(t, payees) returns (bytes32 id) {
            _recordKey(id, m, signer);
            ++rogueKeys;
        } catch {}
        _endOther();
    }

    function advPull(uint256 kSeed, uint256 toSeed, uint256 amount) external {
        bytes32 key = _key(kSeed);
        address to = _anyAddress(toSeed);
        amount = bound(amount, 1, 1_000e6);
        address op = asm.operator();
        _begin();
        vm.prank(op);
        try asm.pull(key, to, amount) {} catch {}
        _end(Kind.Pull, 0, AgentPull(0, address(0), 0));
    }

    /// Items on one key: unsigned, signed by the thief (a valid signature on its own keys), an
    /// agent's signature bent to other terms, the signed kind with no signature or with the
    /// agent's signature declared longer than it is — or the batch cut short anywhere.
    function advPullBatch(uint256 kSeed, uint256 n, uint256 seed, uint256 mode) external {
        bytes32 key = _key(kSeed);
        n = bound(n, 1, 5);
        mode %= 5;
        bytes memory items;
        for (uint256 i; i < n; ++i) {
            uint256 s = uint256(keccak256(abi.encode(seed, i)));
            address to = _anyAddress(s);
            uint256 amount = bound(s >> 64, 1, 300e6);
            uint256 nonce = s >> 128;
            bytes memory sig;
            if (mode == 1) {
                sig = _sign(ADVERSARY_KEY, _pullDigest(address(asm), key, to, amount, nonce, DEADLINE));
            } else if (mode == 2) {
                // The agent signed half the amount; the operator submits the whole.
                sig = _sign(
                    agentKeys[s % 2], _pullDigest(address(asm), key, to, amount / 2 + 1, nonce, DEADLINE)
                );
                if (amount / 2 + 1 == amount) amount += 1;
            }
            if (mode == 0) {
                items = bytes.concat(items, PullCodec.unsigned(key, to, amount));
            } else if (mode == 4) {
                // The agent's true signature, its length declared one byte longer (the next
                // item's kind byte would complete it).
                sig = _sign(agentKeys[s % 2], _pullDigest(address(asm), key, to, amount, nonce, DEADLINE));
                items = bytes.concat(
                    items,
                    abi.encodePacked(
                        uint8(1),
                        key,
                        to,
                        uint64(amount),
                        nonce,
                        uint64(DEADLINE),
                        uint16(sig.length + 1),
                        sig
                    )
                );
            } else {
                items = bytes.concat(items, PullCodec.signed(key, to, amount, nonce, DEADLINE, sig));
            }
        }
        // Now and then cut short anywhere: the whole batch reverts, nothing moves.
        if (seed % 4 == 0) items = PullCodec.prefix(items, bound(seed >> 8, 0, items.length - 1));
        address op = asm.operator();
        _begin();
        vm.prank(op);
        try asm.pullBatch(items) {} catch {}
        _end(Kind.Pull, 0, AgentPull(0, address(0), 0));
    }

    function advCancel(uint256 mSeed) external {
        bytes32 m = _mandate(mSeed);
        address op = asm.operator();
        _begin();
        vm.prank(op);
        try asm.cancelMandate(m) {} catch {}
        _endOther();
    }

    function advRevoke(uint256 kSeed) external {
        bytes32 k = _key(kSeed);
        address op = asm.operator();
        _begin();
        vm.prank(op);
        try asm.revokeSessionKey(k) {} catch {}
        _endOther();
    }

    function advInvalidateNonce(uint256 nonce) external {
        address op = asm.operator();
        _begin();
        vm.prank(op);
        try asm.invalidateNonce(nonce) {} catch {}
        _endOther();
    }

    // ------------------------------------------------------------------ the owner

    function advPause(bool on) external {
        _begin();
        vm.prank(owner);
        if (on) asm.pause();
        else asm.unpause();
        _endOther();
    }

    /// Names anyone the treasury (a payer, say); only the named one could accept.
    function advSetTreasury(uint256 seed) external {
        address t = seed % 5 == 0 ? address(0) : _anyAddress(seed);
        _begin();
        vm.prank(owner);
        try asm.setTreasury(t) {} catch {}
        _endOther();
    }

    /// Proposes an operator (the thief, this handler, another, itself — refused — or none).
    function advProposeOperator(uint256 seed) external {
        uint256 c = seed % 5;
        address next = c < 3 ? operators[c] : c == 3 ? owner : address(0);
        _begin();
        vm.prank(owner);
        try asm.proposeOperator(next) {} catch {}
        _endOther();
    }

    /// Activates the proposed operator, after waiting out the delay (most of the time).
    function advActivateOperator(uint256 seed) external {
        if (seed % 4 != 0) vm.warp(block.timestamp + asm.OPERATOR_DELAY() + seed % 1 hours);
        _begin();
        try asm.activateOperator() {
            ++operatorChanges;
        } catch {}
        _endOther();
    }

    function warp(uint256 seed) external {
        vm.warp(block.timestamp + bound(seed, 1 hours, 3 days));
    }

    // ------------------------------------------------------------------ self-check

    /// @dev Not a fuzz target: a payer's tokens leave by the payer's own hand (a transfer to
    ///      the thief), with nothing signed for the state machine. The attribution must call it
    ///      a violation; the invariant test checks that it does.
    function selfCheckUnsignedLoss() external {
        _begin();
        vm.prank(payers[0]);
        usd.transfer(thief, 1);
        _endOther();
    }

    /// @dev Not a fuzz target: the ghost forgets which payees payer-signed mandates name (it
    ///      records the thief instead), so a later honest pull to a real payee must be reported
    ///      as paying someone the payer did not sign.
    function selfCheckForgetPayees() external {
        for (uint256 i; i < mandateIds.length; ++i) {
            if (signed[mandateIds[i]].payer != 0) signed[mandateIds[i]].payees = _one(thief);
        }
    }
}
