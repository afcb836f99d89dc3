//! Deployment of the contract set to one chain, and the deployment manifest.
//!
//! The settlement chain gets the test stablecoins, the `SettlementRouter` and the
//! `AllowanceStateMachine`; the attestation chain gets the stablecoins, a router and the
//! `AttestationVerifier`. The router's allowance state machine is an immutable, so the
//! deployer predicts the state machine's CREATE address before deploying the router and
//! checks it afterwards.

use std::collections::BTreeMap;
use std::path::Path;

use alloy::network::Ethereum;
use alloy::primitives::{Address, U256};
use alloy::providers::fillers::{ChainIdFiller, GasFiller, NonceFiller, SimpleNonceManager};
use alloy::providers::{DynProvider, PendingTransactionBuilder, Provider, ProviderBuilder};
use alloy::rpc::types::TransactionReceipt;
use alloy::signers::local::PrivateKeySigner;
use alloy::transports::http::reqwest::Url;
use serde::{Deserialize, Serialize};

use crate::ChainError;
use crate::bindings::{
    AllowanceStateMachine, AttestationVerifier, SettlementRouter, TestStablecoin,
};

/// Currencies that get a test stablecoin (6 decimals) on every testnet chain.
pub const TEST_CURRENCIES: [&str; 2] = ["USD", "EUR"];
/// Decimals of every test stablecoin.
pub const TOKEN_DECIMALS: u8 = openrail_store::money::TOKEN_DECIMALS as u8;

/// What a chain is for. The caller never picks a chain; the service routes by role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChainRole {
    /// Chain A: settlement router and allowance state machine.
    Settlement,
    /// Chain B: settlement router and attestation verifier.
    Attestation,
}

/// The contracts of one chain and the accounts that operate them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainDeployment {
    /// What the chain is for.
    pub role: ChainRole,
    /// EIP-155 chain id.
    pub chain_id: u64,
    /// JSON-RPC endpoint.
    pub rpc_url: String,
    /// The contracts' owner: pauses, proposes a new operator (which takes effect after the
    /// contracts' delay) or treasury. Never the operator's key.
    pub owner: Address,
    /// The service's signer: the only account that submits moves, pulls and keys.
    pub operator: Address,
    /// The treasury wallet (funds bank-funded legs, receives bank-bound legs).
    pub treasury: Address,
    /// The `SettlementRouter`.
    pub router: Address,
    /// The `AllowanceStateMachine` (settlement chain only).
    pub allowance_state_machine: Option<Address>,
    /// The `AttestationVerifier` (attestation chain only).
    pub attestation_verifier: Option<Address>,
    /// Stablecoin per ISO 4217 currency code.
    pub tokens: BTreeMap<String, Address>,
    /// Block number of the last deployment transaction (where event watching may start).
    pub deployed_at_block: u64,
}

impl ChainDeployment {
    /// The stablecoins by currency (codes the service does not know are left out).
    pub fn currency_tokens(&self) -> BTreeMap<openrail_store::Currency, Address> {
        self.tokens
            .iter()
            .filter_map(|(code, addr)| openrail_store::Currency::parse(code).map(|c| (c, *addr)))
            .collect()
    }
}

/// The deployment manifest: both chains.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Chain A.
    pub settlement: ChainDeployment,
    /// Chain B.
    pub attestation: ChainDeployment,
}

