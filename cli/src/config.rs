//! `openrail.toml`: what a serving process runs, one file for every mode.
//!
//! ```toml
//! database_url = "postgres://openrail@db/openrail"   # or DATABASE_URL
//!
//! [testnet]
//! deployment = "deployments/84532.json"   # the record `openrail deploy` wrote
//! rpc_url = "https://sepolia.base.org"    # optional: instead of the record's
//! rpc_urls = ["https://base-sepolia.example"]  # optional: taken over in turn on failure
//! confirmations = 3                       # or "safe" / "finalized": the chain's own
//! operator_key_env = "OPENRAIL_OPERATOR_KEY"   # the variable holding the key, never the key
//! # operator_key_file = "/run/secrets/operator"  # or a file holding it (a mounted secret)
//! max_fee_gwei = 50            # optional: replacements stop here; past it, cancel
//! min_balance_eth = 0.05       # optional: warn while the operator holds less
//! replace_after_secs = 12      # optional: replace a transaction not mined this long
//! cancel_after_secs = 600      # optional: cancel one not mined this long
//!
//! [testnet.attestation]                   # optional: the mode's second chain, where the
//! deployment = "deployments/11155420.json"  # accounts that choose it settle one-time
//! confirmations = "finalized"             # payments (same fields as the mode's)
//! operator_key_env = "OPENRAIL_OPERATOR_KEY"
//!
//! [mainnet]                               # optional: without it mainnet keys get 503
//! deployment = "deployments/8453.json"
//! confirmations = 12
//! operator_key_env = "OPENRAIL_MAINNET_OPERATOR_KEY"
//! ```
//!
//! Every field can also be set from the environment (containers): `OPENRAIL_DATABASE_URL`
//! (or `DATABASE_URL`), and per mode `OPENRAIL_TESTNET_DEPLOYMENT`, `…_RPC_URL`,
//! `…_RPC_URLS` (comma-separated), `…_CONFIRMATIONS`, `…_OPERATOR_KEY_ENV`, `…_OPERATOR_KEY_FILE`,
//! `…_MAX_FEE_GWEI`, `…_MIN_BALANCE_ETH`, `…_REPLACE_AFTER_SECS`, `…_CANCEL_AFTER_SECS`
//! (`OPENRAIL_MAINNET_…` alike, and `OPENRAIL_TESTNET_ATTESTATION_…` for the attestation
//! chain; setting
//! `OPENRAIL_MAINNET_DEPLOYMENT` configures mainnet without a file section). The
//! environment wins over the file. Bad configuration fails at start, naming the field.
//! The modes never share a chain or an operator key: a request of one mode reaches only
//! its own chain, rows and key.

use std::path::{Path, PathBuf};

use alloy::signers::local::PrivateKeySigner;
use openrail_chain::deploy::{ChainDeployment, ChainRole, DeploymentRecord};
use openrail_chain::rpc::{DepthTag, Endpoint};
use openrail_chain::submitter::SubmitterOptions;
use serde::Deserialize;

/// What is wrong with the configuration, naming the field.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not the configuration's TOML (an unknown or mistyped field).
    #[error("{path}: {message}")]
    Syntax {
        /// The file.
        path: String,
        /// What the TOML reader said, with the field.
        message: String,
    },
    /// A field's value is refused.
    #[error("{field}: {problem}")]
    Field {
        /// The field, as `mode.name`.
        field: String,
        /// Why.
        problem: String,
    },
}

fn field(field: impl Into<String>, problem: impl Into<String>) -> ConfigError {
    ConfigError::Field {
        field: field.into(),
        problem: problem.into(),
    }
}

/// The file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileConfig {
    database_url: Option<String>,
    testnet: Option<ModeFile>,
    mainnet: Option<ModeFile>,
}

/// `confirmations` as written: a number of blocks, or `"safe"` / `"finalized"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum Confirmations {
    Blocks(u64),
    Tag(String),
}

