//! Group commit of the writes on a debit pull's hot path: new pulls (each with its event
//! and its work), pull outcomes (each with its event, its work closed) and the fates of
//! journaled transactions. Whatever arrives while one group commits goes into the next,
//! written in one database transaction: on SQLite, where writes take turns on one
//! connection, a burst costs one turn instead of one per request, per outcome and per
//! receipt. A group that fails is written again job by job, so one bad row never fails the
//! others.
//!
//! The group's task starts on first use, in the caller's Tokio runtime; if it is gone (that
//! runtime ended), a job is written alone.

use tokio::sync::{mpsc, oneshot};

use crate::agentic::{DebitPull, PullResolution};
use crate::db::{Store, StoreError};
use crate::exec::Exec;
use crate::ids::PullId;
use crate::journal::TxStatus;

/// What a group wrote: per outcome job in order, its pull as recorded when it moved; per
/// journal job in order, whether it was journaled (its lease still held).
type Written = (Vec<Option<DebitPull>>, Vec<bool>);

/// Most jobs written in one transaction.
const GROUP: usize = 512;

/// A write the group commits.
#[derive(Debug)]
enum Job {
    Insert(Box<DebitPull>, oneshot::Sender<Result<(), StoreError>>),
    Resolve {
        id: PullId,
        resolution: PullResolution,
        now: i64,
        reply: oneshot::Sender<Result<Option<DebitPull>, StoreError>>,
    },
    /// A signed transaction to journal before it is broadcast (the submitter waits for it:
    /// written with a group, it waits for at most the group being written, never for
    /// SQLite's busy handler, which sleeps a millisecond and more when two connections
    /// collide).
    Record(
        Box<crate::journal::SignedRow>,
        oneshot::Sender<Result<bool, StoreError>>,
    ),
    Fate {
        chain_id: u64,
        hash: String,
        status: TxStatus,
        block: Option<u64>,
        now: i64,
        reply: oneshot::Sender<Result<(), StoreError>>,
    },
}

/// The queue of `store`'s group writer, started on first use (the store keeps it without
/// knowing its type: the store sits below the aggregates a group writes).
fn sender(store: &Store) -> &mpsc::UnboundedSender<Job> {
    store
        .group()
        .get_or_init(|| Box::new(start(store)))
        .downcast_ref::<mpsc::UnboundedSender<Job>>()
        .expect("a store's group slot holds its group writer's queue")
}

/// Starts `store`'s group writer; returns its queue.
fn start(store: &Store) -> mpsc::UnboundedSender<Job> {
    let (tx, rx) = mpsc::unbounded_channel();
    // On SQLite, groups are written by a thread of their own holding a rusqlite
    // connection, every statement a direct call: sqlx runs each statement as a
    // round trip to its connection's own thread, and each return waits for a
    // turn on the runtime.
    match store.sqlite_file().map(sqlite_connection) {
        Some(Ok(conn)) => match std::thread::Builder::new()
            .name("openrail-group-writer".into())
            .spawn(move || write_on_thread(conn, rx))
        {
            Ok(_) => {}
            Err(e) => {
                tracing::error!(error = %e, "the group writer's thread did not start");
            }
        },
        Some(Err(e)) => {
            tracing::warn!(error = %e, "the group writer's SQLite connection did not open; groups go through sqlx");
            tokio::spawn(run(store.clone(), rx));
        }
        None => {
            tokio::spawn(run(store.clone(), rx));
        }
    }
    tx
}

/// Takes what queued as one group (up to [`GROUP`] jobs).
fn gather(first: Job, jobs: &mut mpsc::UnboundedReceiver<Job>) -> Vec<Job> {
    let mut group = vec![first];
    while group.len() < GROUP {
        match jobs.try_recv() {
            Ok(next) => group.push(next),
            Err(_) => break,
        }
    }
    group
}

/// The group writer through sqlx (PostgreSQL, or a SQLite database in memory).
async fn run(store: Store, mut jobs: mpsc::UnboundedReceiver<Job>) {
    while let Some(first) = jobs.recv().await {
        write_through_sqlx(&store, gather(first, &mut jobs)).await;
    }
}

/// The group writer's own SQLite connection, with the pragmas of the store's.
fn sqlite_connection(path: String) -> Result<rusqlite::Connection, StoreError> {
    let conn = rusqlite::Connection::open(&path)?;
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000; \
         PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; \
         PRAGMA temp_store = MEMORY; PRAGMA cache_size = -16384;",
    )?;
    conn.set_prepared_statement_cache_capacity(64);
    // While another connection writes, try again after 50 µs (SQLite's own handler sleeps
    // a millisecond and more), for up to about the store's 5 s. The store's sqlx writer
    // begins its transactions IMMEDIATE (see `Store::write_tx`), so the two take turns on
    // SQLite's write lock.
    conn.busy_handler(Some(|tries| {
        std::thread::sleep(std::time::Duration::from_micros(50));
        tries < 50_000
    }))?;
    Ok(conn)
}

