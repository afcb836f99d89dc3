//! The engine: the one sender of a chain's transactions. It runs in the process holding
//! the chain's lease (see [`lead`]) and works through the outbox: request
//! handlers — in this process or any other — write an object and what must be sent for it
//! in one database transaction and send nothing; the engine claims queued work
//! ([`Outbox::queued`](openrail_store::outbox::Outbox::queued)), builds each transaction from the rows (so a request and a
//! takeover after a crash send the same), sends it through the submitter (pulls in flight
//! together are batched into one `pullBatch`), records the outcome through the store's
//! status transitions, closes the work and wakes whoever waits for it
//! ([`outcomes::Outcomes`]). Payments and the payouts of bank-funded pulls are driven the
//! same way, step by step ([`payments`]).
//!
//! Work whose transaction is journaled is not claimed again: the journal, fenced by the
//! lease, is what makes each send happen at most once; a journaled transaction whose
//! sender died is settled by the submitter at start-up. Every journaled transaction's fate
//! takes effect in the database transaction that records it
//! (`openrail_store::journal::apply_fates_in`), so the engine records only outcomes that
//! have no transaction, and a pull's outcome from its batch's logs.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use alloy::primitives::{Address, Bytes, U256};
use openrail_chain::ChainError;
use openrail_domain::journal::Intent;
use openrail_store::agentic::{DebitPull, PullStatus};
use openrail_store::journal::TxStatus;
use openrail_store::outbox::{Work, WorkKind};
use openrail_store::{Amount, Mode, Store, StoreError, now_ms};

use crate::network::Network;
use crate::outcomes::Wake;
use crate::payments::{Drive, PaymentDriver, PaymentError};

pub mod attestations;
pub mod bank_accounts;
pub mod consent;
pub mod identity;
mod journal;
pub mod mandates;
pub mod network;
pub mod outcomes;
pub mod payments;
pub mod pulls;
pub mod service;
pub mod session_keys;

pub use journal::{StoreJournal, lead, lead_with};

/// How often the engine looks for work written by other processes (its own process wakes
/// it at once).
pub const POLL: Duration = Duration::from_millis(25);

/// How often a waiting request re-reads the database: the fallback for work done by
/// another process (this process's engine wakes its own requests at once).
pub const WAIT_POLL: Duration = Duration::from_millis(200);

/// How often a request whose work went straight to this process's engine re-reads the
/// database while that engine has said nothing yet. The engine tells it of every end of
/// its run (recorded, or left to another path, after which it reads every [`WAIT_POLL`]),
/// so this is only a safety net; reading every [`WAIT_POLL`] instead cost each pull on a
/// chain with 1 s blocks about five reads while it waited for its block.
pub const HANDED_OFF_POLL: Duration = Duration::from_secs(2);

/// How often an attestation chain's engine looks for attestation receipts to relay to its
/// mode's settlement chain.
const RELAY_POLL: Duration = Duration::from_millis(250);

/// Most work claimed in one pass.
const CLAIM: u32 = 1000;

/// A request's wait for its work, subscribed before the work is written (so the engine's
/// wake cannot come before it listens).
#[derive(Debug)]
pub struct Waiter<'a> {
    net: &'a Network,
    intent: Intent,
    rx: Option<tokio::sync::watch::Receiver<Wake>>,
    /// The work went straight to this process's engine: no need to wake it to read the
    /// database.
    handed_off: bool,
}

impl Drop for Waiter<'_> {
    fn drop(&mut self) {
        // Stop listening first: the registry keeps an intent only while someone listens.
        drop(self.rx.take());
        self.net.outcomes.forget(&self.intent);
    }
}

/// Starts waiting for `intent`'s work; write the work after this.
pub fn waiter(net: &Network, intent: Intent) -> Waiter<'_> {
    Waiter {
        net,
        rx: Some(net.outcomes.watch(&intent)),
        intent,
        handed_off: false,
    }
}

