// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";

/// @title TestStablecoin
/// @notice A 6-decimal test stablecoin (one per currency per testnet chain). Only the owner mints.
contract TestStablecoin is ERC20, Ownable2Step {
    /// @notice Deploys the token.
    /// @param name_ Token name.
    /// @param symbol_ Token symbol.
    /// @param owner_ The account allowed to mint.
    constructor(string memory name_, string memory symbol_, address owner_)
        ERC20(name_, symbol_)
        Ownable(owner_)
    {}

    /// @notice Six decimals, like the stablecoins it stands in for.
    /// @return Always 6.
    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// @notice Mints `amount` to `to`. Only the owner.
    /// @param to The receiver.
    /// @param amount Amount in the smallest unit.
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }
}
