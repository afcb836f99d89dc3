// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {SettlementCore} from "./SettlementCore.sol";

/// @title SettlementRouter
/// @notice The standalone settlement router, for a chain without an allowance state machine
///         (the attestation chain): atomic token moves from a payer wallet (ERC-20 allowance to
///         the router) or the treasury to a wallet or the treasury, by the operator only.
/// @dev All logic lives in `SettlementCore`; on the settlement chain the `AllowanceStateMachine`
///      carries the same logic and is that chain's router.
contract SettlementRouter is SettlementCore {
    /// @notice Deploys the router.
    /// @param owner_ Owner (may pause and change the operator and treasury).
    /// @param operator_ The service's signer, the only account that moves tokens.
    /// @param treasury_ The treasury wallet.
    constructor(address owner_, address operator_, address treasury_)
        SettlementCore(owner_, operator_, treasury_)
    {}
}
