//! Wakes: a request of this process waiting for its work, and this process's engine when a
//! request queued work. Other processes are not woken; they poll the database.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::{Notify, watch};

/// What this process's engine last told the requests waiting for an intent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wake {
    /// Nothing yet.
    Waiting,
    /// A step was taken (driving work moved, or the work was left to another process):
    /// ask the database.
    Stepped,
    /// The work's outcome is recorded and the work closed, in the database already.
    Recorded,
}

/// Wakes requests waiting for their work (in this process; others poll the database).
#[derive(Debug, Default)]
pub struct Outcomes {
    waiting: Mutex<HashMap<String, watch::Sender<Wake>>>,
    /// Wakes the engine when a request of this process queued work.
    pub(crate) wake: Notify,
}

impl Outcomes {
    pub(crate) fn watch(&self, intent: &str) -> watch::Receiver<Wake> {
        let mut w = self.waiting.lock().expect("outcomes lock");
        w.entry(intent.to_string())
            .or_insert_with(|| watch::channel(Wake::Waiting).0)
            .subscribe()
    }

    /// Tells the requests waiting for `intent` that its outcome is recorded and its work
    /// closed (committed before this call).
    pub(crate) fn recorded(&self, intent: &str) {
        let tx = self.waiting.lock().expect("outcomes lock").remove(intent);
        if let Some(tx) = tx {
            tx.send_replace(Wake::Recorded);
        }
    }

    /// Wakes the requests waiting for `intent` without ending their wait: driving work took
    /// a step and stays open.
    pub(crate) fn moved(&self, intent: &str) {
        if let Some(tx) = self.waiting.lock().expect("outcomes lock").get(intent) {
            tx.send_replace(Wake::Stepped);
        }
    }

    pub(crate) fn forget(&self, intent: &str) {
        let mut w = self.waiting.lock().expect("outcomes lock");
        if w.get(intent).is_some_and(|tx| tx.receiver_count() == 0) {
            w.remove(intent);
        }
    }

    /// Tells this process's engine that work was queued.
    pub fn queued(&self) {
        self.wake.notify_one();
    }
}
