// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {AllowanceStateMachine} from "../../src/AllowanceStateMachine.sol";
import {ERC1271WalletMock} from "../utils/mocks/ERC1271WalletMock.sol";

/// `createMandateWithSignature`: a mandate on a wallet exists only as its payer signed it.
contract CreateMandateWithSignatureTest is AllowanceBase {
    uint256 internal constant DEADLINE = 2_000_000_000;

    function _sig(uint256 pk, address who, uint256 max, uint8 interval, uint256 nonce, uint256 deadline)
        internal
        view
        returns (bytes memory)
    {
        return _sign(pk, _mandateDigest(address(asm), M, who, address(usd), max, interval, nonce, deadline));
    }

    function _create(
        address who,
        uint256 max,
        uint8 interval,
        uint256 nonce,
        uint256 deadline,
        bytes memory sig
    ) internal {
        asm.createMandateWithSignature(M, who, address(usd), max, I.Interval(interval), nonce, deadline, sig);
    }

    function test_createMandateWithSignature_success_eoa() public {
        bytes memory sig = _sig(PAYER_KEY, payer, 100e6, 0, 1, DEADLINE);
        vm.expectEmit(address(asm));
        emit I.MandateCreated(M, payer, address(usd), 100e6, I.Interval.Daily);
        _create(payer, 100e6, 0, 1, DEADLINE, sig);
        assertEq(asm.getMandate(M).payer, payer);
        assertTrue(asm.nonceUsed(payer, 1));
        // The operator may now issue a key and pull within it.
        _key(K, 0);
        asm.pull(K, dest, 10e6);
        assertEq(usd.balanceOf(dest), 10e6 + 1);
    }

    function test_createMandateWithSignature_success_erc1271Wallet() public {
        ERC1271WalletMock wallet = new ERC1271WalletMock(payer);
        bytes memory sig = _sig(PAYER_KEY, address(wallet), 5e6, 1, 1, DEADLINE);
        _create(address(wallet), 5e6, 1, 1, DEADLINE, sig);
        assertEq(asm.getMandate(M).payer, address(wallet));
    }

    function test_createMandateWithSignature_revert_wrongSigner() public {
        bytes memory sig = _sig(0xB0B, payer, 100e6, 0, 1, DEADLINE);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        _create(payer, 100e6, 0, 1, DEADLINE, sig);
    }

    /// A payer that signed 100 a day cannot be given 900,000 or another interval.
    function test_createMandateWithSignature_revert_otherTerms() public {
        bytes memory sig = _sig(PAYER_KEY, payer, 100e6, 0, 1, DEADLINE);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        _create(payer, 900_000e6, 0, 1, DEADLINE, sig);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        _create(payer, 100e6, 3, 1, DEADLINE, sig);
    }

    function test_createMandateWithSignature_revert_replayedNonce() public {
        bytes memory sig = _sig(PAYER_KEY, payer, 100e6, 0, 1, DEADLINE);
        _create(payer, 100e6, 0, 1, DEADLINE, sig);
        bytes32 m2 = keccak256("m2");
        bytes memory sig2 =
            _sign(PAYER_KEY, _mandateDigest(address(asm), m2, payer, address(usd), 100e6, 0, 1, DEADLINE));
        vm.expectRevert(abi.encodeWithSelector(R.NonceAlreadyUsed.selector, 1));
        asm.createMandateWithSignature(m2, payer, address(usd), 100e6, I.Interval.Daily, 1, DEADLINE, sig2);
    }

    function test_createMandateWithSignature_revert_expiredDeadline() public {
        uint256 deadline = block.timestamp + 10;
        bytes memory sig = _sig(PAYER_KEY, payer, 100e6, 0, 1, deadline);
        vm.warp(deadline + 1);
        vm.expectRevert(abi.encodeWithSelector(R.SignatureExpired.selector, deadline));
        _create(payer, 100e6, 0, 1, deadline, sig);
    }

    function test_createMandateWithSignature_revert_otherChainsDomain() public {
        bytes memory sig = _sig(PAYER_KEY, payer, 100e6, 0, 1, DEADLINE);
        vm.chainId(block.chainid + 1);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        _create(payer, 100e6, 0, 1, DEADLINE, sig);
    }

    function test_createMandateWithSignature_revert_otherContractsDomain() public {
        AllowanceStateMachine other = new AllowanceStateMachine(address(this), address(this), treasury);
        bytes memory sig =
            _sign(PAYER_KEY, _mandateDigest(address(other), M, payer, address(usd), 100e6, 0, 1, DEADLINE));
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        _create(payer, 100e6, 0, 1, DEADLINE, sig);
    }

    function test_createMandateWithSignature_revert_malleableS() public {
        bytes memory sig = _sig(PAYER_KEY, payer, 100e6, 0, 1, DEADLINE);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        _create(payer, 100e6, 0, 1, DEADLINE, _highS(sig));
    }

    function test_createMandateWithSignature_revert_operatorOnly() public {
        bytes memory sig = _sig(PAYER_KEY, payer, 100e6, 0, 1, DEADLINE);
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, stranger));
        _create(payer, 100e6, 0, 1, DEADLINE, sig);
    }

    function testFuzz_createMandateWithSignature_success_signedTermsOnly(
        uint256 max,
        uint8 interval,
        uint256 nonce
    ) public {
        max = bound(max, 1, type(uint64).max);
        interval = uint8(bound(interval, 0, 3));
        bytes memory sig = _sig(PAYER_KEY, payer, max, interval, nonce, DEADLINE);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        _create(payer, max == 1 ? 2 : max - 1, interval, nonce, DEADLINE, sig);
        _create(payer, max, interval, nonce, DEADLINE, sig);
        assertEq(uint256(asm.getMandate(M).maxAmount), max);
        assertTrue(asm.nonceUsed(payer, nonce));
    }
}
