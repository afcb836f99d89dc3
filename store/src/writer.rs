//! The SQLite writer: one thread holding the database's only writing connection
//! (rusqlite), which runs every write of the process in turn. SQLite lets one connection
//! write at a time; with one writer there is nothing to take turns with, so no write waits
//! in SQLite's busy handler, no transaction needs `BEGIN IMMEDIATE` to avoid a stale
//! snapshot, and the page cache of the writing connection is never emptied by another's
//! write. Reads run beside it on their own connections ([`crate::inline`]): in WAL mode a
//! reader never waits for the writer.
//!
//! A job is either a write transaction's body ([`crate::db::Store::write`]), run alone in
//! its own transaction, or one write of the group commit ([`crate::group`]): the group's
//! jobs queued together are written in one transaction by the function they carry. Each
//! statement is a direct call on this thread; the bodies' futures are ready at once
//! (rusqlite blocks), and a current-thread runtime only drives them. The thread ends when
//! the last handle on the store is dropped.

use std::any::Any;
use std::panic::AssertUnwindSafe;

use tokio::sync::{mpsc, oneshot};

use crate::exec::{Tx, TxFuture};
use crate::sql::StoreError;

/// A write transaction's body, with its answer: run by the writer inside a transaction of
/// its own.
type TxJob = Box<dyn FnOnce(&mut rusqlite::Connection, &tokio::runtime::Runtime) + Send>;

/// One write of the group commit; only [`crate::group`] knows its type.
pub(crate) type GroupJob = Box<dyn Any + Send>;

/// Writes the group jobs queued together, in a transaction of its own, and answers them.
pub(crate) type GroupWrite = fn(&mut rusqlite::Connection, &tokio::runtime::Runtime, Vec<GroupJob>);

/// Most jobs taken from the queue at once.
const BATCH: usize = 512;

enum Job {
    Tx(TxJob),
    Group(GroupJob, GroupWrite),
}

/// The queue of the SQLite writer's thread; cheap to clone.
#[derive(Clone)]
pub(crate) struct Writer {
    jobs: mpsc::UnboundedSender<Job>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer").finish_non_exhaustive()
    }
}

fn stopped() -> StoreError {
    StoreError::Corrupt("the SQLite writer stopped".into())
}

impl Writer {
    /// Opens the writing connection to the SQLite file `path` and starts its thread.
    pub(crate) fn start(path: &str) -> Result<Self, StoreError> {
        let conn = open(path)?;
        let (jobs, queue) = mpsc::unbounded_channel();
        std::thread::Builder::new()
            .name("openrail-sqlite-writer".into())
            .spawn(move || run(conn, queue))
            .map_err(|e| StoreError::Corrupt(format!("the SQLite writer did not start: {e}")))?;
        Ok(Self { jobs })
    }

    /// Runs `body` in a transaction of its own on the writer's thread: committed when it
    /// returns `Ok` with a value `keep` accepts, rolled back otherwise. Returns what it
    /// returned.
    pub(crate) async fn write<T, F>(&self, body: F, keep: fn(&T) -> bool) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(Tx<'c>) -> TxFuture<'c, T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job: TxJob = Box::new(move |conn, rt| {
            let _ = reply.send(in_transaction(conn, keep, |c| {
                rt.block_on(body(Tx::Sqlite(c)))
            }));
        });
        self.jobs.send(Job::Tx(job)).map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }

    /// Queues one write of the group commit, written by `write` with the others queued
    /// beside it; `job` carries its own answer.
    pub(crate) fn group(&self, job: GroupJob, write: GroupWrite) -> Result<(), GroupJob> {
        self.jobs
            .send(Job::Group(job, write))
            .map_err(|mpsc::error::SendError(job)| match job {
                Job::Group(job, _) => job,
                Job::Tx(_) => unreachable!("a group job was sent"),
            })
    }
}

/// Runs `body` inside one transaction of `conn` (the writer's thread): committed when it
/// returns `Ok` with a value `keep` accepts, rolled back otherwise (an error, a panic, or a
/// value `keep` refuses, which is still returned).
pub(crate) fn in_transaction<T>(
    conn: &mut rusqlite::Connection,
    keep: fn(&T) -> bool,
    body: impl FnOnce(&mut rusqlite::Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let done = std::panic::catch_unwind(AssertUnwindSafe(|| body(&mut *conn)))
        .unwrap_or_else(|_| Err(StoreError::Corrupt("a write panicked".into())));
    match done {
        Ok(v) if !keep(&v) => {
            conn.execute_batch("ROLLBACK")?;
            Ok(v)
        }
        Ok(v) => match conn.execute_batch("COMMIT") {
            Ok(()) => Ok(v),
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                Err(e.into())
            }
        },
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// The writer's connection, with the pragmas of every connection of the store.
fn open(path: &str) -> Result<rusqlite::Connection, StoreError> {
    let conn = rusqlite::Connection::open(path)?;
    conn.execute_batch(crate::sql::SQLITE_PRAGMAS)?;
    conn.set_prepared_statement_cache_capacity(128);
    Ok(conn)
}

/// The writer's thread: takes what queued (up to [`BATCH`] jobs), writes the group jobs
/// among them as one group, then each transaction in turn; until the queue closes.
fn run(mut conn: rusqlite::Connection, mut queue: mpsc::UnboundedReceiver<Job>) {
    let rt = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!(error = %e, "the SQLite writer's thread has no runtime");
            return;
        }
    };
    while let Some(first) = queue.blocking_recv() {
        let mut group = Vec::new();
        let mut write = None;
        let mut txs = Vec::new();
        let mut next = Some(first);
        while let Some(job) = next.take() {
            match job {
                Job::Tx(f) => txs.push(f),
                Job::Group(j, w) => {
                    group.push(j);
                    write = Some(w);
                }
            }
            if group.len() + txs.len() < BATCH {
                next = queue.try_recv().ok();
            }
        }
        if let Some(write) = write {
            write(&mut conn, &rt, group);
        }
        for f in txs {
            f(&mut conn, &rt);
        }
    }
}