impl Manifest {
    /// Writes the manifest as pretty JSON, creating parent directories.
    pub fn write(&self, path: &Path) -> Result<(), ChainError> {
        let io = |source| ChainError::Manifest {
            path: path.display().to_string(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let json = serde_json::to_string_pretty(self)?;
        std::fs::write(path, json + "\n").map_err(io)
    }

    /// Reads a manifest written by [`Manifest::write`].
    pub fn read(path: &Path) -> Result<Self, ChainError> {
        let text = std::fs::read_to_string(path).map_err(|source| ChainError::Manifest {
            path: path.display().to_string(),
            source,
        })?;
        Ok(serde_json::from_str(&text)?)
    }
}

/// A provider that signs with `signer`. Nonces are asked of the node for every
/// transaction (alloy's default cache would skip a nonce after a call that fails to
/// estimate, leaving later transactions stuck behind the gap).
pub fn signer_provider(rpc_url: &Url, signer: PrivateKeySigner) -> DynProvider {
    ProviderBuilder::default()
        .filler(GasFiller::default())
        .filler(NonceFiller::<SimpleNonceManager>::default())
        .filler(ChainIdFiller::default())
        .wallet(signer)
        .connect_http(rpc_url.clone())
        .erased()
}

/// Waits for a sent transaction's receipt and fails when it reverted.
pub async fn mined(
    pending: PendingTransactionBuilder<Ethereum>,
) -> Result<TransactionReceipt, ChainError> {
    let receipt = pending.get_receipt().await?;
    if receipt.status() {
        Ok(receipt)
    } else {
        Err(ChainError::Reverted(receipt.transaction_hash))
    }
}

/// Deploys the contract set of `role` to the chain at `rpc_url` with `owner` as the owner
/// of the router and state machine (a key apart from the operator's), mints
/// `treasury_supply` (smallest units) of each test stablecoin to the treasury and approves
/// the router to move the treasury's tokens.
pub async fn deploy_chain(
    rpc_url: &Url,
    role: ChainRole,
    owner: Address,
    operator: PrivateKeySigner,
    treasury: PrivateKeySigner,
    treasury_supply: U256,
) -> Result<ChainDeployment, ChainError> {
    let operator_addr = operator.address();
    let treasury_addr = treasury.address();
    let op = signer_provider(rpc_url, operator);
    let chain_id = op.get_chain_id().await?;

    let mut tokens = BTreeMap::new();
    for code in TEST_CURRENCIES {
        let token = TestStablecoin::deploy(
            &op,
            format!("Openrail Test {code}"),
            format!("t{code}"),
            operator_addr,
        )
        .await?;
        mined(token.mint(treasury_addr, treasury_supply).send().await?).await?;
        tokens.insert(code.to_string(), *token.address());
    }

    let (router, asm, verifier) = match role {
        ChainRole::Settlement => {
            // The allowance state machine is this chain's router (one contract: a pull moves
            // tokens without calling a second one; see ARCHITECTURE.md "Gas").
            let asm =
                AllowanceStateMachine::deploy(&op, owner, operator_addr, treasury_addr).await?;
            (*asm.address(), Some(*asm.address()), None)
        }
        ChainRole::Attestation => {
            let router = SettlementRouter::deploy(&op, owner, operator_addr, treasury_addr).await?;
            let verifier = AttestationVerifier::deploy(&op, operator_addr).await?;
            mined(verifier.addAttester(operator_addr).send().await?).await?;
            (*router.address(), None, Some(*verifier.address()))
        }
    };

    let tre = signer_provider(rpc_url, treasury);
    for token in tokens.values() {
        mined(
            TestStablecoin::new(*token, &tre)
                .approve(router, U256::MAX)
                .send()
                .await?,
        )
        .await?;
    }
    let deployed_at_block = op.get_block_number().await?;

    Ok(ChainDeployment {
        role,
        chain_id,
        rpc_url: rpc_url.to_string(),
        owner,
        operator: operator_addr,
        treasury: treasury_addr,
        router,
        allowance_state_machine: asm,
        attestation_verifier: verifier,
        tokens,
        deployed_at_block,
    })
}

/// Sends `amount` (smallest units) of every test stablecoin of `deployment` from the
/// treasury to `wallet` and has the wallet approve the router for an unlimited amount, so
/// it can pay at once. The operator sends nothing: its nonces belong to the submitter.
pub async fn fund_wallet(
    deployment: &ChainDeployment,
    treasury: PrivateKeySigner,
    wallet: PrivateKeySigner,
    amount: U256,
) -> Result<(), ChainError> {
    let url: Url = deployment
        .rpc_url
        .parse()
        .map_err(|e| ChainError::Deployment(format!("bad rpc url {}: {e}", deployment.rpc_url)))?;
    let wallet_addr = wallet.address();
    let tre = signer_provider(&url, treasury);
    let payer = signer_provider(&url, wallet);
    for token in deployment.tokens.values() {
        mined(
            TestStablecoin::new(*token, &tre)
                .transfer(wallet_addr, amount)
                .send()
                .await?,
        )
        .await?;
        mined(
            TestStablecoin::new(*token, &payer)
                .approve(deployment.router, U256::MAX)
                .send()
                .await?,
        )
        .await?;
    }
    Ok(())
}
