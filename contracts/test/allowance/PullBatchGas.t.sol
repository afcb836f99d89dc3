// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";

/// Batches of ten warm items of each kind of key, for the gas snapshot to report (each test's
/// gas is in contracts/.gas-snapshot). Nothing here asserts gas: performance claims come from
/// the Rust bench. Each checks only that every item was authorized.
contract PullBatchGasTest is AllowanceBase {
    uint256 internal constant LATER = 2_000_000_000;

    function setUp() public override {
        super.setUp();
        _mandate(1_000e6, I.Interval.Daily);
    }

    /// @dev Ten items of 1 on `key` to `to`, after one pull that makes the usage of today.
    function _tenWarm(bytes32 key, address to) internal {
        asm.pull(key, to, 1);
        bytes memory items;
        for (uint256 i; i < 10; ++i) {
            items = bytes.concat(items, _item(key, to, 1));
        }
        assertEq(items.length, 610);
        assertEq(asm.pullBatch(items), 10);
    }

    function test_gas_pullBatch_tenItems_oneDestinationNoCeiling() public {
        _tenWarm(_keyTo(K_SALT, 0, dest), dest);
    }

    function test_gas_pullBatch_tenItems_oneDestinationWithCeiling() public {
        _tenWarm(_keyTo(K_SALT, 500e6, dest), dest);
    }

    function test_gas_pullBatch_tenItems_severalDestinationsNoCeiling() public {
        _tenWarm(_key(K_SALT, 0), dest);
    }

    function test_gas_pullBatch_tenItems_severalDestinationsWithCeiling() public {
        _tenWarm(_key(K_SALT, 500e6), dest);
    }

    function test_gas_pullBatch_tenItems_agentSigned() public {
        bytes32 key = _signerKey(K_SALT, agent);
        bytes memory items;
        for (uint256 i; i < 10; ++i) {
            items = bytes.concat(items, _signedItem(AGENT_KEY, key, dest, 1, i, LATER));
        }
        assertEq(items.length, 10 * (103 + 65));
        assertEq(asm.pullBatch(items), 10);
    }
}
