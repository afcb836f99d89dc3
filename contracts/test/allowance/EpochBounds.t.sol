// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";

contract EpochBoundsTest is AllowanceBase {
    function test_knownDates() public view {
        // 2024-02-29T12:00Z: leap day.
        (uint64 s, uint64 e) = asm.epochBounds(I.Interval.Monthly, 1_709_208_000);
        assertEq(uint256(s), 1_706_745_600); // 2024-02-01
        assertEq(uint256(e), 1_709_251_200); // 2024-03-01
        // 2025-12-31T23:59:59Z.
        (s, e) = asm.epochBounds(I.Interval.Yearly, 1_767_225_599);
        assertEq(uint256(s), 1_735_689_600); // 2025-01-01
        assertEq(uint256(e), 1_767_225_600); // 2026-01-01
        (s, e) = asm.epochBounds(I.Interval.Monthly, 1_767_225_599);
        assertEq(uint256(s), 1_764_547_200); // 2025-12-01
        assertEq(uint256(e), 1_767_225_600);
        // Sunday 2026-11-22 belongs to the week of Monday 2026-11-16.
        (s, e) = asm.epochBounds(I.Interval.Weekly, MONDAY - 1);
        assertEq(uint256(s), MONDAY - 7 days);
        assertEq(uint256(e), MONDAY);
        // The first, partial week of 1970 ends on Monday 1970-01-05.
        (s, e) = asm.epochBounds(I.Interval.Weekly, 0);
        assertEq(uint256(s), 0);
        assertEq(uint256(e), 4 * DAY);
        (s, e) = asm.epochBounds(I.Interval.Daily, NOON);
        assertEq(uint256(s), MONDAY);
        assertEq(uint256(e), MONDAY + 1 days);
    }

    function testFuzz_epochsContainTileAndAlign(uint256 t, uint8 which) public view {
        t = bound(t, 0, 8_000_000_000);
        I.Interval iv = I.Interval(bound(which, 0, 3));
        (uint64 s, uint64 e) = asm.epochBounds(iv, t);
        assertLe(uint256(s), t);
        assertLt(t, uint256(e));
        assertEq(uint256(s) % DAY, 0);
        (uint64 s2,) = asm.epochBounds(iv, e);
        assertEq(s2, e, "next epoch starts where this one ends");
        (uint64 s3,) = asm.epochBounds(iv, uint256(e) - 1);
        assertEq(s3, s);
        (uint256 y, uint256 m, uint256 d) = _civil(uint256(s) / DAY);
        if (iv == I.Interval.Daily) assertEq(uint256(e - s), DAY);
        if (iv == I.Interval.Weekly && s != 0) {
            assertEq((uint256(s) / DAY + 3) % 7, 0, "weeks start on Monday");
        }
        if (iv == I.Interval.Monthly) assertEq(d, 1);
        if (iv == I.Interval.Yearly) assertEq(m * 100 + d, 101);
        y;
    }

    /// Reference calendar: count days month by month (independent of the contract's algorithm).
    function _civil(uint256 day) internal pure returns (uint256 y, uint256 m, uint256 d) {
        y = 1970;
        while (true) {
            uint256 len = _leap(y) ? 366 : 365;
            if (day < len) break;
            day -= len;
            ++y;
        }
        uint8[12] memory lens = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
        m = 1;
        for (uint256 i; i < 12; ++i) {
            uint256 len = lens[i] + (i == 1 && _leap(y) ? 1 : 0);
            if (day < len) break;
            day -= len;
            ++m;
        }
        d = day + 1;
    }

    function _leap(uint256 y) internal pure returns (bool) {
        return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    }
}
