//! Events: every state change of an object with a lifecycle writes one `evt_` row **in the
//! same database transaction** as the change, so a change is never without its event and
//! an event never without its change, whatever crashes. The row holds a [`Snapshot`] — the
//! object and everything its representation is computed from (a mandate's epoch use, a
//! payer's authorization), each object's declared in its `rows` module — taken inside that
//! transaction after the change; the API renders `data.object` from it, so an event shows
//! the object as it was at that moment, never as it is now. The types
//! ([`EventType`], [`ObjectKind`]) are the domain's, each object's declared in its module.
//!
//! Order: events carry a sequence number assigned at insert. One object's changes are
//! serialized by its row (the conditional `UPDATE` that makes a change holds the row's
//! write lock until commit), so one object's events are in the order its states happened.
//! Across objects the sequence is the insert order, which under PostgreSQL may differ from
//! commit order by a few transactions in flight: a reader paging newest-first may see a
//! later sequence number before an earlier one commits.

use crate::db::{Store, StoreError};
use crate::exec::{Exec, Record, Stmt};
use crate::ids::Mode;
use crate::rows::agentic::DebitPull;
use crate::rows::{Page, Scope};
use openrail_domain::{AccountId, EventId};

/// Events, as read back (each change writes its own, in its transaction) (`store.events()`).
#[derive(Debug, Clone, Copy)]
pub struct Events<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on events as read back ([`Events`]).
    pub fn events(&self) -> Events<'_> {
        Events(self)
    }
}

pub use openrail_domain::{EventType, ObjectKind};

pub use crate::rows::Snapshot;
pub use crate::rows::snapshots::*;

/// One event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// `evt_…`
    pub id: EventId,
    /// Owner.
    pub account_id: AccountId,
    /// Mode of the object.
    pub mode: Mode,
    /// What happened.
    pub kind: EventType,
    /// The object's id.
    pub object_id: String,
    /// Unix ms.
    pub created_at: i64,
    /// The object at that moment.
    pub snapshot: Snapshot,
}

/// Which types a list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeFilter {
    /// Exactly this type.
    One(EventType),
    /// Every type of this kind of object (`debit_pull.*`).
    Object(ObjectKind),
}

/// Filters of an event list.
#[derive(Debug, Clone, Copy, Default)]
pub struct EventFilter<'a> {
    /// Types shown.
    pub kind: Option<TypeFilter>,
    /// Only events of this object.
    pub object_id: Option<&'a str>,
    /// Only events at or after this time (unix ms).
    pub created_gte: Option<i64>,
}

const EVENT_COLS: &str = "seq, id, account_id, mode, type, object_id, created_at, data";

fn event_of(r: &impl Record) -> Result<Event, StoreError> {
    let mode = r.string("mode")?;
    let kind = r.string("type")?;
    let data = r.string("data")?;
    Ok(Event {
        id: EventId::from_trusted(r.string("id")?),
        account_id: AccountId::from_trusted(r.string("account_id")?),
        mode: Mode::parse(&mode).ok_or_else(|| StoreError::Corrupt(format!("mode {mode:?}")))?,
        kind: EventType::parse(&kind)
            .ok_or_else(|| StoreError::Corrupt(format!("event type {kind:?}")))?,
        object_id: r.string("object_id")?,
        created_at: r.integer("created_at")?,
        snapshot: serde_json::from_str(&data)
            .map_err(|e| StoreError::Corrupt(format!("event data: {e}")))?,
    })
}

/// Records that `kind` happened to object `id` at `now` (unix ms). Call it inside the
/// transaction that made the change, after the change: the snapshot is read there.
pub(crate) async fn record(
    conn: &mut impl Exec,
    kind: EventType,
    id: &str,
    now: i64,
) -> Result<(), StoreError> {
    let (snapshot, account_id, mode) =
        crate::rows::snapshot_in(conn, kind.object(), id, now).await?;
    insert_all(
        conn,
        &[NewEvent {
            kind,
            object_id: id,
            account_id: &account_id,
            mode,
            snapshot,
            created_at: now,
        }],
    )
    .await
}

/// An event to write whose object's representation the caller already holds (it just
/// wrote or read the row in the same transaction).
#[derive(Debug)]
pub(crate) struct NewEvent<'a> {
    pub kind: EventType,
    pub object_id: &'a str,
    pub account_id: &'a AccountId,
    pub mode: Mode,
    pub snapshot: Snapshot,
    pub created_at: i64,
}

impl<'a> NewEvent<'a> {
    /// The `kind` event of pull `p` (of a mandate on `chain_id`) at `at`.
    pub(crate) fn of_pull(kind: EventType, p: &'a DebitPull, chain_id: u64, at: i64) -> Self {
        NewEvent {
            kind,
            object_id: p.id.as_str(),
            account_id: &p.account_id,
            mode: p.mode,
            snapshot: Snapshot::DebitPull(DebitPullSnapshot {
                debit_pull: p.clone(),
                chain_id,
            }),
            created_at: at,
        }
    }
}

/// Most events written by one statement.
const EVENTS_PER_INSERT: usize = 200;