/// The group writer on SQLite: a thread that blocks on the queue and writes each group
/// through `conn`, then answers its jobs (waking their tasks directly). It ends when the
/// store is dropped.
fn write_on_thread(mut conn: rusqlite::Connection, mut jobs: mpsc::UnboundedReceiver<Job>) {
    // The statements' futures are ready at once (rusqlite blocks); a current-thread
    // runtime only drives them.
    let rt = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!(error = %e, "the group writer's thread has no runtime");
            return;
        }
    };
    while let Some(first) = jobs.blocking_recv() {
        let group = gather(first, &mut jobs);
        let started = std::time::Instant::now();
        let written = rt.block_on(write_sqlite(&mut conn, &group));
        crate::stages::group_written(group.len(), started.elapsed());
        match written {
            Err(e) if group.len() > 1 => {
                tracing::warn!(error = %e, jobs = group.len(), "group write failed; writing its jobs one by one");
                for job in group {
                    let r = rt.block_on(write_sqlite(&mut conn, std::slice::from_ref(&job)));
                    reply_all(vec![job], r);
                }
            }
            written => reply_all(group, written),
        }
    }
}

/// Writes `group` in one transaction of the store's sqlx writer (each job alone when that
/// fails, so one bad row does not fail the others) and answers its jobs.
async fn write_through_sqlx(store: &Store, group: Vec<Job>) {
    async fn once(store: &Store, group: &[Job]) -> Result<Written, StoreError> {
        let mut tx = store.write_tx().await?;
        let moved = write_group_in(&mut *tx, group).await?;
        tx.commit().await?;
        Ok(moved)
    }
    let started = std::time::Instant::now();
    let written = once(store, &group).await;
    crate::stages::group_written(group.len(), started.elapsed());
    match written {
        Err(e) if group.len() > 1 => {
            tracing::warn!(error = %e, jobs = group.len(), "group write failed; writing its jobs one by one");
            for job in group {
                let r = once(store, std::slice::from_ref(&job)).await;
                reply_all(vec![job], r);
            }
        }
        written => reply_all(group, written),
    }
}

/// Answers each job of `group` with the group's outcome: `moved` holds, per outcome job in
/// order, its pull as recorded when it moved.
fn reply_all(group: Vec<Job>, written: Result<Written, StoreError>) {
    match written {
        Ok((moved, recorded)) => {
            let mut moved = moved.into_iter();
            let mut recorded = recorded.into_iter();
            for job in group {
                match job {
                    Job::Insert(_, reply) => {
                        let _ = reply.send(Ok(()));
                    }
                    Job::Resolve { reply, .. } => {
                        let _ = reply.send(Ok(moved.next().flatten()));
                    }
                    Job::Record(_, reply) => {
                        let _ = reply.send(Ok(recorded.next().unwrap_or(false)));
                    }
                    Job::Fate { reply, .. } => {
                        let _ = reply.send(Ok(()));
                    }
                }
            }
        }
        Err(e) => {
            // Called with one job when a write fails (see the callers).
            let message = e.to_string();
            let mut e = Some(e);
            for job in group {
                let err = e
                    .take()
                    .unwrap_or_else(|| StoreError::Corrupt(message.clone()));
                match job {
                    Job::Insert(_, reply) => {
                        let _ = reply.send(Err(err));
                    }
                    Job::Resolve { reply, .. } => {
                        let _ = reply.send(Err(err));
                    }
                    Job::Record(_, reply) => {
                        let _ = reply.send(Err(err));
                    }
                    Job::Fate { reply, .. } => {
                        let _ = reply.send(Err(err));
                    }
                }
            }
        }
    }
}

