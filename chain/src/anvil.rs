//! Local anvil chains: spawned on a free port (or a chosen one), reported ready once anvil
//! prints its listening address, and killed when the handle is dropped or stopped.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use alloy::transports::http::reqwest::Url;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::ChainError;

/// How long anvil may take to print its listening address.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// A running anvil process.
#[derive(Debug)]
pub struct Anvil {
    child: Child,
    rpc_url: Url,
    chain_id: u64,
}

impl Anvil {
    /// Starts anvil with `chain_id` on `127.0.0.1:port` (`0` picks a free port) and waits
    /// until it listens.
    pub async fn spawn(chain_id: u64, port: u16) -> Result<Self, ChainError> {
        Self::spawn_with(chain_id, port, false).await
    }

    /// [`Anvil::spawn`], keeping only recent states in memory when `prune_history` (long
    /// benches: anvil keeps every block's state otherwise, and thousands of blocks grew it
    /// to gigabytes and slowed its mining to a crawl; deep reorganisations need the history).
    pub async fn spawn_with(
        chain_id: u64,
        port: u16,
        prune_history: bool,
    ) -> Result<Self, ChainError> {
        let binary = find_anvil()?;
        let mut cmd = Command::new(&binary);
        if prune_history {
            cmd.args(["--prune-history", "256"]);
        }
        let mut child = cmd
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--chain-id", &chain_id.to_string()])
            // Same defaults on every machine: prague rules, fixed accounts.
            .args(["--hardfork", "prague", "--accounts", "10"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| ChainError::AnvilStart(format!("{}: {e}", binary.display())))?;

        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let mut lines = BufReader::new(stdout).lines();
        let addr = tokio::time::timeout(STARTUP_TIMEOUT, async {
            while let Some(line) = lines
                .next_line()
                .await
                .map_err(|e| ChainError::AnvilStart(e.to_string()))?
            {
                if let Some(addr) = line.strip_prefix("Listening on ") {
                    return Ok(addr.trim().to_string());
                }
            }
            let mut err = String::new();
            let mut errs = BufReader::new(stderr).lines();
            while let Ok(Some(l)) = errs.next_line().await {
                err.push_str(&l);
                err.push('\n');
            }
            Err(ChainError::AnvilStart(format!(
                "anvil exited before listening: {}",
                err.trim()
            )))
        })
        .await
        .map_err(|_| ChainError::AnvilTimeout(STARTUP_TIMEOUT))??;

        // Keep draining anvil's output so a full pipe never blocks it.
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::trace!(target: "anvil", chain_id, "{line}");
            }
        });

        let rpc_url = Url::parse(&format!("http://{addr}"))
            .map_err(|e| ChainError::AnvilStart(format!("bad listening address {addr}: {e}")))?;
        Ok(Self {
            child,
            rpc_url,
            chain_id,
        })
    }

    /// The HTTP JSON-RPC endpoint.
    pub fn rpc_url(&self) -> &Url {
        &self.rpc_url
    }

    /// The chain id anvil was started with.
    pub fn chain_id(&self) -> u64 {
        self.chain_id
    }

    /// The process id, for tests that need to signal it.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Kills anvil and waits for it to exit.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// Locates the anvil binary: `$OPENRAIL_ANVIL`, else the native binary that the pinned npm
/// package installed under `node_modules` of this repository (searched upwards from the
/// working directory, then from this crate's source directory), else `anvil` on `PATH`.
pub fn find_anvil() -> Result<PathBuf, ChainError> {
    if let Some(p) = std::env::var_os("OPENRAIL_ANVIL") {
        return Ok(PathBuf::from(p));
    }
    let platform = format!(
        "anvil-{}-{}",
        match std::env::consts::OS {
            "macos" => "darwin",
            other => other,
        },
        match std::env::consts::ARCH {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            other => other,
        }
    );
    let rel = Path::new("node_modules")
        .join("@foundry-rs")
        .join(platform)
        .join("bin")
        .join("anvil");
    let starts = [
        std::env::current_dir().ok(),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR"))),
    ];
    for start in starts.into_iter().flatten() {
        for dir in start.ancestors() {
            let candidate = dir.join(&rel);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    let on_path = std::env::var_os("PATH").map(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("anvil"))
            .find(|p| p.is_file())
    });
    on_path.flatten().ok_or(ChainError::AnvilNotFound)
}
