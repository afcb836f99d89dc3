//! Webhooks: endpoints (where an account's events of one mode go, with their signing
//! secrets), deliveries (one row per event and endpoint, pending until an attempt gets a
//! 2xx or the retry schedule is spent) and the fan-out that writes deliveries from the
//! events table.
//!
//! The fan-out reads events by `seq` from a cursor per mode and writes the deliveries of
//! a batch of events and the cursor's new position in one transaction, so a crash loses
//! no event and a restart re-reads at most what it had not committed (re-writing a
//! delivery is a no-op: one fan-out row per endpoint and event). Under PostgreSQL an
//! event's `seq` is taken at insert and may commit after a higher one; [`Fanout`] keeps
//! the cursor below such *gaps* until they fill or a grace period passes (a rolled-back
//! insert leaves a gap that never fills).
//!
//! Secrets are stored as given: the server signs with them, so unlike API keys they
//! cannot be kept as hashes. They are never returned after creation or rotation.

use crate::exec::{Exec, Record, Stmt};
use std::collections::BTreeMap;

use base64::Engine;
use rand::RngCore;

use crate::db::{Store, StoreError};
use crate::events::{self, EventType};
use crate::ids::Mode;
pub(crate) use crate::rows::webhooks::{ENDPOINT_COLS, endpoint_of};
pub use crate::rows::webhooks::{EndpointStatus, WebhookEndpoint};
use crate::rows::{Page, Scope};
pub use openrail_domain::EnabledEvents;
use openrail_domain::{AccountId, EventId, WebhookDeliveryId, WebhookEndpointId};

/// Webhook endpoints, the fan-out of events and the deliveries (`store.webhooks()`).
#[derive(Debug, Clone, Copy)]
pub struct Webhooks<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on webhook endpoints, the fan-out of events and the deliveries ([`Webhooks`]).
    pub fn webhooks(&self) -> Webhooks<'_> {
        Webhooks(self)
    }
}

string_enum!(
    /// Where a delivery stands.
    DeliveryStatus {
        /// Not yet answered with a 2xx; retried on schedule.
        Pending = "pending",
        /// An attempt got a 2xx.
        Succeeded = "succeeded",
        /// The retry schedule is spent.
        Failed = "failed",
    }
);

/// What [`EndpointStatus::Disabled`] endpoints say when the failures disabled them.
pub const DISABLED_FAILING: &str = "failing";

impl WebhookEndpoint {
    /// A new enabled endpoint of `account_id` in `mode`, created at `now`, with a new id.
    pub fn new(
        account_id: &AccountId,
        mode: Mode,
        url: String,
        description: Option<String>,
        enabled_events: EnabledEvents,
        now: i64,
    ) -> Self {
        Self {
            id: WebhookEndpointId::new(),
            account_id: account_id.clone(),
            mode,
            url,
            description,
            enabled_events,
            status: EndpointStatus::Enabled,
            disabled_reason: None,
            failing_since: None,
            previous_secret_expires_at: None,
            created_at: now,
            updated_at: now,
        }
    }

    /// Whether events of type `t` go to this endpoint.
    pub fn wants(&self, t: EventType) -> bool {
        self.enabled_events.wants(t)
    }
}

/// A new signing secret: `whsec_` and the base64 of 32 random bytes.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// The secrets that sign a delivery now: the current one, and the previous one while its
/// overlap after a rotation lasts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secrets {
    /// The current secret (`whsec_…`).
    pub current: String,
    /// The secret before the last rotation, until its overlap ends.
    pub previous: Option<String>,
}

/// A change to an endpoint; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct EndpointChange {
    /// New URL.
    pub url: Option<String>,
    /// New event types.
    pub enabled_events: Option<EnabledEvents>,
    /// New description (`Some(None)` clears it).
    pub description: Option<Option<String>>,
    /// Enable (clears the failure record) or disable.
    pub enabled: Option<bool>,
}

