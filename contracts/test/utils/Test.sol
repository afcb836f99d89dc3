// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Vm} from "./Vm.sol";

/// @notice Minimal stand-in for forge-std's `Test`: the cheatcode handle, assertions that
///         delegate to Foundry's assertion cheatcodes, `bound`, `makeAddr`, and the target
///         hooks forge reads for stateful invariant tests.
abstract contract Test {
    /// @dev Foundry's cheatcode address: address(uint160(uint256(keccak256("hevm cheat code")))).
    Vm internal constant vm = Vm(0x7109709ECfa91a80626fF3989D68f67F5b1DD12D);

    /// @dev forge treats contracts exposing IS_TEST as test contracts.
    bool public IS_TEST = true;

    struct FuzzSelector {
        address addr;
        bytes4[] selectors;
    }

    address[] private _targetedContracts;
    FuzzSelector[] private _targetedSelectors;
    address[] private _targetedSenders;
    address[] private _excludedSenders;

    // ---------------------------------------------------------------- invariant hooks

    function targetContract(address target) internal {
        _targetedContracts.push(target);
    }

    function targetSelector(FuzzSelector memory selector) internal {
        _targetedSelectors.push(selector);
    }

    function targetSender(address sender) internal {
        _targetedSenders.push(sender);
    }

    function excludeSender(address sender) internal {
        _excludedSenders.push(sender);
    }

    /// @notice Read by forge: contracts whose functions the invariant fuzzer calls.
    function targetContracts() public view returns (address[] memory) {
        return _targetedContracts;
    }

    /// @notice Read by forge: selectors the invariant fuzzer may call.
    function targetSelectors() public view returns (FuzzSelector[] memory) {
        return _targetedSelectors;
    }

    /// @notice Read by forge: senders the invariant fuzzer uses.
    function targetSenders() public view returns (address[] memory) {
        return _targetedSenders;
    }

    /// @notice Read by forge: senders the invariant fuzzer never uses.
    function excludeSenders() public view returns (address[] memory) {
        return _excludedSenders;
    }

    // ---------------------------------------------------------------- helpers

    function makeAddr(string memory name) internal returns (address a) {
        a = vm.addr(uint256(keccak256(bytes(name))));
        vm.label(a, name);
    }

    /// @dev Maps `x` into [min, max] uniformly enough for fuzzing, keeping small values
    ///      unchanged (same contract as forge-std's `bound`).
    function bound(uint256 x, uint256 min, uint256 max) internal pure returns (uint256 result) {
        require(min <= max, "bound: min > max");
        if (x >= min && x <= max) return x;
        uint256 size = max - min + 1;
        if (x <= 3 && size > x) return min + x;
        if (x >= type(uint256).max - 3 && size > type(uint256).max - x) return max - (type(uint256).max - x);
        if (x > max) {
            uint256 diff = x - max;
            uint256 rem = diff % size;
            if (rem == 0) return max;
            result = min + rem - 1;
        } else {
            uint256 diff = min - x;
            uint256 rem = diff % size;
            if (rem == 0) return min;
            result = max - rem + 1;
        }
    }

    // ---------------------------------------------------------------- assertions

    function assertTrue(bool c) internal pure {
        vm.assertTrue(c);
    }

    function assertTrue(bool c, string memory err) internal pure {
        vm.assertTrue(c, err);
    }

    function assertFalse(bool c) internal pure {
        vm.assertFalse(c);
    }

    function assertFalse(bool c, string memory err) internal pure {
        vm.assertFalse(c, err);
    }

    function assertEq(uint256 a, uint256 b) internal pure {
        vm.assertEq(a, b);
    }

    function assertEq(uint256 a, uint256 b, string memory err) internal pure {
        vm.assertEq(a, b, err);
    }

    function assertEq(address a, address b) internal pure {
        vm.assertEq(a, b);
    }

    function assertEq(address a, address b, string memory err) internal pure {
        vm.assertEq(a, b, err);
    }

    function assertEq(bytes32 a, bytes32 b) internal pure {
        vm.assertEq(a, b);
    }

    function assertEq(bytes32 a, bytes32 b, string memory err) internal pure {
        vm.assertEq(a, b, err);
    }

    function assertEq(bool a, bool b) internal pure {
        vm.assertEq(a, b);
    }

    function assertEq(bool a, bool b, string memory err) internal pure {
        vm.assertEq(a, b, err);
    }

    function assertEq(bytes memory a, bytes memory b) internal pure {
        vm.assertEq(a, b);
    }

    function assertEq(string memory a, string memory b) internal pure {
        vm.assertEq(a, b);
    }

    function assertLe(uint256 a, uint256 b) internal pure {
        vm.assertLe(a, b);
    }

    function assertLe(uint256 a, uint256 b, string memory err) internal pure {
        vm.assertLe(a, b, err);
    }

    function assertGe(uint256 a, uint256 b) internal pure {
        vm.assertGe(a, b);
    }

    function assertGe(uint256 a, uint256 b, string memory err) internal pure {
        vm.assertGe(a, b, err);
    }

    function assertLt(uint256 a, uint256 b) internal pure {
        vm.assertLt(a, b);
    }

    function assertGt(uint256 a, uint256 b) internal pure {
        vm.assertGt(a, b);
    }
}
