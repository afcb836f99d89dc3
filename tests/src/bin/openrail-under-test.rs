//! `openrail` with crash points compiled in, for the end-to-end tests that run the server
//! as a child process (see `openrail_store::crash`): the same `main` as the binary.

fn main() {
    openrail_cli::main_and_exit()
}