/// Writes `events` in their order (so their `seq` follows it), a few statements for many.
pub(crate) async fn insert_all(
    conn: &mut impl Exec,
    events: &[NewEvent<'_>],
) -> Result<(), StoreError> {
    for chunk in events.chunks(EVENTS_PER_INSERT) {
        let mut q = Stmt::new(
            conn.backend(),
            format!(
                "INSERT INTO events (id, account_id, mode, type, object_id, created_at, data) VALUES {}",
                crate::sql::placeholders(chunk.len(), 7)
            ),
        );
        for e in chunk {
            let data = serde_json::to_string(&e.snapshot).map_err(|err| {
                StoreError::Corrupt(format!("snapshot of {}: {err}", e.object_id))
            })?;
            q.push(String::from(EventId::new()))
                .push(e.account_id.as_str())
                .push(e.mode.as_str())
                .push(e.kind.as_str())
                .push(e.object_id)
                .push(e.created_at)
                .push(data);
        }
        conn.execute(&q).await?;
    }
    Ok(())
}

impl Events<'_> {
    /// An event of this account and mode.
    pub async fn get(self, scope: Scope<'_>, id: &EventId) -> Result<Event, StoreError> {
        event_of(
            &self
                .0
                .scoped_row("events", EVENT_COLS, scope, id.as_str())
                .await?,
        )
    }

    /// Events of this account and mode, newest first.
    pub async fn list(
        self,
        scope: Scope<'_>,
        filter: EventFilter<'_>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<Event>, StoreError> {
        let limit = limit.clamp(1, 100);
        let before = match starting_after {
            None => None,
            Some(after) => {
                let q = self
                    .0
                    .stmt("SELECT seq FROM events WHERE id = $1 AND account_id = $2 AND mode = $3")
                    .bind(after)
                    .bind(scope.account_id.as_str())
                    .bind(scope.mode.as_str());
                let row = self
                    .0
                    .fetch_optional(&q)
                    .await?
                    .ok_or(StoreError::UnknownCursor)?;
                Some(row.integer("seq")?)
            }
        };
        let (type_sql, type_val) = match filter.kind {
            None => ("$4 IS NULL", None),
            Some(TypeFilter::One(t)) => ("type = $4", Some(t.as_str().to_string())),
            Some(TypeFilter::Object(o)) => {
                let prefix = match o {
                    ObjectKind::Mandate => "mandate.%",
                    ObjectKind::SessionKey => "session\\_key.%",
                    ObjectKind::DebitPull => "debit\\_pull.%",
                    ObjectKind::Payment => "payment.%",
                    ObjectKind::BankTransfer => "bank\\_account.transfer.%",
                    ObjectKind::WebhookEndpoint => "webhook\\_endpoint.%",
                    ObjectKind::IdentityVerification => "identity.verification.%",
                    ObjectKind::Attestation => "identity.attestation.%",
                };
                ("type LIKE $4 ESCAPE '\\'", Some(prefix.to_string()))
            }
        };
        let sql = format!(
            "SELECT {EVENT_COLS} FROM events WHERE account_id = $1 AND mode = $2 AND \
             ($3 IS NULL OR seq < $3) AND {type_sql} AND ($5 IS NULL OR object_id = $5) AND \
             ($6 IS NULL OR created_at >= $6) ORDER BY seq DESC LIMIT {}",
            limit + 1
        );
        let q = self
            .0
            .stmt(sql)
            .bind(scope.account_id.as_str())
            .bind(scope.mode.as_str())
            .bind(before)
            .bind(type_val)
            .bind(filter.object_id)
            .bind(filter.created_gte);
        let mut rows = self.0.fetch(&q).await?;
        let has_more = rows.len() > limit as usize;
        rows.truncate(limit as usize);
        Ok(Page {
            data: rows.iter().map(event_of).collect::<Result<_, _>>()?,
            has_more,
        })
    }

    /// The types of the events of object `id`, oldest first (any account: for checks and
    /// tests).
    pub async fn types_of(self, id: &str) -> Result<Vec<EventType>, StoreError> {
        let q = self
            .0
            .stmt("SELECT type FROM events WHERE object_id = $1 ORDER BY seq")
            .bind(id);
        let rows = self.0.fetch(&q).await?;
        rows.iter()
            .map(|r| {
                let t = r.string("type")?;
                EventType::parse(&t).ok_or_else(|| StoreError::Corrupt(format!("event type {t:?}")))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::money::Currency;
    use crate::rows::agentic::{EpochUse, Mandate};
    use openrail_domain::{MandateId, MandateStatus};

    #[test]
    fn a_snapshot_survives_its_json() {
        let m = Mandate {
            id: MandateId::parse("man_1").expect("an id"),
            account_id: AccountId::parse("acct_1").expect("an id"),
            mode: Mode::Testnet,
            payer_account_id: "ba_1".into(),
            payer_address: "0x0000000000000000000000000000000000000001".into(),
            currency: Currency::Eur,
            max_amount: 12_345,
            interval: crate::Interval::Weekly,
            purpose: None,
            payees: Vec::new(),
            agent: None,
            requirements: None,
            status: MandateStatus::Active,
            chain_id: 31337,
            contract: "0x0000000000000000000000000000000000000002".into(),
            onchain_id: "0x00".into(),
            tx_hash: Some("0xab".into()),
            created_at: 1,
        };
        let snap = Snapshot::Mandate(MandateSnapshot {
            mandate: m,
            current_epoch: EpochUse {
                starts_at: 0,
                ends_at: 604_800,
                spent: 5,
                remaining: 12_340,
            },
            authorization: None,
        });
        let json = serde_json::to_string(&snap).unwrap();
        assert_eq!(serde_json::from_str::<Snapshot>(&json).unwrap(), snap);
    }
}
