// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Test} from "../utils/Test.sol";
import {AllowanceStateMachine} from "../../src/AllowanceStateMachine.sol";
import {IAllowanceStateMachine} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {TestStablecoin} from "../../src/TestStablecoin.sol";

/// @dev Shared set-up: a token, a state machine (the settlement chain's router) whose owner and
///      operator is this test contract, a funded payer that approved it, and the clock at
///      Monday 2026-11-23 12:00Z.
abstract contract AllowanceBase is Test {
    uint256 internal constant DAY = 86_400;
    /// @dev Monday 2026-11-23 00:00:00Z.
    uint256 internal constant MONDAY = 1_795_392_000;
    uint256 internal constant NOON = MONDAY + 12 hours;

    TestStablecoin internal usd;
    AllowanceStateMachine internal asm;
    address internal treasury = makeAddr("treasury");
    address internal payer = makeAddr("payer");
    address internal dest = makeAddr("dest");
    address internal dest2 = makeAddr("dest2");
    address internal stranger = makeAddr("stranger");

    bytes32 internal constant M = keccak256("mandate");
    bytes32 internal constant K = keccak256("key");
    bytes32 internal constant K2 = keccak256("key2");

    function setUp() public virtual {
        vm.warp(NOON);
        usd = new TestStablecoin("Test USD", "tUSD", address(this));
        asm = new AllowanceStateMachine(address(this), address(this), treasury);
        usd.mint(payer, 1_000_000e6);
        usd.mint(dest, 1);
        vm.prank(payer);
        usd.approve(address(asm), type(uint256).max);
    }

    function _mandate(uint256 max, IAllowanceStateMachine.Interval interval) internal {
        asm.createMandate(M, payer, address(usd), max, interval);
    }

    function _key(bytes32 id, uint256 ceiling) internal {
        asm.issueSessionKey(id, M, uint64(block.timestamp + 7 days), ceiling, new address[](0));
    }

    function _keyTo(bytes32 id, uint256 ceiling, address only) internal {
        address[] memory list = new address[](1);
        list[0] = only;
        asm.issueSessionKey(id, M, uint64(block.timestamp + 7 days), ceiling, list);
    }

    function _item(bytes32 key, address to, uint256 amount)
        internal
        pure
        returns (IAllowanceStateMachine.PullItem memory)
    {
        return IAllowanceStateMachine.PullItem(key, to, amount);
    }
}
