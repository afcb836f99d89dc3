//! One-time payments: rows and queries.

use crate::exec::{Exec, Record, Stmt};

use crate::db::{Store, StoreError};
use crate::events::{self, EventType};
pub(crate) use crate::rows::payments::{COLS, payment_of};
pub use crate::rows::payments::{PartyKind, Payment};
use crate::rows::{Page, Scope};
use openrail_domain::FailureReason;
use openrail_domain::PaymentId;
use openrail_domain::journal::{Intent, TxStatus};
pub use openrail_domain::{PaymentStatus, RefundStatus};

/// One-time payments: their rows, lists and status changes (`store.payments()`).
#[derive(Debug, Clone, Copy)]
pub struct Payments<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on one-time payments ([`Payments`]).
    pub fn payments(&self) -> Payments<'_> {
        Payments(self)
    }
}

impl Payment {
    /// Whether nothing is left to do for it: succeeded, canceled, or failed owing no
    /// refund.
    pub fn is_final(&self) -> bool {
        matches!(
            self.status,
            PaymentStatus::Succeeded | PaymentStatus::Failed | PaymentStatus::Canceled
        ) && self.refund_status != Some(RefundStatus::Pending)
    }
}

/// A payment's move: its new status and what it sets with it (`None`: left as it is).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PaymentChange<'a> {
    pub to: PaymentStatus,
    pub failure_reason: Option<FailureReason>,
    pub tx_hash: Option<&'a str>,
    /// Its refund's move `(from, to)`: `(None, pending)` a refund now owed to its
    /// source, `(Some(pending), end)` that refund's end (only from `from`).
    pub refund: Option<(Option<RefundStatus>, RefundStatus)>,
}

impl PaymentChange<'_> {
    /// A move to `to` that sets nothing else.
    pub(crate) fn to(to: PaymentStatus) -> Self {
        PaymentChange {
            to,
            failure_reason: None,
            tx_hash: None,
            refund: None,
        }
    }
}

/// **The one place a payment's status changes after creation**, inside the caller's
/// transaction: moves payment `id` from `from` as `change` says, when it is still in `from`
/// and its lifecycle allows it ([`PaymentStatus::sources`]; `to == from` only records a
/// transaction hash learnt later, or moves its refund), and records its events (the
/// payment's, its refund's).
/// Returns whether it moved; a move the lifecycle does not allow is
/// [`StoreError::Transition`] and writes nothing.
pub(crate) async fn move_payment_in(
    conn: &mut impl Exec,
    id: &str,
    from: PaymentStatus,
    change: &PaymentChange<'_>,
    now: i64,
) -> Result<bool, StoreError> {
    use openrail_domain::status::Lifecycle;
    let to = change.to;
    if from != to && !to.reachable_from(from) {
        return Err(StoreError::Transition(format!(
            "payment {id}: {} → {}",
            from.as_str(),
            to.as_str()
        )));
    }
    if let Some((Some(from), to)) = change.refund
        && !to.reachable_from(from)
    {
        return Err(StoreError::Transition(format!(
            "refund of payment {id}: {} → {}",
            from.as_str(),
            to.as_str()
        )));
    }
    let (refund_from, refund_to) = match change.refund {
        Some((from, to)) => (from, Some(to)),
        None => (None, None),
    };
    let mut q = Stmt::new(
        conn.backend(),
        "UPDATE payments SET status = $3, failure_reason = COALESCE($4, failure_reason), \
         tx_hash = COALESCE($5, tx_hash), refund_status = COALESCE($6, refund_status), updated_at = $7 \
         WHERE id = $1 AND status = $2 AND ($8 IS NULL OR refund_status = $8)"
            .into(),
    );
    q.push(id)
        .push(from.as_str())
        .push(to.as_str())
        .push(change.failure_reason.map(FailureReason::as_str))
        .push(change.tx_hash)
        .push(refund_to.map(RefundStatus::as_str))
        .push(now)
        .push(refund_from.map(RefundStatus::as_str));
    let moved = conn.execute(&q).await? == 1;
    if moved && from != to {
        events::record(conn, EventType::of_payment(to), id, now).await?;
    }
    if let (true, Some(kind)) = (moved, refund_to.and_then(EventType::of_refund)) {
        events::record(conn, kind, id, now).await?;
    }
    Ok(moved)
}