impl Waiter<'_> {
    /// Waits up to `wait` for the `kind` work to be done (its outcome recorded), whichever
    /// process does it: woken at once by this process's engine, else reading the database
    /// every [`WAIT_POLL`] (every [`HANDED_OFF_POLL`] while work handed to this process's
    /// engine has had no news from it). Returns whether it was.
    pub async fn wait(
        self,
        store: &Store,
        kind: WorkKind,
        wait: Duration,
    ) -> Result<bool, StoreError> {
        Ok(self.wait_recorded(store, kind, wait).await?.0)
    }

    /// [`Waiter::wait`], and the pull as this process's engine recorded it when the work is
    /// a pull's and this process recorded it (its request then need not read it again).
    pub async fn wait_recorded(
        self,
        store: &Store,
        kind: WorkKind,
        wait: Duration,
    ) -> Result<(bool, Option<DebitPull>), StoreError> {
        let intent = self.intent.clone();
        self.wait_for(wait, true, || async {
            if let (WorkKind::PullBatch, Intent::Pull(id)) = (kind, &intent) {
                // A mined batch's fate closes its pulls' work as it is recorded, which may
                // be a moment before their outcomes are: the request waits for the pull
                // itself (it answered 202 `pending` under load while the outcome was due).
                return Ok(store.pulls().status(id.as_str()).await? != Some(PullStatus::Pending));
            }
            Ok(!store.outbox().is_open(&intent, kind).await?)
        })
        .await
    }

    /// Waits up to `wait` until `done` says so, asking it each time this process's engine
    /// reports a step of the work, and at least every [`WAIT_POLL`] (or
    /// [`HANDED_OFF_POLL`], as [`Waiter::wait`]). Returns whether it did.
    pub async fn wait_until<F, Fut>(self, wait: Duration, done: F) -> Result<bool, StoreError>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<bool, StoreError>>,
    {
        Ok(self.wait_for(wait, false, done).await?.0)
    }

    /// [`Waiter::wait_until`]; when `recorded_is_done`, the engine's word that the work is
    /// recorded ends the wait without asking `done` (the work's own close is what `done`
    /// would read). Returns whether it was done, and the pull the engine recorded, if any.
    async fn wait_for<F, Fut>(
        mut self,
        wait: Duration,
        recorded_is_done: bool,
        done: F,
    ) -> Result<(bool, Option<DebitPull>), StoreError>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<bool, StoreError>>,
    {
        if !self.handed_off {
            self.net.outcomes.queued();
        }
        let deadline = tokio::time::Instant::now() + wait;
        let finished = loop {
            let now = tokio::time::Instant::now();
            // Handed to this process's engine and no word from it yet: it will say.
            let silent = self
                .rx
                .as_ref()
                .is_some_and(|rx| matches!(*rx.borrow(), Wake::Waiting));
            let poll = match self.handed_off && silent {
                true => HANDED_OFF_POLL,
                false => WAIT_POLL,
            };
            let tick = deadline.saturating_duration_since(now).min(poll);
            let changed = async {
                match self.rx.as_mut() {
                    Some(rx) => rx.changed().await.is_ok(),
                    None => false,
                }
            };
            if let Ok(false) = tokio::time::timeout(tick, changed).await {
                // This process's news for the intent is out (work left for another
                // process): only the database can tell more.
                tokio::time::sleep(tick).await;
            }
            let recorded = self
                .rx
                .as_ref()
                .is_some_and(|rx| matches!(*rx.borrow(), Wake::Recorded(_)));
            if (recorded_is_done && recorded) || done().await? {
                break true;
            }
            if tokio::time::Instant::now() >= deadline {
                break false;
            }
        };
        let pull = match self.rx.as_ref().map(|rx| rx.borrow().clone()) {
            Some(Wake::Recorded(Some(p))) if finished => Some((*p).clone()),
            _ => None,
        };
        Ok((finished, pull))
    }
}

