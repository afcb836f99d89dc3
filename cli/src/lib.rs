//! The `openrail` command line: `dev` (local chains, contracts, and from the API issue on
//! the server) and `bench gas`. Thin: it parses arguments, sets up logging and calls into
//! the library crates.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};

mod bench;
mod dev;

/// Openrail: one API for bank rails and EVM chains.
#[derive(Debug, Parser)]
#[command(name = "openrail", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Start two local anvil chains, deploy the contracts and keep them running until Ctrl-C.
    Dev(dev::DevArgs),
    /// Benchmarks that print figures.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
}

/// Where `openrail` keeps its files unless told otherwise.
pub fn default_data_dir() -> PathBuf {
    PathBuf::from(".openrail")
}

/// Entry point of the binary.
pub fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "openrail=info,warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting tokio")?;
    runtime.block_on(async move {
        match cli.command {
            Command::Dev(args) => dev::run(args).await,
            Command::Bench(cmd) => bench::run(cmd).await,
        }
    })
}
