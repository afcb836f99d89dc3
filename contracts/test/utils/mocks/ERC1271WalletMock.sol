// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/// @dev A contract wallet (ERC-1271) that accepts what its owner key signed. It can hold and
///      approve tokens like any payer.
contract ERC1271WalletMock {
    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    function isValidSignature(bytes32 hash, bytes calldata signature) external view virtual returns (bytes4) {
        return _check(hash, signature);
    }

    function _check(bytes32 hash, bytes calldata signature) internal view returns (bytes4) {
        (address signer, ECDSA.RecoverError err,) = ECDSA.tryRecover(hash, signature);
        return err == ECDSA.RecoverError.NoError && signer == owner ? bytes4(0x1626ba7e) : bytes4(0);
    }

    function approve(address token, address spender, uint256 amount) external {
        require(msg.sender == owner, "owner only");
        (bool ok,) = token.call(abi.encodeWithSignature("approve(address,uint256)", spender, amount));
        require(ok, "approve failed");
    }
}
