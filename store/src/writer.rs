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

/// The queues of the SQLite writer's thread; cheap to clone.
#[derive(Clone)]
pub(crate) struct Writer {
    jobs: mpsc::UnboundedSender<Job>,
    /// Group jobs that go before everything queued (see [`Writer::group_first`]).
    first: mpsc::UnboundedSender<Job>,
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
        let (first, first_queue) = mpsc::unbounded_channel();
        std::thread::Builder::new()
            .name("openrail-sqlite-writer".into())
            .spawn(move || run(conn, first_queue, queue))
            .map_err(|e| StoreError::Corrupt(format!("the SQLite writer did not start: {e}")))?;
        Ok(Self { jobs, first })
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
        Self::send_group(&self.jobs, job, write)
    }

    /// Queues one write of the group commit ahead of everything queued: it joins the next
    /// group with the others queued ahead, and waits at most for the group being written.
    /// For a small write someone waits on before going on (the submitter journals each
    /// transaction before it broadcasts it): at the start of a burst, thousands of new
    /// pulls queue ahead of it in groups of [`BATCH`], and each journal write waited for
    /// all of them (200-350 ms a transaction, when a full batch goes out every 15 ms).
    pub(crate) fn group_first(&self, job: GroupJob, write: GroupWrite) -> Result<(), GroupJob> {
        Self::send_group(&self.first, job, write)
    }

    fn send_group(
        queue: &mpsc::UnboundedSender<Job>,
        job: GroupJob,
        write: GroupWrite,
    ) -> Result<(), GroupJob> {
        queue
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

/// The writer's thread: takes what queued (up to [`BATCH`] jobs; those queued first
/// before any other), writes the group jobs among them as one group, then each
/// transaction in turn; until the queues close.
fn run(
    mut conn: rusqlite::Connection,
    mut first_queue: mpsc::UnboundedReceiver<Job>,
    mut queue: mpsc::UnboundedReceiver<Job>,
) {
    let rt = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!(error = %e, "the SQLite writer's thread has no runtime");
            return;
        }
    };
    loop {
        // Both queues close together (their senders live in the same `Writer`).
        let first = match first_queue.try_recv() {
            Ok(job) => Some(job),
            Err(_) => rt.block_on(async {
                tokio::select! {
                    biased;
                    Some(job) = first_queue.recv() => Some(job),
                    Some(job) = queue.recv() => Some(job),
                    else => None,
                }
            }),
        };
        let Some(first) = first else {
            return;
        };
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
                next = first_queue.try_recv().or_else(|_| queue.try_recv()).ok();
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// The groups the test's write function saw, by the numbers their jobs carry.
    static GROUPS: Mutex<Vec<Vec<u32>>> = Mutex::new(Vec::new());

    fn record_group(
        _: &mut rusqlite::Connection,
        _: &tokio::runtime::Runtime,
        jobs: Vec<GroupJob>,
    ) {
        let numbers = jobs
            .into_iter()
            .map(|j| *j.downcast::<u32>().expect("a number"))
            .collect();
        GROUPS.lock().expect("groups lock").push(numbers);
    }

    #[tokio::test]
    async fn a_job_queued_first_joins_the_next_group_ahead_of_the_queue() {
        let dir = tempfile::tempdir().expect("a directory");
        let writer = Writer::start(dir.path().join("w.db").to_str().expect("a path"))
            .expect("the writer starts");
        // Hold the writer's thread in a transaction while the queues fill.
        let (release, held) = std::sync::mpsc::channel::<()>();
        let w = writer.clone();
        let holding = tokio::spawn(async move {
            w.write(
                move |_| {
                    let _ = held.recv();
                    Box::pin(async { Ok(()) })
                },
                |_: &()| true,
            )
            .await
        });
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        // Three groups' worth of ordinary jobs, then one queued first.
        for n in 0..(3 * BATCH as u32) {
            writer.group(Box::new(n), record_group).expect("queued");
        }
        writer
            .group_first(Box::new(u32::MAX), record_group)
            .expect("queued");
        release.send(()).expect("released");
        holding.await.expect("joined").expect("written");
        // An empty transaction after them all: once it is written, so are they.
        writer
            .write(|_| Box::pin(async { Ok(()) }), |_: &()| true)
            .await
            .expect("written");
        let groups = GROUPS.lock().expect("groups lock").clone();
        assert_eq!(
            groups.len(),
            4,
            "three groups and the one the first job opened: {groups:?}"
        );
        // The job queued first opens the first group after the held transaction, ahead
        // of the ordinary jobs queued before it.
        assert_eq!(groups[0][0], u32::MAX);
        assert_eq!(groups.iter().map(Vec::len).sum::<usize>(), 3 * BATCH + 1);
    }
}
