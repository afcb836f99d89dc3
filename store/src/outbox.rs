//! The transactional outbox: what must be sent on chain. A request writes its object and
//! the row saying what to send in one database transaction and sends nothing; the chain's
//! lease holder claims queued rows ([`Outbox::queued`]), sends them, records the
//! outcome and closes the row. Whatever process accepted a request, and whatever crashed
//! in between, the work is in the database until it is done.
//!
//! A row whose transaction is journaled is never claimed again: the journal (fenced by the
//! chain's lease) is what makes a send happen at most once; a journaled transaction's
//! fate, whoever records it (its sender, the next sender at start-up, the watcher), closes
//! its work and takes effect in the same database transaction (see
//! [`crate::journal::apply_fates_in`]).
//!
//! A row's `intent` is an [`Intent`]'s text: the object the work is for (`man_…`, `sk_…`,
//! `pull_…`, `pay_…`, `att_…`), the same text as the journaled transaction that does the
//! work carries. It is converted to and from text only here, at the SQL.

use crate::db::{Store, StoreError};
use crate::exec::{Exec, Record, Stmt};
use crate::ids::Mode;
use openrail_domain::journal::{Intent, TxKind};
use openrail_domain::{MandateId, SessionKeyId};

/// Work queued for a chain, and the journal's view of it (`store.outbox()`).
#[derive(Debug, Clone, Copy)]
pub struct Outbox<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on work queued for a chain, and the journal's view of it ([`Outbox`]).
    pub fn outbox(&self) -> Outbox<'_> {
        Outbox(self)
    }
}

pub use openrail_domain::journal::WorkKind;

/// One queued row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Work {
    /// Queue order.
    pub seq: i64,
    /// The object it is for.
    pub intent: Intent,
    /// What to do for it.
    pub kind: WorkKind,
}

/// Queues `kind` for `intent` on `chain_id` (once: an open row for the same intent and
/// kind stays the only one). Inside the transaction that writes the object.
pub(crate) async fn enqueue(
    conn: &mut impl Exec,
    intent: &Intent,
    kind: WorkKind,
    chain_id: u64,
    mode: Mode,
    now: i64,
) -> Result<(), StoreError> {
    let q = Stmt::new(
        conn.backend(),
        "INSERT INTO outbox (intent, kind, chain_id, mode, created_at) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (intent, kind) WHERE done_at IS NULL DO NOTHING"
            .into(),
    )
    .bind(intent)
    .bind(kind.as_str())
    .bind(i64::try_from(chain_id).unwrap_or(i64::MAX))
    .bind(mode.as_str())
    .bind(now);
    conn.execute(&q).await?;
    Ok(())
}

/// Most rows one statement writes.
const ROWS_PER_STATEMENT: usize = 500;

/// Queues work for many intents (as [`enqueue`] each): `(intent, kind, chain_id, mode,
/// now)`, in their order.
pub(crate) async fn enqueue_all(
    conn: &mut impl Exec,
    work: &[(Intent, WorkKind, u64, Mode, i64)],
) -> Result<(), StoreError> {
    for chunk in work.chunks(ROWS_PER_STATEMENT) {
        let mut q = Stmt::new(
            conn.backend(),
            format!(
                "INSERT INTO outbox (intent, kind, chain_id, mode, created_at) VALUES {} \
                 ON CONFLICT (intent, kind) WHERE done_at IS NULL DO NOTHING",
                crate::sql::placeholders(chunk.len(), 5)
            ),
        );
        for (intent, kind, chain_id, mode, now) in chunk {
            q.push(intent)
                .push(kind.as_str())
                .push(i64::try_from(*chain_id).unwrap_or(i64::MAX))
                .push(mode.as_str())
                .push(*now);
        }
        conn.execute(&q).await?;
    }
    Ok(())
}

/// Closes the open `kind` rows of `intents` at `now` (as [`close`] each).
pub(crate) async fn close_all(
    conn: &mut impl Exec,
    intents: &[Intent],
    kind: WorkKind,
    now: i64,
) -> Result<(), StoreError> {
    for chunk in intents.chunks(ROWS_PER_STATEMENT) {
        let mut q = Stmt::new(
            conn.backend(),
            format!(
                "UPDATE outbox SET done_at = $1 WHERE kind = $2 AND done_at IS NULL AND intent IN ({})",
                crate::sql::numbered(3, chunk.len())
            ),
        );
        q.push(now).push(kind.as_str());
        for intent in chunk {
            q.push(intent);
        }
        conn.execute(&q).await?;
    }
    Ok(())
}

