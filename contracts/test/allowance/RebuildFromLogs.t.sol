// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {Vm} from "../utils/Vm.sol";
import {AllowanceStateMachine} from "../../src/AllowanceStateMachine.sol";
import {IAttestationMirror} from "../../src/interfaces/IAttestationMirror.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";

/// An explorer rebuilds all of the state machine's state from its logs alone (what
/// `eth_getLogs` returns, with each block's timestamp): every mandate (payer, token, ceiling,
/// interval, status, payees hash, agent, deferred), every key (mandate, expiry, ceiling,
/// allow-list, signer, revoked), the spend of the current epoch (a key's only when it has a
/// ceiling of its own), and both nonce bitmaps
/// (`NonceUsed`, `PullNonceUsed`) — then compares with the contract's views.
contract RebuildFromLogsTest is AllowanceBase {
    uint256 internal constant DEADLINE = 2_000_000_000;
    uint256 internal constant PAYER2_KEY = 0xB0B2;
    address internal payer2 = vm.addr(PAYER2_KEY);

    /// @dev A log as fetched: its fields and its block's timestamp.
    struct FetchedLog {
        bytes32[] topics;
        bytes data;
        address emitter;
        uint256 time;
    }

    FetchedLog[] internal fetched;

    /// @dev Appends what was logged since the last fetch, stamped with the current time.
    function _fetch() internal {
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 i; i < logs.length; ++i) {
            FetchedLog storage f = fetched.push();
            f.topics = logs[i].topics;
            f.data = logs[i].data;
            f.emitter = logs[i].emitter;
            f.time = block.timestamp;
        }
    }

    // ------------------------------------------------------------------ the rebuilt state

    struct RMandate {
        address payer;
        address token;
        uint64 max;
        I.Interval interval;
        I.MandateStatus status;
        bytes32 payeesHash;
        address agent;
        bool deferred;
    }

    struct RKey {
        bytes32 mandate;
        uint64 expiresAt;
        uint64 ceiling;
        address[] list;
        address signer;
        bool revoked;
    }

    bytes32[] internal mandateIds;
    mapping(bytes32 => RMandate) internal rm;
    bytes32[] internal keyIds;
    mapping(bytes32 => RKey) internal rk;
    /// @dev Pulls as (key, amount, time): the spend of any epoch follows.
    bytes32[] internal pullKeys;
    uint256[] internal pullAmounts;
    uint256[] internal pullTimes;
    address[] internal nonceOwners;
    uint256[] internal nonces;
    bytes32[] internal pullNonceKeys;
    uint256[] internal pullNonces;
    address internal rebuiltTreasury;

    function _rebuild() internal {
        for (uint256 i; i < fetched.length; ++i) {
            FetchedLog storage l = fetched[i];
            if (l.emitter != address(asm)) continue;
            bytes32 t0 = l.topics[0];
            if (t0 == R.TreasuryChanged.selector) {
                rebuiltTreasury = address(uint160(uint256(l.topics[2])));
            } else if (t0 == I.MandateCreated.selector) {
                (uint64 max, I.Interval interval, bytes32 salt, address[] memory payees, address agent_,) =
                    abi.decode(l.data, (uint64, I.Interval, bytes32, address[], address, bytes32));
                bytes32 id = l.topics[1];
                address who = address(uint160(uint256(l.topics[2])));
                assertEq(id, _mandateIdOf(who, salt), "the id is the payer's and the salt's");
                mandateIds.push(id);
                rm[id] = RMandate(
                    who,
                    address(uint160(uint256(l.topics[3]))),
                    max,
                    interval,
                    I.MandateStatus.Active,
                    payees.length == 0 ? bytes32(0) : _addressArrayHash(payees),
                    agent_,
                    who == rebuiltTreasury
                );
            } else if (t0 == I.MandateCanceled.selector) {
                rm[l.topics[1]].status = I.MandateStatus.Canceled;
            } else if (t0 == I.SessionKeyIssued.selector) {
                (uint64 exp, uint64 ceiling, address[] memory list, address signer,) =
                    abi.decode(l.data, (uint64, uint64, address[], address, bytes32));
                bytes32 id = l.topics[1];
                keyIds.push(id);
                rk[id] = RKey(l.topics[2], exp, ceiling, list, signer, false);
            } else if (t0 == I.SessionKeyRevoked.selector) {
                rk[l.topics[1]].revoked = true;
            } else if (t0 == I.DebitPulled.selector) {
                pullKeys.push(l.topics[1]);
                pullAmounts.push(abi.decode(l.data, (uint256)));
                pullTimes.push(l.time);
            } else if (t0 == R.NonceUsed.selector) {
                nonceOwners.push(address(uint160(uint256(l.topics[1]))));
                nonces.push(abi.decode(l.data, (uint256)));
            } else if (t0 == I.PullNonceUsed.selector) {
                pullNonceKeys.push(l.topics[1]);
                pullNonces.push(abi.decode(l.data, (uint256)));
            }
        }
    }

    /// @dev The epoch (its start) of `interval` containing `time` (the calendar is a pure
    ///      function, tested in EpochBounds.t.sol).
    function _epoch(I.Interval interval, uint256 time) internal view returns (uint256 start) {
        (uint64 s,) = asm.epochBounds(interval, time);
        return s;
    }

    function _spentNow(bytes32 key, bytes32 mandate) internal view returns (uint256 spent) {
        I.Interval interval = rm[mandate].interval;
        uint256 now_ = _epoch(interval, block.timestamp);
        for (uint256 i; i < pullKeys.length; ++i) {
            bool counts = key != 0 ? pullKeys[i] == key : rk[pullKeys[i]].mandate == mandate;
            if (counts && _epoch(interval, pullTimes[i]) == now_) spent += pullAmounts[i];
        }
    }

    function _compare() internal view {
        assertEq(asm.treasury(), rebuiltTreasury);
        for (uint256 i; i < mandateIds.length; ++i) {
            bytes32 id = mandateIds[i];
            RMandate storage r = rm[id];
            I.MandateView memory v = asm.getMandate(id);
            assertEq(v.payer, r.payer);
            assertEq(v.token, r.token);
            assertEq(uint256(v.maxAmount), r.max);
            assertEq(uint256(v.interval), uint256(r.interval));
            assertEq(uint256(v.status), uint256(r.status));
            assertEq(v.payeesHash, r.payeesHash);
            assertEq(v.agent, r.agent);
            assertEq(v.deferred, r.deferred);
            assertEq(uint256(v.spentThisEpoch), _spentNow(0, id), "mandate spend this epoch");
        }
        address[5] memory probes = [dest, dest2, stranger, treasury, payer];
        for (uint256 i; i < keyIds.length; ++i) {
            bytes32 id = keyIds[i];
            RKey storage r = rk[id];
            I.SessionKeyView memory v = asm.getSessionKey(id);
            assertEq(v.mandateId, r.mandate);
            assertEq(uint256(v.expiresAt), r.expiresAt);
            assertEq(uint256(v.maxAmount), r.ceiling);
            assertEq(v.revoked, r.revoked);
            assertEq(v.hasAllowList, r.list.length != 0);
            assertEq(v.signer, r.signer);
            // A key's own spend is kept only against its own ceiling.
            assertEq(
                uint256(v.spentThisEpoch),
                r.ceiling == 0 ? 0 : _spentNow(id, r.mandate),
                "key spend this epoch"
            );
            for (uint256 j; j < probes.length; ++j) {
                bool listed = r.list.length == 0;
                for (uint256 k; k < r.list.length; ++k) {
                    if (r.list[k] == probes[j]) listed = true;
                }
                assertEq(asm.isDestinationAllowed(id, probes[j]), listed, "allow-list");
            }
        }
        // Nonce bitmaps: every bit of every word any event touched.
        for (uint256 i; i < nonces.length; ++i) {
            uint256 word = nonces[i] >> 8;
            for (uint256 bit; bit < 256; ++bit) {
                uint256 n = word << 8 | bit;
                assertEq(
                    asm.nonceUsed(nonceOwners[i], n), _signatureNonceSeen(nonceOwners[i], n), "nonce bitmap"
                );
            }
        }
        for (uint256 i; i < pullNonces.length; ++i) {
            uint256 word = pullNonces[i] >> 8;
            for (uint256 bit; bit < 256; ++bit) {
                uint256 n = word << 8 | bit;
                assertEq(
                    asm.pullNonceUsed(pullNonceKeys[i], n), _pullNonceSeen(pullNonceKeys[i], n), "pull nonces"
                );
            }
        }
    }

    function _signatureNonceSeen(address who, uint256 n) internal view returns (bool) {
        for (uint256 i; i < nonces.length; ++i) {
            if (nonceOwners[i] == who && nonces[i] == n) return true;
        }
        return false;
    }

    function _pullNonceSeen(bytes32 key, uint256 n) internal view returns (bool) {
        for (uint256 i; i < pullNonces.length; ++i) {
            if (pullNonceKeys[i] == key && pullNonces[i] == n) return true;
        }
        return false;
    }

    // ------------------------------------------------------------------ the scenario

    function _signed(uint256 pk, I.MandateTerms memory t, uint256 nonce) internal returns (bytes32) {
        return asm.createMandateWithSignature(
            t, nonce, DEADLINE, _sign(pk, _mandateDigest(address(asm), t, nonce, DEADLINE))
        );
    }

    function _issue(
        bytes32 m,
        bytes32 salt,
        uint256 ceiling,
        address[] memory list,
        address signer,
        address[] memory payees
    ) internal returns (bytes32) {
        return asm.issueSessionKey(_keyTerms(m, salt, ceiling, list, signer), payees);
    }

    function test_rebuildFromLogs_success_everyViewMatches() public {
        // Watch from the deployment on.
        vm.recordLogs();
        asm = new AllowanceStateMachine(owner, address(this), treasury, IAttestationMirror(address(mirror)));
        vm.prank(payer);
        usd.approve(address(asm), type(uint256).max);
        usd.mint(payer2, 1_000e6);
        vm.prank(payer2);
        usd.approve(address(asm), type(uint256).max);
        _fetch();

        // Mandates: two signed (one naming an agent), one sent by its payer, one of the treasury.
        bytes32 a = _signed(PAYER_KEY, _terms(keccak256("A"), payer, 100e6, I.Interval.Daily), 5);
        I.MandateTerms memory tb = _terms(keccak256("B"), payer2, 50e6, I.Interval.Weekly);
        tb.payees = _one(dest);
        tb.agent = agent;
        bytes32 b = _signed(PAYER2_KEY, tb, 300);
        vm.prank(payer);
        bytes32 c = asm.createMandate(_terms(keccak256("C"), payer, 70e6, I.Interval.Monthly));
        I.MandateTerms memory td = _terms(keccak256("D"), treasury, 40e6, I.Interval.Yearly);
        td.payees = new address[](0);
        bytes32 d = asm.createMandate(td);
        _fetch();

        // Keys.
        bytes32 ka1 = _issue(a, "ka1", 60e6, new address[](0), address(0), _payees());
        bytes32 ka2 = _issue(a, "ka2", 0, _one(dest2), address(0), _payees());
        bytes32 kb = _issue(b, "kb", 0, new address[](0), agent, _one(dest));
        _issue(c, "kc", 10e6, new address[](0), address(0), _payees());
        bytes32 kd = _issue(d, "kd", 0, new address[](0), address(0), new address[](0));
        _fetch();

        // A batch with authorized and declined items, agent-signed ones among them.
        bytes memory items = bytes.concat(
            _item(ka1, dest, 30e6),
            _item(ka1, dest, 40e6), // over the key's ceiling
            _item(ka2, dest, 1e6), // not its one destination
            _signedItem(AGENT_KEY, kb, dest, 5e6, 7, DEADLINE),
            _signedItem(0xBAD, kb, dest, 5e6, 8, DEADLINE), // not the agent
            _item(kd, stranger, 10e6) // deferred
        );
        assertEq(asm.pullBatch(items), 3);
        asm.pull(ka2, dest2, 20e6);
        _fetch();

        // Revocation, cancellation, nonces burned and used by a payment.
        asm.revokeSessionKey(ka2);
        vm.prank(payer);
        asm.cancelMandate(c);
        vm.prank(payer);
        asm.invalidateNonce(1000);
        bytes memory paySig =
            _sign(PAYER_KEY, _paymentDigest(address(asm), address(usd), payer, dest, 3e6, 6, DEADLINE));
        asm.settleWithSignature(bytes32("pay"), address(usd), payer, dest, 3e6, 6, DEADLINE, paySig);
        _fetch();

        // The next day: the daily mandate's epoch turns, the weekly one's does not.
        vm.warp(block.timestamp + 1 days);
        asm.pull(ka1, dest2, 10e6);
        bytes memory more = bytes.concat(
            _signedItem(AGENT_KEY, kb, dest, 4e6, 7, DEADLINE), // nonce replayed
            _signedItem(AGENT_KEY, kb, dest, 4e6, 263, DEADLINE) // another word
        );
        assertEq(asm.pullBatch(more), 1);
        _fetch();

        _rebuild();
        assertEq(mandateIds.length, 4);
        assertEq(keyIds.length, 5);
        assertEq(nonces.length, 4); // mandates 5 and 300, invalidated 1000, payment 6
        assertEq(pullNonces.length, 2);
        _compare();
        // And a week later, every epoch but the yearly one has turned.
        vm.warp(block.timestamp + 40 days);
        _compare();
    }
}
