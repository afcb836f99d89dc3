// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {ISettlementRouter} from "./interfaces/ISettlementRouter.sol";

/// @title SettlementCore
/// @notice The settlement router's logic, shared by the standalone `SettlementRouter` and the
///         `AllowanceStateMachine` (which is the router of the settlement chain).
/// @dev Tokens go straight from `from` to `to` with one `transferFrom`, so the contract never
///      holds a balance. The owner (two-step ownership) administers; the operator submits moves,
///      but a payer's tokens move only as the payer signed (EIP-712, unordered nonces in a
///      bitmap as in Permit2's `SignatureTransfer`); the operator alone moves only the
///      treasury's tokens.
///      The operator and the pause flag share one storage slot, so the hot paths authorize the
///      caller and check the pause with a single read.
abstract contract SettlementCore is ISettlementRouter, Ownable2Step, EIP712 {
    using SafeERC20 for IERC20;

    /// @notice EIP-712 type of a one-time payment a payer signs.
    bytes32 public constant PAYMENT_TYPEHASH = keccak256(
        "Payment(address token,address from,address to,uint256 amount,uint256 nonce,uint256 deadline)"
    );

    /// @dev Gas a token call may use. Bounds what one hostile token can burn in a batch; an
    ///      ERC-20 `transferFrom` needs well under half of it.
    uint256 internal constant TOKEN_CALL_GAS = 100_000;
    /// @dev Gas that must be left before a token call, so a token that fails did so within its
    ///      own bound and not for lack of gas in the transaction (63/64 rule, plus margin).
    uint256 internal constant TOKEN_CALL_RESERVE = 104_000;

    /// @dev One slot: who may move tokens, and whether moves are paused.
    struct Gate {
        address operator;
        bool paused;
    }

    /// @dev An operator change the owner proposed, and when it may take effect.
    struct PendingOperator {
        address operator;
        uint64 effectiveAt;
    }

    /// @notice How long an operator change waits between the owner's proposal and when it can
    ///         take effect: payers see `OperatorProposed` coming and can cancel mandates and
    ///         revoke keys before a new operator can act.
    uint256 public constant OPERATOR_DELAY = 2 days;

    Gate private _gate;
    PendingOperator private _pendingOperator;
    address internal _treasury;
    address private _pendingTreasury;
    mapping(address owner => mapping(uint256 word => uint256 bits)) private _nonceBitmap;

    /// @param owner_ Owner (may pause and change the operator and treasury).
    /// @param operator_ The service's signer.
    /// @param treasury_ The treasury wallet.
    constructor(address owner_, address operator_, address treasury_)
        Ownable(owner_)
        EIP712("Openrail", "1")
    {
        if (operator_ == address(0) || treasury_ == address(0)) revert ZeroAddress();
        if (operator_ == owner_) revert OwnerIsOperator();
        _gate.operator = operator_;
        _treasury = treasury_;
        emit OperatorChanged(address(0), operator_);
        emit TreasuryChanged(address(0), treasury_);
    }

    /// @dev Only the operator, whether or not moves are paused (writes that move no token).
    modifier onlyOperator() {
        if (msg.sender != _gate.operator) revert UnauthorizedCaller(msg.sender);
        _;
    }

    /// @dev Only the operator, and only while moves are not paused (one storage read).
    modifier onlyOperatorUnpaused() {
        uint256 gate = _gateWord();
        if (msg.sender != address(uint160(gate))) revert UnauthorizedCaller(msg.sender);
        if (gate >> 160 != 0) revert RouterPaused();
        _;
    }

    /// @inheritdoc ISettlementRouter
    function settle(bytes32 ref, address token, address to, uint256 amount) external onlyOperatorUnpaused {
        _move(ref, token, _treasury, to, amount);
    }

    /// @inheritdoc ISettlementRouter
    function settleWithSignature(
        bytes32 ref,
        address token,
        address from,
        address to,
        uint256 amount,
        uint256 nonce,
        uint256 deadline,
        bytes calldata signature
    ) external onlyOperatorUnpaused {
        if (block.timestamp > deadline) revert SignatureExpired(deadline);
        bytes32 digest = _hashTypedDataV4(
            keccak256(abi.encode(PAYMENT_TYPEHASH, token, from, to, amount, nonce, deadline))
        );
        if (!_isValidSignature(from, digest, signature, false)) revert InvalidSignature();
        _useNonce(from, nonce);
        _move(ref, token, from, to, amount);
    }

    /// @inheritdoc ISettlementRouter
    function invalidateNonce(uint256 nonce) external {
        _useNonce(msg.sender, nonce);
    }

    /// @inheritdoc ISettlementRouter
    function nonceUsed(address owner, uint256 nonce) external view returns (bool) {
        return _nonceBitmap[owner][nonce >> 8] & (1 << (nonce & 0xff)) != 0;
    }

    /// @inheritdoc ISettlementRouter
    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    /// @dev The operator's address.
    function _operator() internal view returns (address) {
        return _gate.operator;
    }

    /// @dev Whether `signature` is `signer`'s over `digest`: ECDSA (65 bytes, low `s`, as
    ///      OpenZeppelin's `ECDSA.tryRecover` requires), else, for a contract, ERC-1271
    ///      `isValidSignature`, whose whole 32-byte answer must be the magic value (left-aligned
    ///      `0x1626ba7e`, zero after it: a contract that echoes its calldata has not signed).
    ///      `bounded`: the wallet gets at most `TOKEN_CALL_GAS`, so one hostile wallet cannot
    ///      starve the other items of a batch; elsewhere it gets what the transaction has, so a
    ///      wallet with a costly scheme (a P-256 passkey verified in Solidity) can sign.
    function _isValidSignature(address signer, bytes32 digest, bytes calldata signature, bool bounded)
        internal
        view
        returns (bool)
    {
        if (signer == address(0)) return false;
        (address recovered, ECDSA.RecoverError e,) = ECDSA.tryRecover(digest, signature);
        if (e == ECDSA.RecoverError.NoError && recovered == signer) return true;
        if (signer.code.length == 0) return false;
        uint256 gasCap = type(uint256).max;
        if (bounded) {
            if (gasleft() < TOKEN_CALL_RESERVE) revert InsufficientGas();
            gasCap = TOKEN_CALL_GAS;
        }
        bytes memory data = abi.encodeCall(IERC1271.isValidSignature, (digest, signature));
        bool ok;
        uint256 word;
        assembly ("memory-safe") {
            ok := staticcall(gasCap, signer, add(data, 0x20), mload(data), 0, 0x20)
            word := mload(0)
            ok := and(ok, gt(returndatasize(), 0x1f))
        }
        return ok && bytes32(word) == bytes32(IERC1271.isValidSignature.selector);
    }

    /// @dev Marks `owner`'s `nonce` used and emits `NonceUsed`; reverts `NonceAlreadyUsed` if it
    ///      was.
    function _useNonce(address owner, uint256 nonce) internal {
        uint256 bit = 1 << (nonce & 0xff);
        uint256 flipped = _nonceBitmap[owner][nonce >> 8] ^= bit;
        if (flipped & bit == 0) revert NonceAlreadyUsed(nonce);
        emit NonceUsed(owner, nonce);
    }

    /// @dev The checks every settled move shares, the transfer and its event.
    function _move(bytes32 ref, address token, address from, address to, uint256 amount) private {
        if (amount == 0) revert ZeroAmount();
        if (token == address(0) || from == address(0)) revert ZeroAddress();
        if (to == address(0) || to == address(this)) revert InvalidDestination(to);
        if (from == to) revert SelfTransfer();
        IERC20(token).safeTransferFrom(from, to, amount);
        emit Settled(ref, token, from, to, amount);
    }

    /// @inheritdoc ISettlementRouter
    function pause() external onlyOwner {
        _gate.paused = true;
        emit Paused(msg.sender);
    }

    /// @inheritdoc ISettlementRouter
    function unpause() external onlyOwner {
        _gate.paused = false;
        emit Unpaused(msg.sender);
    }

    /// @inheritdoc ISettlementRouter
    function proposeOperator(address operator_) external onlyOwner {
        if (operator_ == owner()) revert OwnerIsOperator();
        uint64 effectiveAt = operator_ == address(0) ? 0 : uint64(block.timestamp + OPERATOR_DELAY);
        _pendingOperator = PendingOperator(operator_, effectiveAt);
        emit OperatorProposed(_gate.operator, operator_, effectiveAt);
    }

    /// @inheritdoc ISettlementRouter
    function activateOperator() external {
        PendingOperator memory p = _pendingOperator;
        if (p.operator == address(0)) revert NoPendingOperator();
        if (block.timestamp < p.effectiveAt) revert OperatorChangeNotDue(p.effectiveAt);
        if (p.operator == owner()) revert OwnerIsOperator();
        delete _pendingOperator;
        emit OperatorChanged(_gate.operator, p.operator);
        _gate.operator = p.operator;
    }

    /// @inheritdoc ISettlementRouter
    function pendingOperator() external view returns (address operator_, uint64 effectiveAt) {
        return (_pendingOperator.operator, _pendingOperator.effectiveAt);
    }

    /// @notice Ownership cannot be renounced: the owner is the only account that can pause, and
    ///         a contract nobody owns could never change its operator or treasury again.
    function renounceOwnership() public view override onlyOwner {
        revert OwnershipCannotBeRenounced();
    }

    /// @dev The operator may not become the owner either (two-step transfer's last step): the
    ///      owner's delay on operator changes would mean nothing if one key were both.
    function _transferOwnership(address newOwner) internal override {
        if (newOwner != address(0) && newOwner == _gate.operator) revert OwnerIsOperator();
        super._transferOwnership(newOwner);
    }

    /// @inheritdoc ISettlementRouter
    function setTreasury(address treasury_) external onlyOwner {
        _pendingTreasury = treasury_;
        emit TreasuryProposed(_treasury, treasury_);
    }

    /// @inheritdoc ISettlementRouter
    function acceptTreasury() external {
        if (msg.sender != _pendingTreasury || msg.sender == address(0)) {
            revert UnauthorizedCaller(msg.sender);
        }
        emit TreasuryChanged(_treasury, msg.sender);
        _treasury = msg.sender;
        _pendingTreasury = address(0);
    }

    /// @inheritdoc ISettlementRouter
    function pendingTreasury() external view returns (address) {
        return _pendingTreasury;
    }

    /// @inheritdoc ISettlementRouter
    function operator() external view returns (address) {
        return _gate.operator;
    }

    /// @inheritdoc ISettlementRouter
    function paused() external view returns (bool) {
        return _gate.paused;
    }

    /// @inheritdoc ISettlementRouter
    function treasury() external view returns (address) {
        return _treasury;
    }

    /// @dev The operator (low 160 bits) and the pause flag (the byte above), read at once.
    function _gateWord() internal view returns (uint256 word) {
        assembly ("memory-safe") {
            word := sload(_gate.slot)
        }
    }

    /// @dev Moves tokens for a debit pull; false (nothing moved) when `to` is the payer or the
    ///      zero address, or the token call fails. Same acceptance as SafeERC20's
    ///      `trySafeTransferFrom` (a token may return nothing, or `true`), without its memory
    ///      copies: this is on the pull hot path. The token gets at most `TOKEN_CALL_GAS`, so a
    ///      token that burns gas fails its own item only; with less than `TOKEN_CALL_RESERVE`
    ///      left the whole transaction reverts `InsufficientGas` rather than blame the token.
    function _tryMove(address token, address from, address to, uint256 amount) internal returns (bool ok) {
        if (to == from || to == address(0)) return false;
        if (gasleft() < TOKEN_CALL_RESERVE) revert InsufficientGas();
        assembly ("memory-safe") {
            // Narrow values may carry dirty upper bits in assembly: clean the addresses.
            let mask := 0xffffffffffffffffffffffffffffffffffffffff
            token := and(token, mask)
            let m := mload(0x40)
            mstore(m, shl(224, 0x23b872dd)) // transferFrom(address,address,uint256)
            mstore(add(m, 0x04), and(from, mask))
            mstore(add(m, 0x24), and(to, mask))
            mstore(add(m, 0x44), amount)
            ok := call(TOKEN_CALL_GAS, token, 0, m, 0x64, 0, 0x20)
            switch returndatasize()
            case 0 { ok := and(ok, gt(extcodesize(token), 0)) }
            default { ok := and(ok, eq(mload(0), 1)) }
        }
    }
}
