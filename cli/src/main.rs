//! The `openrail` binary. All logic lives in the library so tests can call it.

fn main() {
    if let Err(e) = openrail_cli::main() {
        // The error and its causes on one line, without a backtrace: this is a user's tool.
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
