// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {IAllowanceStateMachine} from "./interfaces/IAllowanceStateMachine.sol";
import {SettlementCore} from "./SettlementCore.sol";
import {IAttestationMirror} from "./interfaces/IAttestationMirror.sol";

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
        bool identity; // requires identity (`_requirements`): every pull checks the mirror
    }

    /// @dev Slot B of a mandate: the token and the usage of the current epoch.
    struct MandateUsage {
        address token;
        uint32 epochEnd; // day number of the first day after the epoch of `spent`
        uint64 spent;
    }

    /// @dev A session key, one slot, written at issuance and revocation only: a pull reads it.
    struct Key {
        uint32 mandateIndex; // 0 = no such key
        uint40 expiresAt;
        bool revoked;
        uint8 flags; // K_LIST, K_SIGNER, K_CEILING
        address destination; // its only destination, when its allow-list has one entry
    }

    /// @dev The own ceiling of a key that has one (flag `K_CEILING`) and its usage, one slot.
    struct KeyUsage {
        uint64 ceiling;
        uint32 epochEnd; // day number of the first day after the epoch of `spent`
        uint64 spent;
    }

    /// @notice EIP-712 type of the mandate a payer signs.
    bytes32 public constant MANDATE_TYPEHASH = keccak256(
        "Mandate(bytes32 mandateId,address payer,address token,uint256 maxAmount,uint8 interval,address[] payees,address agent,string purpose,address identityAttester,bytes32 payerSchema,bytes32 agentSchema,uint256 nonce,uint256 deadline)"
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
    mapping(bytes32 keyId => KeyUsage) private _keyUse;
    mapping(bytes32 keyId => mapping(address destination => bool)) private _allowed;
    mapping(bytes32 keyId => address) private _signerOf;
    mapping(bytes32 keyId => mapping(uint256 word => uint256 bits)) private _pullNonces;
    /// @dev EIP-712 hash of the payees a mandate's payer signed (0: none named, treasury only).
    mapping(uint32 index => bytes32) private _payeesHash;
    /// @dev The agent a mandate's payer named (0: none): every key on it has this signer.
    mapping(uint32 index => address) private _agentOf;
    /// @dev The identity a mandate requires (only for mandates with `MandateConfig.identity`).
    mapping(uint32 index => Requirements) private _requirements;

    /// @dev The attestation mirror identity requirements are checked against (0: none).
    IAttestationMirror private immutable _mirror;

    /// @notice Deploys the state machine, which is also the settlement chain's router.
    /// @param owner_ Owner (may pause and change the operator and treasury).
    /// @param operator_ The service's signer: the only account that may write and move tokens.
    /// @param treasury_ The treasury wallet.
    /// @param mirror_ The settlement chain's attestation mirror (0: mandates cannot require
    ///        identity).
    constructor(address owner_, address operator_, address treasury_, IAttestationMirror mirror_)
        SettlementCore(owner_, operator_, treasury_)
    {
        _mirror = mirror_;
    }

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
        Requirements calldata r = terms.requirements;
        return keccak256(
            abi.encodePacked(
                head,
                abi.encode(
                    payeesHash, terms.agent, terms.purposeHash, r.attester, r.payerSchema, r.agentSchema
                ),
                abi.encode(nonce, deadline)
            )
        );
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
        bool identity = _requireIdentity(index, terms.requirements, payer);
        _config[index] =
            MandateConfig(payer, uint64(maxAmount), terms.interval, MandateStatus.Active, deferred, identity);
        _usage[index] = MandateUsage(terms.token, 0, 0);
        if (n != 0) _payeesHash[index] = payeesHash;
        if (terms.agent != address(0)) _agentOf[index] = terms.agent;
        _emitMandateCreated(mandateId, terms);
        if (identity) {
            Requirements calldata r = terms.requirements;
            emit MandateRequirements(mandateId, r.attester, r.payerSchema, r.agentSchema);
        }
    }

    /// @dev Stores the identity requirements `r` of mandate `index` (when it has any) after
    ///      checking the payer meets its own; returns whether it has any.
    function _requireIdentity(uint32 index, Requirements calldata r, address payer) private returns (bool) {
        if (r.payerSchema == 0 && r.agentSchema == 0) {
            if (r.attester != address(0)) revert IdentityUnsupported();
            return false;
        }
        if (r.attester == address(0) || address(_mirror) == address(0)) revert IdentityUnsupported();
        _checkHolds(r.attester, payer, r.payerSchema);
        _requirements[index] = r;
        return true;
    }

    /// @dev Reverts `IdentityRequirementUnmet` unless `subject` holds a valid attestation of
    ///      `schema` by `attester` in the mirror (a zero schema requires nothing).
    function _checkHolds(address attester, address subject, bytes32 schema) private view {
        if (schema != 0 && !_mirror.isValid(attester, subject, schema)) {
            revert IdentityRequirementUnmet(subject, schema);
        }
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
    function issueSessionKey(KeyTerms calldata terms, address[] calldata payees)
        external
        returns (bytes32 keyId)
    {
        uint32 index = _mandateIndex[terms.mandateId];
        if (index == 0) revert UnknownMandate(terms.mandateId);
        keyId = keyIdOf(terms.mandateId, terms.salt);
        if (_keys[keyId].mandateIndex != 0) revert KeyAlreadyExists(keyId);
        {
            MandateConfig memory cfg = _config[index];
            if (msg.sender != _operator() && msg.sender != cfg.payer) revert UnauthorizedCaller(msg.sender);
            if (cfg.status != MandateStatus.Active) revert MandateNotActive(terms.mandateId);
            if (terms.expiresAt <= block.timestamp) revert ExpiryNotInFuture(terms.expiresAt);
            if (terms.maxAmount > cfg.maxAmount) {
                revert KeyCeilingAboveMandate(terms.maxAmount, cfg.maxAmount);
            }
            address agent = _agentOf[index];
            if (agent != address(0) && terms.signer != agent) revert SignerNotAgent(agent, terms.signer);
            if (cfg.identity) {
                Requirements memory r = _requirements[index];
                if (r.agentSchema != 0 && terms.signer == address(0)) revert SignerRequired();
                _checkHolds(r.attester, cfg.payer, r.payerSchema);
                _checkHolds(r.attester, terms.signer, r.agentSchema);
            }
        }
        address[] calldata list = _allowList(index, terms.allowedDestinations, payees);
        uint40 expiry = terms.expiresAt > type(uint40).max ? type(uint40).max : uint40(terms.expiresAt);
        uint8 flags;
        address only;
        if (list.length == 1) {
            only = list[0];
        } else if (list.length > 1) {
            flags = K_LIST_FLAG;
            for (uint256 i; i < list.length; ++i) {
                _allowed[keyId][list[i]] = true;
            }
        }
        if (terms.signer != address(0)) {
            flags |= K_SIGNER_FLAG;
            _signerOf[keyId] = terms.signer;
        }
        if (terms.maxAmount != 0) {
            flags |= K_CEILING_FLAG;
            _keyUse[keyId] = KeyUsage(uint64(terms.maxAmount), 0, 0);
        }
        _keys[keyId] = Key(index, expiry, false, flags, only);
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

    /// @dev The allow-list of a key of mandate `index`, checked. When the mandate names payees,
    ///      the key pays only payees the payer signed: `payees` must be the signed list, and the
    ///      key's destinations a part of it (all of it when the key names none).
    function _allowList(uint32 index, address[] calldata requested, address[] calldata payees)
        private
        view
        returns (address[] calldata list)
    {
        list = requested;
        bytes32 payeesHash = _payeesHash[index];
        if (payeesHash != 0) {
            if (_payeesHashOf(payees) != payeesHash) revert PayeesMismatch(_mandateIdOf[index]);
            if (list.length == 0) list = payees;
            else _requireSubset(list, payees);
        }
        for (uint256 i; i < list.length; ++i) {
            address d = list[i];
            if (d == address(0)) revert ZeroAddress();
            if (d == address(this)) revert InvalidDestination(d);
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
    /// @dev The common case (a pull that passes, after another pull of the mandate this epoch)
    ///      runs in `_fastPull`; anything else (a decline, a mandate's first pull of an epoch)
    ///      takes the reference path `_authorize`, which applies the same rules and names the
    ///      reason.
    function pull(bytes32 keyId, address destination, uint256 amount) external onlyOperatorUnpaused {
        uint256 fast = _fastPull(keyId, destination, amount);
        if (fast == FAST_TRANSFER_FAILED) revert TransferFailed(keyId);
        if (fast == FAST_NOT_TAKEN) {
            (bytes memory err, Slots memory p) = _authorize(keyId, destination, amount, false);
            if (err.length != 0) {
                assembly ("memory-safe") {
                    revert(add(err, 32), mload(err))
                }
            }
            _store(p);
            if (!p.deferred && !_tryMove(p.token, p.payer, destination, amount)) {
                revert TransferFailed(keyId);
            }
        }
        emit DebitPulled(keyId, destination, amount);
    }

    /// @inheritdoc IAllowanceStateMachine
    /// @dev Items are packed (see `IAllowanceStateMachine.pullBatch`): about a quarter of the
    ///      calldata of an ABI-encoded array of structs, and no decoder. Each unsigned item takes
    ///      the fast path when it applies, as in `pull`. A signed item on a key with a signer
    ///      is checked (deadline, unused nonce, signature) before the allowance rules; its nonce
    ///      is marked used with the usage and given back with it when the token move fails.
    function pullBatch(bytes calldata items) external onlyOperatorUnpaused returns (uint256 authorized) {
        uint256 pos;
        for (uint256 i; pos < items.length; ++i) {
            if (items.length - pos < UNSIGNED_ITEM) revert MalformedBatch(i);
            bytes32 keyId;
            address destination;
            uint256 amount;
            uint256 kind;
            assembly ("memory-safe") {
                let at := add(items.offset, pos)
                kind := byte(0, calldataload(at))
                keyId := calldataload(add(at, 1))
                destination := shr(96, calldataload(add(at, 33)))
                amount := shr(192, calldataload(add(at, 53)))
            }
            pos += UNSIGNED_ITEM;
            if (kind == 0) {
                uint256 fast = _fastPull(keyId, destination, amount);
                if (fast == FAST_DONE) {
                    emit DebitPulled(keyId, destination, amount);
                    ++authorized;
                    continue;
                }
                if (fast == FAST_TRANSFER_FAILED) {
                    emit DebitPullDeclined(keyId, i, abi.encodeWithSelector(TransferFailed.selector, keyId));
                    continue;
                }
            } else if (kind != 1) {
                revert MalformedBatch(i);
            }
            Item memory item = Item(i, keyId, destination, amount, 0, address(0));
            if (kind == 1) {
                bytes memory sigErr;
                (pos, sigErr) = _agentSigned(items, pos, item);
                if (sigErr.length != 0) {
                    emit DebitPullDeclined(keyId, i, sigErr);
                    continue;
                }
            }
            if (_slowPull(item)) ++authorized;
        }
    }

    /// @dev A batch item off the fast path.
    struct Item {
        uint256 index;
        bytes32 keyId;
        address destination;
        uint256 amount;
        uint256 nonce; // a signed item's
        address signer; // the key's signer, whose signature the item carries; 0 = unsigned
    }

    /// @dev Reads the signed tail of the item at `pos` of `items` (the head before it is `item`'s)
    ///      and, when the key has a signer, checks its signature (setting `item.nonce` and
    ///      `item.signer`). Returns where the next item starts and the decline, if any.
    function _agentSigned(bytes calldata items, uint256 pos, Item memory item)
        private
        view
        returns (uint256 next, bytes memory err)
    {
        if (items.length - pos < SIGNED_TAIL) revert MalformedBatch(item.index);
        uint256 nonce;
        uint256 deadline;
        uint256 sigLength;
        assembly ("memory-safe") {
            let at := add(items.offset, pos)
            nonce := calldataload(at)
            deadline := shr(192, calldataload(add(at, 32)))
            sigLength := shr(240, calldataload(add(at, 40)))
        }
        pos += SIGNED_TAIL;
        if (items.length - pos < sigLength) revert MalformedBatch(item.index);
        next = pos + sigLength;
        address signer = _signerOf[item.keyId];
        if (signer == address(0)) return (next, err);
        err = _checkPullSignature(item, nonce, deadline, items[pos:next], signer);
        item.nonce = nonce;
        item.signer = signer;
    }

    /// @dev Decides a batch item by `_authorize` and, when authorized, stores the usage (and the
    ///      signed nonce), moves the tokens and emits `DebitPulled`; a failed move gives back
    ///      its own spend and nonce and emits `DebitPullDeclined`. Returns whether it was
    ///      authorized.
    function _slowPull(Item memory item) private returns (bool) {
        (bytes memory err, Slots memory p) =
            _authorize(item.keyId, item.destination, item.amount, item.signer != address(0));
        if (err.length != 0) {
            emit DebitPullDeclined(item.keyId, item.index, err);
            return false;
        }
        _store(p);
        uint256 nonceBit = item.signer != address(0) ? 1 << (item.nonce & 0xff) : 0;
        if (nonceBit != 0) _pullNonces[item.keyId][item.nonce >> 8] |= nonceBit;
        if (p.deferred || _tryMove(p.token, p.payer, item.destination, item.amount)) {
            if (nonceBit != 0) emit PullNonceUsed(item.keyId, item.nonce);
            emit DebitPulled(item.keyId, item.destination, item.amount);
            return true;
        }
        _unspend(p.keyUseSlot, p.useSlot, item.amount);
        if (nonceBit != 0) _pullNonces[item.keyId][item.nonce >> 8] &= ~nonceBit;
        emit DebitPullDeclined(
            item.keyId, item.index, abi.encodeWithSelector(TransferFailed.selector, item.keyId)
        );
        return false;
    }

    /// @dev The agent's authorization of a signed item: not past its deadline, nonce unused, a
    ///      valid `DebitPull` signature by `signer` (a contract wallet gets bounded gas: one item
    ///      must not starve the others). Empty when it holds, else the error.
    function _checkPullSignature(
        Item memory item,
        uint256 nonce,
        uint256 deadline,
        bytes calldata signature,
        address signer
    ) private view returns (bytes memory) {
        if (block.timestamp > deadline) {
            return abi.encodeWithSelector(SignatureExpired.selector, deadline);
        }
        if (_pullNonces[item.keyId][nonce >> 8] & (1 << (nonce & 0xff)) != 0) {
            return abi.encodeWithSelector(NonceAlreadyUsed.selector, nonce);
        }
        bytes32 digest = _hashTypedDataV4(
            keccak256(
                abi.encode(DEBIT_PULL_TYPEHASH, item.keyId, item.destination, item.amount, nonce, deadline)
            )
        );
        if (!_isValidSignature(signer, digest, signature, true)) {
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
            agent: _agentOf[index],
            requirements: _requirements[index]
        });
    }

    /// @inheritdoc IAllowanceStateMachine
    function attestationMirror() external view returns (address) {
        return address(_mirror);
    }

    /// @inheritdoc IAllowanceStateMachine
    function getSessionKey(bytes32 keyId) external view returns (SessionKeyView memory v) {
        Key memory k = _keys[keyId];
        if (k.mandateIndex == 0) revert UnknownKey(keyId);
        KeyUsage memory u = _keyUse[keyId];
        v = SessionKeyView({
            mandateId: _mandateIdOf[k.mandateIndex],
            expiresAt: k.expiresAt,
            maxAmount: u.ceiling,
            revoked: k.revoked,
            hasAllowList: k.destination != address(0) || k.flags & K_LIST_FLAG != 0,
            spentThisEpoch: u.epochEnd > block.timestamp / DAY ? u.spent : 0,
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
        if (k.destination != address(0)) return destination == k.destination;
        return k.flags & K_LIST_FLAG == 0 || _allowed[keyId][destination];
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
        if (k.flags & K_CEILING_FLAG != 0) {
            KeyUsage memory u = _keyUse[keyId];
            uint256 own = u.ceiling - (u.epochEnd > today ? u.spent : 0);
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
        uint256 keyUseSlot; // 0: the key has no ceiling of its own, nothing to store
        uint256 keyUseWord;
        uint256 useSlot;
        uint256 useWord;
        address payer;
        address token;
        bool deferred;
    }

    /// @dev Bytes of a packed batch item without a signature (kind, keyId, destination, amount),
    ///      and what a signed one adds before its signature (nonce, deadline, signature length).
    uint256 private constant UNSIGNED_ITEM = 61;
    uint256 private constant SIGNED_TAIL = 42;

    /// @dev `Key.flags`: an allow-list of several destinations in `_allowed`; a signer in
    ///      `_signerOf`; a ceiling of its own in `_keyUse`.
    uint8 private constant K_LIST_FLAG = 1;
    uint8 private constant K_SIGNER_FLAG = 2;
    uint8 private constant K_CEILING_FLAG = 4;

    // Bit offsets of the packed `Key`, `KeyUsage`, `MandateConfig` and `MandateUsage` slots
    // (Solidity's own struct layout, members from the low-order bytes up), read whole on the
    // pull path.
    uint256 private constant K_EXPIRES = 32;
    uint256 private constant K_REVOKED = 72;
    uint256 private constant K_FLAGS = 80;
    uint256 private constant K_DEST = 88;
    uint256 private constant KU_EPOCH = 64;
    uint256 private constant KU_SPENT = 96;
    uint256 private constant U_EPOCH = 160;
    uint256 private constant U_SPENT = 192;
    uint256 private constant C_MAX = 160;
    uint256 private constant C_INTERVAL = 224;
    uint256 private constant C_STATUS = 232;
    uint256 private constant C_DEFERRED = 240;
    uint256 private constant C_IDENTITY = 248;
    uint256 private constant MASK32 = 0xffffffff;
    uint256 private constant MASK40 = 0xffffffffff;
    uint256 private constant MASK64 = 0xffffffffffffffff;
    uint256 private constant MASK160 = (1 << 160) - 1;

    function _read(uint256 slot) private view returns (uint256 word) {
        assembly ("memory-safe") {
            word := sload(slot)
        }
    }

    function _write(uint256 slot, uint256 word) private {
        assembly ("memory-safe") {
            sstore(slot, word)
        }
    }

    /// @dev Stores an authorized pull's usage.
    function _store(Slots memory p) private {
        if (p.keyUseSlot != 0) _write(p.keyUseSlot, p.keyUseWord);
        _write(p.useSlot, p.useWord);
    }

    /// @dev Takes back a pull whose token move failed: subtracts `amount` from the spend in the
    ///      key-usage (when the key has a ceiling) and mandate-usage words as they are now, so
    ///      whatever else changed during the token call (a revocation, a cancellation) stands.
    ///      The spend includes `amount` (stored before the call; only this pull could add to it
    ///      since).
    function _unspend(uint256 keyUseSlot, uint256 useSlot, uint256 amount) private {
        if (keyUseSlot != 0) _write(keyUseSlot, _read(keyUseSlot) - (amount << KU_SPENT));
        _write(useSlot, _read(useSlot) - (amount << U_SPENT));
    }

    /// @dev `_fastPull` outcomes.
    uint256 private constant FAST_NOT_TAKEN = 0;
    uint256 private constant FAST_DONE = 1;
    uint256 private constant FAST_TRANSFER_FAILED = 2;

    /// @dev The pull hot path. When the pull passes every check and the usage words already
    ///      belong to the current epoch (so no calendar arithmetic is needed), it stores the new
    ///      usage and moves the tokens: `FAST_DONE`, or `FAST_TRANSFER_FAILED` with the usage
    ///      given back when the token move fails. Otherwise `FAST_NOT_TAKEN`, having changed
    ///      nothing, for `_authorize` to decide. It reads the key, the mandate's config and
    ///      usage (and the key's usage only for a key with a ceiling, its allow-list only for a
    ///      key with several destinations) and writes the usage words. Unchecked sums are safe:
    ///      amounts are below 2^64 and the sums are compared to 64-bit ceilings before they are
    ///      stored.
    function _fastPull(bytes32 keyId, address destination, uint256 amount) private returns (uint256) {
        bool ok;
        uint256 kw;
        uint256 cw;
        uint256 useSlot;
        uint256 uw;
        assembly ("memory-safe") {
            mstore(0x00, keyId)
            mstore(0x20, _keys.slot)
            kw := sload(keccak256(0x00, 0x40))
            mstore(0x00, and(kw, MASK32))
            mstore(0x20, _config.slot)
            cw := sload(keccak256(0x00, 0x40))
            mstore(0x20, _usage.slot)
            useSlot := keccak256(0x00, 0x40)
            uw := sload(useSlot)
            // exists (a zero mandate index has a zero config word, so status is not Active),
            // no signer, not revoked, not expired, mandate active, not deferred and requiring
            // no identity (the status, deferred and identity bytes are the word's top 24 bits), a destination other than zero and this
            // contract and, for a key with one destination, that one; the mandate's usage of
            // this epoch and within its ceiling.
            let only := and(shr(K_DEST, kw), MASK160)
            ok := and(
                and(
                    and(lt(sub(amount, 1), MASK64), iszero(and(shr(K_REVOKED, kw), 0xff))),
                    and(
                        iszero(and(shr(K_FLAGS, kw), K_SIGNER_FLAG)),
                        iszero(or(iszero(destination), eq(destination, address())))
                    )
                ),
                and(
                    and(
                        and(
                            lt(timestamp(), and(shr(K_EXPIRES, kw), MASK40)),
                            or(iszero(only), eq(only, destination))
                        ),
                        eq(shr(C_STATUS, cw), 1)
                    ),
                    and(
                        gt(and(shr(U_EPOCH, uw), MASK32), div(timestamp(), DAY)),
                        iszero(gt(add(shr(U_SPENT, uw), amount), and(shr(C_MAX, cw), MASK64)))
                    )
                )
            )
            if and(ok, iszero(iszero(and(shr(K_FLAGS, kw), K_LIST_FLAG)))) {
                mstore(0x00, keyId)
                mstore(0x20, _allowed.slot)
                mstore(0x20, keccak256(0x00, 0x40))
                mstore(0x00, destination)
                ok := iszero(iszero(and(sload(keccak256(0x00, 0x40)), 0xff)))
            }
        }
        if (!ok) return FAST_NOT_TAKEN;
        uint256 keyUseSlot;
        if ((kw >> K_FLAGS) & K_CEILING_FLAG != 0) {
            assembly ("memory-safe") {
                mstore(0x00, keyId)
                mstore(0x20, _keyUse.slot)
                keyUseSlot := keccak256(0x00, 0x40)
                let ku := sload(keyUseSlot)
                let keySpent := add(shr(KU_SPENT, ku), amount)
                ok := and(
                    gt(and(shr(KU_EPOCH, ku), MASK32), div(timestamp(), DAY)),
                    iszero(gt(keySpent, and(ku, MASK64)))
                )
                if ok {
                    sstore(keyUseSlot, or(and(ku, sub(shl(KU_SPENT, 1), 1)), shl(KU_SPENT, keySpent)))
                }
            }
            if (!ok) return FAST_NOT_TAKEN;
        }
        assembly ("memory-safe") {
            sstore(useSlot, add(uw, shl(U_SPENT, amount)))
        }
        if (_tryMove(address(uint160(uw)), address(uint160(cw)), destination, amount)) return FAST_DONE;
        _unspend(keyUseSlot, useSlot, amount);
        return FAST_TRANSFER_FAILED;
    }

    /// @dev Checks a pull in the documented order, reading each slot once. On success returns
    ///      the usage words as they must be stored; on a decline returns the custom error's ABI
    ///      encoding. `agentSigned`: the caller already checked the key's signer's signature
    ///      (otherwise a key with a signer is declined `SignatureRequired`).
    function _authorize(bytes32 keyId, address destination, uint256 amount, bool agentSigned)
        private
        view
        returns (bytes memory err, Slots memory p)
    {
        if (amount == 0 || amount > type(uint64).max) {
            return (abi.encodeWithSelector(InvalidAmount.selector, amount), p);
        }
        if (destination == address(0) || destination == address(this)) {
            return (abi.encodeWithSelector(InvalidDestination.selector, destination), p);
        }
        uint256 kw;
        {
            Key storage kRef = _keys[keyId];
            assembly ("memory-safe") {
                kw := sload(kRef.slot)
            }
        }
        uint32 index = uint32(kw);
        if (index == 0) return (abi.encodeWithSelector(UnknownKey.selector, keyId), p);
        uint256 flags = (kw >> K_FLAGS) & 0xff;
        if (!agentSigned && flags & K_SIGNER_FLAG != 0) {
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
        if ((cw >> C_IDENTITY) & 0xff != 0) {
            err = _identityDecline(index, address(uint160(cw)), keyId);
            if (err.length != 0) return (err, p);
        }
        {
            address only = address(uint160(kw >> K_DEST));
            if (
                (only != address(0) && only != destination)
                    || (flags & K_LIST_FLAG != 0 && !_allowed[keyId][destination])
            ) {
                return (abi.encodeWithSelector(DestinationNotAllowed.selector, keyId, destination), p);
            }
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
        uint256 endDay = (uw >> U_EPOCH) & MASK32;
        if (endDay <= today) (, endDay) = _epochDays(Interval((cw >> C_INTERVAL) & 0xff), today);
        if (flags & K_CEILING_FLAG != 0) {
            err = _keyCeiling(keyId, amount, today, endDay, p);
            if (err.length != 0) return (err, p);
        }
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

    /// @dev The `IdentityRequirementUnmet` decline of a pull of key `keyId` on mandate `index`
    ///      (payer `payer`) whose required attestations no longer hold (revoked, expired, the
    ///      attester distrusted), or none.
    function _identityDecline(uint32 index, address payer, bytes32 keyId)
        private
        view
        returns (bytes memory)
    {
        Requirements memory r = _requirements[index];
        if (r.payerSchema != 0 && !_mirror.isValid(r.attester, payer, r.payerSchema)) {
            return abi.encodeWithSelector(IdentityRequirementUnmet.selector, payer, r.payerSchema);
        }
        if (r.agentSchema != 0) {
            address signer = _signerOf[keyId];
            if (!_mirror.isValid(r.attester, signer, r.agentSchema)) {
                return abi.encodeWithSelector(IdentityRequirementUnmet.selector, signer, r.agentSchema);
            }
        }
        return "";
    }

    /// @dev The own ceiling of key `keyId` for a pull of `amount` on day `today` in the epoch
    ///      ending on day `endDay`: the `KeyCeilingExceeded` decline, or none with the key's new
    ///      usage in `p`.
    function _keyCeiling(bytes32 keyId, uint256 amount, uint256 today, uint256 endDay, Slots memory p)
        private
        view
        returns (bytes memory)
    {
        KeyUsage storage kuRef = _keyUse[keyId];
        uint256 ku;
        uint256 slot;
        assembly ("memory-safe") {
            slot := kuRef.slot
            ku := sload(slot)
        }
        uint256 keySpent = (ku >> KU_EPOCH) & MASK32 > today ? (ku >> KU_SPENT) & MASK64 : 0;
        uint256 ceiling = ku & MASK64;
        if (keySpent + amount > ceiling) {
            return abi.encodeWithSelector(
                KeyCeilingExceeded.selector, keyId, ceiling - keySpent, uint64(endDay * DAY)
            );
        }
        p.keyUseSlot = slot;
        // Amounts fit in uint64 (checked by the caller) and the sum stays within the ceiling.
        p.keyUseWord = ceiling | (endDay << KU_EPOCH) | ((keySpent + amount) << KU_SPENT);
        return "";
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
