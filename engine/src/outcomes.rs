//! Wakes: a request of this process waiting for its work (by the work's [`Intent`]), and
//! this process's engine when a request queued work. Other processes are not woken; they
//! poll the database.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use openrail_domain::PullId;
use openrail_domain::journal::Intent;
use openrail_store::agentic::DebitPull;
use openrail_store::outbox::WorkKind;
use tokio::sync::mpsc;

use crate::Inflight;

use tokio::sync::{Notify, watch};

/// What this process's engine last told the requests waiting for an intent.
#[derive(Debug, Clone)]
pub(crate) enum Wake {
    /// Nothing yet.
    Waiting,
    /// A step was taken (driving work moved, or the work was left to another process):
    /// ask the database.
    Stepped,
    /// The work's outcome is recorded and the work closed, in the database already; for a
    /// pull, with the row as recorded (so its request need not read it again).
    Recorded(Option<Arc<DebitPull>>),
}

/// Wakes requests waiting for their work (in this process; others poll the database).
#[derive(Debug, Default)]
pub struct Outcomes {
    waiting: Mutex<HashMap<Intent, watch::Sender<Wake>>>,
    /// Wakes the engine when a request of this process queued work.
    pub(crate) wake: Notify,
    /// This process's engine, once it runs: where a request hands the pull it wrote, and
    /// the engine's set of taken work.
    inbox: OnceLock<(mpsc::UnboundedSender<DebitPull>, Inflight)>,
}

impl Outcomes {
    pub(crate) fn watch(&self, intent: &Intent) -> watch::Receiver<Wake> {
        let mut w = self.waiting.lock().expect("outcomes lock");
        w.entry(intent.clone())
            .or_insert_with(|| watch::channel(Wake::Waiting).0)
            .subscribe()
    }

    /// Tells the requests waiting for `intent` that its outcome is recorded and its work
    /// closed (committed before this call), with the pull as recorded when it is one.
    pub(crate) fn recorded(&self, intent: &Intent, pull: Option<DebitPull>) {
        let tx = self.waiting.lock().expect("outcomes lock").remove(intent);
        if let Some(tx) = tx {
            tx.send_replace(Wake::Recorded(pull.map(Arc::new)));
        }
    }

    /// Wakes the requests waiting for `intent` without ending their wait: driving work took
    /// a step and stays open.
    pub(crate) fn moved(&self, intent: &Intent) {
        if let Some(tx) = self.waiting.lock().expect("outcomes lock").get(intent) {
            tx.send_replace(Wake::Stepped);
        }
    }

    pub(crate) fn forget(&self, intent: &Intent) {
        let mut w = self.waiting.lock().expect("outcomes lock");
        if w.get(intent).is_some_and(|tx| tx.receiver_count() == 0) {
            w.remove(intent);
        }
    }

    /// Tells this process's engine that work was queued.
    pub fn queued(&self) {
        self.wake.notify_one();
    }

    /// Opens the engine's inbox (once per process: a process runs at most one engine per
    /// network, from taking the lease until it exits).
    pub(crate) fn open_inbox(&self, inbox: mpsc::UnboundedSender<DebitPull>, inflight: Inflight) {
        if self.inbox.set((inbox, inflight)).is_err() {
            tracing::warn!("a second engine inbox was ignored");
        }
    }

    /// Takes pull `id`'s work for this process's engine before its row is written, so that
    /// no read of the queued work claims it; `false` when this process runs no engine.
    /// Follow with [`Outcomes::hand_off`] once written, or [`Outcomes::release`].
    pub(crate) fn claim(&self, id: &PullId) -> bool {
        match self.inbox.get() {
            Some((_, inflight)) => {
                inflight
                    .lock()
                    .expect("inflight lock")
                    .insert((Intent::Pull(id.clone()), WorkKind::PullBatch));
                true
            }
            None => false,
        }
    }

    /// Gives a claimed pull, now committed, to this process's engine to send; whether the
    /// engine took it (it then tells the pull's waiters how its run ended).
    pub(crate) fn hand_off(&self, pull: DebitPull) -> bool {
        let Some((inbox, _)) = self.inbox.get() else {
            return false;
        };
        let id = pull.id.clone();
        if inbox.send(pull).is_err() {
            // The engine stopped (this process is exiting): the work stays queued in
            // the database for the chain's next lease holder.
            self.release(&id);
            return false;
        }
        true
    }

    /// Gives up a claim whose pull was not written.
    pub(crate) fn release(&self, id: &PullId) {
        if let Some((_, inflight)) = self.inbox.get() {
            inflight
                .lock()
                .expect("inflight lock")
                .remove(&(Intent::Pull(id.clone()), WorkKind::PullBatch));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openrail_domain::{AccountId, MandateId, SessionKeyId};
    use openrail_store::testing::pending_pull_row;

    fn pull(id: &str) -> DebitPull {
        pending_pull_row(
            &PullId::parse(id).expect("an id"),
            &AccountId::parse("acct_test").expect("an id"),
            &SessionKeyId::parse("sk_test").expect("an id"),
            &MandateId::parse("man_test").expect("an id"),
            100,
            "0x0707070707070707070707070707070707070707",
        )
    }

    fn taken(inflight: &Inflight, id: &str) -> bool {
        inflight.lock().expect("inflight lock").contains(&(
            Intent::Pull(PullId::parse(id).expect("an id")),
            WorkKind::PullBatch,
        ))
    }

    #[test]
    fn without_an_engine_nothing_is_claimed() {
        let o = Outcomes::default();
        assert!(!o.claim(&PullId::parse("pull_a").expect("an id")));
        // Neither panics nor goes anywhere.
        assert!(!o.hand_off(pull("pull_a")));
        o.release(&PullId::parse("pull_a").expect("an id"));
    }

    #[tokio::test]
    async fn a_claimed_pull_is_taken_until_released_and_a_handed_one_reaches_the_engine() {
        let o = Outcomes::default();
        let (inbox, mut engine) = mpsc::unbounded_channel();
        let inflight = Inflight::default();
        o.open_inbox(inbox, inflight.clone());
        let (a, b) = (
            PullId::parse("pull_a").expect("an id"),
            PullId::parse("pull_b").expect("an id"),
        );
        // Claimed before it is written: a read of the queued work would skip it.
        assert!(o.claim(&a) && o.claim(&b));
        assert!(taken(&inflight, "pull_a") && taken(&inflight, "pull_b"));
        // Written: handed to the engine, still taken (the engine releases it when done).
        assert!(o.hand_off(pull("pull_a")));
        assert_eq!(engine.recv().await.map(|p| p.id), Some(a));
        assert!(taken(&inflight, "pull_a"));
        // Not written: released, so the queue's reader may take it.
        o.release(&b);
        assert!(!taken(&inflight, "pull_b"));
        // An engine that stopped releases what it is handed.
        drop(engine);
        assert!(o.claim(&PullId::parse("pull_c").expect("an id")));
        assert!(!o.hand_off(pull("pull_c")));
        assert!(!taken(&inflight, "pull_c"));
    }
}
