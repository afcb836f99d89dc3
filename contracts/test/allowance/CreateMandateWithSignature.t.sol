// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceBase} from "./Base.sol";
import {IAllowanceStateMachine as I} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {ISettlementRouter as R} from "../../src/interfaces/ISettlementRouter.sol";
import {AllowanceStateMachine} from "../../src/AllowanceStateMachine.sol";
import {IAttestationMirror} from "../../src/interfaces/IAttestationMirror.sol";
import {ERC1271WalletMock} from "../utils/mocks/ERC1271WalletMock.sol";
import {EchoWallet, MagicGarbageWallet} from "../utils/mocks/EchoWallet.sol";

/// `createMandateWithSignature`: a mandate on a wallet exists only as its payer signed it —
/// ceiling, interval, payees, agent and purpose included.
contract CreateMandateWithSignatureTest is AllowanceBase {
    uint256 internal constant DEADLINE = 2_000_000_000;

    function _sig(uint256 pk, I.MandateTerms memory t, uint256 nonce, uint256 deadline)
        internal
        view
        returns (bytes memory)
    {
        return _sign(pk, _mandateDigest(address(asm), t, nonce, deadline));
    }

    function _daily(address who, uint256 max) internal view returns (I.MandateTerms memory) {
        return _terms(M_SALT, who, max, I.Interval.Daily);
    }

    function test_createMandateWithSignature_success_eoa() public {
        I.MandateTerms memory t = _daily(payer, 100e6);
        bytes memory sig = _sig(PAYER_KEY, t, 1, DEADLINE);
        vm.expectEmit(address(asm));
        emit R.NonceUsed(payer, 1);
        vm.expectEmit(address(asm));
        emit I.MandateCreated(
            M,
            payer,
            address(usd),
            100e6,
            I.Interval.Daily,
            M_SALT,
            _payees(),
            address(0),
            keccak256(bytes(PURPOSE))
        );
        assertEq(asm.createMandateWithSignature(t, 1, DEADLINE, sig), M);
        assertEq(asm.getMandate(M).payer, payer);
        assertTrue(asm.nonceUsed(payer, 1));
        // The operator may now issue a key and pull within it, to a signed payee.
        _key(K_SALT, 0);
        asm.pull(K, dest, 10e6);
        assertEq(usd.balanceOf(dest), 10e6 + 1);
    }

    function test_createMandateWithSignature_success_erc1271Wallet() public {
        ERC1271WalletMock wallet = new ERC1271WalletMock(payer);
        I.MandateTerms memory t = _terms(M_SALT, address(wallet), 5e6, I.Interval.Weekly);
        asm.createMandateWithSignature(t, 1, DEADLINE, _sig(PAYER_KEY, t, 1, DEADLINE));
        assertEq(asm.getMandate(_mandateIdOf(address(wallet), M_SALT)).payer, address(wallet));
    }

    function test_createMandateWithSignature_revert_wrongSigner() public {
        I.MandateTerms memory t = _daily(payer, 100e6);
        bytes memory sig = _sig(0xB0B, t, 1, DEADLINE);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        asm.createMandateWithSignature(t, 1, DEADLINE, sig);
    }

    /// A payer that signed 100 a day to [dest, dest2] for groceries cannot be given 900,000,
    /// another interval, another payee, an agent it did not name or another purpose.
    function test_createMandateWithSignature_revert_otherTerms() public {
        I.MandateTerms memory t = _daily(payer, 100e6);
        bytes memory sig = _sig(PAYER_KEY, t, 1, DEADLINE);
        bytes memory invalid = abi.encodeWithSelector(R.InvalidSignature.selector);
        t.maxAmount = 900_000e6;
        vm.expectRevert(invalid);
        asm.createMandateWithSignature(t, 1, DEADLINE, sig);
        t = _daily(payer, 100e6);
        t.interval = I.Interval.Yearly;
        vm.expectRevert(invalid);
        asm.createMandateWithSignature(t, 1, DEADLINE, sig);
        t = _daily(payer, 100e6);
        t.payees[1] = stranger;
        vm.expectRevert(invalid);
        asm.createMandateWithSignature(t, 1, DEADLINE, sig);
        t = _daily(payer, 100e6);
        t.payees = _one(dest);
        vm.expectRevert(invalid);
        asm.createMandateWithSignature(t, 1, DEADLINE, sig);
        t = _daily(payer, 100e6);
        t.agent = stranger;
        vm.expectRevert(invalid);
        asm.createMandateWithSignature(t, 1, DEADLINE, sig);
        t = _daily(payer, 100e6);
        t.purposeHash = keccak256("Refund of your overcharge: sign to RECEIVE 100 USD");
        vm.expectRevert(invalid);
        asm.createMandateWithSignature(t, 1, DEADLINE, sig);
        t = _daily(payer, 100e6);
        t.salt = keccak256("another salt");
        vm.expectRevert(invalid);
        asm.createMandateWithSignature(t, 1, DEADLINE, sig);
        // As signed, it goes through.
        asm.createMandateWithSignature(_daily(payer, 100e6), 1, DEADLINE, sig);
    }

    function test_createMandateWithSignature_revert_replayedNonce() public {
        I.MandateTerms memory t = _daily(payer, 100e6);
        asm.createMandateWithSignature(t, 1, DEADLINE, _sig(PAYER_KEY, t, 1, DEADLINE));
        t.salt = keccak256("m2");
        bytes memory sig2 = _sig(PAYER_KEY, t, 1, DEADLINE);
        vm.expectRevert(abi.encodeWithSelector(R.NonceAlreadyUsed.selector, 1));
        asm.createMandateWithSignature(t, 1, DEADLINE, sig2);
    }

    function test_createMandateWithSignature_revert_expiredDeadline() public {
        uint256 deadline = block.timestamp + 10;
        I.MandateTerms memory t = _daily(payer, 100e6);
        bytes memory sig = _sig(PAYER_KEY, t, 1, deadline);
        vm.warp(deadline + 1);
        vm.expectRevert(abi.encodeWithSelector(R.SignatureExpired.selector, deadline));
        asm.createMandateWithSignature(t, 1, deadline, sig);
    }

    function test_createMandateWithSignature_revert_otherChainsDomain() public {
        I.MandateTerms memory t = _daily(payer, 100e6);
        bytes memory sig = _sig(PAYER_KEY, t, 1, DEADLINE);
        vm.chainId(block.chainid + 1);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        asm.createMandateWithSignature(t, 1, DEADLINE, sig);
    }

    function test_createMandateWithSignature_revert_otherContractsDomain() public {
        AllowanceStateMachine other =
            new AllowanceStateMachine(owner, address(this), treasury, IAttestationMirror(address(mirror)));
        I.MandateTerms memory t = _daily(payer, 100e6);
        bytes memory sig = _sign(PAYER_KEY, _mandateDigest(address(other), t, 1, DEADLINE));
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        asm.createMandateWithSignature(t, 1, DEADLINE, sig);
    }

    function test_createMandateWithSignature_revert_malleableS() public {
        I.MandateTerms memory t = _daily(payer, 100e6);
        bytes memory sig = _sig(PAYER_KEY, t, 1, DEADLINE);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        asm.createMandateWithSignature(t, 1, DEADLINE, _highS(sig));
    }

    function test_createMandateWithSignature_revert_operatorOnly() public {
        I.MandateTerms memory t = _daily(payer, 100e6);
        bytes memory sig = _sig(PAYER_KEY, t, 1, DEADLINE);
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(R.UnauthorizedCaller.selector, stranger));
        asm.createMandateWithSignature(t, 1, DEADLINE, sig);
    }

    function test_createMandateWithSignature_revert_walletWithoutPayees() public {
        I.MandateTerms memory t = _daily(payer, 100e6);
        t.payees = new address[](0);
        bytes memory sig = _sig(PAYER_KEY, t, 1, DEADLINE);
        vm.expectRevert(abi.encodeWithSelector(I.PayeesRequired.selector));
        asm.createMandateWithSignature(t, 1, DEADLINE, sig);
    }

    // ------------------------------------------------------------ ERC-1271 answers

    /// A wallet that echoes its calldata answers with a word that starts with the magic value:
    /// it has not signed, and no mandate is put on it.
    function test_createMandateWithSignature_revert_echoingWallet() public {
        EchoWallet wallet = new EchoWallet(address(usd), address(asm));
        I.MandateTerms memory t = _daily(address(wallet), 100e6);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        asm.createMandateWithSignature(t, 1, DEADLINE, hex"00");
    }

    /// The magic value followed by anything but zeros is not the magic word.
    function testFuzz_createMandateWithSignature_revert_magicWithGarbage(uint224 garbage) public {
        garbage = uint224(bound(garbage, 1, type(uint224).max));
        MagicGarbageWallet wallet = new MagicGarbageWallet(address(usd), address(asm), garbage);
        I.MandateTerms memory t = _daily(address(wallet), 100e6);
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        asm.createMandateWithSignature(t, 1, DEADLINE, hex"00");
    }

    /// Outside batches a wallet gets all the gas the transaction has (a passkey wallet verified
    /// in Solidity needs far more than 100,000): see PasskeyWallet.t.sol for a real one.
    function test_createMandateWithSignature_success_walletGetsMoreThanTheBatchCap() public {
        GasHungryWallet wallet = new GasHungryWallet(payer);
        I.MandateTerms memory t = _daily(address(wallet), 100e6);
        asm.createMandateWithSignature(t, 1, DEADLINE, _sig(PAYER_KEY, t, 1, DEADLINE));
        assertEq(asm.getMandate(_mandateIdOf(address(wallet), M_SALT)).payer, address(wallet));
    }

    function testFuzz_createMandateWithSignature_success_signedTermsOnly(
        uint256 max,
        uint8 interval,
        uint256 nonce
    ) public {
        max = bound(max, 1, type(uint64).max);
        I.MandateTerms memory t = _terms(M_SALT, payer, max, I.Interval(bound(interval, 0, 3)));
        bytes memory sig = _sig(PAYER_KEY, t, nonce, DEADLINE);
        t.maxAmount = max == 1 ? 2 : max - 1;
        vm.expectRevert(abi.encodeWithSelector(R.InvalidSignature.selector));
        asm.createMandateWithSignature(t, nonce, DEADLINE, sig);
        t.maxAmount = max;
        asm.createMandateWithSignature(t, nonce, DEADLINE, sig);
        assertEq(uint256(asm.getMandate(M).maxAmount), max);
        assertTrue(asm.nonceUsed(payer, nonce));
    }

    /// The requirements are part of what the payer signs: the operator cannot drop or change
    /// them.
    function test_createMandateWithSignature_revert_requirementsAreSigned() public {
        _attest(payer, PERSONHOOD, keccak256("p"), 0, false, 1);
        I.MandateTerms memory t = _identityTerms(M_SALT, payer, PERSONHOOD, AGENT);
        bytes memory sig = _sig(PAYER_KEY, t, 1, DEADLINE);
        I.MandateTerms memory dropped = _identityTerms(M_SALT, payer, 0, 0);
        dropped.requirements.attester = address(0);
        vm.expectRevert(R.InvalidSignature.selector);
        asm.createMandateWithSignature(dropped, 1, DEADLINE, sig);
        t.requirements.agentSchema = 0;
        vm.expectRevert(R.InvalidSignature.selector);
        asm.createMandateWithSignature(t, 1, DEADLINE, sig);
        t.requirements.agentSchema = AGENT;
        asm.createMandateWithSignature(t, 1, DEADLINE, sig);
        assertEq(asm.getMandate(M).requirements.agentSchema, AGENT);
    }
}

/// @dev An ERC-1271 wallet that burns 150,000 gas before accepting its owner's signature.
contract GasHungryWallet is ERC1271WalletMock {
    constructor(address owner_) ERC1271WalletMock(owner_) {}

    function isValidSignature(bytes32 hash, bytes calldata signature)
        external
        view
        override
        returns (bytes4)
    {
        uint256 start = gasleft();
        while (start - gasleft() < 150_000) {}
        return _check(hash, signature);
    }
}
