//! The `openrail` binary. All logic lives in the library so tests can call it.

fn main() {
    openrail_cli::main_and_exit()
}