/// Runs the engine of `net` for objects of `mode` in a task (aborting it stops the engine).
/// Driving work (payments, payouts) waiting for something outside is tried again every
/// `drive_poll`.
///
/// Work reaches it two ways. Every [`POLL`] (and when this process queues other work) it
/// reads the queued work from the database: work of every kind, queued by any process.
/// And a pull this process's request wrote comes straight from the request
/// ([`outcomes::Outcomes::hand_off`]): claimed for this engine before its row was
/// committed, so no read of the database can claim it too, and sent without reading back
/// what the request just wrote. Either way it is the same work, sent and recorded the same
/// way.
pub fn start(
    store: Store,
    net: Arc<Network>,
    mode: Mode,
    drive_poll: Duration,
) -> tokio::task::JoinHandle<()> {
    let (inbox, mut handed) = tokio::sync::mpsc::unbounded_channel();
    let inflight: Inflight = Arc::default();
    net.outcomes.open_inbox(inbox, inflight.clone());
    tokio::spawn(async move {
        let payments = net.submitter().map(|s| {
            PaymentDriver::new(
                store.clone(),
                s.clone(),
                net.router,
                net.treasury,
                net.tokens.clone(),
                net.reader.clone(),
            )
        });
        let ctx = Ctx {
            store,
            net,
            inflight,
            payments,
            drive_poll,
        };
        let mut next_poll = tokio::time::Instant::now();
        let mut next_relay = tokio::time::Instant::now();
        loop {
            if tokio::time::Instant::now() >= next_poll {
                poll_queued(&ctx, mode).await;
                next_poll = tokio::time::Instant::now() + POLL;
            }
            if ctx.net.settlement_mirror.is_some() && tokio::time::Instant::now() >= next_relay {
                attestations::relay(&ctx.store, &ctx.net).await;
                next_relay = tokio::time::Instant::now() + RELAY_POLL;
            }
            tokio::select! {
                biased;
                first = handed.recv() => {
                    let Some(first) = first else { return };
                    let mut pulls = vec![first];
                    while let Ok(p) = handed.try_recv() {
                        pulls.push(p);
                    }
                    for p in pulls {
                        let w = Work {
                            seq: 0,
                            intent: Intent::Pull(p.id.clone()),
                            kind: WorkKind::PullBatch,
                        };
                        // Written by this process's request a moment ago: pending, and no
                        // transaction carries it (it was claimed here before it was visible).
                        tokio::spawn(run_work(ctx.clone(), w, (Some(p), Some(false))));
                    }
                }
                () = ctx.net.outcomes.wake.notified() => next_poll = tokio::time::Instant::now(),
                () = tokio::time::sleep_until(next_poll) => {}
            }
        }
    })
}

/// The work this engine has taken and not finished: (intent, kind).
pub(crate) type Inflight = Arc<Mutex<HashSet<(Intent, WorkKind)>>>;

/// What every piece of work the engine runs needs.
#[derive(Clone)]
struct Ctx {
    store: Store,
    net: Arc<Network>,
    inflight: Inflight,
    payments: Option<PaymentDriver>,
    drive_poll: Duration,
}

/// One read of the queued work, and a task for each piece not already taken.
async fn poll_queued(ctx: &Ctx, mode: Mode) {
    let work = match ctx
        .store
        .outbox()
        .queued(ctx.net.chain_id, mode, now_ms(), CLAIM)
        .await
    {
        Ok(work) => work,
        Err(e) => {
            tracing::warn!(chain_id = ctx.net.chain_id, error = %e, "reading queued work failed");
            return;
        }
    };
    let fresh: Vec<Work> = {
        let mut taken = ctx.inflight.lock().expect("inflight lock");
        work.into_iter()
            .filter(|w| taken.insert((w.intent.clone(), w.kind)))
            .collect()
    };
    // The pulls claimed together are read together (one query, not one each).
    let mut read = pulls::prefetch(&ctx.store, &fresh).await;
    for w in fresh {
        let pull = if let Intent::Pull(id) = &w.intent {
            read.pulls.remove(id)
        } else {
            None
        };
        let prefetched = (pull, read.journaled.as_ref().map(|j| j.contains(&w.intent)));
        tokio::spawn(run_work(ctx.clone(), w, prefetched));
    }
}

