// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Signing} from "../utils/Signing.sol";
import {AllowanceStateMachine} from "../../src/AllowanceStateMachine.sol";
import {IAllowanceStateMachine} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {TestStablecoin} from "../../src/TestStablecoin.sol";

/// @dev Shared set-up: a token, a state machine (the settlement chain's router) whose owner and
///      operator is this test contract, a funded payer that approved it, and the clock at
///      Monday 2026-11-23 12:00Z.
abstract contract AllowanceBase is Signing {
    uint256 internal constant DAY = 86_400;
    /// @dev Monday 2026-11-23 00:00:00Z.
    uint256 internal constant MONDAY = 1_795_392_000;
    uint256 internal constant NOON = MONDAY + 12 hours;

    TestStablecoin internal usd;
    AllowanceStateMachine internal asm;
    address internal treasury = makeAddr("treasury");
    uint256 internal constant PAYER_KEY = 0xA11CE;
    address internal payer = vm.addr(PAYER_KEY);
    uint256 internal constant AGENT_KEY = 0xA6E47;
    address internal agent = vm.addr(AGENT_KEY);
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

    /// @dev The payer creates its own mandate (no signature needed when it sends it).
    function _mandate(uint256 max, IAllowanceStateMachine.Interval interval) internal {
        vm.prank(payer);
        asm.createMandate(M, payer, address(usd), max, interval);
    }

    function _key(bytes32 id, uint256 ceiling) internal {
        asm.issueSessionKey(id, M, uint64(block.timestamp + 7 days), ceiling, new address[](0), address(0));
    }

    /// @dev A key whose pulls need `signer`'s signature.
    function _signerKey(bytes32 id, address signer) internal {
        asm.issueSessionKey(id, M, uint64(block.timestamp + 7 days), 0, new address[](0), signer);
    }

    /// @dev An item signed by `pk` for `asm`.
    function _signedItem(uint256 pk, bytes32 key, address to, uint256 amount, uint256 nonce, uint256 deadline)
        internal
        view
        returns (IAllowanceStateMachine.PullItem memory)
    {
        bytes memory sig = _sign(pk, _pullDigest(address(asm), key, to, amount, nonce, deadline));
        return IAllowanceStateMachine.PullItem(key, to, amount, nonce, deadline, sig);
    }

    function _keyTo(bytes32 id, uint256 ceiling, address only) internal {
        address[] memory list = new address[](1);
        list[0] = only;
        asm.issueSessionKey(id, M, uint64(block.timestamp + 7 days), ceiling, list, address(0));
    }

    function _item(bytes32 key, address to, uint256 amount)
        internal
        pure
        returns (IAllowanceStateMachine.PullItem memory)
    {
        return IAllowanceStateMachine.PullItem(key, to, amount, 0, 0, "");
    }
}
