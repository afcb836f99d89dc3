// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {Signing} from "../utils/Signing.sol";
import {AllowanceStateMachine} from "../../src/AllowanceStateMachine.sol";
import {IAttestationMirror} from "../../src/interfaces/IAttestationMirror.sol";
import {IAllowanceStateMachine} from "../../src/interfaces/IAllowanceStateMachine.sol";
import {TestStablecoin} from "../../src/TestStablecoin.sol";
import {AttestationMirror} from "../../src/AttestationMirror.sol";
import {IAttestationMirror as AM} from "../../src/interfaces/IAttestationMirror.sol";
import {PullCodec} from "../utils/PullCodec.sol";

/// @dev Shared set-up: a token, a state machine (the settlement chain's router) whose operator
///      is this test contract and whose owner is a separate address (`owner`, acting through
///      `vm.prank`: owner and operator may not be one key), a funded payer that approved it,
///      and the clock at Monday 2026-11-23 12:00Z. The payer's mandates name the payees
///      [`dest`, `dest2`]; ids are derived from the payer and a salt (mandates) and from the
///      mandate and a salt (keys), computed here independently of the contract.
abstract contract AllowanceBase is Signing {
    uint256 internal constant DAY = 86_400;
    /// @dev Monday 2026-11-23 00:00:00Z.
    uint256 internal constant MONDAY = 1_795_392_000;
    uint256 internal constant NOON = MONDAY + 12 hours;

    TestStablecoin internal usd;
    AllowanceStateMachine internal asm;
    /// @dev The settlement chain's attestation mirror, trusting `attester`.
    AttestationMirror internal mirror;
    uint256 internal constant ATTESTER_KEY = 0xA77E57;
    address internal attester = vm.addr(ATTESTER_KEY);
    address internal owner = makeAddr("owner");
    address internal treasury = makeAddr("treasury");
    uint256 internal constant PAYER_KEY = 0xA11CE;
    address internal payer = vm.addr(PAYER_KEY);
    uint256 internal constant AGENT_KEY = 0xA6E47;
    address internal agent = vm.addr(AGENT_KEY);
    address internal dest = makeAddr("dest");
    address internal dest2 = makeAddr("dest2");
    address internal stranger = makeAddr("stranger");

    bytes32 internal constant M_SALT = keccak256("mandate");
    bytes32 internal constant K_SALT = keccak256("key");
    bytes32 internal constant K2_SALT = keccak256("key2");
    /// @dev The purpose the payer is shown and signs.
    string internal constant PURPOSE = "Groceries for the household agent";

    /// @dev The payer's mandate `M_SALT`, and its keys `K_SALT` and `K2_SALT`.
    bytes32 internal M;
    bytes32 internal K;
    bytes32 internal K2;

    function setUp() public virtual {
        vm.warp(NOON);
        usd = new TestStablecoin("Test USD", "tUSD", address(this));
        mirror = new AttestationMirror(owner);
        vm.prank(owner);
        mirror.addAttester(attester);
        asm = new AllowanceStateMachine(owner, address(this), treasury, IAttestationMirror(address(mirror)));
        usd.mint(payer, 1_000_000e6);
        usd.mint(dest, 1);
        vm.prank(payer);
        usd.approve(address(asm), type(uint256).max);
        M = _mandateIdOf(payer, M_SALT);
        K = _keyIdOf(M, K_SALT);
        K2 = _keyIdOf(M, K2_SALT);
    }

    /// @dev The payees the payer's mandates name: [dest, dest2].
    function _payees() internal view returns (address[] memory list) {
        list = new address[](2);
        list[0] = dest;
        list[1] = dest2;
    }

    function _one(address a) internal pure returns (address[] memory list) {
        list = new address[](1);
        list[0] = a;
    }

    /// @dev Terms for `who`'s mandate `salt`, naming [dest, dest2] and no agent.
    function _terms(bytes32 salt, address who, uint256 max, IAllowanceStateMachine.Interval interval)
        internal
        view
        returns (IAllowanceStateMachine.MandateTerms memory)
    {
        return IAllowanceStateMachine.MandateTerms(
            salt,
            who,
            address(usd),
            max,
            interval,
            _payees(),
            address(0),
            keccak256(bytes(PURPOSE)),
            IAllowanceStateMachine.Requirements(address(0), 0, 0)
        );
    }

    /// @dev Schemas (uids on the attestation chain) a mandate may require.
    bytes32 internal constant PERSONHOOD = keccak256("personhood schema");
    bytes32 internal constant AGENT = keccak256("agent schema");

    /// @dev The mirror's state of (`attester`, `subject`, `schema`) becomes attestation `uid`
    ///      (`revoked` or not, expiring at `expires`, 0: never) by a receipt `attester`
    ///      signed with `sequence`, submitted by a stranger (anyone may relay one).
    function _attest(
        address subject,
        bytes32 schema,
        bytes32 uid,
        uint64 expires,
        bool revoked,
        uint64 sequence
    ) internal {
        AM.Receipt memory r = AM.Receipt(attester, subject, schema, uid, expires, revoked, sequence);
        (uint8 v, bytes32 rr, bytes32 ss) = vm.sign(ATTESTER_KEY, mirror.hashReceipt(r));
        vm.prank(stranger);
        mirror.record(r, abi.encodePacked(rr, ss, v));
    }

    /// @dev Terms of `who`'s mandate `salt` requiring `payerSchema` of the payer and
    ///      `agentSchema` of every key's signer, attested by `attester`.
    function _identityTerms(bytes32 salt, address who, bytes32 payerSchema, bytes32 agentSchema)
        internal
        view
        returns (IAllowanceStateMachine.MandateTerms memory t)
    {
        t = _terms(salt, who, 100e6, IAllowanceStateMachine.Interval.Daily);
        t.requirements = IAllowanceStateMachine.Requirements(attester, payerSchema, agentSchema);
    }

    /// @dev The payer creates its own mandate `M` (no signature needed when it sends it).
    function _mandate(uint256 max, IAllowanceStateMachine.Interval interval) internal {
        vm.prank(payer);
        asm.createMandate(_terms(M_SALT, payer, max, interval));
    }

    /// @dev Key terms on `mandateId` for a week.
    function _keyTerms(
        bytes32 mandateId,
        bytes32 salt,
        uint256 ceiling,
        address[] memory list,
        address signer
    ) internal view returns (IAllowanceStateMachine.KeyTerms memory) {
        return IAllowanceStateMachine.KeyTerms(
            salt, mandateId, uint64(block.timestamp + 7 days), ceiling, list, signer
        );
    }

    /// @dev The operator issues key `salt` on `M` (all its payees); returns its id.
    function _key(bytes32 salt, uint256 ceiling) internal returns (bytes32) {
        return asm.issueSessionKey(_keyTerms(M, salt, ceiling, new address[](0), address(0)), _payees());
    }

    /// @dev A key on `M` whose pulls need `signer`'s signature.
    function _signerKey(bytes32 salt, address signer) internal returns (bytes32) {
        return asm.issueSessionKey(_keyTerms(M, salt, 0, new address[](0), signer), _payees());
    }

    /// @dev A key on `M` that pays only `only`.
    function _keyTo(bytes32 salt, uint256 ceiling, address only) internal returns (bytes32) {
        return asm.issueSessionKey(_keyTerms(M, salt, ceiling, _one(only), address(0)), _payees());
    }

    /// @dev The `DebitPull` signature of `pk` for `asm`.
    function _pullSig(uint256 pk, bytes32 key, address to, uint256 amount, uint256 nonce, uint256 deadline)
        internal
        view
        returns (bytes memory)
    {
        return _sign(pk, _pullDigest(address(asm), key, to, amount, nonce, deadline));
    }

    /// @dev A packed signed item (a one-item batch), signed by `pk` for `asm`.
    function _signedItem(uint256 pk, bytes32 key, address to, uint256 amount, uint256 nonce, uint256 deadline)
        internal
        view
        returns (bytes memory)
    {
        return
            PullCodec.signed(key, to, amount, nonce, deadline, _pullSig(pk, key, to, amount, nonce, deadline));
    }

    /// @dev A packed unsigned item (a one-item batch).
    function _item(bytes32 key, address to, uint256 amount) internal pure returns (bytes memory) {
        return PullCodec.unsigned(key, to, amount);
    }

    // ------------------------------------------------------------ storage probes

    /// @dev Slots of the state machine's private mappings, from
    ///      `forge inspect AllowanceStateMachine storageLayout` (`StorageLayout.t.sol` checks
    ///      them against what issuance writes).
    uint256 internal constant USAGE_SLOT = 13;
    uint256 internal constant KEYS_SLOT = 14;
    uint256 internal constant KEY_USE_SLOT = 15;
    uint256 internal constant ALLOWED_SLOT = 16;

    /// @dev The usage word (token, epoch end, spend) of the mandate with index `index` (the
    ///      first mandate created is 1).
    function _usageSlot(uint256 index) internal pure returns (bytes32) {
        return keccak256(abi.encode(index, USAGE_SLOT));
    }

    function _keySlot(bytes32 key) internal pure returns (bytes32) {
        return keccak256(abi.encode(key, KEYS_SLOT));
    }

    function _keyUseSlot(bytes32 key) internal pure returns (bytes32) {
        return keccak256(abi.encode(key, KEY_USE_SLOT));
    }

    function _allowedSlot(bytes32 key, address to) internal pure returns (bytes32) {
        return keccak256(abi.encode(to, keccak256(abi.encode(key, ALLOWED_SLOT))));
    }

    /// @dev How often `asm` read key `key`'s word since `vm.record()`. A pull reads it once on
    ///      the fast path; when the fast path is not taken the reference path reads it again.
    function _keyReads(bytes32 key) internal returns (uint256 n) {
        (bytes32[] memory reads,) = vm.accesses(address(asm));
        bytes32 slot = _keySlot(key);
        for (uint256 i; i < reads.length; ++i) {
            if (reads[i] == slot) ++n;
        }
    }

    /// @dev Whether, since `vm.record()`, `asm` first read key `key`'s allow-list entry for `to`
    ///      before its first read of the usage word of mandate `index`: the reference path checks
    ///      the allow-list before reading the usage, the fast path after. (For a key with
    ///      several destinations, which has allow-list entries.)
    function _allowListBeforeUsage(bytes32 key, address to, uint256 index) internal returns (bool) {
        (bytes32[] memory reads,) = vm.accesses(address(asm));
        bytes32 listed = _allowedSlot(key, to);
        bytes32 usage = _usageSlot(index);
        for (uint256 i; i < reads.length; ++i) {
            if (reads[i] == listed) return true;
            if (reads[i] == usage) return false;
        }
        revert("neither slot read");
    }

    /// @dev `pull` on the fast path: it must pass and read the key's word once.
    function _fastPull(bytes32 key, address to, uint256 amount) internal {
        vm.record();
        asm.pull(key, to, amount);
        assertEq(_keyReads(key), 1, "fast path taken");
    }

    /// @dev `pull` through the reference path (the fast path declined it first).
    function _referencePull(bytes32 key, address to, uint256 amount) internal {
        vm.record();
        asm.pull(key, to, amount);
        assertEq(_keyReads(key), 2, "reference path taken");
    }

    function _pause() internal {
        vm.prank(owner);
        asm.pause();
    }

    function _unpause() internal {
        vm.prank(owner);
        asm.unpause();
    }
}
