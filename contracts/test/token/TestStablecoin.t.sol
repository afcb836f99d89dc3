// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Test} from "../utils/Test.sol";
import {TestStablecoin} from "../../src/TestStablecoin.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// decimals and mint (the token's only functions beyond OpenZeppelin's ERC-20).
contract TestStablecoinTest is Test {
    TestStablecoin internal t;

    function setUp() public {
        t = new TestStablecoin("Test EUR", "tEUR", address(this));
    }

    function test_sixDecimals() public view {
        assertEq(uint256(t.decimals()), 6);
        assertEq(t.symbol(), "tEUR");
    }

    function testFuzz_ownerMints(address to, uint256 amount) public {
        vm.assume(to != address(0));
        amount = bound(amount, 0, type(uint128).max);
        t.mint(to, amount);
        assertEq(t.balanceOf(to), amount);
        assertEq(t.totalSupply(), amount);
    }

    function test_onlyOwnerMints() public {
        address stranger = makeAddr("stranger");
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(Ownable.OwnableUnauthorizedAccount.selector, stranger));
        t.mint(stranger, 1);
    }
}
