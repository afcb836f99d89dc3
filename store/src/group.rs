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

use std::sync::{Arc, OnceLock};

use tokio::sync::{mpsc, oneshot};

use crate::agentic::{DebitPull, PullResolution};
use crate::db::{Store, StoreError};
use crate::ids::PullId;
use crate::journal::TxStatus;

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
    Fate {
        chain_id: u64,
        hash: String,
        status: TxStatus,
        block: Option<u64>,
        reply: oneshot::Sender<Result<(), StoreError>>,
    },
}

/// The handle on a store's group writer (shared by the store's clones).
#[derive(Debug, Clone, Default)]
pub(crate) struct Group(Arc<OnceLock<mpsc::UnboundedSender<Job>>>);

impl Group {
    fn sender(&self, store: &Store) -> &mpsc::UnboundedSender<Job> {
        self.0.get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(run(store.clone(), rx));
            tx
        })
    }
}

async fn run(store: Store, mut jobs: mpsc::UnboundedReceiver<Job>) {
    while let Some(first) = jobs.recv().await {
        let mut group = vec![first];
        while group.len() < GROUP {
            match jobs.try_recv() {
                Ok(next) => group.push(next),
                Err(_) => break,
            }
        }
        match store.write_group(&group).await {
            Ok(moved) => {
                let mut moved = moved.into_iter();
                for job in group {
                    match job {
                        Job::Insert(_, reply) => {
                            let _ = reply.send(Ok(()));
                        }
                        Job::Resolve { reply, .. } => {
                            let _ = reply.send(Ok(moved.next().flatten()));
                        }
                        Job::Fate { reply, .. } => {
                            let _ = reply.send(Ok(()));
                        }
                    }
                }
            }
            Err(e) if group.len() == 1 => {
                tracing::warn!(error = %e, "group write failed");
                reply_alone(&store, group.pop().expect("one"), Some(e)).await;
            }
            Err(e) => {
                tracing::warn!(error = %e, jobs = group.len(), "group write failed; writing its jobs one by one");
                for job in group {
                    reply_alone(&store, job, None).await;
                }
            }
        }
    }
}

/// Answers `job` with `failed` when given, else with the outcome of writing it alone.
async fn reply_alone(store: &Store, job: Job, failed: Option<StoreError>) {
    match job {
        Job::Insert(p, reply) => {
            let r = match failed {
                Some(e) => Err(e),
                None => store.insert_pulls(std::slice::from_ref(&*p)).await,
            };
            let _ = reply.send(r);
        }
        Job::Resolve {
            id,
            resolution,
            now,
            reply,
        } => {
            let r = match failed {
                Some(e) => Err(e),
                None => match store.resolve_pulls(&[(id.clone(), resolution)], now).await {
                    Ok(m) if m.first().copied().unwrap_or(false) => {
                        store.pull_unscoped(&id).await.map(Some)
                    }
                    Ok(_) => Ok(None),
                    Err(e) => Err(e),
                },
            };
            let _ = reply.send(r);
        }
        Job::Fate {
            chain_id,
            hash,
            status,
            block,
            reply,
        } => {
            let r = match failed {
                Some(e) => Err(e),
                None => store.mark_tx_alone(chain_id, &hash, status, block).await,
            };
            let _ = reply.send(r);
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
        if let Err(mpsc::error::SendError(job)) = self.group().sender(self).send(job) {
            reply_alone(self, job, None).await;
        }
        answer.await.map_err(stopped)?
    }

    /// Writes a new pull with its `debit_pull.created` event and, when pending, its work,
    /// committed with the other writes of its group; returns once it is committed.
    pub async fn accept_pull(&self, p: DebitPull) -> Result<(), StoreError> {
        let (reply, answer) = oneshot::channel();
        self.submit(Job::Insert(Box::new(p), reply), answer).await
    }

    /// Records how pending pull `id` ended, at `now` (as [`Store::resolve_pull`]), committed
    /// with the other writes of its group; returns the pull as recorded when it moved
    /// (`None`: it was no longer pending).
    pub async fn record_pull_outcome(
        &self,
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
        self.submit(job, answer).await
    }

    /// Sets a journaled transaction's status (and its block, when mined), committed with
    /// the other writes of its group.
    pub async fn mark_tx(
        &self,
        chain_id: u64,
        hash: &str,
        status: TxStatus,
        block: Option<u64>,
    ) -> Result<(), StoreError> {
        let (reply, answer) = oneshot::channel();
        let job = Job::Fate {
            chain_id,
            hash: hash.to_string(),
            status,
            block,
            reply,
        };
        self.submit(job, answer).await
    }

    /// One transaction for a group, in as few statements as its jobs allow: the new pulls'
    /// rows, the outcomes' status changes, one read of their mandates, then all their
    /// events, work and closed work, and the fates. Returns, per outcome in order, its pull
    /// as recorded when it moved.
    async fn write_group(&self, group: &[Job]) -> Result<Vec<Option<DebitPull>>, StoreError> {
        use crate::agentic::{self, Guard};
        let mut inserts = Vec::new();
        let mut outcomes: Vec<(&str, &PullResolution)> = Vec::new();
        let mut fates = Vec::new();
        let mut now = 0;
        for job in group {
            match job {
                Job::Insert(p, _) => inserts.push((**p).clone()),
                Job::Resolve {
                    id,
                    resolution,
                    now: at,
                    ..
                } => {
                    outcomes.push((id.as_str(), resolution));
                    now = now.max(*at);
                }
                Job::Fate {
                    chain_id,
                    hash,
                    status,
                    block,
                    ..
                } => fates.push((*chain_id, hash.as_str(), *status, *block)),
            }
        }
        let mut tx = self.writer().begin().await?;
        agentic::insert_pull_rows_in(&mut tx, &inserts).await?;
        let (moved, resolved) =
            agentic::update_outcomes_in(&mut tx, &outcomes, Guard::None, now).await?;
        let mandate_ids: Vec<&str> = inserts
            .iter()
            .chain(&resolved)
            .map(|p| p.mandate_id.as_str())
            .collect();
        let chains = if mandate_ids.is_empty() {
            Default::default()
        } else {
            agentic::mandate_chains_in(&mut tx, &mandate_ids).await?
        };
        let mut events = Vec::new();
        let mut work = Vec::new();
        agentic::created_effects(&inserts, &chains, &mut events, &mut work)?;
        agentic::outcome_effects(&resolved, &chains, now, &mut events, &mut work)?;
        crate::events::insert_all(&mut tx, &events).await?;
        crate::outbox::enqueue_all(&mut tx, &work).await?;
        let closed: Vec<&str> = resolved.iter().map(|p| p.id.as_str()).collect();
        crate::outbox::close_all(&mut tx, &closed, crate::outbox::WorkKind::PullBatch, now).await?;
        crate::journal::mark_txs_in(&mut tx, &fates).await?;
        tx.commit().await?;
        // `resolved` holds the pulls that moved, in the order of the outcomes.
        let mut rows = resolved.into_iter();
        Ok(moved
            .into_iter()
            .map(|m| if m { rows.next() } else { None })
            .collect())
    }
}
