// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {RouterBase} from "./Base.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {SettlementRouter} from "../../src/SettlementRouter.sol";
import {ERC1271WalletMock} from "../utils/mocks/ERC1271WalletMock.sol";
import {EchoWallet, MagicGarbageWallet} from "../utils/mocks/EchoWallet.sol";

/// `settleWithSignature`: a payer's tokens move only as the payer signed, once.
contract SettleWithSignatureTest is RouterBase {
    uint256 internal constant DEADLINE = 2_000_000_000;

    function _signed(uint256 pk, address from, address to, uint256 amount, uint256 nonce, uint256 deadline)
        internal
        view
        returns (bytes memory)
    {
        return _sign(pk, _paymentDigest(address(router), address(usd), from, to, amount, nonce, deadline));
    }

    function _settle(
        address from,
        address to,
        uint256 amount,
        uint256 nonce,
        uint256 deadline,
        bytes memory sig
    ) internal {
        vm.prank(operator);
        router.settleWithSignature(bytes32("pay"), address(usd), from, to, amount, nonce, deadline, sig);
    }

    function test_settleWithSignature_success_eoa() public {
        bytes memory sig = _signed(PAYER_KEY, payer, dest, 12e6, 7, DEADLINE);
        vm.expectEmit(address(router));
        emit R.NonceUsed(payer, 7);
        vm.expectEmit(address(router));
        emit R.Settled(bytes32("pay"), address(usd), payer, dest, 12e6);
        _settle(payer, dest, 12e6, 7, DEADLINE, sig);
        assertEq(usd.balanceOf(dest), 12e6);
        assertEq(usd.balanceOf(payer), 988e6);
        assertTrue(router.nonceUsed(payer, 7));
    }

    function test_settleWithSignature_success_erc1271Wallet() public {
        ERC1271WalletMock wallet = new ERC1271WalletMock(payer);
        usd.mint(address(wallet), 50e6);
        vm.prank(payer);
        wallet.approve(address(usd), address(router), type(uint256).max);
        bytes memory sig = _signed(PAYER_KEY, address(wallet), dest, 5e6, 1, DEADLINE);
        _settle(address(wallet), dest, 5e6, 1, DEADLINE, sig);
        assertEq(usd.balanceOf(dest), 5e6);
        // Another key's signature is not the wallet's.
        bytes memory other = _signed(0xB0B, address(wallet), dest, 5e6, 2, DEADLINE);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        _settle(address(wallet), dest, 5e6, 2, DEADLINE, other);
    }

    function test_settleWithSignature_revert_wrongSigner() public {
        bytes memory sig = _signed(0xB0B, payer, dest, 1e6, 1, DEADLINE);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        _settle(payer, dest, 1e6, 1, DEADLINE, sig);
    }

    function test_settleWithSignature_revert_otherTerms() public {
        bytes memory sig = _signed(PAYER_KEY, payer, dest, 1e6, 1, DEADLINE);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        _settle(payer, dest, 2e6, 1, DEADLINE, sig);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        _settle(payer, stranger, 1e6, 1, DEADLINE, sig);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        _settle(payer, dest, 1e6, 2, DEADLINE, sig);
    }

    function test_settleWithSignature_revert_replayedNonce() public {
        bytes memory sig = _signed(PAYER_KEY, payer, dest, 1e6, 9, DEADLINE);
        _settle(payer, dest, 1e6, 9, DEADLINE, sig);
        vm.expectRevert(abi.encodeWithSelector(R.NonceAlreadyUsed.selector, 9));
        _settle(payer, dest, 1e6, 9, DEADLINE, sig);
        assertEq(usd.balanceOf(dest), 1e6);
    }

    function test_settleWithSignature_revert_invalidatedNonce() public {
        bytes memory sig = _signed(PAYER_KEY, payer, dest, 1e6, 3, DEADLINE);
        vm.prank(payer);
        router.invalidateNonce(3);
        vm.expectRevert(abi.encodeWithSelector(R.NonceAlreadyUsed.selector, 3));
        _settle(payer, dest, 1e6, 3, DEADLINE, sig);
    }

    function test_settleWithSignature_revert_expiredDeadline() public {
        uint256 deadline = block.timestamp + 60;
        bytes memory sig = _signed(PAYER_KEY, payer, dest, 1e6, 1, deadline);
        vm.warp(deadline + 1);
        vm.expectRevert(abi.encodeWithSelector(R.SignatureExpired.selector, deadline));
        _settle(payer, dest, 1e6, 1, deadline, sig);
    }

    function test_settleWithSignature_revert_otherChainsDomain() public {
        bytes memory sig = _signed(PAYER_KEY, payer, dest, 1e6, 1, DEADLINE);
        vm.chainId(block.chainid + 1);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        _settle(payer, dest, 1e6, 1, DEADLINE, sig);
    }

    function test_settleWithSignature_revert_otherContractsDomain() public {
        SettlementRouter other = new SettlementRouter(address(this), operator, treasury);
        bytes memory sig =
            _sign(PAYER_KEY, _paymentDigest(address(other), address(usd), payer, dest, 1e6, 1, DEADLINE));
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        _settle(payer, dest, 1e6, 1, DEADLINE, sig);
    }

    function test_settleWithSignature_revert_malleableS() public {
        bytes memory sig = _signed(PAYER_KEY, payer, dest, 1e6, 1, DEADLINE);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        _settle(payer, dest, 1e6, 1, DEADLINE, _highS(sig));
        // The canonical one works.
        _settle(payer, dest, 1e6, 1, DEADLINE, sig);
    }

    function test_settleWithSignature_revert_operatorOnlyAndPaused() public {
        bytes memory sig = _signed(PAYER_KEY, payer, dest, 1e6, 1, DEADLINE);
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, stranger));
        router.settleWithSignature(bytes32(0), address(usd), payer, dest, 1e6, 1, DEADLINE, sig);
        router.pause();
        vm.expectRevert(abi.encodeWithSelector(R.RouterPaused.selector));
        _settle(payer, dest, 1e6, 1, DEADLINE, sig);
    }

    function test_settleWithSignature_revert_routerAsDestination() public {
        bytes memory sig = _signed(PAYER_KEY, payer, address(router), 1e6, 1, DEADLINE);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidDestination.selector, address(router)));
        _settle(payer, address(router), 1e6, 1, DEADLINE, sig);
    }

    function testFuzz_settleWithSignature_success_movesExactlyWhatWasSigned(uint256 amount, uint256 nonce)
        public
    {
        amount = bound(amount, 1, 1_000e6);
        bytes memory sig = _signed(PAYER_KEY, payer, dest, amount, nonce, DEADLINE);
        _settle(payer, dest, amount, nonce, DEADLINE, sig);
        assertEq(usd.balanceOf(payer), 1_000e6 - amount);
        assertEq(usd.balanceOf(dest), amount);
        assertTrue(router.nonceUsed(payer, nonce));
        assertFalse(router.nonceUsed(payer, nonce ^ 1));
    }

    // ------------------------------------------------------------ ERC-1271 answers

    /// A wallet that echoes its calldata returns a first word that starts with the magic value
    /// (the selector): it has not signed, and its approved tokens do not move.
    function test_settleWithSignature_revert_echoingWalletHasNotSigned() public {
        EchoWallet wallet = new EchoWallet(address(usd), address(router));
        usd.mint(address(wallet), 50e6);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        _settle(address(wallet), stranger, 50e6, 1, DEADLINE, hex"01");
        assertEq(usd.balanceOf(address(wallet)), 50e6);
        assertFalse(router.nonceUsed(address(wallet), 1));
    }

    /// The magic value with anything but zeros after it is not the magic word.
    function testFuzz_settleWithSignature_revert_magicWithGarbage(uint224 garbage) public {
        garbage = uint224(bound(garbage, 1, type(uint224).max));
        MagicGarbageWallet wallet = new MagicGarbageWallet(address(usd), address(router), garbage);
        usd.mint(address(wallet), 50e6);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        _settle(address(wallet), stranger, 50e6, 1, DEADLINE, hex"01");
        assertEq(usd.balanceOf(address(wallet)), 50e6);
    }

    /// The same wallet answering the exact magic word (zero garbage) is accepted: the check is
    /// the whole word, not a stricter one.
    function test_settleWithSignature_success_exactMagicWord() public {
        MagicGarbageWallet wallet = new MagicGarbageWallet(address(usd), address(router), 0);
        usd.mint(address(wallet), 50e6);
        _settle(address(wallet), dest, 50e6, 1, DEADLINE, hex"01");
        assertEq(usd.balanceOf(dest), 50e6);
    }
}
