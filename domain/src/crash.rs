//! Named crash points for crash tests.
//!
//! Built only with the `crash-points` feature (of this crate; `openrail-store`'s feature of
//! the same name turns it on, and the end-to-end suite enables that one; a plain
//! `cargo build -p openrail-cli` leaves it out, and then [`point`] compiles to nothing).
//! With the feature, `OPENRAIL_CRASH_AT=<name>` (or `<name>:<n>` for the n-th time the
//! point is passed) makes the process print `crash point reached: <name>` on stdout and
//! send itself `SIGKILL` right there: every thread stops at once, nothing is flushed or
//! cleaned up. (Only the process knows when it is at the point, so it delivers the signal
//! the test asked for. A `SIGSTOP` for the test to follow with `SIGKILL` was tried first:
//! this machine's sandbox does not honour `SIGSTOP`, and the process ran on.)
//!
//! The points, in the order a request meets them:
//! - [`AFTER_NONCE_ALLOCATION`]: a transaction is signed and journaled with its nonce, not
//!   yet broadcast;
//! - [`AFTER_BROADCAST`]: the node accepted it, its receipt not yet seen;
//! - [`AFTER_BANK_CALL`]: the bank rail accepted a debit or credit, its caller has not
//!   recorded anything about it yet;
//! - [`BEFORE_CURSOR_COMMIT`]: the watcher read pull outcomes from the chain and is about
//!   to commit them with its cursor.

/// After a transaction is journaled with its nonce, before it is broadcast.
pub const AFTER_NONCE_ALLOCATION: &str = "after_nonce_allocation";
/// After the node accepted a transaction.
pub const AFTER_BROADCAST: &str = "after_broadcast";
/// After the bank rail accepted a debit or a credit.
pub const AFTER_BANK_CALL: &str = "after_bank_call";
/// Before the watcher commits outcomes and its cursor.
pub const BEFORE_CURSOR_COMMIT: &str = "before_cursor_commit";

/// Every point, for tests that iterate over them.
pub const ALL: [&str; 4] = [
    AFTER_NONCE_ALLOCATION,
    AFTER_BROADCAST,
    AFTER_BANK_CALL,
    BEFORE_CURSOR_COMMIT,
];

/// Passes the crash point `name`: freezes the process there when `OPENRAIL_CRASH_AT`
/// names it (see the module docs).
#[cfg(feature = "crash-points")]
pub fn point(name: &'static str) {
    use std::io::Write;
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU32, Ordering};

    static TARGET: OnceLock<Option<(String, u32)>> = OnceLock::new();
    static PASSED: AtomicU32 = AtomicU32::new(0);
    let target = TARGET.get_or_init(|| {
        let spec = std::env::var("OPENRAIL_CRASH_AT").ok()?;
        let (name, nth) = match spec.split_once(':') {
            Some((n, k)) => (n.to_string(), k.parse().unwrap_or(1)),
            None => (spec, 1),
        };
        Some((name, nth.max(1)))
    });
    let Some((target, nth)) = target else { return };
    if target != name || PASSED.fetch_add(1, Ordering::SeqCst) + 1 != *nth {
        return;
    }
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "crash point reached: {name}");
    let _ = out.flush();
    // SIGKILL: every thread stops at once, no destructor, no flush, no graceful anything.
    let killed =
        rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
    // Unreachable unless the signal could not be sent; never let the process go on.
    let _ = writeln!(
        out,
        "crash point {name}: SIGKILL failed ({killed:?}); aborting"
    );
    std::process::abort();
}

/// Passes the crash point `name` (built without `crash-points`: nothing).
#[cfg(not(feature = "crash-points"))]
#[inline(always)]
pub fn point(_name: &'static str) {}