/// One group in one transaction of `conn`; rolled back when a statement fails.
async fn write_sqlite(
    conn: &mut rusqlite::Connection,
    group: &[Job],
) -> Result<Written, StoreError> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    match write_group_in(conn, group).await {
        Ok(moved) => match conn.execute_batch("COMMIT") {
            Ok(()) => Ok(moved),
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

fn stopped<T>(_: T) -> StoreError {
    StoreError::Corrupt("the group writer stopped".into())
}

impl Store {
    /// Hands `job` to the group writer and waits for its `answer`; with no writer (its
    /// runtime ended), writes it alone.
    async fn submit<T>(
        &self,
        job: Job,
        answer: oneshot::Receiver<Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        if let Err(mpsc::error::SendError(job)) = sender(self).send(job) {
            write_through_sqlx(self, vec![job]).await;
        }
        answer.await.map_err(stopped)?
    }
}

impl crate::agentic::Pulls<'_> {
    /// Writes a new pull with its `debit_pull.created` event and, when pending, its work,
    /// committed with the other writes of its group; returns once it is committed.
    pub async fn accept(self, p: DebitPull) -> Result<(), StoreError> {
        let (reply, answer) = oneshot::channel();
        self.0.submit(Job::Insert(Box::new(p), reply), answer).await
    }

    /// Records how pending pull `id` ended, at `now` (as [`Pulls::resolve`](crate::agentic::Pulls::resolve)), committed
    /// with the other writes of its group; returns the pull as recorded when it moved
    /// (`None`: it was no longer pending).
    pub async fn record_outcome(
        self,
        id: &PullId,
        resolution: PullResolution,
        now: i64,
    ) -> Result<Option<DebitPull>, StoreError> {
        let (reply, answer) = oneshot::channel();
        let job = Job::Resolve {
            id: id.clone(),
            resolution,
            now,
            reply,
        };
        self.0.submit(job, answer).await
    }
}

impl Store {
    /// Journals a signed transaction (see [`Journal::record`](crate::journal::Journal::record)), committed with the other
    /// writes of its group.
    pub(crate) async fn record_in_group(
        &self,
        row: crate::journal::SignedRow,
    ) -> Result<bool, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.submit(Job::Record(Box::new(row), reply), answer).await
    }
}

impl crate::journal::Journal<'_> {
    /// Sets a journaled transaction's status (and its block, when mined) at `now`,
    /// committed with the other writes of its group; its effect on the objects it carries
    /// takes place in the same transaction (see [`crate::journal::apply_fates_in`]).
    pub async fn mark(
        self,
        chain_id: u64,
        hash: &str,
        status: TxStatus,
        block: Option<u64>,
        now: i64,
    ) -> Result<(), StoreError> {
        let (reply, answer) = oneshot::channel();
        let job = Job::Fate {
            chain_id,
            hash: hash.to_string(),
            status,
            block,
            now,
            reply,
        };
        self.0.submit(job, answer).await
    }
}

/// A group's writes inside the caller's transaction, in as few statements as its jobs
/// allow: the new pulls' rows, the outcomes' status changes, one read of their mandates,
/// then all their events, work and closed work, and the fates. Returns, per outcome in
/// order, its pull as recorded when it moved.
async fn write_group_in(conn: &mut impl Exec, group: &[Job]) -> Result<Written, StoreError> {
    use crate::agentic::{self, Guard};
    let mut inserts = Vec::new();
    let mut outcomes: Vec<(&str, agentic::PullChange<'_>)> = Vec::new();
    let mut fates = Vec::new();
    let mut signed = Vec::new();
    let mut now = 0;
    for job in group {
        match job {
            Job::Record(row, _) => signed.push(&**row),
            Job::Insert(p, _) => inserts.push((**p).clone()),
            Job::Resolve {
                id,
                resolution,
                now: at,
                ..
            } => {
                outcomes.push((id.as_str(), agentic::PullChange::Resolve(resolution)));
                now = now.max(*at);
            }
            Job::Fate {
                chain_id,
                hash,
                status,
                block,
                now: at,
                ..
            } => {
                fates.push((*chain_id, hash.as_str(), *status, *block, None));
                now = now.max(*at);
            }
        }
    }
    let mut recorded = Vec::with_capacity(signed.len());
    for row in signed {
        recorded.push(crate::journal::record_tx_in(conn, row).await?);
    }
    agentic::insert_pull_rows_in(conn, &inserts).await?;
    let (moved, resolved) = agentic::change_pulls_in(conn, &outcomes, Guard::None, now).await?;
    let mandate_ids: Vec<&str> = inserts.iter().map(|p| p.mandate_id.as_str()).collect();
    let chains = if mandate_ids.is_empty() {
        Default::default()
    } else {
        agentic::mandate_chains_in(conn, &mandate_ids).await?
    };
    let mut events = Vec::new();
    let mut work = Vec::new();
    agentic::created_effects(&inserts, &chains, &mut events, &mut work)?;
    crate::events::insert_all(conn, &events).await?;
    crate::outbox::enqueue_all(conn, &work).await?;
    crate::journal::mark_txs_in(conn, &fates, now).await?;
    let hashes: Vec<&str> = fates.iter().map(|f| f.1).collect();
    crate::journal::apply_fates_in(conn, &hashes, now).await?;
    // `resolved` holds the pulls that moved, in the order of the outcomes.
    let mut rows = resolved.into_iter();
    let moved = moved
        .into_iter()
        .map(|m| if m { rows.next() } else { None })
        .collect();
    Ok((moved, recorded))
}
