// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

/// @dev A hostile token whose transferFrom burns all the gas it is given.
contract GasBurnerToken {
    function transferFrom(address, address, uint256) external pure returns (bool) {
        while (true) {}
        return true;
    }
}
