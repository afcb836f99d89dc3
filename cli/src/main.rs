//! The `openrail` binary. All logic lives in the library so tests can call it.

fn main() -> anyhow::Result<()> {
    openrail_cli::main()
}
