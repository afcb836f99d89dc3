//! Typed bindings generated from the contracts' own artifacts (`chain/artifacts/*.json`,
//! compiled by `foundry-compilers` in `cargo xtask artifacts`). Each module exposes the
//! contract's calls, events, errors and, because the artifacts carry bytecode, `deploy`.
#![allow(missing_docs, clippy::too_many_arguments)]

use alloy::sol;

sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    AllowanceStateMachine,
    "artifacts/AllowanceStateMachine.json"
);

sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    SettlementRouter,
    "artifacts/SettlementRouter.json"
);

sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    AttestationRegistry,
    "artifacts/AttestationRegistry.json"
);

sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    AttestationMirror,
    "artifacts/AttestationMirror.json"
);

sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    TestStablecoin,
    "artifacts/TestStablecoin.json"
);

sol!(
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    PasskeyWallet,
    "artifacts/PasskeyWallet.json"
);
