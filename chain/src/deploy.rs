//! Deployment of the contract set to one chain, and the deployment manifest.
//!
//! One path for every chain, local or public ([`deploy_deterministic`], behind `openrail
//! deploy` and `openrail dev`): every contract through the canonical CREATE2 deployer
//! ([`crate::create2`]), so the same salt and constructor arguments give the same
//! addresses everywhere and a rerun sends nothing. The settlement chain gets the
//! `AllowanceStateMachine` (which is its router) and the `AttestationMirror` (the attestation
//! chain's slots, from attester-signed receipts; the operator is its first trusted
//! attester); the attestation chain a `SettlementRouter` and the `AttestationRegistry`;
//! testnets the test stablecoins.

use std::collections::BTreeMap;
use std::path::Path;

use alloy::primitives::{Address, U256};
use alloy::providers::fillers::{ChainIdFiller, GasFiller, NonceFiller, SimpleNonceManager};
use alloy::providers::{DynProvider, Provider, ProviderBuilder};
use alloy::signers::local::PrivateKeySigner;
use alloy::transports::http::reqwest::Url;
use serde::{Deserialize, Serialize};

use crate::ChainError;
use crate::bindings::{
    AllowanceStateMachine, AttestationMirror, AttestationRegistry, SettlementRouter, TestStablecoin,
};

/// Currencies that get a test stablecoin (6 decimals) on every testnet chain.
pub const TEST_CURRENCIES: [&str; 2] = ["USD", "EUR"];
/// Decimals of every test stablecoin.
pub const TOKEN_DECIMALS: u8 = openrail_domain::money::TOKEN_DECIMALS as u8;

/// What a chain is for. The caller never picks a chain; the service routes by role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChainRole {
    /// Chain A: settlement router and allowance state machine, attestation mirror.
    Settlement,
    /// Chain B: settlement router and attestation registry.
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
    /// The `AttestationRegistry` (attestation chain only).
    pub attestation_registry: Option<Address>,
    /// The `AttestationMirror` (settlement chain only).
    pub attestation_mirror: Option<Address>,
    /// Stablecoin per ISO 4217 currency code.
    pub tokens: BTreeMap<String, Address>,
    /// Block number of the last deployment transaction (where event watching may start).
    pub deployed_at_block: u64,
}

impl ChainDeployment {
    /// The stablecoins by currency (codes the service does not know are left out).
    pub fn currency_tokens(&self) -> BTreeMap<openrail_domain::Currency, Address> {
        self.tokens
            .iter()
            .filter_map(|(code, addr)| openrail_domain::Currency::parse(code).map(|c| (c, *addr)))
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
        write_json(path, self)
    }

    /// Reads a manifest written by [`Manifest::write`].
    pub fn read(path: &Path) -> Result<Self, ChainError> {
        read_json(path)
    }
}

