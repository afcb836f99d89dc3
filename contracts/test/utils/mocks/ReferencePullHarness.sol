// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {AllowanceStateMachine} from "../../../src/AllowanceStateMachine.sol";

/// @dev The state machine with one extra entry point: a pull decided only by the reference
///      path (`_authorize`), never the fast path. Differential tests compare the two.
contract ReferencePullHarness is AllowanceStateMachine {
    constructor(address owner_, address operator_, address treasury_)
        AllowanceStateMachine(owner_, operator_, treasury_)
    {}

    /// @dev `pull` as it would be without `_fastPull`.
    function referencePull(bytes32 keyId, address destination, uint256 amount) external onlyOperatorUnpaused {
        _referencePull(keyId, destination, amount);
        emit DebitPulled(keyId, destination, amount);
    }
}