impl Payments<'_> {
    /// Inserts a new payment with its `payment.created` event (and
    /// `payment.requires_authorization` when the payer must sign).
    pub async fn insert(self, p: &Payment) -> Result<(), StoreError> {
        self.0.payments().insert_with(p, None).await
    }

    /// [`Payments::insert`], with what its wallet source is asked to sign written
    /// first in the same transaction (so the first event shows it, and a crash leaves both
    /// or neither).
    pub async fn insert_with(
        self,
        p: &Payment,
        authorization: Option<&crate::rows::consent::Authorization>,
    ) -> Result<(), StoreError> {
        let p = p.clone();
        let authorization = authorization.cloned();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    if let Some(a) = &authorization {
                        crate::rows::consent::insert_authorization_in(&mut tx, a).await?;
                    }
                    let q = Stmt::new(
                        tx.backend(),
                        format!(
                            "INSERT INTO payments ({COLS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16)"
                        ),
                    )
                    .bind(p.id.as_str())
                    .bind(p.account_id.as_str())
                    .bind(p.mode.as_str())
                    .bind(i64::try_from(p.amount).unwrap_or(i64::MAX))
                    .bind(p.currency.code())
                    .bind(p.source_type.as_str())
                    .bind(&p.source_id)
                    .bind(p.destination_type.as_str())
                    .bind(&p.destination_address)
                    .bind(p.status.as_str())
                    .bind(p.failure_reason.map(FailureReason::as_str))
                    .bind(i64::try_from(p.chain_id).unwrap_or(i64::MAX))
                    .bind(&p.tx_hash)
                    .bind(p.created_at)
                    .bind(p.updated_at)
                    .bind(p.refund_status.map(|r| r.as_str()));
                    tx.execute(&q).await?;
                    events::record(
                        &mut tx,
                        EventType::PaymentCreated,
                        p.id.as_str(),
                        p.created_at,
                    )
                    .await?;
                    if p.status == PaymentStatus::Pending {
                        // Nothing to sign: the engine drives it from now on.
                        crate::outbox::enqueue(
                            &mut tx,
                            &Intent::Payment(p.id.clone()),
                            crate::outbox::WorkKind::DrivePayment,
                            p.chain_id,
                            p.mode,
                            p.created_at,
                        )
                        .await?;
                    } else {
                        events::record(
                            &mut tx,
                            EventType::of_payment(p.status),
                            p.id.as_str(),
                            p.created_at,
                        )
                        .await?;
                    }
                    Ok(())
                })
            })
            .await
    }

    /// Withdraws a payment's request to sign at `now` (unix ms): `requires_authorization`
    /// → `canceled` with its `payment.canceled` event, in one transaction; nothing was
    /// queued or sent for it. Returns false (nothing changed) when it was no longer waiting
    /// for its payer.
    pub async fn cancel_unauthorized(self, id: &PaymentId, now: i64) -> Result<bool, StoreError> {
        let change = PaymentChange::to(PaymentStatus::Canceled);
        self.move_payment(id, PaymentStatus::RequiresAuthorization, &change, now)
            .await
    }

    /// Fails a processing payment whose source leg already succeeded, owing a refund to
    /// its source, in one statement. Returns whether it moved.
    pub async fn fail_owing_refund(
        self,
        id: &PaymentId,
        failure_reason: FailureReason,
        tx_hash: Option<&str>,
        now: i64,
    ) -> Result<bool, StoreError> {
        let change = PaymentChange {
            failure_reason: Some(failure_reason),
            tx_hash,
            refund: Some((None, RefundStatus::Pending)),
            ..PaymentChange::to(PaymentStatus::Failed)
        };
        self.move_payment(id, PaymentStatus::Processing, &change, now)
            .await
    }

    /// Records the end of a pending refund at `now` (unix ms). Returns whether it moved.
    pub async fn finish_refund(
        self,
        id: &PaymentId,
        to: RefundStatus,
        now: i64,
    ) -> Result<bool, StoreError> {
        // A refund is owed only by a payment that failed.
        let change = PaymentChange {
            refund: Some((Some(RefundStatus::Pending), to)),
            ..PaymentChange::to(PaymentStatus::Failed)
        };
        self.move_payment(id, PaymentStatus::Failed, &change, now)
            .await
    }

    /// Moves a payment from `from` to `to` at `now` (unix ms), as its lifecycle allows
    /// ([`PaymentStatus::sources`]; `to == from` records a transaction hash learnt later,
    /// no state change). Returns whether it moved; a move the lifecycle does not allow is
    /// [`StoreError::Transition`] and writes nothing.
    pub async fn set_status(
        self,
        id: &PaymentId,
        from: PaymentStatus,
        to: PaymentStatus,
        failure_reason: Option<FailureReason>,
        tx_hash: Option<&str>,
        now: i64,
    ) -> Result<bool, StoreError> {
        let change = PaymentChange {
            failure_reason,
            tx_hash,
            ..PaymentChange::to(to)
        };
        self.move_payment(id, from, &change, now).await
    }

    /// [`move_payment_in`] in a transaction of its own.
    async fn move_payment(
        self,
        id: &PaymentId,
        from: PaymentStatus,
        change: &PaymentChange<'_>,
        now: i64,
    ) -> Result<bool, StoreError> {
        let id = id.as_str().to_owned();
        let (to, refund) = (change.to, change.refund);
        let failure_reason = change.failure_reason;
        let tx_hash = change.tx_hash.map(str::to_owned);
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    let change = PaymentChange {
                        to,
                        failure_reason,
                        tx_hash: tx_hash.as_deref(),
                        refund,
                    };
                    move_payment_in(&mut tx, &id, from, &change, now).await
                })
            })
            .await
    }

    /// A payment of this account and mode.
    pub async fn get(self, scope: Scope<'_>, id: &PaymentId) -> Result<Payment, StoreError> {
        payment_of(
            &self
                .0
                .scoped_row("payments", COLS, scope, id.as_str())
                .await?,
        )
    }

    /// Payments, newest first.
    pub async fn list(
        self,
        scope: Scope<'_>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<Payment>, StoreError> {
        self.0
            .payments()
            .list_in(scope, None, limit, starting_after)
            .await
    }

    /// Payments of one status when given, newest first.
    pub async fn list_in(
        self,
        scope: Scope<'_>,
        status: Option<PaymentStatus>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<Payment>, StoreError> {
        let filters: Vec<_> = status.map(|s| ("status", s.as_str())).into_iter().collect();
        let (rows, has_more) = self
            .0
            .list_rows("payments", COLS, scope, &filters, limit, starting_after)
            .await?;
        Ok(Page {
            data: rows.iter().map(payment_of).collect::<Result<_, _>>()?,
            has_more,
        })
    }
}

