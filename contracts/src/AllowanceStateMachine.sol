// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {IAllowanceStateMachine} from "./interfaces/IAllowanceStateMachine.sol";
import {SettlementCore} from "./SettlementCore.sol";

/// @title AllowanceStateMachine
/// @notice Enforces agentic recurring debits on chain: mandates with a ceiling per calendar epoch,
///         session keys scoped to a mandate, and debit pulls checked against both ceilings.
/// @dev It is also the settlement chain's router (`SettlementCore`): payers approve this contract
///      and a pull moves their tokens with one `transferFrom`, without a call to a second
///      contract. Storage is laid out for the pull hot path: the operator and the pause flag
///      share a slot; a key is one slot (config and its epoch usage); a mandate is two slots
///      (config, and token with its epoch usage). A pull reads four slots, checks the
///      allow-list once, writes two slots, and calls the token. See ARCHITECTURE.md "Gas".
///      Authority: the payer signs (or sends) its mandates and may cancel them and revoke their
///      keys alone; the operator creates only treasury-paid mandates by itself, issues keys and
///      submits pulls within what the payer signed; a key with a `signer` pulls only with its
///      agent's signature. See ARCHITECTURE.md "Trust model".
contract AllowanceStateMachine is IAllowanceStateMachine, SettlementCore {
    /// @dev Slot A of a mandate.
    struct MandateConfig {
        address payer;
        uint64 maxAmount;
        Interval interval;
        MandateStatus status;
        bool deferred; // payer is the treasury: pulls authorize only, payout by `settle`
    }

    /// @dev Slot B of a mandate: the token and the usage of the current epoch.
    struct MandateUsage {
        address token;
        uint32 epochEnd; // day number of the first day after the epoch of `spent`
        uint64 spent;
    }

    /// @dev A session key and its usage, one slot.
    struct Key {
        uint32 mandateIndex; // 0 = no such key
        uint40 expiresAt;
        bool revoked;
        bool hasAllowList;
        uint64 ceiling; // 0 = none
        uint32 epochEnd; // day number of the first day after the epoch of `spent`
        uint64 spent;
        bool hasSigner; // pulls need the signature of `_signerOf[keyId]`
    }

    /// @notice EIP-712 type of the mandate a payer signs.
    bytes32 public constant MANDATE_TYPEHASH = keccak256(
        "Mandate(bytes32 mandateId,address payer,address token,uint256 maxAmount,uint8 interval,address[] payees,address agent,string purpose,uint256 nonce,uint256 deadline)"
    );
    /// @notice EIP-712 type of the pull a key's agent signs.
    bytes32 public constant DEBIT_PULL_TYPEHASH = keccak256(
        "DebitPull(bytes32 keyId,address destination,uint256 amount,uint256 nonce,uint256 deadline)"
    );

    uint256 private constant DAY = 86_400;

    uint32 private _mandateCount;
    mapping(bytes32 mandateId => uint32) private _mandateIndex;
    mapping(uint32 index => bytes32) private _mandateIdOf;
    mapping(uint32 index => MandateConfig) private _config;
    mapping(uint32 index => MandateUsage) private _usage;
    mapping(bytes32 keyId => Key) private _keys;
    mapping(bytes32 keyId => mapping(address destination => bool)) private _allowed;
    mapping(bytes32 keyId => address) private _signerOf;
    mapping(bytes32 keyId => mapping(uint256 word => uint256 bits)) private _pullNonces;
    /// @dev EIP-712 hash of the payees a mandate's payer signed (0: none named, treasury only).
    mapping(uint32 index => bytes32) private _payeesHash;
    /// @dev The agent a mandate's payer named (0: none): every key on it has this signer.
    mapping(uint32 index => address) private _agentOf;

    /// @notice Deploys the state machine, which is also the settlement chain's router.
    /// @param owner_ Owner (may pause and change the operator and treasury).
    /// @param operator_ The service's signer: the only account that may write and move tokens.
    /// @param treasury_ The treasury wallet.
    constructor(address owner_, address operator_, address treasury_)
        SettlementCore(owner_, operator_, treasury_)
    {}

    // ------------------------------------------------------------------ writes

    /// @inheritdoc IAllowanceStateMachine
    function createMandate(MandateTerms calldata terms) external returns (bytes32 mandateId) {
        if (msg.sender != terms.payer && (msg.sender != _operator() || terms.payer != _treasury)) {
            revert UnauthorizedCaller(msg.sender);
        }
        mandateId = mandateIdOf(terms.payer, terms.salt);
        _createMandate(mandateId, terms, _payeesHashOf(terms.payees));
    }

    /// @inheritdoc IAllowanceStateMachine
    function createMandateWithSignature(
        MandateTerms calldata terms,
        uint256 nonce,
        uint256 deadline,
        bytes calldata signature
    ) external onlyOperator returns (bytes32 mandateId) {
        if (block.timestamp > deadline) revert SignatureExpired(deadline);
        mandateId = mandateIdOf(terms.payer, terms.salt);
        bytes32 payeesHash = _payeesHashOf(terms.payees);
        bytes32 digest = _hashTypedDataV4(_mandateStructHash(mandateId, terms, payeesHash, nonce, deadline));
        if (!_isValidSignature(terms.payer, digest, signature, false)) revert InvalidSignature();
        _useNonce(terms.payer, nonce);
        _createMandate(mandateId, terms, payeesHash);
    }

    /// @dev The EIP-712 struct hash of a `Mandate` (encoded in two halves: too many words for
    ///      the stack in one `abi.encode`).
    function _mandateStructHash(
        bytes32 mandateId,
        MandateTerms calldata terms,
        bytes32 payeesHash,
        uint256 nonce,
        uint256 deadline
    ) private pure returns (bytes32) {
        bytes memory head = abi.encode(
            MANDATE_TYPEHASH, mandateId, terms.payer, terms.token, terms.maxAmount, uint8(terms.interval)
        );
        return keccak256(abi.encodePacked(head, abi.encode(payeesHash, terms.agent, terms.purposeHash, nonce, deadline)));
    }

    /// @inheritdoc IAllowanceStateMachine
    function mandateIdOf(address payer, bytes32 salt) public pure returns (bytes32) {
        return keccak256(abi.encode(payer, salt));
    }

    /// @inheritdoc IAllowanceStateMachine
    function keyIdOf(bytes32 mandateId, bytes32 salt) public pure returns (bytes32) {
        return keccak256(abi.encode(mandateId, salt));
    }

    /// @dev The EIP-712 encoding of an `address[]` member: the hash of its elements, each padded
    ///      to a word (which is what `abi.encodePacked` does with array elements).
    function _payeesHashOf(address[] calldata payees) private pure returns (bytes32) {
        return keccak256(abi.encodePacked(payees));
    }

    /// @dev Stores a new active mandate and emits `MandateCreated`. A mandate on a wallet names
    ///      its payees; only the treasury's (deferred) mandates may name none.
    function _createMandate(bytes32 mandateId, MandateTerms calldata terms, bytes32 payeesHash) private {
        if (_mandateIndex[mandateId] != 0) revert MandateAlreadyExists(mandateId);
        address payer = terms.payer;
        if (payer == address(0) || terms.token == address(0)) revert ZeroAddress();
        if (payer == address(this)) revert InvalidDestination(payer);
        uint256 maxAmount = terms.maxAmount;
        if (maxAmount == 0 || maxAmount > type(uint64).max) revert InvalidAmount(maxAmount);
        bool deferred = payer == _treasury;
        uint256 n = terms.payees.length;
        if (n == 0 && !deferred) revert PayeesRequired();
        for (uint256 i; i < n; ++i) {
            address d = terms.payees[i];
            if (d == address(0)) revert ZeroAddress();
            if (d == address(this)) revert InvalidDestination(d);
        }
        uint32 index = ++_mandateCount;
        _mandateIndex[mandateId] = index;
        _mandateIdOf[index] = mandateId;
        _config[index] = MandateConfig(payer, uint64(maxAmount), terms.interval, MandateStatus.Active, deferred);
        _usage[index] = MandateUsage(terms.token, 0, 0);
        if (n != 0) _payeesHash[index] = payeesHash;
        if (terms.agent != address(0)) _agentOf[index] = terms.agent;
        _emitMandateCreated(mandateId, terms);
    }

    /// @dev Emits `MandateCreated` (its own frame: the caller's stack is full).
    function _emitMandateCreated(bytes32 mandateId, MandateTerms calldata terms) private {
        emit MandateCreated(
            mandateId,
            terms.payer,
            terms.token,
            uint64(terms.maxAmount),
            terms.interval,
            terms.salt,
            terms.payees,
            terms.agent,
            terms.purposeHash
        );
    }

    /// @inheritdoc IAllowanceStateMachine
    function cancelMandate(bytes32 mandateId) external {
        uint32 index = _mandateIndex[mandateId];
        if (index == 0) revert UnknownMandate(mandateId);
        MandateConfig storage cfg = _config[index];
        if (msg.sender != _operator() && msg.sender != cfg.payer) revert UnauthorizedCaller(msg.sender);
        if (cfg.status != MandateStatus.Active) revert MandateNotActive(mandateId);
        cfg.status = MandateStatus.Canceled;
        emit MandateCanceled(mandateId);
    }

    /// @inheritdoc IAllowanceStateMachine
    function issueSessionKey(KeyTerms calldata terms, address[] calldata payees) external returns (bytes32 keyId) {
        uint32 index = _mandateIndex[terms.mandateId];
        if (index == 0) revert UnknownMandate(terms.mandateId);
        keyId = keyIdOf(terms.mandateId, terms.salt);
        if (_keys[keyId].mandateIndex != 0) revert KeyAlreadyExists(keyId);
        {
            MandateConfig memory cfg = _config[index];
            if (msg.sender != _operator() && msg.sender != cfg.payer) revert UnauthorizedCaller(msg.sender);
            if (cfg.status != MandateStatus.Active) revert MandateNotActive(terms.mandateId);
            if (terms.expiresAt <= block.timestamp) revert ExpiryNotInFuture(terms.expiresAt);
            if (terms.maxAmount > cfg.maxAmount) revert KeyCeilingAboveMandate(terms.maxAmount, cfg.maxAmount);
            address agent = _agentOf[index];
            if (agent != address(0) && terms.signer != agent) revert SignerNotAgent(agent, terms.signer);
        }
        address[] calldata list = _storeAllowList(keyId, index, terms.allowedDestinations, payees);
        uint40 expiry = terms.expiresAt > type(uint40).max ? type(uint40).max : uint40(terms.expiresAt);
        _keys[keyId] =
            Key(index, expiry, false, list.length != 0, uint64(terms.maxAmount), 0, 0, terms.signer != address(0));
        if (terms.signer != address(0)) _signerOf[keyId] = terms.signer;
        _emitKeyIssued(keyId, terms, expiry, list);
    }

    /// @dev Emits `SessionKeyIssued` (its own frame: the caller's stack is full).
    function _emitKeyIssued(bytes32 keyId, KeyTerms calldata terms, uint40 expiry, address[] calldata list)
        private
    {
        emit SessionKeyIssued(
            keyId, terms.mandateId, expiry, uint64(terms.maxAmount), list, terms.signer, terms.salt
        );
    }

    /// @dev Stores key `keyId`'s allow-list and returns it. When mandate `index` names payees,
    ///      the key pays only payees the payer signed: `payees` must be the signed list, and the
    ///      key's destinations a part of it (all of it when the key names none).
    function _storeAllowList(
        bytes32 keyId,
        uint32 index,
        address[] calldata requested,
        address[] calldata payees
    ) private returns (address[] calldata list) {
        list = requested;
        bytes32 payeesHash = _payeesHash[index];
        if (payeesHash != 0) {
            if (_payeesHashOf(payees) != payeesHash) revert PayeesMismatch(_mandateIdOf[index]);
            if (list.length == 0) list = payees;
            else _requireSubset(list, payees);
        }
        uint256 n = list.length;
        for (uint256 i; i < n; ++i) {
            address d = list[i];
            if (d == address(0)) revert ZeroAddress();
            if (d == address(this)) revert InvalidDestination(d);
            _allowed[keyId][d] = true;
        }
    }

    /// @dev Reverts `PayeeNotSigned` for the first element of `list` that is not in `payees`.
    function _requireSubset(address[] calldata list, address[] calldata payees) private pure {
        uint256 m = payees.length;
        for (uint256 i; i < list.length; ++i) {
            address d = list[i];
            uint256 j;
            while (j < m && payees[j] != d) ++j;
            if (j == m) revert PayeeNotSigned(d);
        }
    }

    /// @inheritdoc IAllowanceStateMachine
    function revokeSessionKey(bytes32 keyId) external {
        Key storage k = _keys[keyId];
        if (k.mandateIndex == 0) revert UnknownKey(keyId);
        if (msg.sender != _operator() && msg.sender != _config[k.mandateIndex].payer) {
            revert UnauthorizedCaller(msg.sender);
        }
        if (k.revoked) revert KeyRevoked(keyId);
        k.revoked = true;
        emit SessionKeyRevoked(keyId);
    }

    /// @inheritdoc IAllowanceStateMachine
    /// @dev The common case (a pull that passes, after another pull of the key this epoch) runs
    ///      in `_fastPull`; anything else (a decline, a key's first pull of an epoch) takes the
    ///      reference path `_authorize`, which applies the same rules and names the reason.
    function pull(bytes32 keyId, address destination, uint256 amount) external onlyOperatorUnpaused {
        uint256 fast = _fastPull(keyId, destination, amount);
        if (fast == FAST_TRANSFER_FAILED) revert TransferFailed(keyId);
        if (fast == FAST_NOT_TAKEN) _referencePull(keyId, destination, amount);
        emit DebitPulled(keyId, destination, amount);
    }

    /// @dev A pull decided by `_authorize` alone: reverts with the reason's custom error, or
    ///      stores the new usage and moves the tokens (reverting `TransferFailed`).
    function _referencePull(bytes32 keyId, address destination, uint256 amount) internal {
        (bytes memory err, Slots memory p) = _authorize(keyId, destination, amount, false);
        if (err.length != 0) {
            assembly ("memory-safe") {
                revert(add(err, 32), mload(err))
            }
        }
        _write(p.keySlot, p.keyWord);
        _write(p.useSlot, p.useWord);
        if (!p.deferred && !_tryMove(p.token, p.payer, destination, amount)) revert TransferFailed(keyId);
    }

    /// @inheritdoc IAllowanceStateMachine
    /// @dev Each unsigned item takes the fast path when it applies, as in `pull`. A signed item
    ///      on a key with a signer is checked (deadline, unused nonce, signature) before the
    ///      allowance rules; its nonce is marked used with the usage and restored with it when
    ///      the token move fails.
    function pullBatch(PullItem[] calldata items) external onlyOperatorUnpaused returns (uint256 authorized) {
        uint256 n = items.length;
        for (uint256 i; i < n; ++i) {
            PullItem calldata item = items[i];
            bool signed = item.signature.length != 0;
            if (!signed) {
                uint256 fast = _fastPull(item.keyId, item.destination, item.amount);
                if (fast == FAST_DONE) {
                    emit DebitPulled(item.keyId, item.destination, item.amount);
                    ++authorized;
                    continue;
                }
                if (fast == FAST_TRANSFER_FAILED) {
                    emit DebitPullDeclined(
                        item.keyId, i, abi.encodeWithSelector(TransferFailed.selector, item.keyId)
                    );
                    continue;
                }
            }
            address signer = signed ? _signerOf[item.keyId] : address(0);
            if (signer != address(0)) {
                bytes memory sigErr = _checkPullSignature(item, signer);
                if (sigErr.length != 0) {
                    emit DebitPullDeclined(item.keyId, i, sigErr);
                    continue;
                }
            }
            (bytes memory err, Slots memory p) =
                _authorize(item.keyId, item.destination, item.amount, signer != address(0));
            if (err.length != 0) {
                emit DebitPullDeclined(item.keyId, i, err);
                continue;
            }
            _write(p.keySlot, p.keyWord);
            _write(p.useSlot, p.useWord);
            uint256 nonceBit = signer != address(0) ? 1 << (item.nonce & 0xff) : 0;
            if (nonceBit != 0) _pullNonces[item.keyId][item.nonce >> 8] |= nonceBit;
            if (p.deferred || _tryMove(p.token, p.payer, item.destination, item.amount)) {
                if (nonceBit != 0) emit PullNonceUsed(item.keyId, item.nonce);
                emit DebitPulled(item.keyId, item.destination, item.amount);
                ++authorized;
            } else {
                _unspend(p.keySlot, p.useSlot, item.amount);
                if (nonceBit != 0) _pullNonces[item.keyId][item.nonce >> 8] &= ~nonceBit;
                emit DebitPullDeclined(
                    item.keyId, i, abi.encodeWithSelector(TransferFailed.selector, item.keyId)
                );
            }
        }
    }

    /// @dev The agent's authorization of a signed item: not past its deadline, nonce unused, a
    ///      valid `DebitPull` signature by `signer`. Empty when it holds, else the error.
    function _checkPullSignature(PullItem calldata item, address signer) private view returns (bytes memory) {
        if (block.timestamp > item.deadline) {
            return abi.encodeWithSelector(SignatureExpired.selector, item.deadline);
        }
        if (_pullNonces[item.keyId][item.nonce >> 8] & (1 << (item.nonce & 0xff)) != 0) {
            return abi.encodeWithSelector(NonceAlreadyUsed.selector, item.nonce);
        }
        bytes32 digest = _hashTypedDataV4(
            keccak256(
                abi.encode(
                    DEBIT_PULL_TYPEHASH, item.keyId, item.destination, item.amount, item.nonce, item.deadline
                )
            )
        );
        if (!_isValidSignature(signer, digest, item.signature, true)) {
            return abi.encodeWithSelector(InvalidSignature.selector);
        }
        return "";
    }

    // ------------------------------------------------------------------ views

    /// @inheritdoc IAllowanceStateMachine
    function getMandate(bytes32 mandateId) external view returns (MandateView memory v) {
        uint32 index = _mandateIndex[mandateId];
        if (index == 0) revert UnknownMandate(mandateId);
        MandateConfig memory cfg = _config[index];
        MandateUsage memory use = _usage[index];
        uint256 today = block.timestamp / DAY;
        (uint256 startDay, uint256 endDay) = _epochDays(cfg.interval, today);
        v = MandateView({
            payer: cfg.payer,
            token: use.token,
            maxAmount: cfg.maxAmount,
            interval: cfg.interval,
            status: cfg.status,
            spentThisEpoch: use.epochEnd > today ? use.spent : 0,
            epochStart: uint64(startDay * DAY),
            epochEnd: uint64(endDay * DAY),
            deferred: cfg.deferred,
            payeesHash: _payeesHash[index],
            agent: _agentOf[index]
        });
    }

    /// @inheritdoc IAllowanceStateMachine
    function getSessionKey(bytes32 keyId) external view returns (SessionKeyView memory v) {
        Key memory k = _keys[keyId];
        if (k.mandateIndex == 0) revert UnknownKey(keyId);
        v = SessionKeyView({
            mandateId: _mandateIdOf[k.mandateIndex],
            expiresAt: k.expiresAt,
            maxAmount: k.ceiling,
            revoked: k.revoked,
            hasAllowList: k.hasAllowList,
            spentThisEpoch: k.epochEnd > block.timestamp / DAY ? k.spent : 0,
            signer: _signerOf[keyId]
        });
    }

    /// @inheritdoc IAllowanceStateMachine
    function pullNonceUsed(bytes32 keyId, uint256 nonce) external view returns (bool) {
        return _pullNonces[keyId][nonce >> 8] & (1 << (nonce & 0xff)) != 0;
    }

    /// @inheritdoc IAllowanceStateMachine
    function isDestinationAllowed(bytes32 keyId, address destination) external view returns (bool) {
        Key memory k = _keys[keyId];
        if (k.mandateIndex == 0) return false;
        return !k.hasAllowList || _allowed[keyId][destination];
    }

    /// @inheritdoc IAllowanceStateMachine
    function remainingAllowance(bytes32 keyId) external view returns (uint256 remaining, uint64 resetsAt) {
        Key memory k = _keys[keyId];
        if (k.mandateIndex == 0) return (0, 0);
        MandateConfig memory cfg = _config[k.mandateIndex];
        MandateUsage memory use = _usage[k.mandateIndex];
        uint256 today = block.timestamp / DAY;
        (, uint256 endDay) = _epochDays(cfg.interval, today);
        resetsAt = uint64(endDay * DAY);
        if (k.revoked || block.timestamp >= k.expiresAt || cfg.status != MandateStatus.Active) {
            return (0, resetsAt);
        }
        uint256 mandateSpent = use.epochEnd > today ? use.spent : 0;
        remaining = cfg.maxAmount - mandateSpent;
        if (k.ceiling != 0) {
            uint256 keySpent = k.epochEnd > today ? k.spent : 0;
            uint256 own = k.ceiling - keySpent;
            if (own < remaining) remaining = own;
        }
    }

    /// @inheritdoc IAllowanceStateMachine
    function epochBounds(Interval interval, uint256 timestamp)
        external
        pure
        returns (uint64 start, uint64 end)
    {
        (uint256 startDay, uint256 endDay) = _epochDays(interval, timestamp / DAY);
        return (uint64(startDay * DAY), uint64(endDay * DAY));
    }

    // ------------------------------------------------------------------ internals

    /// @dev Where an authorized pull's new usage goes, and what it moves.
    struct Slots {
        uint256 keySlot;
        uint256 keyWord;
        uint256 useSlot;
        uint256 useWord;
        address payer;
        address token;
        bool deferred;
    }

    // Bit offsets of the packed `Key` and `MandateUsage` slots (Solidity's own struct layout,
    // members from the low-order bytes up), read and written whole on the pull path.
    uint256 private constant K_EXPIRES = 32;
    uint256 private constant K_REVOKED = 72;
    uint256 private constant K_ALLOWLIST = 80;
    uint256 private constant K_CEILING = 88;
    uint256 private constant K_EPOCH = 152;
    uint256 private constant K_SPENT = 184;
    uint256 private constant K_SIGNER = 248;
    uint256 private constant U_EPOCH = 160;
    uint256 private constant U_SPENT = 192;
    uint256 private constant C_MAX = 160;
    uint256 private constant C_INTERVAL = 224;
    uint256 private constant C_STATUS = 232;
    uint256 private constant C_DEFERRED = 240;
    uint256 private constant MASK32 = 0xffffffff;
    uint256 private constant MASK40 = 0xffffffffff;
    uint256 private constant MASK64 = 0xffffffffffffffff;

    function _read(uint256 slot) private view returns (uint256 word) {
        assembly ("memory-safe") {
            word := sload(slot)
        }
    }

    function _write(uint256 slot, uint256 word) internal {
        assembly ("memory-safe") {
            sstore(slot, word)
        }
    }

    /// @dev Takes back a pull whose token move failed: subtracts `amount` from the spend in the
    ///      key and mandate-usage words as they are now, so whatever else changed during the
    ///      token call (a revocation, a cancellation) stands. The spend includes `amount` (it
    ///      was stored before the call, and only this pull could have added to it since).
    function _unspend(uint256 keySlot, uint256 useSlot, uint256 amount) private {
        _write(keySlot, _read(keySlot) - (amount << K_SPENT));
        _write(useSlot, _read(useSlot) - (amount << U_SPENT));
    }

    /// @dev `_fastPull` outcomes.
    uint256 private constant FAST_NOT_TAKEN = 0;
    uint256 private constant FAST_DONE = 1;
    uint256 private constant FAST_TRANSFER_FAILED = 2;

    /// @dev The pull hot path. When the pull passes every check and both usage words already
    ///      belong to the current epoch (so no calendar arithmetic is needed), it stores the new
    ///      usage and moves the tokens: `FAST_DONE`, or `FAST_TRANSFER_FAILED` with the usage
    ///      restored when the token move fails. Otherwise `FAST_NOT_TAKEN`, having changed
    ///      nothing, for `_authorize` to decide. Each slot is read once; unchecked sums are safe
    ///      because amounts are below 2^64 and the sums are compared to 64-bit ceilings before
    ///      they are stored.
    function _fastPull(bytes32 keyId, address destination, uint256 amount) private returns (uint256 result) {
        bool ok;
        uint256 keySlot;
        uint256 kw;
        uint256 cw;
        uint256 useSlot;
        uint256 uw;
        assembly ("memory-safe") {
            let today := div(timestamp(), DAY)
            mstore(0x00, keyId)
            mstore(0x20, _keys.slot)
            keySlot := keccak256(0x00, 0x40)
            kw := sload(keySlot)
            mstore(0x00, and(kw, MASK32))
            mstore(0x20, _config.slot)
            cw := sload(keccak256(0x00, 0x40))
            mstore(0x20, _usage.slot)
            useSlot := keccak256(0x00, 0x40)
            uw := sload(useSlot)
            // exists (a zero mandate index has a zero config word, so status is not Active),
            // no signer, not revoked, not expired, mandate active and not deferred (status and
            // deferred bytes read as one 16-bit word), a destination other than zero and this
            // contract, both usage words of this epoch.
            ok := and(
                and(
                    and(lt(sub(amount, 1), MASK64), iszero(and(shr(K_REVOKED, kw), 0xff))),
                    and(
                        iszero(shr(K_SIGNER, kw)),
                        iszero(or(iszero(destination), eq(destination, address())))
                    )
                ),
                and(
                    and(
                        lt(timestamp(), and(shr(K_EXPIRES, kw), MASK40)),
                        eq(and(shr(C_STATUS, cw), 0xffff), 1)
                    ),
                    and(gt(and(shr(K_EPOCH, kw), MASK32), today), gt(and(shr(U_EPOCH, uw), MASK32), today))
                )
            )
            let keySpent := add(and(shr(K_SPENT, kw), MASK64), amount)
            let useSpent := add(shr(U_SPENT, uw), amount)
            ok := and(
                ok,
                and(
                    or(
                        iszero(and(shr(K_CEILING, kw), MASK64)),
                        iszero(gt(keySpent, and(shr(K_CEILING, kw), MASK64)))
                    ),
                    iszero(gt(useSpent, and(shr(C_MAX, cw), MASK64)))
                )
            )
            if and(ok, iszero(iszero(and(shr(K_ALLOWLIST, kw), 0xff)))) {
                mstore(0x00, keyId)
                mstore(0x20, _allowed.slot)
                mstore(0x20, keccak256(0x00, 0x40))
                mstore(0x00, destination)
                ok := iszero(iszero(and(sload(keccak256(0x00, 0x40)), 0xff)))
            }
            if ok {
                sstore(keySlot, or(and(kw, sub(shl(K_SPENT, 1), 1)), shl(K_SPENT, keySpent)))
                sstore(useSlot, or(and(uw, sub(shl(U_SPENT, 1), 1)), shl(U_SPENT, useSpent)))
            }
        }
        if (!ok) return FAST_NOT_TAKEN;
        if (_tryMove(address(uint160(uw)), address(uint160(cw)), destination, amount)) return FAST_DONE;
        _unspend(keySlot, useSlot, amount);
        return FAST_TRANSFER_FAILED;
    }

    /// @dev Checks a pull in the documented order, reading each slot once. On success returns
    ///      the key and mandate-usage words as they must be stored; on a decline returns the
    ///      custom error's ABI encoding. `agentSigned`: the caller already checked the key's
    ///      signer's signature (otherwise a key with a signer is declined `SignatureRequired`).
    function _authorize(bytes32 keyId, address destination, uint256 amount, bool agentSigned)
        internal
        view
        returns (bytes memory err, Slots memory p)
    {
        if (amount == 0 || amount > type(uint64).max) {
            return (abi.encodeWithSelector(InvalidAmount.selector, amount), p);
        }
        if (destination == address(0) || destination == address(this)) {
            return (abi.encodeWithSelector(InvalidDestination.selector, destination), p);
        }
        {
            Key storage kRef = _keys[keyId];
            uint256 slot;
            assembly ("memory-safe") {
                slot := kRef.slot
            }
            p.keySlot = slot;
        }
        uint256 kw = _read(p.keySlot);
        uint32 index = uint32(kw);
        if (index == 0) return (abi.encodeWithSelector(UnknownKey.selector, keyId), p);
        if (!agentSigned && kw >> K_SIGNER != 0) {
            return (abi.encodeWithSelector(SignatureRequired.selector, keyId), p);
        }
        if ((kw >> K_REVOKED) & 0xff != 0) return (abi.encodeWithSelector(KeyRevoked.selector, keyId), p);
        if (block.timestamp >= (kw >> K_EXPIRES) & MASK40) {
            return (abi.encodeWithSelector(KeyExpired.selector, keyId, uint64((kw >> K_EXPIRES) & MASK40)), p);
        }
        uint256 cw;
        {
            MandateConfig storage cRef = _config[index];
            assembly ("memory-safe") {
                cw := sload(cRef.slot)
            }
        }
        if ((cw >> C_STATUS) & 0xff != uint256(MandateStatus.Active)) {
            return (abi.encodeWithSelector(MandateNotActive.selector, _mandateIdOf[index]), p);
        }
        if ((kw >> K_ALLOWLIST) & 0xff != 0 && !_allowed[keyId][destination]) {
            return (abi.encodeWithSelector(DestinationNotAllowed.selector, keyId, destination), p);
        }
        // The usage words keep the day their epoch ends: a stored end after today means the
        // stored spend belongs to the current epoch (time only moves forward), so only the
        // first pull of an epoch does the calendar arithmetic.
        uint256 today = block.timestamp / DAY;
        uint256 uw;
        {
            MandateUsage storage uRef = _usage[index];
            uint256 slot;
            assembly ("memory-safe") {
                slot := uRef.slot
                uw := sload(slot)
            }
            p.useSlot = slot;
        }
        uint256 endDay = (kw >> K_EPOCH) & MASK32;
        uint256 keySpent = endDay > today ? (kw >> K_SPENT) & MASK64 : 0;
        if (endDay <= today) {
            endDay = (uw >> U_EPOCH) & MASK32;
            if (endDay <= today) (, endDay) = _epochDays(Interval((cw >> C_INTERVAL) & 0xff), today);
        }
        {
            uint256 ceiling = (kw >> K_CEILING) & MASK64;
            if (ceiling != 0 && keySpent + amount > ceiling) {
                return (
                    abi.encodeWithSelector(
                        KeyCeilingExceeded.selector, keyId, ceiling - keySpent, uint64(endDay * DAY)
                    ),
                    p
                );
            }
        }
        // Amounts fit in uint64 (checked above) and the sums stay within the ceilings.
        p.keyWord = (kw & ((1 << K_EPOCH) - 1)) | (endDay << K_EPOCH) | ((keySpent + amount) << K_SPENT)
            | ((kw >> K_SIGNER) << K_SIGNER);
        uint256 spent = (uw >> U_EPOCH) & MASK32 > today ? uw >> U_SPENT : 0;
        if (spent + amount > (cw >> C_MAX) & MASK64) {
            return (
                abi.encodeWithSelector(
                    MandateCeilingExceeded.selector,
                    _mandateIdOf[index],
                    ((cw >> C_MAX) & MASK64) - spent,
                    uint64(endDay * DAY)
                ),
                p
            );
        }
        p.useWord = uint256(uint160(uw)) | (endDay << U_EPOCH) | ((spent + amount) << U_SPENT);
        p.payer = address(uint160(cw));
        p.token = address(uint160(uw));
        p.deferred = (cw >> C_DEFERRED) & 0xff != 0;
        // A deferred pull's payout is a later `settle` from the treasury (its payer): it may
        // not pay the treasury itself.
        if (p.deferred && destination == p.payer) {
            return (abi.encodeWithSelector(InvalidDestination.selector, destination), p);
        }
    }

    /// @dev First day and first day after the epoch of `interval` that contains day number `day`.
    function _epochDays(Interval interval, uint256 day)
        private
        pure
        returns (uint256 startDay, uint256 endDay)
    {
        if (interval == Interval.Daily) return (day, day + 1);
        if (interval == Interval.Weekly) {
            // 1970-01-01 was a Thursday, three days after a Monday. The first, partial week
            // (before Monday 1970-01-05) starts at the epoch of unix time.
            if (day < 4) return (0, 4);
            startDay = day - ((day + 3) % 7);
            return (startDay, startDay + 7);
        }
        (uint256 y, uint256 m) = _yearMonth(day);
        if (interval == Interval.Monthly) {
            return
                (_daysFromCivil(y, m, 1), m == 12 ? _daysFromCivil(y + 1, 1, 1) : _daysFromCivil(y, m + 1, 1));
        }
        return (_daysFromCivil(y, 1, 1), _daysFromCivil(y + 1, 1, 1));
    }

    /// @dev Year and month of a day number (Howard Hinnant's civil_from_days, days >= 0).
    function _yearMonth(uint256 day) private pure returns (uint256 y, uint256 m) {
        unchecked {
            uint256 z = day + 719_468;
            uint256 era = z / 146_097;
            uint256 doe = z - era * 146_097;
            uint256 yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
            uint256 doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
            uint256 mp = (5 * doy + 2) / 153;
            m = mp < 10 ? mp + 3 : mp - 9;
            y = yoe + era * 400 + (m <= 2 ? 1 : 0);
        }
    }

    /// @dev Day number of a civil date (Howard Hinnant's days_from_civil, years >= 1970).
    function _daysFromCivil(uint256 y, uint256 m, uint256 d) private pure returns (uint256) {
        unchecked {
            if (m <= 2) y -= 1;
            uint256 era = y / 400;
            uint256 yoe = y - era * 400;
            uint256 doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
            uint256 doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
            return era * 146_097 + doe - 719_468;
        }
    }
}
