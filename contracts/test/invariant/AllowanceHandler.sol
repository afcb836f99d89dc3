// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Test} from "../utils/Test.sol";
import {Vm} from "../utils/Vm.sol";
import {AllowanceStateMachine} from "../../src/AllowanceStateMachine.sol";
import {IAttestationMirror} from "../../src/interfaces/IAttestationMirror.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {TestStablecoin} from "../../src/TestStablecoin.sol";
import {PullCodec} from "../utils/PullCodec.sol";

/// @dev Drives random sequences of create / issue / pull / batch pull / revoke / cancel / warp
///      against a state machine it owns, keeping a ghost ledger per epoch.
contract AllowanceHandler is Test {
    TestStablecoin public usd;
    TestStablecoin public eur;
    AllowanceStateMachine public asm;
    address public treasury = address(0x7ea5);
    address[3] public payers;
    address[3] public dests;

    struct M {
        bytes32 id;
        uint256 max;
        I.Interval interval;
        bool canceled;
    }

    struct K {
        bytes32 id;
        uint256 mandate;
        uint256 ceiling;
        uint256 expiresAt;
        bool revoked;
    }

    M[] public mandates;
    K[] public keys;

    mapping(bytes32 => mapping(uint256 => uint256)) public mandateSpent; // id => epoch start => spent
    mapping(bytes32 => mapping(uint256 => uint256)) public keySpent;
    bool public mandateOverspent;
    bool public keyOverspent;
    uint256 public deadKeyPulls;
    uint256 public authorized;
    uint256 public declined;
    uint256 public initialSupply;

    constructor() {
        vm.warp(1_795_435_200); // Monday 2026-11-23 12:00Z
        usd = new TestStablecoin("Test USD", "tUSD", address(this));
        eur = new TestStablecoin("Test EUR", "tEUR", address(this));
        // This handler is the operator; the owner is another key (they may not be one).
        asm = new AllowanceStateMachine(
            address(0x0e0e), address(this), treasury, IAttestationMirror(address(0))
        );
        for (uint256 i; i < 3; ++i) {
            payers[i] = address(uint160(0x1000 + i));
            dests[i] = address(uint160(0x2000 + i));
            // The third payer is poor: its pulls run out of funds and are declined.
            usd.mint(payers[i], i == 2 ? 30e6 : 100_000e6);
            eur.mint(payers[i], i == 2 ? 30e6 : 100_000e6);
            vm.startPrank(payers[i]);
            usd.approve(address(asm), type(uint256).max);
            eur.approve(address(asm), type(uint256).max);
            vm.stopPrank();
        }
        initialSupply = usd.totalSupply();
    }

    /// @dev The payees every mandate names: the three destinations.
    function payees() public view returns (address[] memory list) {
        list = new address[](3);
        for (uint256 i; i < 3; ++i) {
            list[i] = dests[i];
        }
    }

    function mandateCount() external view returns (uint256) {
        return mandates.length;
    }

    function keyCount() external view returns (uint256) {
        return keys.length;
    }

    function epochOf(I.Interval interval) public view returns (uint256 start) {
        (uint64 s,) = asm.epochBounds(interval, block.timestamp);
        return s;
    }

    // ------------------------------------------------------------------ actions

    function createMandate(uint256 seed) external {
        if (mandates.length >= 4) return;
        bytes32 salt = keccak256(abi.encode("m", mandates.length));
        uint256 max = bound(seed, 5e6, 200e6);
        I.Interval interval = I.Interval(seed % 3);
        address payer = payers[(seed >> 8) % 3];
        // The payer sends its own mandate (no signature needed); USD or EUR; all three
        // destinations are its payees.
        vm.prank(payer);
        bytes32 id = asm.createMandate(
            I.MandateTerms(
                salt,
                payer,
                (seed >> 16) % 2 == 0 ? address(usd) : address(eur),
                max,
                interval,
                payees(),
                address(0),
                keccak256("invariants"),
                I.Requirements(address(0), 0, 0)
            )
        );
        mandates.push(M(id, max, interval, false));
    }

    function issueKey(uint256 mSeed, uint256 ceilingSeed, uint256 destSeed, uint256 ttlSeed) external {
        if (mandates.length == 0 || keys.length >= 12) return;
        uint256 mi = mSeed % mandates.length;
        M memory m = mandates[mi];
        if (m.canceled) return;
        uint256 ceiling = ceilingSeed % 3 == 0 ? 0 : bound(ceilingSeed, 1, m.max);
        address[] memory list;
        if (destSeed % 2 == 0) {
            list = new address[](1);
            list[0] = dests[destSeed % 3];
        }
        uint256 exp = block.timestamp + bound(ttlSeed, 1 hours, 20 days);
        bytes32 id = asm.issueSessionKey(
            I.KeyTerms(keccak256(abi.encode("k", keys.length)), m.id, uint64(exp), ceiling, list, address(0)),
            payees()
        );
        keys.push(K(id, mi, ceiling, exp, false));
    }

    function pull(uint256 kSeed, uint256 dSeed, uint256 amount) external {
        if (keys.length == 0) return;
        uint256 ki = kSeed % keys.length;
        address to = dests[dSeed % 3];
        amount = bound(amount, 1, 60e6);
        bool dead = _dead(ki);
        try asm.pull(keys[ki].id, to, amount) {
            _record(ki, amount, dead);
        } catch {
            ++declined;
        }
    }

    function pullBatch(uint256 seed, uint256 n) external {
        if (keys.length == 0) return;
        n = bound(n, 1, 6);
        bytes memory items;
        uint256[] memory idx = new uint256[](n);
        uint256[] memory amounts = new uint256[](n);
        bool[] memory dead = new bool[](n);
        for (uint256 i; i < n; ++i) {
            uint256 s = uint256(keccak256(abi.encode(seed, i)));
            idx[i] = s % keys.length;
            dead[i] = _dead(idx[i]);
            amounts[i] = bound(s >> 32, 1, 40e6);
            // Now and then the signed kind (no signer on these keys): the reference path only.
            bytes memory packed = (s >> 24) % 4 == 0
                ? PullCodec.signed(keys[idx[i]].id, dests[(s >> 16) % 3], amounts[i], 0, 0, "")
                : PullCodec.unsigned(keys[idx[i]].id, dests[(s >> 16) % 3], amounts[i]);
            items = bytes.concat(items, packed);
        }
        vm.recordLogs();
        uint256 ok = asm.pullBatch(items);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        uint256 item;
        uint256 pulled;
        for (uint256 j; j < logs.length; ++j) {
            if (logs[j].emitter != address(asm)) continue;
            bytes32 topic = logs[j].topics[0];
            if (topic == I.DebitPulled.selector) {
                assertEq(logs[j].topics[1], keys[idx[item]].id, "pulled item's key");
                assertEq(abi.decode(logs[j].data, (uint256)), amounts[item], "pulled item's amount");
                _record(idx[item], amounts[item], dead[item]);
                ++pulled;
                ++item;
            } else if (topic == I.DebitPullDeclined.selector) {
                assertEq(uint256(logs[j].topics[2]), item, "declined item's index");
                ++declined;
                ++item;
            }
        }
        assertEq(item, n, "one outcome event per item");
        assertEq(ok, pulled, "authorized count");
    }

    function revoke(uint256 kSeed) external {
        if (keys.length == 0) return;
        K storage k = keys[kSeed % keys.length];
        if (k.revoked) return;
        asm.revokeSessionKey(k.id);
        k.revoked = true;
    }

    function cancel(uint256 mSeed) external {
        if (mandates.length == 0) return;
        M storage m = mandates[mSeed % mandates.length];
        if (m.canceled) return;
        asm.cancelMandate(m.id);
        m.canceled = true;
    }

    function warp(uint256 seed) external {
        // Hours, days or weeks: crosses daily, weekly and monthly boundaries.
        uint256 step = seed % 3 == 0 ? bound(seed, 1 hours, 1 days) : bound(seed, 1 days, 35 days);
        vm.warp(block.timestamp + step);
    }

    // ------------------------------------------------------------------ ghost ledger

    function isDead(uint256 ki) external view returns (bool) {
        return _dead(ki);
    }

    function _dead(uint256 ki) internal view returns (bool) {
        K memory k = keys[ki];
        return k.revoked || mandates[k.mandate].canceled || block.timestamp >= k.expiresAt;
    }

    function _record(uint256 ki, uint256 amount, bool dead) internal {
        ++authorized;
        if (dead) ++deadKeyPulls;
        K memory k = keys[ki];
        M memory m = mandates[k.mandate];
        uint256 epoch = epochOf(m.interval);
        mandateSpent[m.id][epoch] += amount;
        keySpent[k.id][epoch] += amount;
        if (mandateSpent[m.id][epoch] > m.max) mandateOverspent = true;
        if (k.ceiling != 0 && keySpent[k.id][epoch] > k.ceiling) keyOverspent = true;
    }

    function balancesSum(TestStablecoin t) external view returns (uint256 sum) {
        for (uint256 i; i < 3; ++i) {
            sum += t.balanceOf(payers[i]) + t.balanceOf(dests[i]);
        }
        sum += t.balanceOf(treasury) + t.balanceOf(address(asm));
    }
}