/// One delivery of an event to an endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// `whd_…`
    pub id: WebhookDeliveryId,
    /// The endpoint.
    pub endpoint_id: WebhookEndpointId,
    /// The event (also the `webhook-id` header of every attempt).
    pub event_id: EventId,
    /// Whether it was asked for by `POST /v1/events/{id}/redeliver`.
    pub redelivery: bool,
    /// Pending, succeeded or failed.
    pub status: DeliveryStatus,
    /// Attempts made.
    pub attempts: i64,
    /// Unix ms of the next attempt, while pending.
    pub next_attempt_at: Option<i64>,
    /// Unix ms of the last attempt.
    pub last_attempt_at: Option<i64>,
    /// HTTP status of the last attempt's answer, if one came.
    pub last_status_code: Option<i64>,
    /// Why the last attempt failed without an answer (timeout, refused address, …).
    pub last_error: Option<String>,
    /// How long the last attempt took, ms.
    pub last_latency_ms: Option<i64>,
    /// Unix ms.
    pub created_at: i64,
}

/// A delivery due for an attempt, with what sending it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueDelivery {
    /// The delivery.
    pub id: WebhookDeliveryId,
    /// Its endpoint.
    pub endpoint_id: WebhookEndpointId,
    /// The endpoint's URL.
    pub url: String,
    /// The event.
    pub event_id: EventId,
    /// The event's account.
    pub account_id: AccountId,
    /// Attempts made before this one.
    pub attempts: i64,
}

/// The outcome of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// Whether the endpoint answered 2xx.
    pub delivered: bool,
    /// The HTTP status, if an answer came.
    pub status_code: Option<u16>,
    /// Why it failed without an answer.
    pub error: Option<String>,
    /// How long it took, ms.
    pub latency_ms: i64,
    /// When to try again (unix ms) after a failure; `None`: the schedule is spent.
    pub retry_at: Option<i64>,
}

/// What recording an attempt did beyond the delivery itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recorded {
    /// The endpoint had failed for longer than allowed and is now disabled (its
    /// `webhook_endpoint.disabled` event is written).
    pub endpoint_disabled: bool,
}

/// The head of an event, as the fan-out reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventHead {
    /// Its sequence number.
    pub seq: i64,
    /// `evt_…`
    pub id: EventId,
    /// Owner.
    pub account_id: AccountId,
    /// Mode.
    pub mode: Mode,
    /// Type.
    pub kind: EventType,
    /// Unix ms.
    pub created_at: i64,
}

/// Where the fan-out of one mode stands: the highest sequence number read (`high`) and
/// the numbers below it not yet seen (*gaps*: an insert that has not committed yet, or
/// one rolled back), with when each was first noticed. The durable cursor stays below
/// the oldest gap until the gap fills or `grace` passes. Sans-IO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fanout {
    high: i64,
    gaps: BTreeMap<i64, i64>,
    grace_ms: i64,
}

/// Most gaps tracked; beyond it the oldest are given up (a flood of rollbacks).
const MAX_GAPS: usize = 10_000;

impl Fanout {
    /// From the durable cursor `cursor` (every event at or below it is fanned out).
    pub fn new(cursor: i64, grace_ms: i64) -> Self {
        Self {
            high: cursor,
            gaps: BTreeMap::new(),
            grace_ms,
        }
    }

    /// Read events after this sequence number …
    pub fn after(&self) -> i64 {
        self.high
    }

    /// … and these gaps again.
    pub fn gaps(&self) -> Vec<i64> {
        self.gaps.keys().copied().collect()
    }

    /// Takes what a read found (`seqs`: events after [`Fanout::after`], ascending, and
    /// gaps that filled) at `now` (unix ms): filled gaps are forgotten, numbers skipped
    /// below a new event become gaps, and gaps older than the grace are given up.
    pub fn saw(&mut self, seqs: &[i64], now: i64) {
        let mut next = self.high + 1;
        for &s in seqs {
            if self.gaps.remove(&s).is_some() || s <= self.high {
                continue;
            }
            for missing in next..s {
                self.gaps.insert(missing, now);
            }
            next = s + 1;
            self.high = s;
        }
        let grace = self.grace_ms;
        self.gaps.retain(|_, seen| now - *seen < grace);
        while self.gaps.len() > MAX_GAPS {
            self.gaps.pop_first();
        }
    }

    /// The durable cursor: every event at or below it is fanned out, or was a gap given up.
    pub fn cursor(&self) -> i64 {
        match self.gaps.keys().next() {
            Some(first) => first - 1,
            None => self.high,
        }
    }
}

const DELIVERY_COLS: &str = "id, endpoint_id, event_id, redelivery, status, attempts, \
     next_attempt_at, last_attempt_at, last_status_code, last_error, last_latency_ms, created_at";

