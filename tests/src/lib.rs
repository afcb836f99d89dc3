//! The one end-to-end harness. Every e2e test goes through [`Harness::start`]: two anvil
//! chains on free ports with the full contract set deployed (and, from the API issue on, a
//! fresh database and the server on port 0). Tests never share chains, so they run in
//! parallel.

use alloy::primitives::{Address, U256};
use alloy::providers::ext::AnvilApi;
use alloy::providers::{DynProvider, Provider};
use alloy::signers::local::PrivateKeySigner;
use anyhow::Context;
use openrail_chain::bindings::{AllowanceStateMachine, TestStablecoin};
use openrail_chain::deploy::{ChainDeployment, TOKEN_DECIMALS, fund_wallet, signer_provider};
use openrail_chain::devnet::{Devnet, DevnetConfig, dev_operator};

/// A running test environment.
pub struct Harness {
    /// Both chains and the manifest.
    pub devnet: Devnet,
    /// A provider on the settlement chain that signs as the operator.
    pub settlement: DynProvider,
}

impl Harness {
    /// Starts two fresh chains on free ports and deploys the contracts.
    pub async fn start() -> anyhow::Result<Self> {
        let devnet = Devnet::start(DevnetConfig::default()).await.context("starting the devnet")?;
        let settlement = signer_provider(devnet.settlement.rpc_url(), dev_operator());
        Ok(Self { devnet, settlement })
    }

    /// What was deployed on the settlement chain.
    pub fn settlement_deployment(&self) -> &ChainDeployment {
        &self.devnet.manifest.settlement
    }

    /// The allowance state machine, called as the operator.
    pub fn allowance_state_machine(&self) -> AllowanceStateMachine::AllowanceStateMachineInstance<DynProvider> {
        let addr = self.settlement_deployment().allowance_state_machine.expect("settlement chain has a state machine");
        AllowanceStateMachine::new(addr, self.settlement.clone())
    }

    /// The settlement chain's test stablecoin for `currency`.
    pub fn token(&self, currency: &str) -> TestStablecoin::TestStablecoinInstance<DynProvider> {
        TestStablecoin::new(self.settlement_deployment().tokens[currency], self.settlement.clone())
    }

    /// Funds `wallet` with `major_units` of every test currency on the settlement chain and
    /// approves the router.
    pub async fn fund(&self, wallet: PrivateKeySigner, major_units: u64) -> anyhow::Result<()> {
        fund_wallet(self.settlement_deployment(), dev_operator(), wallet, units(major_units)).await?;
        Ok(())
    }

    /// Token balance of `who` in `currency` on the settlement chain (smallest units).
    pub async fn balance(&self, currency: &str, who: Address) -> anyhow::Result<U256> {
        Ok(self.token(currency).balanceOf(who).call().await?)
    }

    /// Timestamp of the settlement chain's latest block.
    pub async fn chain_time(&self) -> anyhow::Result<u64> {
        let block = self.settlement.get_block(alloy::eips::BlockNumberOrTag::Latest.into()).await?;
        Ok(block.context("no latest block")?.header.timestamp)
    }

    /// Moves the settlement chain's clock to `timestamp` (never backwards) and mines a block.
    pub async fn warp_to(&self, timestamp: u64) -> anyhow::Result<()> {
        self.settlement.anvil_set_next_block_timestamp(timestamp).await?;
        self.settlement.anvil_mine(Some(1), None).await?;
        Ok(())
    }

    /// Stops both chains.
    pub async fn stop(self) {
        self.devnet.stop().await;
    }
}

/// `major` whole units of a test stablecoin, in smallest units.
pub fn units(major: u64) -> U256 {
    U256::from(major) * U256::from(10u64).pow(U256::from(TOKEN_DECIMALS))
}
