// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "../allowance/Base.sol";
import {PasskeyWallet} from "../../src/PasskeyWallet.sol";

/// @dev A passkey (P-256 key pair, signed with forge's `vm.signP256`) and the smart wallet it
///      owns, funded and approving the state machine — the settlement chain's router.
abstract contract PasskeyBase is AllowanceBase {
    /// @dev P-256's group order: `s` above half of it is the malleated twin.
    uint256 internal constant P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551;
    uint256 internal constant PASSKEY = 0x5ec7e7a55c0de;
    uint256 internal constant OTHER_PASSKEY = 0xb0b5ec7e7;

    PasskeyWallet internal wallet;
    bytes32 internal qx;
    bytes32 internal qy;

    function setUp() public virtual override {
        super.setUp();
        (uint256 x, uint256 y) = vm.publicKeyP256(PASSKEY);
        (qx, qy) = (bytes32(x), bytes32(y));
        wallet = new PasskeyWallet(qx, qy, address(usd), address(asm));
        usd.mint(address(wallet), 1_000e6);
    }

    /// @dev `r ‖ s` by passkey `pk` over `digest`, `s` in the lower half (as the wallet wants).
    function _signP256(uint256 pk, bytes32 digest) internal pure returns (bytes memory) {
        (bytes32 r, bytes32 s) = vm.signP256(pk, digest);
        if (uint256(s) > P256_N / 2) s = bytes32(P256_N - uint256(s));
        return abi.encodePacked(r, s);
    }
}
