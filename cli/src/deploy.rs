//! `openrail deploy`: the contracts on any EVM chain, deterministically (CREATE2), with the
//! owner's and operator's keys from the environment, never the command line.

use std::collections::BTreeMap;
use std::path::PathBuf;

use alloy::primitives::{Address, B256, U256, keccak256};
use alloy::providers::Provider;
use alloy::signers::local::PrivateKeySigner;
use alloy::transports::http::reqwest::Url;
use anyhow::{Context, bail};
use openrail_chain::deploy::{
    ChainRole, DeploymentRecord, TOKEN_DECIMALS, Tokens, approve_router, deploy_deterministic,
};
use openrail_chain::verify::Verifier;

/// Options of `openrail deploy`. The owner's key comes from `OPENRAIL_DEPLOYER_KEY` (it
/// sends and pays for the deployment and owns the contracts), the operator's address from
/// `--operator` or `OPENRAIL_OPERATOR_KEY`; keys are never arguments (they would land in
/// shell histories and process lists).
#[derive(Debug, clap::Args)]
pub struct DeployArgs {
    /// JSON-RPC URL of the chain.
    #[arg(long, env = "OPENRAIL_RPC_URL")]
    pub rpc_url: Url,
    /// What the chain is for: `settlement` (the allowance state machine, which is also
    /// its router, and the attestation mirror) or `attestation` (a router and the
    /// attestation registry).
    #[arg(long, default_value = "settlement")]
    pub role: String,
    /// The treasury wallet (pays bank-funded legs, receives bank-bound ones).
    #[arg(long, env = "OPENRAIL_TREASURY")]
    pub treasury: Address,
    /// The operator's address (the service's signer); default: the address of
    /// `OPENRAIL_OPERATOR_KEY`.
    #[arg(long)]
    pub operator: Option<Address>,
    /// The CREATE2 salt: text (hashed with keccak256) or 0x and 64 hex digits. The same
    /// salt, owner, operator and treasury give the same addresses on every chain.
    #[arg(long, default_value = "openrail-v1")]
    pub salt: String,
    /// Stablecoins: `test` deploys the test stablecoins (6 decimals) and mints
    /// `--test-supply` of each to the treasury; else `CODE=ADDRESS`, repeated (mainnet).
    #[arg(
        long = "token",
        default_value = "test",
        value_name = "test|CODE=ADDRESS"
    )]
    pub tokens: Vec<String>,
    /// Major units of each test stablecoin minted to the treasury when first deployed.
    #[arg(long, default_value_t = 1_000_000_000)]
    pub test_supply: u64,
    /// Where to write the record; default `deployments/<chain-id>.json`.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Verify every contract on an explorer once deployed (a rerun verifies too):
    /// `etherscan` (any Etherscan-compatible API; its key from `OPENRAIL_ETHERSCAN_KEY`)
    /// or `sourcify`.
    #[arg(long, value_name = "etherscan|sourcify", requires = "verifier_url")]
    pub verify: Option<String>,
    /// The explorer's API: e.g. `https://api.etherscan.io/v2/api` or
    /// `https://sourcify.dev/server`.
    #[arg(long, env = "OPENRAIL_VERIFIER_URL")]
    pub verifier_url: Option<String>,
    /// How often a pending verification is asked about, milliseconds.
    #[arg(long, default_value_t = 3_000, hide = true)]
    pub verify_poll_ms: u64,
}

/// What the arguments ask for, parsed: bad input fails here, naming the flag.
fn salt_of(text: &str) -> anyhow::Result<B256> {
    if let Some(hex) = text.strip_prefix("0x") {
        return hex
            .parse::<B256>()
            .or_else(|_| text.parse::<B256>())
            .with_context(|| format!("--salt {text:?}: 0x and 64 hex digits, or text"));
    }
    Ok(keccak256(text.as_bytes()))
}

fn role_of(text: &str) -> anyhow::Result<ChainRole> {
    match text {
        "settlement" => Ok(ChainRole::Settlement),
        "attestation" => Ok(ChainRole::Attestation),
        other => bail!("--role {other:?}: settlement or attestation"),
    }
}

fn tokens_of(args: &[String], test_supply: u64) -> anyhow::Result<Tokens> {
    if args.iter().all(|t| t == "test") {
        let unit = U256::from(10u64).pow(U256::from(TOKEN_DECIMALS));
        return Ok(Tokens::Test {
            treasury_supply: U256::from(test_supply) * unit,
        });
    }
    let mut tokens = BTreeMap::new();
    for t in args {
        let (code, address) = t
            .split_once('=')
            .with_context(|| format!("--token {t:?}: test, or CODE=ADDRESS"))?;
        if openrail_store::Currency::parse(code).is_none() {
            bail!("--token {t:?}: {code} is not a currency Openrail knows");
        }
        let address: Address = address
            .parse()
            .with_context(|| format!("--token {t:?}: {address} is not an address"))?;
        tokens.insert(code.to_string(), address);
    }
    Ok(Tokens::Existing(tokens))
}

fn key_from_env(name: &str) -> anyhow::Result<Option<PrivateKeySigner>> {
    match std::env::var(name) {
        Ok(k) if !k.trim().is_empty() => Ok(Some(
            k.trim()
                .parse()
                .with_context(|| format!("{name} is not a private key"))?,
        )),
        _ => Ok(None),
    }
}