fn corrupt(what: &str, v: &str) -> StoreError {
    StoreError::Corrupt(format!("{what} {v:?}"))
}

fn delivery_of(r: &impl Record) -> Result<Delivery, StoreError> {
    let status = r.string("status")?;
    Ok(Delivery {
        id: WebhookDeliveryId::from_trusted(r.string("id")?),
        endpoint_id: WebhookEndpointId::from_trusted(r.string("endpoint_id")?),
        event_id: EventId::from_trusted(r.string("event_id")?),
        redelivery: r.integer("redelivery")? != 0,
        status: DeliveryStatus::parse(&status).ok_or_else(|| corrupt("status", &status))?,
        attempts: r.integer("attempts")?,
        next_attempt_at: r.int("next_attempt_at")?,
        last_attempt_at: r.int("last_attempt_at")?,
        last_status_code: r.int("last_status_code")?,
        last_error: r.text("last_error")?,
        last_latency_ms: r.int("last_latency_ms")?,
        created_at: r.integer("created_at")?,
    })
}

fn events_json(events: &EnabledEvents) -> String {
    serde_json::to_string(&events.names()).expect("strings serialize")
}

/// Most deliveries written by one statement.
const DELIVERIES_PER_INSERT: usize = 100;

/// Writes pending deliveries `(endpoint, event, account, mode)` due at `now`; a fan-out
/// row (`redelivery` 0) that exists already is left alone.
async fn insert_deliveries(
    conn: &mut impl Exec,
    rows: &[(WebhookEndpointId, EventId, AccountId, Mode)],
    redelivery: i64,
    now: i64,
) -> Result<Vec<WebhookDeliveryId>, StoreError> {
    let mut ids = Vec::with_capacity(rows.len());
    for chunk in rows.chunks(DELIVERIES_PER_INSERT) {
        let sql = format!(
            "INSERT INTO webhook_deliveries (id, endpoint_id, event_id, account_id, mode, \
             redelivery, status, attempts, next_attempt_at, created_at, updated_at) VALUES {} \
             ON CONFLICT DO NOTHING",
            crate::sql::placeholders(chunk.len(), 11)
        );
        let mut q = Stmt::new(conn.backend(), sql);
        for (endpoint, event, account, mode) in chunk {
            let id = WebhookDeliveryId::new();
            q.push(id.as_str().to_owned())
                .push(endpoint.as_str())
                .push(event.as_str())
                .push(account.as_str())
                .push(mode.as_str())
                .push(redelivery)
                .push(DeliveryStatus::Pending.as_str())
                .push(0i64)
                .push(now)
                .push(now)
                .push(now);
            ids.push(id);
        }
        conn.execute(&q).await?;
    }
    Ok(ids)
}

