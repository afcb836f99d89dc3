// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {IAllowanceStateMachine} from "../../../src/interfaces/IAllowanceStateMachine.sol";

/// @dev A payer wallet (a contract) that, when its token calls it back during a pull's
///      `transferFrom`, revokes the key or cancels the mandate it was told to — a revocation
///      made during the token call that a failed item must not undo.
contract RevokingPayer {
    IAllowanceStateMachine public immutable asm;
    bytes32 public keyToRevoke;
    bytes32 public mandateToCancel;

    constructor(IAllowanceStateMachine asm_) {
        asm = asm_;
    }

    function createMandate(IAllowanceStateMachine.MandateTerms calldata terms) external returns (bytes32) {
        return asm.createMandate(terms);
    }

    function arm(bytes32 key, bytes32 mandate) external {
        (keyToRevoke, mandateToCancel) = (key, mandate);
    }

    /// @dev Called by `CallbackToken` in the middle of a `transferFrom` out of this wallet.
    function onPull() external {
        if (keyToRevoke != 0) asm.revokeSessionKey(keyToRevoke);
        if (mandateToCancel != 0) asm.cancelMandate(mandateToCancel);
    }
}

/// @dev A token whose `transferFrom` works normally until `hostile` is set; then it calls the
///      payer back (`onPull`) and returns false without moving anything.
contract CallbackToken {
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    bool public hostile;

    function mint(address to, uint256 amount) external {
        balanceOf[to] += amount;
    }

    function setHostile(bool on) external {
        hostile = on;
    }

    function approve(address spender, uint256 amount) external returns (bool) {
        allowance[msg.sender][spender] = amount;
        return true;
    }

    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        if (hostile) {
            RevokingPayer(from).onPull();
            return false;
        }
        require(balanceOf[from] >= amount, "balance");
        balanceOf[from] -= amount;
        balanceOf[to] += amount;
        return true;
    }
}
