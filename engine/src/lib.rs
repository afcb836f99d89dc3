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

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use alloy::primitives::{Address, B256, Bytes, U256, keccak256};
use alloy::sol_types::SolCall;
use openrail_chain::ChainError;
use openrail_chain::bindings::AllowanceStateMachine;
use openrail_chain::submitter::{AgentSignature, PullRequest};
use openrail_domain::PullId;
use openrail_domain::journal::Intent;
use openrail_store::agentic::{
    DebitPull, KeyStatus, Mandate, MandateStatus, PullResolution, PullStatus, SessionKey,
};
use openrail_store::consent::Authorization;
use openrail_store::journal::{TxKind, TxStatus};
use openrail_store::outbox::{Work, WorkKind};
use openrail_store::stages;
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
    let mut read = prefetch_pulls(&ctx.store, &fresh).await;
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
    let next = match (w.kind, &payments) {
        (WorkKind::Payment, Some(d)) => {
            if let Intent::Payment(id) = &w.intent {
                drive(d.drive_payment(id).await, &w)
            } else {
                Ok(corrupt(&w))
            }
        }
        // A payout's work is its pull's.
        (WorkKind::Payout, Some(d)) => {
            if let Intent::Pull(id) = &w.intent {
                drive(d.drive_payout(id).await, &w)
            } else {
                Ok(corrupt(&w))
            }
        }
        // No submitter (never so once `lead` started the engine): try later rather than
        // claim it again on every pass.
        (WorkKind::Payment | WorkKind::Payout, None) => Ok(Next::Later),
        // A resolved pull's work is closed with its status, in one transaction; the rest
        // is closed here.
        (WorkKind::Attest | WorkKind::RevokeAttestation, _) => {
            attestations::run(&store, &net, &w, w.kind == WorkKind::RevokeAttestation).await
        }
        (WorkKind::PullBatch, _) => deliver(&store, &net, &w, prefetched).await.map(|recorded| {
            pull = recorded;
            Next::Kept
        }),
        _ => deliver(&store, &net, &w, (None, None))
            .await
            .map(|_| Next::Close),
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

/// Closes `w`, whose intent is not the kind of object its work is for (see [`corrupt`]).
async fn close_corrupt(store: &Store, w: &Work) {
    corrupt(w);
    if let Err(e) = store.outbox().close(&w.intent, w.kind, now_ms()).await {
        tracing::error!(intent = %w.intent, error = %e, "closing corrupt work failed");
    }
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

/// The outcome was not recorded here: a new lease holder sends the work, or the watcher
/// records the fate of its journaled transaction.
#[derive(Debug)]
struct Left;

fn token_units(a: Amount) -> U256 {
    openrail_chain::token_units(a.minor(), a.currency())
}

/// What the engine read of the pulls it claimed together, in two queries (not two each).
#[derive(Debug, Default)]
struct Prefetched {
    /// The rows, by id (a pull missing here is read alone).
    pulls: HashMap<PullId, DebitPull>,
    /// Those a journaled `pull_batch` transaction already carries; `None` when that read
    /// failed (each pull is then checked alone).
    journaled: Option<HashSet<Intent>>,
}

/// The pulls of the `pull_batch` work in `work`, read after the work was marked in flight:
/// a pull an earlier pass resolved shows its new status, and one it journaled shows its
/// transaction, however stale the read of queued work was.
async fn prefetch_pulls(store: &Store, work: &[Work]) -> Prefetched {
    let ids: Vec<PullId> = work
        .iter()
        .filter(|w| w.kind == WorkKind::PullBatch)
        .filter_map(|w| {
            if let Intent::Pull(id) = &w.intent {
                Some(id.clone())
            } else {
                None
            }
        })
        .collect();
    let mut out = Prefetched {
        pulls: HashMap::with_capacity(ids.len()),
        journaled: Some(HashSet::new()),
    };
    if ids.is_empty() {
        return out;
    }
    let intents: Vec<Intent> = ids.iter().cloned().map(Intent::Pull).collect();
    out.journaled = match store
        .outbox()
        .journaled_intents(&intents, TxKind::PullBatch)
        .await
    {
        Ok(j) => Some(j),
        Err(e) => {
            tracing::warn!(error = %e, "reading the journal of claimed pulls failed");
            None
        }
    };
    for chunk in ids.chunks(500) {
        match store.pulls().get_many_unscoped(chunk).await {
            Ok(pulls) => out
                .pulls
                .extend(pulls.into_iter().map(|p| (p.id.clone(), p))),
            Err(e) => tracing::warn!(error = %e, "reading claimed pulls together failed"),
        }
    }
    out
}

/// Sends `w` and records its outcome; a pull's row may come read already. Returns the pull
/// as recorded, when `w` is a pull's work and its outcome was recorded here.
async fn deliver(
    store: &Store,
    net: &Network,
    w: &Work,
    // A pull's row, and whether a journaled transaction carries it, when already read.
    (prefetched, journaled): (Option<DebitPull>, Option<bool>),
) -> Result<Option<DebitPull>, Left> {
    let logged = |e: StoreError| {
        tracing::error!(intent = %w.intent, error = %e, "engine: reading or recording failed");
        Left
    };
    match w.kind {
        WorkKind::CreateMandate => {
            let Intent::Mandate(id) = &w.intent else {
                close_corrupt(store, w).await;
                return Ok(None);
            };
            let m = store.mandates().get_unscoped(id).await.map_err(logged)?;
            if m.status != MandateStatus::Pending {
                return Ok(None);
            }
            let auth = store.consent().get(m.id.as_str()).await.map_err(logged)?;
            let call = create_mandate_call(&m, net, auth.as_ref());
            if send(store, net, call, w).await? == Sent::Unsent {
                store
                    .mandates()
                    .fail_unsent(&m.id, now_ms())
                    .await
                    .map_err(logged)?;
            }
        }
        WorkKind::IssueSessionKey => {
            let Intent::SessionKey(id) = &w.intent else {
                close_corrupt(store, w).await;
                return Ok(None);
            };
            let k = store.keys().get_unscoped(id).await.map_err(logged)?;
            if k.status != KeyStatus::Pending {
                return Ok(None);
            }
            let m = store
                .mandates()
                .get_unscoped(&k.mandate_id)
                .await
                .map_err(logged)?;
            if send(store, net, issue_key_call(&k, &m), w).await? == Sent::Unsent {
                store
                    .keys()
                    .fail_unsent(&k.id, now_ms())
                    .await
                    .map_err(logged)?;
            }
        }
        WorkKind::CancelMandate => {
            let Intent::Mandate(id) = &w.intent else {
                close_corrupt(store, w).await;
                return Ok(None);
            };
            let m = store.mandates().get_unscoped(id).await.map_err(logged)?;
            let call = m.onchain_id.parse().ok().map(|mandate_id| {
                AllowanceStateMachine::cancelMandateCall {
                    mandateId: mandate_id,
                }
                .abi_encode()
                .into()
            });
            // Its fate, applied as the journal records it, cancels the mandate; one
            // never sent changes nothing.
            send(store, net, call, w).await?;
        }
        WorkKind::RevokeSessionKey => {
            let Intent::SessionKey(id) = &w.intent else {
                close_corrupt(store, w).await;
                return Ok(None);
            };
            let k = store.keys().get_unscoped(id).await.map_err(logged)?;
            let call = k.onchain_id.parse().ok().map(|key_id| {
                AllowanceStateMachine::revokeSessionKeyCall { keyId: key_id }
                    .abi_encode()
                    .into()
            });
            send(store, net, call, w).await?;
        }
        WorkKind::PullBatch => {
            let Intent::Pull(id) = &w.intent else {
                close_corrupt(store, w).await;
                return Ok(None);
            };
            let journaled = match journaled {
                Some(j) => j,
                None => store
                    .outbox()
                    .journaled_status(&w.intent, TxKind::PullBatch)
                    .await
                    .map_err(logged)?
                    .is_some(),
            };
            if journaled {
                // Sent already (by an earlier pass, or before a restart): its outcome comes
                // from that transaction, never from a second one.
                return Err(Left);
            }
            stages::mark("claimed", [id.as_str()]);
            let p = match prefetched {
                Some(p) => p,
                None => store.pulls().get_unscoped(id).await.map_err(logged)?,
            };
            if p.status != PullStatus::Pending {
                // Resolved by another path meanwhile; its work need not stay open.
                store
                    .outbox()
                    .close(&w.intent, w.kind, now_ms())
                    .await
                    .map_err(logged)?;
                return Ok(None);
            }
            let key_id = net
                .key_onchain_id(store, &p.session_key_id)
                .await
                .map_err(logged)?;
            let Some(request) = pull_request(&p, key_id) else {
                tracing::error!(pull = %p.id, "pull has an unusable destination or amount");
                store
                    .pulls()
                    .resolve(&p.id, &PullResolution::failed(), now_ms())
                    .await
                    .map_err(logged)?;
                return Ok(None);
            };
            return submit_and_record(store, net, &p.id, request).await;
        }
        WorkKind::MirrorAttested | WorkKind::MirrorRevoked => {
            let Intent::Attestation(id) = &w.intent else {
                close_corrupt(store, w).await;
                return Ok(None);
            };
            // The receipt the attestation chain's operator signed for this mirror; none
            // left to record when the mirror has it (or a later one) already.
            let Some(json) = store
                .attestations()
                .receipt_to_record(id.as_str())
                .await
                .map_err(logged)?
            else {
                return Ok(None);
            };
            let call = openrail_chain::attestations::SignedReceipt::from_json(&json)
                .map(|r| r.record_call().abi_encode().into());
            // Its fate, applied as the journal records it, marks the receipt recorded; a
            // receipt the mirror refused (a later one was there first) changes nothing.
            send(store, net, call, w).await?;
        }
        WorkKind::Attest | WorkKind::RevokeAttestation => {
            // Run by `attestations::run` from the engine's loop, never sent from here.
            tracing::error!(intent = %w.intent, "attestation work delivered as a send; ignored");
        }
        WorkKind::Payment | WorkKind::Payout => {
            // Driven step by step by the engine's loop, never sent from here.
            tracing::error!(intent = %w.intent, "driving work delivered as a send; ignored");
        }
    }
    Ok(None)
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

/// Sends an operator call to the allowance state machine (or, for an attestation's work,
/// to the attestation registry).
async fn send(store: &Store, net: &Network, input: Option<Bytes>, w: &Work) -> Result<Sent, Left> {
    let (Some(input), Some(kind)) = (input, w.kind.tx_kind()) else {
        tracing::error!(intent = %w.intent, kind = w.kind.as_str(), "rows make no usable call");
        return Ok(Sent::Unsent);
    };
    // Identity attestations go to the attestation chain's registry; the rest to the
    // allowance state machine.
    let to = match kind {
        TxKind::Attest | TxKind::RevokeAttestation => net.registry(),
        TxKind::MirrorAttested | TxKind::MirrorRevoked => net.mirror(),
        _ => net.state_machine(),
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

/// The transaction creating mandate `m` on `net`, from its rows (so a request and a resume
/// after a crash send the same): the operator's `createMandate` for a bank-funded mandate
/// (its payer is the treasury), else `createMandateWithSignature` with the payer's
/// signature. `None` when the rows are unusable or the payer has not signed.
pub(crate) fn create_mandate_call(
    m: &Mandate,
    net: &Network,
    auth: Option<&Authorization>,
) -> Option<Bytes> {
    let payees = m
        .payees
        .iter()
        .map(|p| p.parse().ok())
        .collect::<Option<Vec<Address>>>()?;
    let agent = match &m.agent {
        Some(a) => a.parse().ok()?,
        None => Address::ZERO,
    };
    let terms = openrail_chain::bindings::IAllowanceStateMachine::MandateTerms {
        salt: openrail_chain::consent::salt(m.id.as_str()),
        payer: m.payer_address.parse().ok()?,
        token: *net.tokens.get(&m.currency)?,
        maxAmount: token_units(Amount::from_minor(m.max_amount, m.currency)?),
        interval: m.interval.onchain(),
        payees,
        agent,
        purposeHash: keccak256(m.purpose.as_deref().unwrap_or_default().as_bytes()),
        requirements: identity::onchain(m.requirements.as_ref())?,
    };
    if m.is_bank_funded() {
        return Some(
            AllowanceStateMachine::createMandateCall { terms }
                .abi_encode()
                .into(),
        );
    }
    let a = auth?;
    let msg = consent::mandate_message(m, net, a)?;
    let signature: Bytes = a.signature.as_deref()?.parse().ok()?;
    Some(
        AllowanceStateMachine::createMandateWithSignatureCall {
            terms,
            nonce: msg.nonce,
            deadline: msg.deadline,
            signature,
        }
        .abi_encode()
        .into(),
    )
}

/// The transaction issuing session key `k` of mandate `m`, from their rows, the allow-list
/// without repeats (with the mandate's signed payees for the contract to check it against);
/// `None` when a row is unusable.
fn issue_key_call(k: &SessionKey, m: &Mandate) -> Option<Bytes> {
    let mut addresses: Vec<Address> = Vec::with_capacity(k.allowed_destinations.len());
    for d in &k.allowed_destinations {
        let a = d.parse().ok()?;
        if !addresses.contains(&a) {
            addresses.push(a);
        }
    }
    let payees = m
        .payees
        .iter()
        .map(|p| p.parse().ok())
        .collect::<Option<Vec<Address>>>()?;
    let max = match k.max_amount {
        Some(minor) => token_units(Amount::from_minor(minor, m.currency)?),
        None => U256::ZERO,
    };
    let signer = match &k.signer {
        Some(a) => a.parse().ok()?,
        None => Address::ZERO,
    };
    Some(
        AllowanceStateMachine::issueSessionKeyCall {
            terms: openrail_chain::bindings::IAllowanceStateMachine::KeyTerms {
                salt: openrail_chain::consent::salt(k.id.as_str()),
                mandateId: m.onchain_id.parse().ok()?,
                expiresAt: u64::try_from(k.expires_at / 1000).ok()?,
                maxAmount: max,
                allowedDestinations: addresses,
                signer,
            },
            payees,
        }
        .abi_encode()
        .into(),
    )
}

/// The pull request of pull `p` on key `key_id` (on chain), from its row; `None` when the
/// row is unusable.
fn pull_request(p: &DebitPull, key_id: B256) -> Option<PullRequest> {
    Some(PullRequest {
        pull: p.id.clone(),
        key_id,
        destination: p.destination_address.parse().ok()?,
        amount: token_units(Amount::from_minor(p.amount, p.currency)?),
        agent: match &p.agent {
            None => None,
            Some(a) => Some(AgentSignature {
                nonce: U256::from_str_radix(&a.nonce, 10).ok()?,
                deadline: U256::from(u64::try_from(a.deadline).ok()?),
                signature: a.signature.parse().ok()?,
            }),
        },
    })
}

/// Sends one pull through the submitter (batched with the others in flight) and records
/// its outcome; returns the pull as recorded (`None`: it was resolved by another path).
async fn submit_and_record(
    store: &Store,
    net: &Network,
    id: &PullId,
    request: PullRequest,
) -> Result<Option<DebitPull>, Left> {
    let sent = match (net.submitter(), net.state_machine()) {
        (Some(s), Ok(_)) => s.pull(request.clone()).await,
        (None, _) => Err(ChainError::LeaseLost),
        (_, Err(e)) => Err(e),
    };
    let resolution = match sent {
        Ok(outcome) => {
            stages::mark("mined", [id.as_str()]);
            let mut r = outcome.resolution(now_ms());
            if let (
                openrail_chain::submitter::PullOutcome::Declined {
                    reason: openrail_chain::submitter::Decline::TransferFailed,
                    ..
                },
                Some(asm),
            ) = (&outcome, net.allowance_state_machine)
            {
                let transfer = store.pulls().transfer(id).await.ok();
                r.decline_code = Some(
                    openrail_chain::diagnose::pull_transfer_failure(
                        &net.reader,
                        &net.tokens,
                        asm,
                        id,
                        transfer,
                    )
                    .await,
                );
            }
            r
        }
        Err(ChainError::LeaseLost) => {
            // Nothing was journaled or sent: the pull stays queued for the chain's new
            // lease holder.
            tracing::warn!(pull = %id, "pull left queued for the chain's new lease holder");
            return Err(Left);
        }
        Err(e) => {
            // A transaction journaled for the pull and not refused by the node may still be
            // mined (or is mined and its receipt was missed): the pull stays `pending` for
            // the watcher, and a restart rebroadcasts it. Only a pull with no live
            // transaction has failed.
            let intent = Intent::Pull(id.clone());
            match store.payments().tx_status_for_intent(&intent).await {
                Ok(Some(tx)) if matches!(tx.status, TxStatus::Signed | TxStatus::Succeeded) => {
                    tracing::warn!(pull = %id, error = %e, "pull outcome unknown; left pending for the watcher");
                    return Err(Left);
                }
                Ok(_) => tracing::error!(pull = %id, error = %e, "pull submission failed"),
                Err(se) => {
                    tracing::error!(pull = %id, error = %e, store_error = %se, "pull outcome unknown; left pending");
                    return Err(Left);
                }
            }
            PullResolution::failed()
        }
    };
    // Committed with the other outcomes, new pulls and fates that arrive meanwhile.
    let recorded = match store.pulls().record_outcome(id, resolution, now_ms()).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(pull = %id, error = %e, "recording pull outcome failed");
            return Err(Left);
        }
    };
    stages::mark("recorded", [id.as_str()]);
    Ok(recorded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::sol_types::SolCall;
    use openrail_domain::{MandateId, SessionKeyId};

    const PAYEE_A: &str = "0x1111111111111111111111111111111111111111";
    const PAYEE_B: &str = "0x2222222222222222222222222222222222222222";

    fn mandate() -> Mandate {
        let mut m = openrail_store::testing::active_mandate_row(
            &MandateId::parse("man_test").expect("an id"),
            &openrail_domain::AccountId::parse("acct_test").expect("an id"),
            Mode::Testnet,
            "0x3333333333333333333333333333333333333333",
            31337,
            0,
        );
        m.payees = vec![PAYEE_A.into(), PAYEE_B.into()];
        m.onchain_id = openrail_chain::consent::mandate_id(
            m.payer_address.parse().unwrap(),
            openrail_chain::consent::salt(m.id.as_str()),
        )
        .to_string();
        m
    }

    fn key(destinations: &[&str], max_amount: Option<u64>) -> SessionKey {
        SessionKey {
            id: SessionKeyId::parse("sk_test").expect("an id"),
            account_id: openrail_domain::AccountId::parse("acct_test").expect("an id"),
            mode: Mode::Testnet,
            mandate_id: MandateId::parse("man_test").expect("an id"),
            expires_at: 1_800_000_000_000,
            max_amount,
            allowed_destinations: destinations.iter().map(|d| d.to_string()).collect(),
            status: KeyStatus::Pending,
            onchain_id: B256::ZERO.to_string(),
            tx_hash: None,
            created_at: 0,
            signer: None,
        }
    }

    #[test]
    fn a_key_is_issued_with_its_allow_list_once_each_and_its_ceiling_in_token_units() {
        let (a, b) = (PAYEE_A, PAYEE_B);
        let m = mandate();
        let input = issue_key_call(&key(&[a, b, a], Some(250)), &m).expect("a call");
        let call = AllowanceStateMachine::issueSessionKeyCall::abi_decode(&input).expect("abi");
        let t = &call.terms;
        assert_eq!(
            t.allowedDestinations,
            vec![a.parse::<Address>().unwrap(), b.parse().unwrap()]
        );
        // The mandate's signed payees go with it, for the contract to check the list against.
        assert_eq!(call.payees, t.allowedDestinations);
        // 2.50 USD: 250 minor units, 2,500,000 token units (6 decimals).
        assert_eq!(t.maxAmount, U256::from(2_500_000u64));
        // The chain derives the key's id from its mandate's and the key's salt.
        assert_eq!(t.salt, openrail_chain::consent::salt("sk_test"));
        assert_eq!(t.mandateId.to_string(), m.onchain_id);
        assert_eq!(t.expiresAt, 1_800_000_000);
        assert_eq!(t.signer, Address::ZERO);
        // No ceiling of its own: zero, which the contract reads as "the mandate's".
        let input = issue_key_call(&key(&[], None), &m).expect("a call");
        let call = AllowanceStateMachine::issueSessionKeyCall::abi_decode(&input).expect("abi");
        assert_eq!(call.terms.maxAmount, U256::ZERO);
    }

    #[test]
    fn rows_that_make_no_usable_call_make_none() {
        assert!(issue_key_call(&key(&["not an address"], None), &mandate()).is_none());
        let mut m = mandate();
        m.payees.push("not an address".into());
        assert!(issue_key_call(&key(&[], None), &m).is_none());
    }

    #[test]
    fn driving_steps_map_to_what_becomes_of_the_work() {
        let w = Work {
            seq: 1,
            intent: Intent::Payment(openrail_domain::PaymentId::parse("pay_test").expect("an id")),
            kind: WorkKind::Payment,
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