fn verifier_of(kind: Option<&str>, url: Option<&str>) -> anyhow::Result<Option<Verifier>> {
    let Some(kind) = kind else { return Ok(None) };
    let url = url
        .context("--verifier-url: the explorer's API")?
        .to_string();
    Ok(Some(match kind {
        "etherscan" => Verifier::Etherscan {
            url,
            key: std::env::var("OPENRAIL_ETHERSCAN_KEY")
                .ok()
                .filter(|k| !k.trim().is_empty())
                .context("--verify etherscan: OPENRAIL_ETHERSCAN_KEY is not set")?,
        },
        "sourcify" => Verifier::Sourcify { url },
        other => bail!("--verify {other:?}: etherscan or sourcify"),
    }))
}

/// Verifies every contract of `record` on `verifier`; fails after trying them all when one
/// is refused.
async fn verify_all(
    record: &DeploymentRecord,
    verifier: &Verifier,
    poll: std::time::Duration,
) -> anyhow::Result<()> {
    let mut failed = Vec::new();
    for c in &record.contracts {
        match openrail_chain::verify::verify(verifier, record.deployment.chain_id, c, poll, 40)
            .await
        {
            Ok(verdict) => println!("{:<24} {}  {verdict}", c.name, c.address),
            Err(e) => {
                println!("{:<24} {}  NOT verified: {e}", c.name, c.address);
                failed.push(c.name.clone());
            }
        }
    }
    if !failed.is_empty() {
        bail!("not verified: {}", failed.join(", "));
    }
    Ok(())
}

/// Runs `openrail deploy`.
pub async fn run(args: DeployArgs) -> anyhow::Result<()> {
    let role = role_of(&args.role)?;
    let verifier = verifier_of(args.verify.as_deref(), args.verifier_url.as_deref())?;
    let salt = salt_of(&args.salt)?;
    let tokens = tokens_of(&args.tokens, args.test_supply)?;
    let owner = key_from_env("OPENRAIL_DEPLOYER_KEY")?
        .context("OPENRAIL_DEPLOYER_KEY is not set: the owner's key, which sends the deployment")?;
    let operator = match (args.operator, key_from_env("OPENRAIL_OPERATOR_KEY")?) {
        (Some(a), _) => a,
        (None, Some(k)) => k.address(),
        (None, None) => bail!("name the operator: --operator or OPENRAIL_OPERATOR_KEY"),
    };
    let chain_id = openrail_chain::tls::reader(&args.rpc_url)?
        .get_chain_id()
        .await
        .with_context(|| format!("asking {} for its chain id", args.rpc_url))?;
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from(format!("deployments/{chain_id}.json")));
    let record = deploy_deterministic(
        &args.rpc_url,
        role,
        owner,
        operator,
        args.treasury,
        salt,
        tokens,
    )
    .await?;
    // The treasury's approval of the router is the treasury's to give: done here when its
    // key is at hand (testnets), else printed.
    match key_from_env("OPENRAIL_TREASURY_KEY")? {
        Some(k) if k.address() == args.treasury => approve_router(&record.deployment, k).await?,
        Some(_) => bail!("OPENRAIL_TREASURY_KEY is not the key of --treasury"),
        None => println!(
            "the treasury must approve the router {} for each stablecoin before bank legs can move its tokens",
            record.deployment.router
        ),
    }
    let sent = record
        .contracts
        .iter()
        .filter(|c| c.tx_hash.is_some())
        .count();
    for c in &record.contracts {
        println!(
            "{:<24} {}  {}",
            c.name,
            c.address,
            match c.tx_hash {
                Some(h) => format!("deployed in {h}"),
                None => "already there".into(),
            }
        );
    }
    if sent == 0 && out.exists() {
        // A rerun: the record on disk (with its deployment transactions and block) stays.
        let previous = DeploymentRecord::read(&out)?;
        if previous.deployment.router != record.deployment.router {
            bail!(
                "{} names other contracts than this chain has at this salt: move it away first",
                out.display()
            );
        }
        println!("nothing to deploy: {} is current", out.display());
    } else {
        record.write(&out)?;
        println!("wrote {}", out.display());
    }
    if let Some(v) = &verifier {
        verify_all(
            &record,
            v,
            std::time::Duration::from_millis(args.verify_poll_ms),
        )
        .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_arguments_fail_naming_the_flag() {
        assert!(role_of("settlement").is_ok());
        assert!(
            role_of("mainnet")
                .unwrap_err()
                .to_string()
                .contains("--role")
        );
        assert_eq!(salt_of("openrail-v1").unwrap(), keccak256("openrail-v1"));
        let hex = format!("0x{}", "11".repeat(32));
        assert_eq!(salt_of(&hex).unwrap(), B256::repeat_byte(0x11));
        assert!(salt_of("0x12").unwrap_err().to_string().contains("--salt"));
        assert!(matches!(
            tokens_of(&["test".into()], 5).unwrap(),
            Tokens::Test { .. }
        ));
        let usd = format!("USD={}", Address::repeat_byte(1));
        match tokens_of(&[usd], 5).unwrap() {
            Tokens::Existing(t) => assert_eq!(t["USD"], Address::repeat_byte(1)),
            other => panic!("{other:?}"),
        }
        assert!(
            tokens_of(&["XYZ=0x01".into()], 5)
                .unwrap_err()
                .to_string()
                .contains("--token")
        );
        assert!(
            tokens_of(&["USD".into()], 5)
                .unwrap_err()
                .to_string()
                .contains("--token")
        );
    }
}