/// Runs one piece of taken work to its next resting point: sends it and records its
/// outcome, or takes one step of driving work; then closes or defers it, lets it be taken
/// again, and wakes whoever waits for it.
async fn run_work(ctx: Ctx, w: Work, prefetched: (Option<DebitPull>, Option<bool>)) {
    let Ctx {
        store,
        net,
        inflight,
        payments,
        drive_poll,
    } = ctx;
    let key = (w.intent.clone(), w.kind);
    // A pull's row as its outcome was recorded, for its request.
    let mut pull = None;
    let next = match w.kind {
        WorkKind::Mandate(k) => mandates::run(&store, &net, k, &w).await,
        WorkKind::SessionKey(k) => session_keys::run(&store, &net, k, &w).await,
        WorkKind::Pull(k) => pulls::run(&store, &net, payments.as_ref(), k, &w, prefetched)
            .await
            .map(|(next, recorded)| {
                pull = recorded;
                next
            }),
        WorkKind::Payment(k) => payments::run(payments.as_ref(), k, &w).await,
        WorkKind::Attestation(k) => attestations::run(&store, &net, k, &w).await,
    };
    let recorded = match next {
        Ok(Next::Close) => store.outbox().close(&w.intent, w.kind, now_ms()).await,
        Ok(Next::Later) => {
            let due =
                now_ms().saturating_add(i64::try_from(drive_poll.as_millis()).unwrap_or(i64::MAX));
            store.outbox().defer(&w.intent, w.kind, due).await
        }
        // Not recorded here (`Left`): a new holder or the watcher does it.
        Ok(Next::Kept | Next::Again) | Err(Left) => Ok(()),
    };
    let closed = match (&next, recorded) {
        (Ok(Next::Close | Next::Kept), Ok(())) => true,
        (_, Ok(())) => false,
        (_, Err(e)) => {
            tracing::error!(intent = %w.intent, error = %e, "closing or deferring work failed");
            false
        }
    };
    inflight.lock().expect("inflight lock").remove(&key);
    if closed {
        net.outcomes.recorded(&w.intent, pull);
    } else {
        net.outcomes.moved(&w.intent);
    }
}

/// What becomes of a piece of work after the engine took it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// Done: close it.
    Close,
    /// Closed (or left open) with the outcome it recorded.
    Kept,
    /// Driving work that moved: due again at once.
    Again,
    /// Driving work waiting for something outside: due again after the drive poll.
    Later,
}

/// A row whose intent is not the kind of object its work is for (never written so):
/// logged and closed, rather than claimed again on every pass.
fn corrupt(w: &Work) -> Next {
    tracing::error!(intent = %w.intent, kind = w.kind.as_str(), "work for an object of another kind; closed");
    Next::Close
}

/// What a step of driving work leaves.
fn drive(step: Result<Drive, PaymentError>, w: &Work) -> Result<Next, Left> {
    Ok(match step {
        Ok(Drive::Done) => Next::Close,
        Ok(Drive::Moved) => Next::Again,
        Ok(Drive::Waiting) => Next::Later,
        Err(e) => {
            tracing::warn!(intent = %w.intent, kind = w.kind.as_str(), error = %e, "driving step failed; trying again later");
            Next::Later
        }
    })
}

/// Logs a store error met while running `w`, and leaves its outcome to another path.
fn logged(w: &Work) -> impl Fn(StoreError) -> Left + '_ {
    move |e: StoreError| {
        tracing::error!(intent = %w.intent, kind = w.kind.as_str(), error = %e, "engine: reading or recording failed");
        Left
    }
}

/// The outcome was not recorded here: a new lease holder sends the work, or the watcher
/// records the fate of its journaled transaction.
#[derive(Debug)]
struct Left;

fn token_units(a: Amount) -> U256 {
    openrail_chain::token_units(a.minor(), a.currency())
}