/// One mode's section as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModeFile {
    deployment: Option<PathBuf>,
    rpc_url: Option<String>,
    rpc_urls: Option<Vec<String>>,
    confirmations: Option<Confirmations>,
    operator_key_env: Option<String>,
    operator_key_file: Option<PathBuf>,
    max_fee_gwei: Option<f64>,
    min_balance_eth: Option<f64>,
    replace_after_secs: Option<u64>,
    cancel_after_secs: Option<u64>,
    /// The mode's attestation chain (in a mode's section only).
    attestation: Option<Box<ModeFile>>,
}

/// One mode, resolved: its settlement chain and its operator.
#[derive(Debug, Clone)]
pub struct ModeConfig {
    /// The settlement chain's contracts (with the RPC URL to use).
    pub deployment: ChainDeployment,
    /// The mode's operator key.
    pub operator: PrivateKeySigner,
    /// Blocks below the head at which outcomes are applied.
    pub confirmations: u64,
    /// Or the chain's `safe` / `finalized` block (`confirmations = "finalized"`).
    pub depth_tag: Option<DepthTag>,
    /// The chain's RPC URLs (the record's or `rpc_url` first, then `rpc_urls`).
    pub endpoint: Endpoint,
    /// Replacement, fee cap and cancellation of the operator's transactions.
    pub submitter: SubmitterOptions,
    /// The mode's attestation chain, when configured (one-time payments of the accounts
    /// that choose it settle there).
    pub attestation: Option<Box<ModeConfig>>,
}

impl ModeConfig {
    /// A mode on `deployment`'s one URL with default policies.
    pub fn new(
        deployment: ChainDeployment,
        operator: PrivateKeySigner,
        confirmations: u64,
    ) -> Result<Self, openrail_chain::ChainError> {
        Ok(Self {
            endpoint: Endpoint::of(&deployment)?,
            deployment,
            operator,
            confirmations,
            depth_tag: None,
            submitter: SubmitterOptions::default(),
            attestation: None,
        })
    }

    /// The chains of this mode, the settlement chain first.
    fn chains(&self) -> impl Iterator<Item = &ModeConfig> {
        std::iter::once(self).chain(self.attestation.as_deref())
    }
}

/// The configuration, resolved and checked.
#[derive(Debug, Clone)]
pub struct Config {
    /// The database, when the configuration names one.
    pub database_url: Option<String>,
    /// Testnet (required).
    pub testnet: ModeConfig,
    /// Mainnet, when configured.
    pub mainnet: Option<ModeConfig>,
}

/// Reads `path` (when given) and the environment `env`, resolves deployment paths against
/// the file's directory, reads the deployment records and the operator keys, and checks
/// that the modes share neither chain nor key.
pub fn load(
    path: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let (file, base) = match path {
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|source| ConfigError::Read {
                path: p.display().to_string(),
                source,
            })?;
            (
                parse(&text, p)?,
                p.parent().map(Path::to_path_buf).unwrap_or_default(),
            )
        }
        None => (FileConfig::default(), PathBuf::new()),
    };
    let database_url = env("OPENRAIL_DATABASE_URL")
        .or_else(|| env("DATABASE_URL"))
        .or(file.database_url);
    let testnet = with_env(file.testnet, "TESTNET", env).ok_or_else(|| {
        field(
            "testnet",
            "missing: a [testnet] section or OPENRAIL_TESTNET_DEPLOYMENT",
        )
    })?;
    let testnet = resolve_mode("testnet", testnet, &base, env)?;
    let mainnet = with_env(file.mainnet, "MAINNET", env)
        .map(|m| resolve_mode("mainnet", m, &base, env))
        .transpose()?;
    if let Some(m) = &mainnet {
        for (name, main) in [
            ("mainnet", Some(m)),
            ("mainnet.attestation", m.attestation.as_deref()),
        ] {
            let Some(main) = main else { continue };
            if let Some(t) = testnet
                .chains()
                .find(|t| t.deployment.chain_id == main.deployment.chain_id)
            {
                return Err(field(
                    format!("{name}.deployment"),
                    format!(
                        "chain {} is testnet's too; the modes never share a chain",
                        t.deployment.chain_id
                    ),
                ));
            }
            if testnet
                .chains()
                .any(|t| t.operator.address() == main.operator.address())
            {
                return Err(field(
                    format!("{name}.operator_key_env"),
                    "holds testnet's operator key; each mode has its own",
                ));
            }
        }
    }
    Ok(Config {
        database_url,
        testnet,
        mainnet,
    })
}