impl Webhooks<'_> {
    /// Writes a new endpoint with its signing secret.
    pub async fn create_endpoint(
        self,
        e: &WebhookEndpoint,
        secret: &str,
    ) -> Result<(), StoreError> {
        let q = self
            .0
            .stmt(format!(
                "INSERT INTO webhook_endpoints ({ENDPOINT_COLS}, secret) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
            ))
            .bind(e.id.as_str())
            .bind(e.account_id.as_str())
            .bind(e.mode.as_str())
            .bind(&e.url)
            .bind(&e.description)
            .bind(events_json(&e.enabled_events))
            .bind(e.status.as_str())
            .bind(&e.disabled_reason)
            .bind(e.failing_since)
            .bind(e.previous_secret_expires_at)
            .bind(e.created_at)
            .bind(e.updated_at)
            .bind(secret);
        self.0.execute(q).await?;
        Ok(())
    }

    /// An endpoint of this account and mode.
    pub async fn endpoint(
        self,
        scope: Scope<'_>,
        id: &WebhookEndpointId,
    ) -> Result<WebhookEndpoint, StoreError> {
        endpoint_of(
            &self
                .0
                .scoped_row("webhook_endpoints", ENDPOINT_COLS, scope, id.as_str())
                .await?,
        )
    }

    /// Endpoints of this account and mode, newest first.
    pub async fn list_endpoints(
        self,
        scope: Scope<'_>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<WebhookEndpoint>, StoreError> {
        let (rows, has_more) = self
            .0
            .list_rows(
                "webhook_endpoints",
                ENDPOINT_COLS,
                scope,
                &[],
                limit,
                starting_after,
            )
            .await?;
        Ok(Page {
            data: rows.iter().map(endpoint_of).collect::<Result<_, _>>()?,
            has_more,
        })
    }

    /// Changes an endpoint at `now`; returns it as it is then. Enabling clears its failure
    /// record.
    pub async fn update_endpoint(
        self,
        scope: Scope<'_>,
        id: &WebhookEndpointId,
        change: &EndpointChange,
        now: i64,
    ) -> Result<WebhookEndpoint, StoreError> {
        let mut e = self.0.webhooks().endpoint(scope, id).await?;
        if let Some(url) = &change.url {
            e.url = url.clone();
        }
        if let Some(events) = &change.enabled_events {
            e.enabled_events = events.clone();
        }
        if let Some(d) = &change.description {
            e.description = d.clone();
        }
        e.updated_at = now;
        let (account_id, mode) = (scope.account_id.clone(), scope.mode);
        let enabled = change.enabled;
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    let q = Stmt::new(
                        tx.backend(),
                        "UPDATE webhook_endpoints SET url = $1, enabled_events = $2, description = $3, updated_at = $4 \
                         WHERE id = $5 AND account_id = $6 AND mode = $7"
                            .into(),
                    )
                    .bind(&e.url)
                    .bind(events_json(&e.enabled_events))
                    .bind(&e.description)
                    .bind(now)
                    .bind(e.id.as_str())
                    .bind(account_id.as_str())
                    .bind(mode.as_str());
                    if tx.execute(&q).await? == 0 {
                        return Err(StoreError::NotFound);
                    }
                    if let Some(enabled) = enabled {
                        move_endpoint_in(&mut tx, e.id.as_str(), EndpointMove::Owner { enabled }, now)
                            .await?;
                        if enabled {
                            e.status = EndpointStatus::Enabled;
                            e.failing_since = None;
                        } else {
                            e.status = EndpointStatus::Disabled;
                        }
                        e.disabled_reason = None;
                    }
                    Ok(e)
                })
            })
            .await
    }

    /// Deletes an endpoint and its deliveries; returns it as it was.
    pub async fn delete_endpoint(
        self,
        scope: Scope<'_>,
        id: &WebhookEndpointId,
    ) -> Result<WebhookEndpoint, StoreError> {
        let e = self.0.webhooks().endpoint(scope, id).await?;
        let (id, account_id, mode) = (id.clone(), scope.account_id.clone(), scope.mode);
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    let q = Stmt::new(
                        tx.backend(),
                        "DELETE FROM webhook_endpoints WHERE id = $1 AND account_id = $2 AND mode = $3"
                            .into(),
                    )
                    .bind(id.as_str())
                    .bind(account_id.as_str())
                    .bind(mode.as_str());
                    if tx.execute(&q).await? == 0 {
                        return Err(StoreError::NotFound);
                    }
                    let q = Stmt::new(
                        tx.backend(),
                        "DELETE FROM webhook_deliveries WHERE endpoint_id = $1".into(),
                    )
                    .bind(id.as_str());
                    tx.execute(&q).await?;
                    Ok(())
                })
            })
            .await?;
        Ok(e)
    }

    /// Replaces an endpoint's secret with `secret` at `now`; the old one keeps signing
    /// beside it until `overlap_until` (unix ms). Returns the endpoint.
    pub async fn rotate_secret(
        self,
        scope: Scope<'_>,
        id: &WebhookEndpointId,
        secret: &str,
        overlap_until: i64,
        now: i64,
    ) -> Result<WebhookEndpoint, StoreError> {
        let q = self
            .0
            .stmt(
                "UPDATE webhook_endpoints SET previous_secret = secret, secret = $1, \
                 previous_secret_expires_at = $2, updated_at = $3 \
                 WHERE id = $4 AND account_id = $5 AND mode = $6",
            )
            .bind(secret)
            .bind(overlap_until)
            .bind(now)
            .bind(id.as_str())
            .bind(scope.account_id.as_str())
            .bind(scope.mode.as_str());
        if self.0.execute(q).await? == 0 {
            return Err(StoreError::NotFound);
        }
        self.0.webhooks().endpoint(scope, id).await
    }

    /// The secrets that sign deliveries to endpoint `id` at `now` (any account: for the
    /// deliverer).
    pub async fn secrets(self, id: &WebhookEndpointId, now: i64) -> Result<Secrets, StoreError> {
        let q = self
            .0
            .stmt(
                "SELECT secret, previous_secret, previous_secret_expires_at FROM webhook_endpoints WHERE id = $1",
            )
            .bind(id.as_str());
        let row = self.0.fetch_one(&q).await?;
        let until = row.int("previous_secret_expires_at")?;
        let previous = row.text("previous_secret")?;
        Ok(Secrets {
            current: row.string("secret")?,
            previous: previous.filter(|_| until.is_some_and(|u| u > now)),
        })
    }

    /// The fan-out cursor of `mode`: every event at or below it has its deliveries.
    pub async fn cursor(self, mode: Mode) -> Result<i64, StoreError> {
        let q = self
            .0
            .stmt("SELECT seq FROM webhook_cursors WHERE mode = $1")
            .bind(mode.as_str());
        Ok(match self.0.fetch_optional(&q).await? {
            Some(r) => r.integer("seq")?,
            None => 0,
        })
    }

    /// Heads of the events after `after` (at most `limit`, ascending) and of the events
    /// numbered `recheck`, of every mode (the fan-out sees gaps in the one sequence).
    pub async fn event_heads(
        self,
        after: i64,
        recheck: &[i64],
        limit: u32,
    ) -> Result<Vec<EventHead>, StoreError> {
        let head = |r: &crate::exec::Row| -> Result<EventHead, StoreError> {
            let mode = r.string("mode")?;
            let kind = r.string("type")?;
            Ok(EventHead {
                seq: r.integer("seq")?,
                id: EventId::from_trusted(r.string("id")?),
                account_id: AccountId::from_trusted(r.string("account_id")?),
                mode: Mode::parse(&mode).ok_or_else(|| corrupt("mode", &mode))?,
                kind: EventType::parse(&kind).ok_or_else(|| corrupt("event type", &kind))?,
                created_at: r.integer("created_at")?,
            })
        };
        let mut out = Vec::new();
        for chunk in recheck.chunks(500) {
            let mut q = self.0.stmt(format!(
                "SELECT seq, id, account_id, mode, type, created_at FROM events WHERE seq IN ({})",
                crate::sql::numbered(1, chunk.len())
            ));
            for s in chunk {
                q.push(*s);
            }
            for r in self.0.fetch(&q).await? {
                out.push(head(&r)?);
            }
        }
        let q = self
            .0
            .stmt(format!(
                "SELECT seq, id, account_id, mode, type, created_at FROM events WHERE seq > $1 \
                 ORDER BY seq LIMIT {limit}"
            ))
            .bind(after);
        let rows = self.0.fetch(&q).await?;
        for r in rows {
            out.push(head(&r)?);
        }
        out.sort_by_key(|h| h.seq);
        Ok(out)
    }

    /// Writes the deliveries of `events` of `mode` (one per enabled endpoint of the
    /// event's account that wants its type and existed when it happened) and moves the
    /// mode's cursor to `cursor`, in one transaction, at `now`. When no delivery is to be
    /// written and `move_anyway` is false it writes nothing: the cursor stays behind (a
    /// restart reads those events again, which is harmless) and the database is spared
    /// a write per batch of events no endpoint wants. Returns how many deliveries it
    /// wrote, and whether it moved the cursor.
    pub async fn fan_out(
        self,
        mode: Mode,
        events: &[EventHead],
        cursor: i64,
        now: i64,
        move_anyway: bool,
    ) -> Result<(usize, bool), StoreError> {
        let endpoints = if events.iter().any(|e| e.mode == mode) {
            let q = self
                .0
                .stmt(format!(
                    "SELECT {ENDPOINT_COLS} FROM webhook_endpoints WHERE mode = $1 AND status = $2"
                ))
                .bind(mode.as_str())
                .bind(EndpointStatus::Enabled.as_str());
            let rows = self.0.fetch(&q).await?;
            rows.iter()
                .map(endpoint_of)
                .collect::<Result<Vec<_>, _>>()?
        } else {
            Vec::new()
        };
        let mut rows = Vec::new();
        for ev in events.iter().filter(|e| e.mode == mode) {
            for ep in &endpoints {
                if ep.account_id == ev.account_id
                    && ep.created_at <= ev.created_at
                    && ep.wants(ev.kind)
                {
                    rows.push((ep.id.clone(), ev.id.clone(), ev.account_id.clone(), mode));
                }
            }
        }
        if rows.is_empty() && !move_anyway {
            return Ok((0, false));
        }
        let written = rows.len();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    insert_deliveries(&mut tx, &rows, 0, now).await?;
                    let q = Stmt::new(
                        tx.backend(),
                        "INSERT INTO webhook_cursors (mode, seq) VALUES ($1, $2) \
                         ON CONFLICT (mode) DO UPDATE SET seq = excluded.seq"
                            .into(),
                    )
                    .bind(mode.as_str())
                    .bind(cursor);
                    tx.execute(&q).await?;
                    Ok(())
                })
            })
            .await?;
        Ok((written, true))
    }

    /// Pending deliveries of `mode` due at `now` to enabled endpoints, soonest first, at
    /// most `limit`, and at most `per_endpoint` of one endpoint (the soonest of each): an
    /// endpoint with a backlog, or a slow one, cannot take every slot. Deliveries being
    /// attempted stay due until their outcome is recorded, so they count against their
    /// endpoint's share.
    pub async fn due_deliveries(
        self,
        mode: Mode,
        now: i64,
        limit: u32,
        per_endpoint: u32,
    ) -> Result<Vec<DueDelivery>, StoreError> {
        let q = self
            .0
            .stmt(format!(
                "SELECT id, endpoint_id, url, event_id, account_id, attempts FROM ( \
                 SELECT d.id AS id, d.endpoint_id AS endpoint_id, e.url AS url, d.event_id AS event_id, \
                 d.account_id AS account_id, d.attempts AS attempts, d.next_attempt_at AS next_attempt_at, \
                 ROW_NUMBER() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id) AS rn \
                 FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id \
                 WHERE d.mode = $1 AND d.status = $2 AND d.next_attempt_at <= $3 AND e.status = $4 \
                 ) due WHERE rn <= {per_endpoint} ORDER BY next_attempt_at, id LIMIT {limit}"
            ))
            .bind(mode.as_str())
            .bind(DeliveryStatus::Pending.as_str())
            .bind(now)
            .bind(EndpointStatus::Enabled.as_str());
        let rows = self.0.fetch(&q).await?;
        rows.iter()
            .map(|r| {
                Ok(DueDelivery {
                    id: WebhookDeliveryId::from_trusted(r.string("id")?),
                    endpoint_id: WebhookEndpointId::from_trusted(r.string("endpoint_id")?),
                    url: r.string("url")?,
                    event_id: EventId::from_trusted(r.string("event_id")?),
                    account_id: AccountId::from_trusted(r.string("account_id")?),
                    attempts: r.integer("attempts")?,
                })
            })
            .collect()
    }

    /// Records an attempt of delivery `id` made at `now`: the delivery succeeds, waits
    /// for `attempt.retry_at`, or fails for good. The endpoint's failure record follows
    /// (cleared by a success; a failure when it has failed since more than
    /// `disable_after_ms` ago disables it, with its `webhook_endpoint.disabled` event), in
    /// the same transaction.
    pub async fn record_attempt(
        self,
        id: &WebhookDeliveryId,
        attempt: &Attempt,
        now: i64,
        disable_after_ms: i64,
    ) -> Result<Recorded, StoreError> {
        let status = match (attempt.delivered, attempt.retry_at) {
            (true, _) => DeliveryStatus::Succeeded,
            (false, Some(_)) => DeliveryStatus::Pending,
            (false, None) => DeliveryStatus::Failed,
        };
        let id = id.clone();
        let attempt = attempt.clone();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    let q = Stmt::new(
                        tx.backend(),
                        "UPDATE webhook_deliveries SET status = $1, attempts = attempts + 1, \
                         next_attempt_at = $2, last_attempt_at = $3, last_status_code = $4, last_error = $5, \
                         last_latency_ms = $6, updated_at = $3 WHERE id = $7 AND status = $8 \
                         RETURNING endpoint_id"
                            .into(),
                    )
                    .bind(status.as_str())
                    .bind(if attempt.delivered {
                        None
                    } else {
                        attempt.retry_at
                    })
                    .bind(now)
                    .bind(attempt.status_code.map(i64::from))
                    .bind(attempt.error.as_deref())
                    .bind(attempt.latency_ms)
                    .bind(id.as_str())
                    .bind(DeliveryStatus::Pending.as_str());
                    let Some(row) = tx.fetch_optional(&q).await? else {
                        // Deleted with its endpoint, or already recorded: nothing to do.
                        return Ok(Recorded {
                            endpoint_disabled: false,
                        });
                    };
                    let endpoint = row.string("endpoint_id")?;
                    let mut disabled = false;
                    if attempt.delivered {
                        let q = Stmt::new(
                            tx.backend(),
                            "UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1".into(),
                        )
                        .bind(&endpoint);
                        tx.execute(&q).await?;
                    } else {
                        let q = Stmt::new(
                            tx.backend(),
                            "UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $1) WHERE id = $2"
                                .into(),
                        )
                        .bind(now)
                        .bind(&endpoint);
                        tx.execute(&q).await?;
                        let cutoff = now.saturating_sub(disable_after_ms);
                        disabled = move_endpoint_in(
                            &mut tx,
                            &endpoint,
                            EndpointMove::Failing { cutoff },
                            now,
                        )
                        .await?;
                    }
                    Ok(Recorded {
                        endpoint_disabled: disabled,
                    })
                })
            })
            .await
    }

    /// Deliveries to endpoint `endpoint` of this account and mode, newest first.
    pub async fn list_deliveries(
        self,
        scope: Scope<'_>,
        endpoint: &WebhookEndpointId,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<Delivery>, StoreError> {
        let (rows, has_more) = self
            .0
            .list_rows(
                "webhook_deliveries",
                DELIVERY_COLS,
                scope,
                &[("endpoint_id", endpoint.as_str())],
                limit,
                starting_after,
            )
            .await?;
        Ok(Page {
            data: rows.iter().map(delivery_of).collect::<Result<_, _>>()?,
            has_more,
        })
    }

    /// A delivery by id (any account: for tests and the deliverer).
    pub async fn delivery(self, id: &WebhookDeliveryId) -> Result<Delivery, StoreError> {
        let q = self
            .0
            .stmt(format!(
                "SELECT {DELIVERY_COLS} FROM webhook_deliveries WHERE id = $1"
            ))
            .bind(id.as_str());
        delivery_of(&self.0.fetch_one(&q).await?)
    }

    /// Queues event `event` of this account and mode again, at `now`: to `endpoint` when
    /// given (whatever its event types), else to every enabled endpoint that wants its
    /// type. Returns the new deliveries.
    pub async fn redeliver(
        self,
        scope: Scope<'_>,
        event: &EventId,
        endpoint: Option<&WebhookEndpointId>,
        now: i64,
    ) -> Result<Vec<Delivery>, StoreError> {
        let ev = self.0.events().get(scope, event).await?;
        let targets: Vec<WebhookEndpoint> = match endpoint {
            Some(id) => vec![self.0.webhooks().endpoint(scope, id).await?],
            None => {
                let q = self
                    .0
                    .stmt(format!(
                        "SELECT {ENDPOINT_COLS} FROM webhook_endpoints \
                         WHERE account_id = $1 AND mode = $2 AND status = $3"
                    ))
                    .bind(scope.account_id.as_str())
                    .bind(scope.mode.as_str())
                    .bind(EndpointStatus::Enabled.as_str());
                let rows = self.0.fetch(&q).await?;
                rows.iter()
                    .map(endpoint_of)
                    .collect::<Result<Vec<_>, _>>()?
                    .into_iter()
                    .filter(|e| e.wants(ev.kind))
                    .collect()
            }
        };
        let rows: Vec<_> = targets
            .iter()
            .map(|e| {
                (
                    e.id.clone(),
                    ev.id.clone(),
                    scope.account_id.clone(),
                    scope.mode,
                )
            })
            .collect();
        let ids = self
            .0
            .write(move |mut tx| {
                Box::pin(async move { insert_deliveries(&mut tx, &rows, now.max(1), now).await })
            })
            .await?;
        let mut out = Vec::with_capacity(ids.len());
        for id in &ids {
            out.push(self.0.webhooks().delivery(id).await?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn secrets_are_whsec_and_32_bytes() {
        let s = new_secret();
        let b64 = s.strip_prefix("whsec_").expect("prefix");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .expect("base64");
        assert_eq!(bytes.len(), 32);
        assert_ne!(new_secret(), s);
    }

    #[test]
    fn a_gap_holds_the_cursor_until_it_fills_or_expires() {
        let mut f = Fanout::new(10, 1_000);
        f.saw(&[11, 12, 14, 15], 0);
        assert_eq!(f.after(), 15);
        assert_eq!(f.gaps(), vec![13]);
        assert_eq!(f.cursor(), 12);
        f.saw(&[13], 10);
        assert_eq!(f.cursor(), 15);
        f.saw(&[17], 20);
        assert_eq!(f.cursor(), 15);
        f.saw(&[], 1_020);
        assert_eq!(f.cursor(), 17, "a gap older than the grace is given up");
    }

    proptest! {
        /// Events commit in any order; whatever the fan-out saw, the cursor never passes an
        /// event it has not seen while that event's gap is younger than the grace, and it
        /// reaches the end once everything committed.
        #[test]
        fn the_cursor_never_passes_an_unseen_event(
            order in Just((1i64..=40).collect::<Vec<_>>()).prop_shuffle(),
            reads in proptest::collection::vec(1usize..8, 1..20),
        ) {
            let mut f = Fanout::new(0, 1_000_000);
            let mut committed: Vec<i64> = Vec::new();
            let mut seen = std::collections::BTreeSet::new();
            let mut it = order.iter();
            for (now, n) in reads.iter().enumerate() {
                committed.extend(it.by_ref().take(*n));
                let gaps = f.gaps();
                let mut found: Vec<i64> = committed
                    .iter()
                    .copied()
                    .filter(|s| *s > f.after() || gaps.contains(s))
                    .collect();
                found.sort();
                seen.extend(found.iter().copied());
                f.saw(&found, now as i64);
                for s in 1..=f.cursor() {
                    prop_assert!(seen.contains(&s), "cursor {} passed unseen {}", f.cursor(), s);
                }
            }
            committed.extend(it);
            let gaps = f.gaps();
            let mut found: Vec<i64> = committed
                .iter()
                .copied()
                .filter(|s| *s > f.after() || gaps.contains(s))
                .collect();
            found.sort();
            f.saw(&found, 100);
            prop_assert_eq!(f.cursor(), 40);
        }
    }
}

/// Why an endpoint's status changes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum EndpointMove {
    /// Its owner enabled it (its failure record cleared) or disabled it.
    Owner { enabled: bool },
    /// It failed every delivery since `cutoff` (unix ms) or earlier: disabled, with a
    /// `webhook_endpoint.disabled` event.
    Failing { cutoff: i64 },
}

/// **The one place a webhook endpoint's status changes after creation**, inside the
/// caller's transaction. Returns whether it moved (an enabled endpoint failing since
/// after the cutoff, or gone, does not).
pub(crate) async fn move_endpoint_in(
    conn: &mut impl Exec,
    id: &str,
    m: EndpointMove,
    now: i64,
) -> Result<bool, StoreError> {
    let (to, reason, only_from, cutoff) = match m {
        EndpointMove::Owner { enabled: true } => (EndpointStatus::Enabled, None, None, None),
        EndpointMove::Owner { enabled: false } => (EndpointStatus::Disabled, None, None, None),
        EndpointMove::Failing { cutoff } => (
            EndpointStatus::Disabled,
            Some(DISABLED_FAILING),
            Some(EndpointStatus::Enabled),
            Some(cutoff),
        ),
    };
    let mut q = Stmt::new(
        conn.backend(),
        "UPDATE webhook_endpoints SET status = $1, disabled_reason = $2, \
         failing_since = CASE WHEN $1 = 'enabled' THEN NULL ELSE failing_since END, updated_at = $3 \
         WHERE id = $4 AND ($5 IS NULL OR status = $5) AND ($6 IS NULL OR failing_since <= $6)"
            .into(),
    );
    q.push(to.as_str())
        .push(reason)
        .push(now)
        .push(id)
        .push(only_from.map(EndpointStatus::as_str))
        .push(cutoff);
    let moved = conn.execute(&q).await? == 1;
    if moved && matches!(m, EndpointMove::Failing { .. }) {
        events::record(conn, EventType::WebhookEndpointDisabled, id, now).await?;
    }
    Ok(moved)
}