/// What became of an operator call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sent {
    /// Its transaction was mined (succeeded or reverted). The submitter journaled its fate
    /// before answering, and the fate took effect in the same database transaction
    /// (`journal::apply_fates_in`): the object already shows it.
    Mined,
    /// No transaction carries it: the rows make no usable call (`None` input), or it was
    /// refused with no live transaction left. The caller records the failure.
    Unsent,
}

/// Sends an operator call to contract `to` (the object's work says which: the allowance
/// state machine, the attestation registry or its mirror) as the one transaction `w` sends.
async fn send(
    store: &Store,
    net: &Network,
    to: Result<Address, ChainError>,
    input: Option<Bytes>,
    w: &Work,
) -> Result<Sent, Left> {
    let (Some(input), Some(kind)) = (input, w.kind.tx_kind()) else {
        tracing::error!(intent = %w.intent, kind = w.kind.as_str(), "rows make no usable call");
        return Ok(Sent::Unsent);
    };
    let sent = match (net.submitter(), to) {
        (Some(s), Ok(asm)) => s.call_raw(asm, input, kind, &w.intent).await,
        (None, _) => Err(ChainError::LeaseLost),
        (_, Err(e)) => Err(e),
    };
    match sent {
        Ok(m) => {
            if !m.success {
                tracing::error!(intent = %w.intent, kind = w.kind.as_str(), tx = %m.tx_hash, "operator transaction reverted");
            }
            // The submitter journaled this fate before answering, and it took effect with
            // it. Had that write failed (logged there), the transaction would still read
            // `signed`: record the fate here, so the work never closes on an object its
            // fate did not move.
            match store.outbox().journaled_status(&w.intent, kind).await {
                Ok(Some(TxStatus::Signed)) => {
                    let fate = if m.success {
                        TxStatus::Succeeded
                    } else {
                        TxStatus::Reverted
                    };
                    let hash = m.tx_hash.to_string();
                    if let Err(e) = store
                        .journal()
                        .mark(net.chain_id, &hash, fate, Some(m.block_number), now_ms())
                        .await
                    {
                        tracing::error!(intent = %w.intent, tx = %hash, error = %e, "recording a mined transaction's fate failed; left to recovery");
                        return Err(Left);
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::error!(intent = %w.intent, error = %e, "reading a mined transaction's fate failed; left to recovery");
                    return Err(Left);
                }
            }
            Ok(Sent::Mined)
        }
        Err(ChainError::LeaseLost) => Err(Left),
        Err(e) => {
            // A transaction journaled for the work and not refused may still be mined (or
            // is, and its receipt was missed): its fate takes effect when it is recorded
            // (from its receipt at the submitter's next start, or by the watcher from its
            // block). Only work with no live transaction has failed.
            match store.outbox().journaled_status(&w.intent, kind).await {
                Ok(Some(TxStatus::Signed | TxStatus::Succeeded)) => {
                    tracing::warn!(intent = %w.intent, kind = w.kind.as_str(), error = %e, "outcome unknown; left to its fate");
                    Err(Left)
                }
                Ok(_) => {
                    tracing::error!(intent = %w.intent, kind = w.kind.as_str(), error = %e, "operator transaction failed");
                    Ok(Sent::Unsent)
                }
                Err(se) => {
                    tracing::error!(intent = %w.intent, error = %e, store_error = %se, "outcome unknown; left pending");
                    Err(Left)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driving_steps_map_to_what_becomes_of_the_work() {
        let w = Work {
            seq: 1,
            intent: Intent::Payment(openrail_domain::PaymentId::parse("pay_test").expect("an id")),
            kind: WorkKind::DrivePayment,
        };
        assert_eq!(drive(Ok(Drive::Done), &w).ok(), Some(Next::Close));
        assert_eq!(drive(Ok(Drive::Moved), &w).ok(), Some(Next::Again));
        assert_eq!(drive(Ok(Drive::Waiting), &w).ok(), Some(Next::Later));
        // A failed step is tried again later, never dropped.
        let failed = Err(PaymentError::Store(StoreError::NotFound));
        assert_eq!(drive(failed, &w).ok(), Some(Next::Later));
        assert_eq!(corrupt(&w), Next::Close);
    }
}