/// The file's TOML, with a word for the mistake everyone makes once: a key in the file.
pub(crate) fn parse(text: &str, path: &Path) -> Result<FileConfig, ConfigError> {
    toml::from_str(text).map_err(|e| {
        // The reader's message names the line, the field and what it expected.
        let mut message = e.to_string().trim_end().to_string();
        if message.contains("`operator_key`") {
            message.push_str(
                "\nkeys never go in the file: name the environment variable that holds it in operator_key_env",
            );
        }
        ConfigError::Syntax {
            path: path.display().to_string(),
            message,
        }
    })
}

/// A mode's section with the environment's values over it (`OPENRAIL_<MODE>_…`); `None`
/// when neither names the mode.
fn with_env(
    file: Option<ModeFile>,
    mode: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<ModeFile> {
    let var = |name: &str| env(&format!("OPENRAIL_{mode}_{name}"));
    let attestation = file.as_ref().and_then(|f| f.attestation.clone());
    let from_env = ModeFile {
        deployment: var("DEPLOYMENT").map(PathBuf::from),
        rpc_url: var("RPC_URL"),
        rpc_urls: var("RPC_URLS").map(|v| v.split(',').map(|u| u.trim().to_string()).collect()),
        operator_key_env: var("OPERATOR_KEY_ENV"),
        operator_key_file: var("OPERATOR_KEY_FILE").map(PathBuf::from),
        ..Default::default()
    };
    let named = file.is_some() || from_env.deployment.is_some();
    let mut m = file.unwrap_or_default();
    // The attestation chain's section, with `OPENRAIL_<MODE>_ATTESTATION_…` over it (only
    // one level: an attestation chain has no attestation chain).
    if !mode.ends_with("_ATTESTATION") {
        m.attestation =
            with_env(attestation.map(|a| *a), &format!("{mode}_ATTESTATION"), env).map(Box::new);
    }
    m.deployment = from_env.deployment.or(m.deployment);
    m.rpc_url = from_env.rpc_url.or(m.rpc_url);
    m.rpc_urls = from_env.rpc_urls.or(m.rpc_urls);
    m.operator_key_env = from_env.operator_key_env.or(m.operator_key_env);
    m.operator_key_file = from_env.operator_key_file.or(m.operator_key_file);
    // Numbers that do not parse are kept as an impossible value, refused in `resolve`,
    // where the error can name its field.
    if let Some(c) = var("CONFIRMATIONS") {
        m.confirmations = Some(match c.parse() {
            Ok(n) => Confirmations::Blocks(n),
            Err(_) => Confirmations::Tag(c),
        });
    }
    if let Some(c) = var("MAX_FEE_GWEI") {
        m.max_fee_gwei = c.parse().ok().or(Some(f64::NAN));
    }
    if let Some(c) = var("MIN_BALANCE_ETH") {
        m.min_balance_eth = c.parse().ok().or(Some(f64::NAN));
    }
    if let Some(c) = var("REPLACE_AFTER_SECS") {
        m.replace_after_secs = c.parse().ok().or(Some(u64::MAX));
    }
    if let Some(c) = var("CANCEL_AFTER_SECS") {
        m.cancel_after_secs = c.parse().ok().or(Some(u64::MAX));
    }
    named.then_some(m)
}

/// A mode's section: its settlement chain, and its attestation chain when it has one (the
/// two are different chains).
fn resolve_mode(
    mode: &str,
    mut m: ModeFile,
    base: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ModeConfig, ConfigError> {
    let attestation = m.attestation.take();
    let mut settlement = resolve(mode, ChainRole::Settlement, m, base, env)?;
    if let Some(a) = attestation {
        let name = format!("{mode}.attestation");
        if a.attestation.is_some() {
            return Err(field(
                format!("{name}.attestation"),
                "an attestation chain has no attestation chain of its own",
            ));
        }
        let a = resolve(&name, ChainRole::Attestation, *a, base, env)?;
        if a.deployment.chain_id == settlement.deployment.chain_id {
            return Err(field(
                format!("{name}.deployment"),
                format!(
                    "chain {} is the mode's settlement chain too; the attestation chain is another chain",
                    a.deployment.chain_id
                ),
            ));
        }
        settlement.attestation = Some(Box::new(a));
    }
    Ok(settlement)
}

fn resolve(
    mode: &str,
    role: ChainRole,
    m: ModeFile,
    base: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ModeConfig, ConfigError> {
    let f = |name: &str| format!("{mode}.{name}");
    let path = m.deployment.ok_or_else(|| {
        field(
            f("deployment"),
            "missing: the record `openrail deploy` wrote",
        )
    })?;
    let path = if path.is_relative() {
        base.join(path)
    } else {
        path
    };
    let mut deployment = DeploymentRecord::read(&path)
        .map_err(|e| field(f("deployment"), e.to_string()))?
        .deployment;
    if deployment.role != role {
        return Err(field(
            f("deployment"),
            match role {
                ChainRole::Settlement => format!(
                    "{} is an attestation chain's record; a mode needs its settlement chain's",
                    path.display()
                ),
                ChainRole::Attestation => format!(
                    "{} is a settlement chain's record; `attestation` needs an attestation chain's",
                    path.display()
                ),
            },
        ));
    }
    let url = |name: &str, url: &str| {
        url.parse::<alloy::transports::http::reqwest::Url>()
            .map_err(|e| field(f(name), format!("{url:?} is not a URL: {e}")))
    };
    if let Some(u) = m.rpc_url {
        url("rpc_url", &u)?;
        deployment.rpc_url = u;
    }
    let mut endpoint = Endpoint::of(&deployment).map_err(|e| field(f("rpc_url"), e.to_string()))?;
    for u in m.rpc_urls.unwrap_or_default() {
        endpoint.urls.push(url("rpc_urls", &u)?);
    }
    let (confirmations, depth_tag) = match m.confirmations {
        Some(Confirmations::Blocks(n)) => (n, None),
        Some(Confirmations::Tag(t)) => match DepthTag::parse(&t) {
            Some(tag) => (0, Some(tag)),
            None => {
                return Err(field(
                    f("confirmations"),
                    format!("{t:?} is not a number of blocks, \"safe\" or \"finalized\""),
                ));
            }
        },
        None => (0, None),
    };
    let mut submitter = SubmitterOptions::default();
    if let Some(g) = m.max_fee_gwei {
        if !(g.is_finite() && g > 0.0) {
            return Err(field(f("max_fee_gwei"), "is not a positive number of gwei"));
        }
        submitter.fee_cap = Some((g * 1e9).round() as u128);
    }
    if let Some(e) = m.min_balance_eth {
        if !(e.is_finite() && e >= 0.0) {
            return Err(field(f("min_balance_eth"), "is not a number of ether"));
        }
        submitter.balance_floor = Some((e * 1e18).round() as u128);
    }
    let secs = |name: &str, v: Option<u64>| match v {
        Some(0 | u64::MAX) => Err(field(f(name), "is not a positive number of seconds")),
        other => Ok(other.map(std::time::Duration::from_secs)),
    };
    if let Some(d) = secs("replace_after_secs", m.replace_after_secs)? {
        submitter.replace_after = d;
    }
    submitter.cancel_after = secs("cancel_after_secs", m.cancel_after_secs)?;
    // The key: from the variable named, or from a file (a mounted secret), never the
    // configuration itself.
    let (source, var, key) = match (m.operator_key_env, m.operator_key_file) {
        (Some(_), Some(_)) => {
            return Err(field(
                f("operator_key_file"),
                "name operator_key_env or operator_key_file, not both",
            ));
        }
        (Some(var), None) => {
            let key = env(&var)
                .ok_or_else(|| field(f("operator_key_env"), format!("{var} is not set")))?;
            ("operator_key_env", var, key)
        }
        (None, Some(path)) => {
            let path = if path.is_relative() {
                base.join(path)
            } else {
                path
            };
            let key = std::fs::read_to_string(&path)
                .map_err(|e| field(f("operator_key_file"), format!("{}: {e}", path.display())))?;
            ("operator_key_file", path.display().to_string(), key)
        }
        (None, None) => {
            return Err(field(
                f("operator_key_env"),
                "missing: the environment variable (or operator_key_file, the file) that holds the operator's key",
            ));
        }
    };
    let operator: PrivateKeySigner = key
        .trim()
        .parse()
        .map_err(|_| field(f(source), format!("{var} does not hold a private key")))?;
    if operator.address() != deployment.operator {
        return Err(field(
            f(source),
            format!(
                "{var} is the key of {}, but the contracts' operator is {}",
                operator.address(),
                deployment.operator
            ),
        ));
    }
    Ok(ModeConfig {
        deployment,
        operator,
        confirmations,
        depth_tag,
        endpoint,
        submitter,
        attestation: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::Address;
    use std::collections::HashMap;

    fn record(dir: &Path, name: &str, chain_id: u64, operator: Address) -> PathBuf {
        record_of(dir, name, ChainRole::Settlement, chain_id, operator)
    }

    fn record_of(
        dir: &Path,
        name: &str,
        role: ChainRole,
        chain_id: u64,
        operator: Address,
    ) -> PathBuf {
        let path = dir.join(name);
        DeploymentRecord {
            deployment: ChainDeployment {
                role,
                chain_id,
                rpc_url: "http://127.0.0.1:8545/".into(),
                owner: Address::repeat_byte(9),
                operator,
                treasury: Address::repeat_byte(8),
                router: Address::repeat_byte(7),
                allowance_state_machine: Some(Address::repeat_byte(7)),
                attestation_registry: None,
                attestation_mirror: None,
                tokens: Default::default(),
                deployed_at_block: 1,
            },
            salt: Default::default(),
            contracts: vec![],
            compiler: String::new(),
            commit: String::new(),
        }
        .write(&path)
        .unwrap();
        path
    }

    struct Setup {
        dir: tempfile::TempDir,
        env: HashMap<String, String>,
    }

    impl Setup {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let test_key = PrivateKeySigner::random();
            let main_key = PrivateKeySigner::random();
            record(dir.path(), "test.json", 84532, test_key.address());
            record(dir.path(), "main.json", 8453, main_key.address());
            let env = HashMap::from([
                ("TEST_KEY".to_string(), test_key.to_bytes().to_string()),
                ("MAIN_KEY".to_string(), main_key.to_bytes().to_string()),
            ]);
            Setup { dir, env }
        }

        fn load(&self, toml: &str) -> Result<Config, ConfigError> {
            let path = self.dir.path().join("openrail.toml");
            std::fs::write(&path, toml).unwrap();
            load(Some(&path), &|k| self.env.get(k).cloned())
        }
    }

    const BOTH: &str = r#"
        database_url = "sqlite:///tmp/x.db"
        [testnet]
        deployment = "test.json"
        operator_key_env = "TEST_KEY"
        [mainnet]
        deployment = "main.json"
        rpc_url = "https://mainnet.example/rpc"
        confirmations = 12
        operator_key_env = "MAIN_KEY"
    "#;

    #[test]
    fn a_mode_may_have_an_attestation_chain_of_its_own() {
        let s = Setup::new();
        let key: PrivateKeySigner = s.env["TEST_KEY"].parse().unwrap();
        record_of(
            s.dir.path(),
            "b.json",
            ChainRole::Attestation,
            11155420,
            key.address(),
        );
        let with = |section: &str| {
            format!(
                "[testnet]\ndeployment = \"test.json\"\noperator_key_env = \"TEST_KEY\"\n{section}"
            )
        };
        let c = s
            .load(&with(
                "[testnet.attestation]\ndeployment = \"b.json\"\nconfirmations = \"finalized\"\noperator_key_env = \"TEST_KEY\"\n",
            ))
            .unwrap();
        let a = c.testnet.attestation.as_deref().unwrap();
        assert_eq!(a.deployment.chain_id, 11155420);
        assert_eq!(a.depth_tag, Some(DepthTag::Finalized));
        assert_eq!(c.testnet.depth_tag, None, "each chain its own depth");

        // The environment configures it too (containers).
        let mut env = s.env.clone();
        env.insert(
            "OPENRAIL_TESTNET_ATTESTATION_DEPLOYMENT".into(),
            s.dir.path().join("b.json").display().to_string(),
        );
        env.insert(
            "OPENRAIL_TESTNET_ATTESTATION_OPERATOR_KEY_ENV".into(),
            "TEST_KEY".into(),
        );
        let path = s.dir.path().join("plain.toml");
        std::fs::write(&path, with("")).unwrap();
        let c = load(Some(&path), &|k| env.get(k).cloned()).unwrap();
        assert_eq!(c.testnet.attestation.unwrap().deployment.chain_id, 11155420);

        // A settlement chain's record, the settlement chain itself, or a nested section
        // are refused, naming the field.
        for (section, field) in [
            (
                "[testnet.attestation]\ndeployment = \"test.json\"\noperator_key_env = \"TEST_KEY\"\n",
                "testnet.attestation.deployment",
            ),
            (
                "[testnet.attestation]\ndeployment = \"b.json\"\n",
                "testnet.attestation.operator_key_env",
            ),
            (
                "[testnet.attestation]\ndeployment = \"b.json\"\noperator_key_env = \"TEST_KEY\"\n[testnet.attestation.attestation]\ndeployment = \"b.json\"\n",
                "testnet.attestation.attestation",
            ),
        ] {
            match s.load(&with(section)) {
                Err(ConfigError::Field { field: f, .. }) => assert_eq!(f, field, "{section}"),
                other => panic!("{section}: {other:?}"),
            }
        }
        // Mainnet may not use testnet's attestation chain.
        let main_key: PrivateKeySigner = s.env["MAIN_KEY"].parse().unwrap();
        record_of(
            s.dir.path(),
            "mb.json",
            ChainRole::Attestation,
            11155420,
            main_key.address(),
        );
        let both = format!(
            "{}[mainnet]\ndeployment = \"main.json\"\noperator_key_env = \"MAIN_KEY\"\n[mainnet.attestation]\ndeployment = \"mb.json\"\noperator_key_env = \"MAIN_KEY\"\n",
            with(
                "[testnet.attestation]\ndeployment = \"b.json\"\noperator_key_env = \"TEST_KEY\"\n"
            )
        );
        match s.load(&both) {
            Err(ConfigError::Field { field, .. }) => {
                assert_eq!(field, "mainnet.attestation.deployment")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn both_modes_resolve_with_their_own_chain_key_and_depth() {
        let s = Setup::new();
        let c = s.load(BOTH).unwrap();
        assert_eq!(c.testnet.deployment.chain_id, 84532);
        assert_eq!(c.testnet.confirmations, 0);
        let m = c.mainnet.unwrap();
        assert_eq!(m.deployment.chain_id, 8453);
        assert_eq!(m.deployment.rpc_url, "https://mainnet.example/rpc");
        assert_eq!(m.confirmations, 12);
        assert_ne!(m.operator.address(), c.testnet.operator.address());
        assert_eq!(c.database_url.as_deref(), Some("sqlite:///tmp/x.db"));
        // Without a [mainnet] section, no mainnet (its keys get 503).
        let c = s
            .load("[testnet]\ndeployment = \"test.json\"\noperator_key_env = \"TEST_KEY\"\n")
            .unwrap();
        assert!(c.mainnet.is_none());
    }

    #[test]
    fn the_environment_sets_every_field_and_wins() {
        let mut s = Setup::new();
        s.env.insert(
            "OPENRAIL_TESTNET_DEPLOYMENT".into(),
            s.dir.path().join("test.json").display().to_string(),
        );
        s.env.insert(
            "OPENRAIL_TESTNET_OPERATOR_KEY_ENV".into(),
            "TEST_KEY".into(),
        );
        s.env
            .insert("OPENRAIL_TESTNET_CONFIRMATIONS".into(), "5".into());
        s.env
            .insert("OPENRAIL_TESTNET_RPC_URL".into(), "http://node:8545".into());
        s.env
            .insert("DATABASE_URL".into(), "postgres://db/openrail".into());
        let c = load(None, &|k| s.env.get(k).cloned()).unwrap();
        assert_eq!(c.testnet.confirmations, 5);
        assert_eq!(c.testnet.deployment.rpc_url, "http://node:8545");
        assert_eq!(c.database_url.as_deref(), Some("postgres://db/openrail"));
        assert!(c.mainnet.is_none());
        let c = s.load(BOTH).unwrap();
        assert_eq!(
            c.testnet.confirmations, 5,
            "the environment wins over the file"
        );
    }

    /// Several URLs, the fee cap and the replacement timings reach the chain's endpoint and
    /// the submitter, from the file and from the environment.
    #[test]
    fn urls_fee_cap_and_timings_reach_the_submitter() {
        let mut s = Setup::new();
        let c = s
            .load(
                "[testnet]\ndeployment = \"test.json\"\noperator_key_env = \"TEST_KEY\"\n\
                 rpc_urls = [\"https://b.example\", \"https://c.example\"]\n\
                 max_fee_gwei = 2.5\nreplace_after_secs = 8\ncancel_after_secs = 600\n\
                 min_balance_eth = 0.05\n",
            )
            .unwrap();
        let urls: Vec<String> = c
            .testnet
            .endpoint
            .urls
            .iter()
            .map(|u| u.to_string())
            .collect();
        assert_eq!(
            urls,
            [
                "http://127.0.0.1:8545/",
                "https://b.example/",
                "https://c.example/"
            ]
        );
        assert_eq!(c.testnet.submitter.fee_cap, Some(2_500_000_000));
        assert_eq!(
            c.testnet.submitter.balance_floor,
            Some(50_000_000_000_000_000)
        );
        assert_eq!(
            c.testnet.submitter.replace_after,
            std::time::Duration::from_secs(8)
        );
        assert_eq!(
            c.testnet.submitter.cancel_after,
            Some(std::time::Duration::from_secs(600))
        );
        s.env.insert(
            "OPENRAIL_TESTNET_RPC_URLS".into(),
            "http://x:1, http://y:2".into(),
        );
        s.env
            .insert("OPENRAIL_TESTNET_MAX_FEE_GWEI".into(), "7".into());
        let c = s.load(BOTH).unwrap();
        assert_eq!(c.testnet.endpoint.urls.len(), 3);
        assert_eq!(c.testnet.submitter.fee_cap, Some(7_000_000_000));
        assert_eq!(c.testnet.submitter.cancel_after, None);
        // The chain's own finality as the depth, from the file or the environment.
        let c = s
            .load("[testnet]\ndeployment = \"test.json\"\noperator_key_env = \"TEST_KEY\"\nconfirmations = \"finalized\"\n")
            .unwrap();
        assert_eq!(c.testnet.depth_tag, Some(DepthTag::Finalized));
        s.env
            .insert("OPENRAIL_TESTNET_CONFIRMATIONS".into(), "safe".into());
        assert_eq!(
            s.load(BOTH).unwrap().testnet.depth_tag,
            Some(DepthTag::Safe)
        );
    }

    /// Every mistake fails at start, and the message names the field.
    #[test]
    fn bad_configuration_names_the_field() {
        let s = Setup::new();
        let err = |toml: &str| s.load(toml).unwrap_err().to_string();
        let testnet = "[testnet]\ndeployment = \"test.json\"\noperator_key_env = \"TEST_KEY\"\n";
        let missing = s.dir.path().join("missing.toml");
        let e = load(Some(&missing), &|_| None).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:", missing.display())), "{e}");
        assert!(err("").starts_with("testnet:"));
        assert!(
            err("[testnet]\noperator_key_env = \"TEST_KEY\"\n")
                .starts_with("testnet.deployment: missing")
        );
        assert!(
            err("[testnet]\ndeployment = \"nope.json\"\noperator_key_env = \"TEST_KEY\"\n")
                .starts_with("testnet.deployment:")
        );
        assert!(
            err("[testnet]\ndeployment = \"test.json\"\n")
                .starts_with("testnet.operator_key_env: missing")
        );
        assert!(
            err("[testnet]\ndeployment = \"test.json\"\noperator_key_env = \"UNSET\"\n")
                .contains("testnet.operator_key_env: UNSET is not set")
        );
        // The key of another operator than the contracts'.
        assert!(
            err("[testnet]\ndeployment = \"test.json\"\noperator_key_env = \"MAIN_KEY\"\n")
                .contains("but the contracts' operator is")
        );
        // A key file: read relative to the configuration; a missing one, or both sources,
        // name the field.
        std::fs::write(
            s.dir.path().join("operator.key"),
            format!("{}\n", s.env["TEST_KEY"]),
        )
        .unwrap();
        let from_file = s
            .load("[testnet]\ndeployment = \"test.json\"\noperator_key_file = \"operator.key\"\n")
            .unwrap();
        assert_eq!(
            from_file.testnet.operator.address(),
            s.env["TEST_KEY"]
                .parse::<PrivateKeySigner>()
                .unwrap()
                .address()
        );
        assert!(
            err("[testnet]\ndeployment = \"test.json\"\noperator_key_file = \"nope.key\"\n")
                .starts_with("testnet.operator_key_file:")
        );
        assert!(
            err("[testnet]\ndeployment = \"test.json\"\noperator_key_env = \"TEST_KEY\"\noperator_key_file = \"operator.key\"\n")
                .contains("not both")
        );
        assert!(err(&format!("{testnet}confirmations = \"three\"\n")).contains("confirmations"));
        assert!(
            err(&format!("{testnet}rpc_url = \"not a url\"\n")).starts_with("testnet.rpc_url:")
        );
        assert!(err(&format!("{testnet}rpc_urls = [\"nope\"]\n")).starts_with("testnet.rpc_urls:"));
        assert!(err(&format!("{testnet}max_fee_gwei = -1\n")).starts_with("testnet.max_fee_gwei:"));
        assert!(
            err(&format!("{testnet}replace_after_secs = 0\n"))
                .starts_with("testnet.replace_after_secs:")
        );
        // A key in the file is refused, and the message says where keys go.
        assert!(err(&format!("{testnet}operator_key = \"0x01\"\n")).contains("operator_key_env"));
        // The modes share neither chain nor key.
        let main_operator = s.env["MAIN_KEY"]
            .parse::<PrivateKeySigner>()
            .unwrap()
            .address();
        record(s.dir.path(), "same-chain.json", 84532, main_operator);
        let same_chain = format!(
            "{testnet}[mainnet]\ndeployment = \"same-chain.json\"\noperator_key_env = \"MAIN_KEY\"\n"
        );
        assert!(err(&same_chain).starts_with("mainnet.deployment: chain 84532 is testnet's too"));
        let test_operator = s.env["TEST_KEY"]
            .parse::<PrivateKeySigner>()
            .unwrap()
            .address();
        record(s.dir.path(), "same-key.json", 8453, test_operator);
        let same_key = format!(
            "{testnet}[mainnet]\ndeployment = \"same-key.json\"\noperator_key_env = \"TEST_KEY\"\n"
        );
        assert_eq!(
            err(&same_key),
            "mainnet.operator_key_env: holds testnet's operator key; each mode has its own"
        );
    }
}