/// Writes `value` to `path` as pretty JSON with a final newline, creating parent
/// directories.
fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), ChainError> {
    let io = |source| ChainError::Manifest {
        path: path.display().to_string(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let json = serde_json::to_string_pretty(value)?;
    std::fs::write(path, json + "\n").map_err(io)
}

/// Reads JSON written by [`write_json`].
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ChainError> {
    let text = std::fs::read_to_string(path).map_err(|source| ChainError::Manifest {
        path: path.display().to_string(),
        source,
    })?;
    Ok(serde_json::from_str(&text)?)
}

/// A provider that signs with `signer`. Nonces are asked of the node for every
/// transaction (alloy's default cache would skip a nonce after a call that fails to
/// estimate, leaving later transactions stuck behind the gap).
pub fn signer_provider(rpc_url: &Url, signer: PrivateKeySigner) -> Result<DynProvider, ChainError> {
    Ok(ProviderBuilder::default()
        .filler(GasFiller::default())
        .filler(NonceFiller::<SimpleNonceManager>::default())
        .filler(ChainIdFiller::default())
        .wallet(signer)
        .connect_reqwest(crate::tls::client()?, rpc_url.clone())
        .erased())
}

/// Waits for a sent transaction's receipt and fails when it reverted (defined beside the
/// CREATE2 placement, the lowest layer that sends).
pub use crate::create2::mined;

/// The treasury approves the router (the state machine on the settlement chain) for an
/// unlimited amount of each of the deployment's stablecoins, so bank legs, refunds and
/// bank-funded pulls can move its tokens. Once per token; a rerun sends nothing.
pub async fn approve_router(
    deployment: &ChainDeployment,
    treasury: PrivateKeySigner,
) -> Result<(), ChainError> {
    let url: Url = deployment
        .rpc_url
        .parse()
        .map_err(|e| ChainError::Deployment(format!("bad rpc url {}: {e}", deployment.rpc_url)))?;
    let owner = treasury.address();
    let tre = signer_provider(&url, treasury)?;
    for token in deployment.tokens.values() {
        let t = TestStablecoin::new(*token, &tre);
        if t.allowance(owner, deployment.router).call().await? != U256::MAX {
            mined(t.approve(deployment.router, U256::MAX).send().await?).await?;
        }
    }
    Ok(())
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
    let tre = signer_provider(&url, treasury)?;
    let payer = signer_provider(&url, wallet)?;
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

/// Which stablecoins a deterministic deployment uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tokens {
    /// Deploy the test stablecoins ([`TEST_CURRENCIES`], 6 decimals, minted by the owner)
    /// and mint `treasury_supply` smallest units of each to the treasury when first
    /// deployed (testnets).
    Test {
        /// Smallest units minted to the treasury.
        treasury_supply: U256,
    },
    /// Existing tokens by ISO 4217 code (mainnet stablecoins).
    Existing(BTreeMap<String, Address>),
}

/// What `openrail deploy` records per chain (`deployments/<chain-id>.json`): the chain's
/// deployment as `serve` reads it, and how it was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeploymentRecord {
    /// The chain's contracts and accounts.
    pub deployment: ChainDeployment,
    /// The CREATE2 salt every contract was placed with.
    pub salt: alloy::primitives::B256,
    /// Every contract placed, with its init-code hash and deploying transaction (none when
    /// it was already there).
    pub contracts: Vec<crate::create2::Placed>,
    /// The compiler and settings the bytecode came from.
    pub compiler: String,
    /// The source commit (`git rev-parse HEAD` where the deploy ran; `unknown` outside a
    /// checkout).
    pub commit: String,
}

impl DeploymentRecord {
    /// Writes the record as pretty JSON, creating parent directories.
    pub fn write(&self, path: &Path) -> Result<(), ChainError> {
        write_json(path, self)
    }

    /// Reads a record written by [`DeploymentRecord::write`].
    pub fn read(path: &Path) -> Result<Self, ChainError> {
        read_json(path)
    }
}

/// The compiler and settings of `chain/artifacts` (foundry.toml; a test keeps them equal).
pub const COMPILER: &str =
    "solc 0.8.30 (solcjs), optimizer 2000 runs, evm prague, no metadata hash";

/// Deploys the contract set of `role` deterministically through the canonical CREATE2
/// deployer: `owner` (a key apart from the operator's) sends and pays, owns the router or
/// state machine (and the test tokens), and names `operator` and `treasury`. The same
/// `salt`, owner, operator and treasury give the same addresses on every chain; contracts
/// already there are left alone, so a rerun sends nothing. On the settlement chain the
/// operator is made a trusted attester of the mirror (once): it signs the attestation
/// chain's attestations and their receipts (another attester is the owner's `addAttester`).
/// The registry has no owner and no setup. Test tokens are minted to the treasury only when
/// first deployed.
pub async fn deploy_deterministic(
    rpc_url: &Url,
    role: ChainRole,
    owner: PrivateKeySigner,
    operator: Address,
    treasury: Address,
    salt: alloy::primitives::B256,
    tokens: Tokens,
) -> Result<DeploymentRecord, ChainError> {
    use crate::create2::place;
    use alloy::sol_types::SolConstructor;
    let owner_addr = owner.address();
    if owner_addr == operator {
        return Err(ChainError::Deployment(
            "the owner and the operator must be different keys (the contracts refuse one key as both)".into(),
        ));
    }
    if operator == Address::ZERO || treasury == Address::ZERO {
        return Err(ChainError::Deployment(
            "the operator and the treasury may not be the zero address".into(),
        ));
    }
    let p = signer_provider(rpc_url, owner)?;
    let chain_id = p.get_chain_id().await?;
    let mut contracts = Vec::new();
    let mut token_addresses = BTreeMap::new();
    match tokens {
        Tokens::Test { treasury_supply } => {
            for code in TEST_CURRENCIES {
                let args = TestStablecoin::constructorCall {
                    name_: format!("Openrail Test {code}"),
                    symbol_: format!("t{code}"),
                    owner_: owner_addr,
                }
                .abi_encode();
                let placed = place(
                    &p,
                    &format!("TestStablecoin {code}"),
                    salt,
                    &TestStablecoin::BYTECODE,
                    args,
                )
                .await?;
                if placed.tx_hash.is_some() && treasury_supply > U256::ZERO {
                    mined(
                        TestStablecoin::new(placed.address, &p)
                            .mint(treasury, treasury_supply)
                            .send()
                            .await?,
                    )
                    .await?;
                }
                token_addresses.insert(code.to_string(), placed.address);
                contracts.push(placed);
            }
        }
        Tokens::Existing(t) => token_addresses = t,
    }
    let (o, op, tr) = (owner_addr, operator, treasury);
    let (router, asm, registry, mirror) = match role {
        ChainRole::Settlement => {
            // The mirror first: the state machine names it (identity requirements are
            // checked against it) and is immutable.
            let args = AttestationMirror::constructorCall { owner_: o }.abi_encode();
            let mirror = place(
                &p,
                "AttestationMirror",
                salt,
                &AttestationMirror::BYTECODE,
                args,
            )
            .await?;
            let m = AttestationMirror::new(mirror.address, &p);
            if !m.isTrusted(operator).call().await? {
                mined(m.addAttester(operator).send().await?).await?;
            }
            let args = AllowanceStateMachine::constructorCall {
                owner_: o,
                operator_: op,
                treasury_: tr,
                mirror_: mirror.address,
            }
            .abi_encode();
            let placed = place(
                &p,
                "AllowanceStateMachine",
                salt,
                &AllowanceStateMachine::BYTECODE,
                args,
            )
            .await?;
            let a = placed.address;
            let addresses = (a, Some(a), None, Some(mirror.address));
            contracts.push(mirror);
            contracts.push(placed);
            addresses
        }
        ChainRole::Attestation => {
            let args = SettlementRouter::constructorCall {
                owner_: o,
                operator_: op,
                treasury_: tr,
            }
            .abi_encode();
            let router = place(
                &p,
                "SettlementRouter",
                salt,
                &SettlementRouter::BYTECODE,
                args,
            )
            .await?;
            let registry = place(
                &p,
                "AttestationRegistry",
                salt,
                &AttestationRegistry::BYTECODE,
                Vec::new(),
            )
            .await?;
            // Openrail's credential schemas, once per registry (their uids are derived, so a
            // second deployment finds them registered).
            let r = AttestationRegistry::new(registry.address, &p);
            let schemas = std::iter::once(crate::attestations::CREDENTIAL_SCHEMA)
                .chain(crate::attestations::TYPED_SCHEMAS.iter().map(|(_, s)| *s));
            for schema in schemas {
                let uid = crate::attestations::schema_uid(schema);
                if r.getSchema(uid).call().await?.uid.is_zero() {
                    mined(
                        r.registerSchema(schema.to_string(), Address::ZERO, true)
                            .send()
                            .await?,
                    )
                    .await?;
                }
            }
            let addresses = (router.address, None, Some(registry.address), None);
            contracts.push(router);
            contracts.push(registry);
            addresses
        }
    };
    let deployed_at_block = p.get_block_number().await?;
    Ok(DeploymentRecord {
        deployment: ChainDeployment {
            role,
            chain_id,
            rpc_url: rpc_url.to_string(),
            owner: owner_addr,
            operator,
            treasury,
            router,
            allowance_state_machine: asm,
            attestation_registry: registry,
            attestation_mirror: mirror,
            tokens: token_addresses,
            deployed_at_block,
        },
        salt,
        contracts,
        compiler: COMPILER.to_string(),
        commit: source_commit(),
    })
}

/// `git rev-parse HEAD` of the working directory, or `unknown`.
fn source_commit() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

#[cfg(test)]
mod tests {
    /// What a record says of the compiler is what builds the artifacts: foundry.toml's
    /// optimizer runs and EVM version, and package.json's solc.
    #[test]
    fn the_compiler_named_in_records_is_the_one_configured() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        let foundry = std::fs::read_to_string(format!("{root}/foundry.toml")).unwrap();
        let package = std::fs::read_to_string(format!("{root}/package.json")).unwrap();
        let setting = |key: &str| {
            foundry
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{key} = ")))
                .unwrap()
                .trim_matches('"')
                .to_string()
        };
        let solc: serde_json::Value = serde_json::from_str(&package).unwrap();
        let version = solc["devDependencies"]["solc"]
            .as_str()
            .or(solc["dependencies"]["solc"].as_str())
            .unwrap();
        assert!(
            super::COMPILER.contains(&format!("solc {version}")),
            "{version}"
        );
        assert!(super::COMPILER.contains(&format!("optimizer {} runs", setting("optimizer_runs"))));
        assert!(super::COMPILER.contains(&format!("evm {}", setting("evm_version"))));
    }
}