impl Payments<'_> {
    /// A payment by id alone (the engine's view, not a request's).
    pub async fn get_unscoped(self, id: &PaymentId) -> Result<Payment, StoreError> {
        let q = self
            .0
            .stmt(format!("SELECT {COLS} FROM payments WHERE id = $1"))
            .bind(id.as_str());
        let row = self
            .0
            .fetch_optional(&q)
            .await?
            .ok_or(StoreError::NotFound)?;
        payment_of(&row)
    }

    /// The status and hash of the newest journaled transaction carrying `intent`, if any,
    /// and whether a mined one is confirmed (its block at or below the relayer's cursor,
    /// which stays the chain's confirmation depth behind its head).
    pub async fn tx_status_for_intent(
        self,
        intent: &Intent,
    ) -> Result<Option<JournaledStatus>, StoreError> {
        let q = self
            .0
            .stmt(format!(
                "SELECT t.status, t.hash, CAST(CASE WHEN t.block_number <= \
                 (SELECT c.block_number FROM chain_cursors c WHERE c.chain_id = t.chain_id) \
                 THEN 1 ELSE 0 END AS BIGINT) AS confirmed FROM chain_tx_intents i \
                 JOIN chain_txs t ON t.hash = i.hash WHERE i.intent = $1 \
                 ORDER BY {LIVE_FIRST}, t.created_at DESC LIMIT 1",
                LIVE_FIRST = crate::sql::LIVE_FIRST
            ))
            .bind(intent);
        let row = self.0.fetch_optional(&q).await?;
        row.map(|r| {
            let status = r.string("status")?;
            let status = TxStatus::parse(&status)
                .ok_or_else(|| StoreError::Corrupt(format!("journal status {status}")))?;
            Ok(JournaledStatus {
                status,
                hash: r.string("hash")?,
                confirmed: r.integer("confirmed")? == 1,
            })
        })
        .transpose()
    }
}

/// Where the transaction carrying an intent stands (see [`Payments::tx_status_for_intent`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournaledStatus {
    /// Its journal status.
    pub status: TxStatus,
    /// Its hash.
    pub hash: String,
    /// Mined at or below the relayer's cursor.
    pub confirmed: bool,
}

impl Store {}
