//! Group commit of the writes on a debit pull's hot path: new pulls (each with its event
//! and its work), pull outcomes (each with its event, its work closed) and the fates of
//! journaled transactions. Whatever arrives while one group commits goes into the next,
//! written in one database transaction: on SQLite, where writes take turns on one
//! connection, a burst costs one turn instead of one per request, per outcome and per
//! receipt. A group that fails is written again job by job, so one bad row never fails the
//! others.
//!
//! On SQLite the group's jobs go to the one writer's thread ([`crate::writer`]), which
//! writes the ones queued together as a group; on PostgreSQL a task of their own, started
//! on first use in the caller's Tokio runtime (if that runtime ended, a job is written
//! alone), writes them through a transaction of the pool.

use tokio::sync::{mpsc, oneshot};

use crate::agentic::{DebitPull, PullResolution};
use crate::db::{Store, StoreError};
use crate::exec::Exec;
use crate::journal::TxStatus;
use openrail_domain::PullId;

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

/// The queue of `store`'s group writer through sqlx (PostgreSQL), started on first use in
/// the caller's runtime (the store keeps it without knowing its type: the store sits below
/// the aggregates a group writes).
fn sender(store: &Store) -> &mpsc::UnboundedSender<Job> {
    store
        .group()
        .get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(run(store.clone(), rx));
            Box::new(tx)
        })
        .downcast_ref::<mpsc::UnboundedSender<Job>>()
        .expect("a store's group slot holds its group writer's queue")
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

/// The group writer through sqlx (PostgreSQL).
async fn run(store: Store, mut jobs: mpsc::UnboundedReceiver<Job>) {
    while let Some(first) = jobs.recv().await {
        write_through_sqlx(&store, gather(first, &mut jobs)).await;
    }
}

/// The group on SQLite: the jobs the writer's thread took from its queue together,
/// written in one transaction of its connection (each alone when that fails, so one bad
/// row does not fail the others), then answered (waking their tasks directly).
fn write_on_writer(
    conn: &mut rusqlite::Connection,
    rt: &tokio::runtime::Runtime,
    jobs: Vec<crate::writer::GroupJob>,
) {
    let group: Vec<Job> = jobs
        .into_iter()
        .filter_map(|j| j.downcast::<Job>().ok().map(|j| *j))
        .collect();
    let write = |conn: &mut rusqlite::Connection, group: &[Job]| {
        crate::writer::in_transaction(conn, |_| true, |c| rt.block_on(write_group_in(c, group)))
    };
    let started = std::time::Instant::now();
    let written = write(conn, &group);
    crate::stages::group_written(group.len(), started.elapsed());
    match written {
        Err(e) if group.len() > 1 => {
            tracing::warn!(error = %e, jobs = group.len(), "group write failed; writing its jobs one by one");
            for job in group {
                let r = write(conn, std::slice::from_ref(&job));
                reply_all(vec![job], r);
            }
        }
        written => reply_all(group, written),
    }
}

/// Writes `group` in one sqlx transaction (each job alone when that fails, so one bad row
/// does not fail the others) and answers its jobs.
async fn write_through_sqlx(store: &Store, group: Vec<Job>) {
    async fn once(store: &Store, group: &[Job]) -> Result<Written, StoreError> {
        let pool = store.pg_pool().ok_or_else(|| stopped(()))?;
        let mut tx = pool.begin().await?;
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

fn stopped<T>(_: T) -> StoreError {
    StoreError::Corrupt("the group writer stopped".into())
}

impl Store {
    /// Hands `job` to the group writer (the SQLite writer's thread, or the sqlx task of
    /// PostgreSQL) and waits for its `answer`; on PostgreSQL with no task (its runtime
    /// ended), writes it alone.
    async fn submit<T>(
        &self,
        job: Job,
        answer: oneshot::Receiver<Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        // A signed transaction is journaled ahead of the queue: the submitter waits for it
        // before it broadcasts, and nothing queued needs it first.
        let first = matches!(job, Job::Record(..));
        match self.sqlite_writer() {
            Some(writer) => {
                let queued = if first {
                    writer.group_first(Box::new(job), write_on_writer)
                } else {
                    writer.group(Box::new(job), write_on_writer)
                };
                if queued.is_err() {
                    return Err(stopped(()));
                }
            }
            // PostgreSQL takes writers side by side: written at once, in a transaction of
            // its own, instead of behind the group task's queue.
            None if first => write_through_sqlx(self, vec![job]).await,
            None => {
                if let Err(mpsc::error::SendError(job)) = sender(self).send(job) {
                    write_through_sqlx(self, vec![job]).await;
                }
            }
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