/// Closes the open row of `intent` and `kind`, if any, at `now`.
pub(crate) async fn close(
    conn: &mut impl Exec,
    intent: &Intent,
    kind: WorkKind,
    now: i64,
) -> Result<(), StoreError> {
    let q = Stmt::new(
        conn.backend(),
        "UPDATE outbox SET done_at = $3 WHERE intent = $1 AND kind = $2 AND done_at IS NULL".into(),
    )
    .bind(intent)
    .bind(kind.as_str())
    .bind(now);
    conn.execute(&q).await?;
    Ok(())
}

/// The chain of mandate `mandate_id`.
pub(crate) async fn chain_of(
    conn: &mut impl Exec,
    mandate_id: &MandateId,
) -> Result<u64, StoreError> {
    let q = Stmt::new(
        conn.backend(),
        "SELECT chain_id FROM mandates WHERE id = $1".into(),
    )
    .bind(mandate_id.as_str());
    let row = conn.fetch_one(&q).await?;
    Ok(u64::try_from(row.integer("chain_id")?).unwrap_or_default())
}

impl Outbox<'_> {
    /// Open rows of `chain_id` and `mode` due at `now` whose transaction is not journaled,
    /// oldest first (at most `limit`). Driving work ([`WorkKind::DrivePayment`],
    /// [`WorkKind::Payout`]) journals transactions of another kind and stays claimable until
    /// it is closed; it is due again after [`Outbox::defer`].
    pub async fn queued(
        self,
        chain_id: u64,
        mode: Mode,
        now: i64,
        limit: u32,
    ) -> Result<Vec<Work>, StoreError> {
        let q = self
            .0
            .stmt(format!(
                "SELECT o.seq, o.intent, o.kind FROM outbox o WHERE o.chain_id = $1 AND o.mode = $2 \
                 AND o.done_at IS NULL AND (o.due_at IS NULL OR o.due_at <= $3) \
                 AND NOT EXISTS (SELECT 1 FROM chain_tx_intents i \
                 JOIN chain_txs t ON t.hash = i.hash WHERE i.intent = o.intent AND t.kind = o.kind) \
                 ORDER BY o.seq LIMIT {limit}"
            ))
            .bind(i64::try_from(chain_id).unwrap_or(i64::MAX))
            .bind(mode.as_str())
            .bind(now);
        let rows = self.0.fetch(&q).await?;
        rows.iter()
            .map(|r| {
                let kind = r.string("kind")?;
                Ok(Work {
                    seq: r.integer("seq")?,
                    intent: r.intent("intent")?,
                    kind: WorkKind::parse(&kind)
                        .ok_or_else(|| StoreError::Corrupt(format!("outbox kind {kind:?}")))?,
                })
            })
            .collect()
    }

    /// Which of `intents` a journaled `kind` transaction carries (whatever its status):
    /// the engine's last check before it sends, against a read of queued work that went
    /// stale while an earlier pass sent the same intent.
    pub async fn journaled_intents(
        self,
        intents: &[Intent],
        kind: TxKind,
    ) -> Result<std::collections::HashSet<Intent>, StoreError> {
        let mut found = std::collections::HashSet::new();
        for chunk in intents.chunks(500) {
            let sql = format!(
                "SELECT DISTINCT i.intent FROM chain_tx_intents i JOIN chain_txs t ON t.hash = i.hash \
                 WHERE t.kind = $1 AND i.intent IN ({})",
                crate::sql::numbered(2, chunk.len())
            );
            let mut q = self.0.stmt(sql).bind(kind.as_str());
            for intent in chunk {
                q.push(intent);
            }
            for r in self.0.fetch(&q).await? {
                found.insert(r.intent("intent")?);
            }
        }
        Ok(found)
    }

    /// Whether `intent` still has open `kind` work (queued, or sent and not yet recorded).
    pub async fn is_open(self, intent: &Intent, kind: WorkKind) -> Result<bool, StoreError> {
        let q = self
            .0
            .stmt("SELECT 1 FROM outbox WHERE intent = $1 AND kind = $2 AND done_at IS NULL")
            .bind(intent)
            .bind(kind.as_str());
        Ok(self.0.fetch_optional(&q).await?.is_some())
    }

    /// The journal status of the newest `kind` transaction carrying `intent`, if any.
    pub async fn journaled_status(
        self,
        intent: &Intent,
        kind: TxKind,
    ) -> Result<Option<openrail_domain::journal::TxStatus>, StoreError> {
        let q = self
            .0
            .stmt(format!(
                "SELECT t.status FROM chain_tx_intents i JOIN chain_txs t ON t.hash = i.hash \
                 WHERE i.intent = $1 AND t.kind = $2 ORDER BY {LIVE_FIRST}, t.created_at DESC LIMIT 1",
                LIVE_FIRST = crate::sql::LIVE_FIRST
            ))
            .bind(intent)
            .bind(kind.as_str());
        let row = self.0.fetch_optional(&q).await?;
        row.map(|r| {
            let s = r.string("status")?;
            openrail_domain::journal::TxStatus::parse(&s)
                .ok_or_else(|| StoreError::Corrupt(format!("journal status {s:?}")))
        })
        .transpose()
    }

    /// The hash of the succeeded transaction of `kind` carrying `intent`, when there is one.
    pub async fn succeeded_tx(
        self,
        intent: &Intent,
        kind: TxKind,
    ) -> Result<Option<String>, StoreError> {
        let q = self
            .0
            .stmt(
                "SELECT t.hash FROM chain_tx_intents i JOIN chain_txs t ON t.hash = i.hash \
                 WHERE i.intent = $1 AND t.kind = $2 AND t.status = 'succeeded' \
                 ORDER BY t.created_at DESC LIMIT 1",
            )
            .bind(intent)
            .bind(kind.as_str());
        let row = self.0.fetch_optional(&q).await?;
        row.map(|r| r.string("hash")).transpose()
    }

    /// Closes the open row of `intent` and `kind` at `now` (its outcome is recorded).
    pub async fn close(self, intent: &Intent, kind: WorkKind, now: i64) -> Result<(), StoreError> {
        let intent = intent.clone();
        self.0
            .write(move |mut tx| Box::pin(async move { close(&mut tx, &intent, kind, now).await }))
            .await
    }

    /// Makes the open row of `intent` and `kind` due again only at `due_at` (driving work
    /// waiting for a bank transfer or a confirmation).
    pub async fn defer(
        self,
        intent: &Intent,
        kind: WorkKind,
        due_at: i64,
    ) -> Result<(), StoreError> {
        let q = self
            .0
            .stmt(
                "UPDATE outbox SET due_at = $3 WHERE intent = $1 AND kind = $2 AND done_at IS NULL",
            )
            .bind(intent)
            .bind(kind.as_str())
            .bind(due_at);
        self.0.execute(q).await?;
        Ok(())
    }

    /// Queues the cancel of active mandate `mandate_id` at `now`.
    pub async fn request_cancel(self, mandate_id: &MandateId, now: i64) -> Result<(), StoreError> {
        let intent = Intent::Mandate(mandate_id.clone());
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    enqueue_for(&mut tx, OF_MANDATE, &intent, WorkKind::CancelMandate, now).await
                })
            })
            .await
    }

    /// Queues the revoke of session key `key_id` at `now`.
    pub async fn request_revoke(self, key_id: &SessionKeyId, now: i64) -> Result<(), StoreError> {
        let intent = Intent::SessionKey(key_id.clone());
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    enqueue_for(&mut tx, OF_KEY, &intent, WorkKind::RevokeSessionKey, now).await
                })
            })
            .await
    }
}

