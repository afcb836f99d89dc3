//! The `openrail` binary. All logic lives in the library so tests can call it.

/// mimalloc instead of the system allocator: the server allocates and frees small objects
/// on every thread (requests, rows, JSON), where glibc's allocator spent about a tenth of
/// the server's CPU in `bench pulls` profiles.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    openrail_cli::main_and_exit()
}
