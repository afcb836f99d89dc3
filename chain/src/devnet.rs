//! The two local chains of development and of the end-to-end harness: anvil with chain id
//! 31337 (settlement) and 31338 (attestation), the contract set deployed on each.

use alloy::primitives::{B256, U256};
use alloy::signers::local::PrivateKeySigner;
use alloy::transports::http::reqwest::Url;

use crate::ChainError;
use crate::anvil::Anvil;
use crate::deploy::{ChainDeployment, ChainRole, Manifest};

/// Chain id of the local settlement chain (A).
pub const SETTLEMENT_CHAIN_ID: u64 = 31337;
/// Chain id of the local attestation chain (B).
pub const ATTESTATION_CHAIN_ID: u64 = 31338;

/// Anvil's well-known development keys (mnemonic "test test … junk"). Public knowledge:
/// never use them outside local chains.
const ANVIL_KEYS: [&str; 5] = [
    "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
    "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
    "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
    "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
    "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
];

fn anvil_key(i: usize) -> PrivateKeySigner {
    ANVIL_KEYS[i]
        .parse()
        .expect("anvil development keys are valid")
}

/// The operator (the service's signer) on local chains: anvil account 0.
pub fn dev_operator() -> PrivateKeySigner {
    anvil_key(0)
}

/// The treasury on local chains: anvil account 1.
pub fn dev_treasury() -> PrivateKeySigner {
    anvil_key(1)
}

/// The demo payer wallet that `openrail dev` funds: anvil account 2.
pub fn dev_demo_payer() -> PrivateKeySigner {
    anvil_key(2)
}

/// The contracts' owner on local chains (pauses, proposes a new operator or treasury):
/// anvil account 4, a key apart from the operator's, as the contracts require.
pub fn dev_owner() -> PrivateKeySigner {
    anvil_key(4)
}

/// A spare funded account for tests: anvil account 3.
pub fn dev_spare() -> PrivateKeySigner {
    anvil_key(3)
}

/// Ports of the two chains; `0` picks a free port.
#[derive(Debug, Clone, Copy, Default)]
pub struct DevnetConfig {
    /// Port of the settlement chain.
    pub settlement_port: u16,
    /// Port of the attestation chain.
    pub attestation_port: u16,
    /// Keep only recent chain states in memory (benches of thousands of blocks).
    pub prune_history: bool,
}

/// Two running local chains with the contracts deployed.
#[derive(Debug)]
pub struct Devnet {
    /// Chain A.
    pub settlement: Anvil,
    /// Chain B.
    pub attestation: Anvil,
    /// What was deployed where.
    pub manifest: Manifest,
}

/// The CREATE2 salt of the development deployments (`openrail dev`, the tests).
pub const DEV_SALT: B256 =
    alloy::primitives::b256!("0x6f70656e7261696c2d6465760000000000000000000000000000000000000000");

/// Deploys the contract set of `role` on a local chain as `openrail deploy` does
/// (deterministically, through the CREATE2 deployer, owner apart from operator) with the
/// development keys and `salt`, then has the treasury approve the router for its test
/// stablecoins (the bank legs and bank-funded pulls move the treasury's tokens).
pub async fn dev_deployment(
    url: Url,
    role: ChainRole,
    salt: B256,
) -> Result<ChainDeployment, ChainError> {
    let record = crate::deploy::deploy_deterministic(
        &url,
        role,
        dev_owner(),
        dev_operator().address(),
        dev_treasury().address(),
        salt,
        crate::deploy::Tokens::Test {
            treasury_supply: treasury_supply(),
        },
    )
    .await?;
    crate::deploy::approve_router(&record.deployment, dev_treasury()).await?;
    Ok(record.deployment)
}

/// Test stablecoins minted to the treasury at deployment: one billion units of currency.
pub fn treasury_supply() -> U256 {
    U256::from(1_000_000_000u64) * U256::from(10u64).pow(U256::from(crate::deploy::TOKEN_DECIMALS))
}

impl Devnet {
    /// Starts both chains and deploys the contract sets on them, in parallel.
    pub async fn start(config: DevnetConfig) -> Result<Self, ChainError> {
        let (settlement, attestation) = tokio::try_join!(
            Anvil::spawn_with(
                SETTLEMENT_CHAIN_ID,
                config.settlement_port,
                config.prune_history
            ),
            Anvil::spawn_with(
                ATTESTATION_CHAIN_ID,
                config.attestation_port,
                config.prune_history
            ),
        )?;
        let (a, b) = tokio::try_join!(
            dev_deployment(
                settlement.rpc_url().clone(),
                ChainRole::Settlement,
                DEV_SALT
            ),
            dev_deployment(
                attestation.rpc_url().clone(),
                ChainRole::Attestation,
                DEV_SALT
            ),
        )?;
        Ok(Self {
            settlement,
            attestation,
            manifest: Manifest {
                settlement: a,
                attestation: b,
            },
        })
    }

    /// Stops both chains.
    pub async fn stop(self) {
        self.settlement.stop().await;
        self.attestation.stop().await;
    }
}