/// The chain and mode of a mandate (`$1`: its id), for [`enqueue_for`].
pub(crate) const OF_MANDATE: &str = "SELECT chain_id, mode FROM mandates WHERE id = $1";

/// The chain and mode of a session key (`$1`: its id), for [`enqueue_for`].
pub(crate) const OF_KEY: &str = "SELECT m.chain_id, k.mode FROM session_keys k \
    JOIN mandates m ON m.id = k.mandate_id WHERE k.id = $1";

/// The chain and mode of a payment (`$1`: its id), for [`enqueue_for`].
pub(crate) const OF_PAYMENT: &str = "SELECT chain_id, mode FROM payments WHERE id = $1";

/// Queues `kind` for `intent`, whose chain and mode `lookup` reads (`$1`: the intent's
/// object id), inside the caller's transaction.
pub(crate) async fn enqueue_for(
    conn: &mut impl Exec,
    lookup: &'static str,
    intent: &Intent,
    kind: WorkKind,
    now: i64,
) -> Result<(), StoreError> {
    if enqueue_if(conn, lookup, intent, kind, now).await? {
        Ok(())
    } else {
        Err(StoreError::NotFound)
    }
}

/// Queues `kind` for `intent` when `lookup` finds its chain and mode; returns whether it
/// did. Inside the caller's transaction.
pub(crate) async fn enqueue_if(
    conn: &mut impl Exec,
    lookup: &'static str,
    intent: &Intent,
    kind: WorkKind,
    now: i64,
) -> Result<bool, StoreError> {
    let q = Stmt::new(conn.backend(), lookup.into()).bind(intent.object_id());
    let Some(row) = conn.fetch_optional(&q).await? else {
        return Ok(false);
    };
    let mode = row.string("mode")?;
    let mode = Mode::parse(&mode).ok_or_else(|| StoreError::Corrupt(format!("mode {mode:?}")))?;
    let chain_id = u64::try_from(row.integer("chain_id")?).unwrap_or_default();
    enqueue(conn, intent, kind, chain_id, mode, now).await?;
    Ok(true)
}
