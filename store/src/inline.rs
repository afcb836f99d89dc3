//! Reads on SQLite, run inline: the statement runs on the calling task's thread through a
//! rusqlite connection of its own (written once, see [`crate::exec`]; rows read by column
//! name), with no hand-off to a worker thread and no wait for a pool connection. A pull's
//! request reads twice (its API key, then its session key with the mandate); through
//! sqlx each read was a round trip to a connection's worker thread, and on two cores
//! those hand-offs cost more than the reads. Reads are indexed lookups or pages of at
//! most a list's limit, short enough not to hold up the runtime; none is held across an
//! `.await`. In WAL mode a reader never waits for the writer ([`crate::writer`]).
//!
//! PostgreSQL reads through its sqlx pool.

use std::sync::Mutex;

use crate::exec::{SqliteRow, Stmt};
use crate::sql::StoreError;

/// Idle read connections to one SQLite file, opened on demand: at most as many as threads
/// that read at once.
#[derive(Debug)]
pub(crate) struct InlineReader {
    path: String,
    idle: Mutex<Vec<rusqlite::Connection>>,
}

impl InlineReader {
    pub(crate) fn new(path: String) -> Self {
        Self {
            path,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// The rows of `stmt`, read on this thread.
    pub(crate) fn fetch(&self, stmt: &Stmt<'_>) -> Result<Vec<SqliteRow>, StoreError> {
        let idle = self.idle.lock().expect("inline reader lock").pop();
        let mut conn = match idle {
            Some(c) => c,
            None => open(&self.path)?,
        };
        let rows = crate::exec::fetch_sqlite(&mut conn, stmt);
        // A connection whose statement failed is dropped: a busy or broken one is not
        // handed to the next read.
        if rows.is_ok() {
            self.idle.lock().expect("inline reader lock").push(conn);
        }
        rows
    }
}

fn open(path: &str) -> Result<rusqlite::Connection, StoreError> {
    let conn = rusqlite::Connection::open_with_flags(
        path,
        // Read-write with `query_only`, not a read-only open: a read-only connection to a
        // WAL database fails when its `-shm` file is missing.
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX
            | rusqlite::OpenFlags::SQLITE_OPEN_URI,
    )?;
    conn.execute_batch(
        "PRAGMA query_only = ON; PRAGMA busy_timeout = 5000; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -16384;",
    )?;
    // Every SQLite read comes here (the writer's connection only reads inside its
    // transactions), and list pages build their SQL by filter: room for all of them, as on
    // the writer's connection, so a busy mix does not push the hot lookups out and prepare
    // them again.
    conn.set_prepared_statement_cache_capacity(128);
    Ok(conn)
}
