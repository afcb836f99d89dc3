// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Test} from "../utils/Test.sol";
import {SettlementRouter} from "../../src/SettlementRouter.sol";
import {ISettlementRouter} from "../../src/interfaces/ISettlementRouter.sol";
import {TestStablecoin} from "../../src/TestStablecoin.sol";

abstract contract RouterBase is Test {
    TestStablecoin internal usd;
    SettlementRouter internal router;
    address internal operator = makeAddr("operator");
    address internal treasury = makeAddr("treasury");
    address internal payer = makeAddr("payer");
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
