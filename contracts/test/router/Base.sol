// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Signing} from "../utils/Signing.sol";
import {SettlementRouter} from "../../src/SettlementRouter.sol";
import {ISettlementRouter} from "../../src/interfaces/ISettlementRouter.sol";
import {TestStablecoin} from "../../src/TestStablecoin.sol";

/// @dev A standalone router whose owner is this test, a funded payer (with a known key, so it
///      can sign) and a funded treasury, both of which approved the router.
abstract contract RouterBase is Signing {
    TestStablecoin internal usd;
    SettlementRouter internal router;
    address internal operator = makeAddr("operator");
    address internal treasury = makeAddr("treasury");
    uint256 internal constant PAYER_KEY = 0xA11CE;
    address internal payer = vm.addr(PAYER_KEY);
    address internal dest = makeAddr("dest");
    address internal stranger = makeAddr("stranger");

    function setUp() public virtual {
        usd = new TestStablecoin("Test USD", "tUSD", address(this));
        router = new SettlementRouter(address(this), operator, treasury);
        usd.mint(payer, 1_000e6);
        usd.mint(treasury, 1_000e6);
        vm.prank(payer);
        usd.approve(address(router), type(uint256).max);
        vm.prank(treasury);
        usd.approve(address(router), type(uint256).max);
    }
}
