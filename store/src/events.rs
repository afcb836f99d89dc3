//! Events: every state change of a mandate, session key, debit pull, payment or bank
//! transfer writes one `evt_` row **in the same database transaction** as the change, so a
//! change is never without its event and an event never without its change, whatever
//! crashes. The row holds a [`Snapshot`] — the object and everything its representation
//! is computed from (a mandate's epoch use, a payer's authorization) — taken inside that
//! transaction after the change; the API renders `data.object` from it, so an event shows
//! the object as it was at that moment, never as it is now.
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
use crate::money::Currency;
use crate::rows::agentic::{
    self as agentic, DebitPull, EpochUse, KEY_COLS, MANDATE_COLS, Mandate, PULL_COLS, SessionKey,
};
use crate::rows::bank::{self, BankTransfer, TRANSFER_COLS};
use crate::rows::consent::{self, Authorization};
use crate::rows::payments::{self, Payment};
use crate::rows::{Page, Scope};
use crate::verification::{Verification, VerificationStatus};
use openrail_domain::{
    AccountId, AttestationStatus, EventId, KeyStatus, MandateStatus, PaymentStatus, PullStatus,
    RefundStatus, TransferStatus,
};

/// Events, as read back (each change writes its own, in its transaction) (`store.events()`).
#[derive(Debug, Clone, Copy)]
pub struct Events<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on events as read back ([`Events`]).
    pub fn events(&self) -> Events<'_> {
        Events(self)
    }
}

string_enum!(
    /// What happened. The part before the last dot names the object.
    EventType {
        /// A mandate was created (its status says whether the payer must still sign).
        MandateCreated = "mandate.created",
        /// A mandate waits for its payer's signature.
        MandateRequiresAuthorization = "mandate.requires_authorization",
        /// The payer signed; the mandate is being created on chain.
        MandateAuthorized = "mandate.authorized",
        /// The mandate is on chain; keys may be issued and pull.
        MandateActivated = "mandate.activated",
        /// The mandate was canceled (by the API, or by the payer on chain).
        MandateCanceled = "mandate.canceled",
        /// The mandate's transaction failed.
        MandateFailed = "mandate.failed",
        /// A session key was issued.
        SessionKeyCreated = "session_key.created",
        /// The key is on chain and may pull.
        SessionKeyActivated = "session_key.activated",
        /// The key was revoked (by the API, or by the payer on chain).
        SessionKeyRevoked = "session_key.revoked",
        /// The key's time passed.
        SessionKeyExpired = "session_key.expired",
        /// The key's transaction failed.
        SessionKeyFailed = "session_key.failed",
        /// A debit pull was accepted.
        DebitPullCreated = "debit_pull.created",
        /// The chain consumed the allowance and moved the tokens.
        DebitPullAuthorized = "debit_pull.authorized",
        /// A rule refused the pull (`decline_code` says which).
        DebitPullDeclined = "debit_pull.declined",
        /// A bank-funded pull's bank leg finished.
        DebitPullSettled = "debit_pull.settled",
        /// The pull's transaction, or its bank leg, failed.
        DebitPullFailed = "debit_pull.failed",
        /// A reorganisation removed the block that resolved the pull: it is pending again
        /// and will be resolved again.
        DebitPullReorged = "debit_pull.reorged",
        /// A payment was created.
        PaymentCreated = "payment.created",
        /// A payment waits for its payer's signature.
        PaymentRequiresAuthorization = "payment.requires_authorization",
        /// The payer signed; the payment will run.
        PaymentAuthorized = "payment.authorized",
        /// The payment's transaction or bank transfer is under way.
        PaymentProcessing = "payment.processing",
        /// The money arrived.
        PaymentSucceeded = "payment.succeeded",
        /// The payment failed (`failure_reason`).
        PaymentFailed = "payment.failed",
        /// The developer withdrew the payment before its payer signed; nothing moved.
        PaymentCanceled = "payment.canceled",
        /// A refund owed to the payment's source arrived.
        PaymentRefundSucceeded = "payment.refund_succeeded",
        /// A refund owed to the payment's source failed.
        PaymentRefundFailed = "payment.refund_failed",
        /// A simulated bank transfer started.
        BankTransferCreated = "bank_account.transfer.created",
        /// It settled.
        BankTransferSettled = "bank_account.transfer.settled",
        /// It failed (`failure_reason`).
        BankTransferFailed = "bank_account.transfer.failed",
        /// A webhook endpoint failed for too long and was disabled.
        WebhookEndpointDisabled = "webhook_endpoint.disabled",
        /// An identity verification session was created (it waits for input).
        IdentityVerificationCreated = "identity.verification.created",
        /// The session was submitted; the provider is checking.
        IdentityVerificationProcessing = "identity.verification.processing",
        /// The check passed and the credential was issued (`credential_id`).
        IdentityVerificationVerified = "identity.verification.verified",
        /// The check failed (`last_error`); the session waits for input again.
        IdentityVerificationRequiresInput = "identity.verification.requires_input",
        /// The session was canceled before it was submitted.
        IdentityVerificationCanceled = "identity.verification.canceled",
        /// An identity attestation was accepted; its transaction is on its way.
        IdentityAttestationPending = "identity.attestation.pending",
        /// The attestation is on the attestation chain.
        IdentityAttestationActive = "identity.attestation.active",
        /// The attestation was revoked on the attestation chain.
        IdentityAttestationRevoked = "identity.attestation.revoked",
        /// The attestation's transaction failed.
        IdentityAttestationFailed = "identity.attestation.failed",
    }
);

/// The kind of object an event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    /// `man_…`
    Mandate,
    /// `sk_…`
    SessionKey,
    /// `pull_…`
    DebitPull,
    /// `pay_…`
    Payment,
    /// `btr_…`
    BankTransfer,
    /// `we_…`
    WebhookEndpoint,
    /// `idv_…`
    IdentityVerification,
    /// `att_…`
    Attestation,
}

impl EventType {
    /// The event of a mandate moving to `s` (`pending` after creation: the payer signed).
    pub fn of_mandate(s: MandateStatus) -> EventType {
        match s {
            MandateStatus::RequiresAuthorization => EventType::MandateRequiresAuthorization,
            MandateStatus::Pending => EventType::MandateAuthorized,
            MandateStatus::Active => EventType::MandateActivated,
            MandateStatus::Canceled => EventType::MandateCanceled,
            MandateStatus::Failed => EventType::MandateFailed,
        }
    }

    /// The event of a key moving to `s` (none for `pending`, which only a new key has).
    pub fn of_key(s: KeyStatus) -> Option<EventType> {
        match s {
            KeyStatus::Pending => None,
            KeyStatus::Active => Some(EventType::SessionKeyActivated),
            KeyStatus::Revoked => Some(EventType::SessionKeyRevoked),
            KeyStatus::Failed => Some(EventType::SessionKeyFailed),
        }
    }

    /// The event of an identity attestation reaching `s`.
    pub fn of_attestation(s: AttestationStatus) -> EventType {
        match s {
            AttestationStatus::Pending => EventType::IdentityAttestationPending,
            AttestationStatus::Active => EventType::IdentityAttestationActive,
            AttestationStatus::Revoked => EventType::IdentityAttestationRevoked,
            AttestationStatus::Failed => EventType::IdentityAttestationFailed,
        }
    }

    /// The event of a pull moving to `s` (`pending` after creation: a reorganisation).
    pub fn of_pull(s: PullStatus) -> EventType {
        match s {
            PullStatus::Pending => EventType::DebitPullReorged,
            PullStatus::Authorized => EventType::DebitPullAuthorized,
            PullStatus::Declined => EventType::DebitPullDeclined,
            PullStatus::Settled => EventType::DebitPullSettled,
            PullStatus::Failed => EventType::DebitPullFailed,
        }
    }

    /// The event of a payment moving to `s` (`pending` after creation: the payer signed).
    pub fn of_payment(s: PaymentStatus) -> EventType {
        match s {
            PaymentStatus::RequiresAuthorization => EventType::PaymentRequiresAuthorization,
            PaymentStatus::Pending => EventType::PaymentAuthorized,
            PaymentStatus::Processing => EventType::PaymentProcessing,
            PaymentStatus::Succeeded => EventType::PaymentSucceeded,
            PaymentStatus::Failed => EventType::PaymentFailed,
            PaymentStatus::Canceled => EventType::PaymentCanceled,
        }
    }

    /// The event of a refund ending in `s` (none for `pending`: the payment's failure says so).
    pub fn of_refund(s: RefundStatus) -> Option<EventType> {
        match s {
            RefundStatus::Pending => None,
            RefundStatus::Succeeded => Some(EventType::PaymentRefundSucceeded),
            RefundStatus::Failed => Some(EventType::PaymentRefundFailed),
        }
    }

    /// The event of a bank transfer moving to `s` (`pending`: it started).
    pub fn of_transfer(s: TransferStatus) -> EventType {
        match s {
            TransferStatus::Pending => EventType::BankTransferCreated,
            TransferStatus::Settled => EventType::BankTransferSettled,
            TransferStatus::Failed => EventType::BankTransferFailed,
        }
    }

    /// The event of a verification session moving to `s`.
    pub fn of_verification(s: VerificationStatus) -> EventType {
        match s {
            VerificationStatus::RequiresInput => EventType::IdentityVerificationRequiresInput,
            VerificationStatus::Processing => EventType::IdentityVerificationProcessing,
            VerificationStatus::Verified => EventType::IdentityVerificationVerified,
            VerificationStatus::Canceled => EventType::IdentityVerificationCanceled,
        }
    }

    /// The kind of object the event is about.
    pub fn object(self) -> ObjectKind {
        match self {
            EventType::MandateCreated
            | EventType::MandateRequiresAuthorization
            | EventType::MandateAuthorized
            | EventType::MandateActivated
            | EventType::MandateCanceled
            | EventType::MandateFailed => ObjectKind::Mandate,
            EventType::SessionKeyCreated
            | EventType::SessionKeyActivated
            | EventType::SessionKeyRevoked
            | EventType::SessionKeyExpired
            | EventType::SessionKeyFailed => ObjectKind::SessionKey,
            EventType::DebitPullCreated
            | EventType::DebitPullAuthorized
            | EventType::DebitPullDeclined
            | EventType::DebitPullSettled
            | EventType::DebitPullFailed
            | EventType::DebitPullReorged => ObjectKind::DebitPull,
            EventType::PaymentCreated
            | EventType::PaymentRequiresAuthorization
            | EventType::PaymentAuthorized
            | EventType::PaymentProcessing
            | EventType::PaymentSucceeded
            | EventType::PaymentFailed
            | EventType::PaymentCanceled
            | EventType::PaymentRefundSucceeded
            | EventType::PaymentRefundFailed => ObjectKind::Payment,
            EventType::BankTransferCreated
            | EventType::BankTransferSettled
            | EventType::BankTransferFailed => ObjectKind::BankTransfer,
            EventType::WebhookEndpointDisabled => ObjectKind::WebhookEndpoint,
            EventType::IdentityVerificationCreated
            | EventType::IdentityVerificationProcessing
            | EventType::IdentityVerificationVerified
            | EventType::IdentityVerificationRequiresInput
            | EventType::IdentityVerificationCanceled => ObjectKind::IdentityVerification,
            EventType::IdentityAttestationPending
            | EventType::IdentityAttestationActive
            | EventType::IdentityAttestationRevoked
            | EventType::IdentityAttestationFailed => ObjectKind::Attestation,
        }
    }
}

/// The object of an event and what its representation is computed from, at the moment of
/// the event.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "object", rename_all = "snake_case")]
pub enum Snapshot {
    /// A mandate, its epoch use and its payer's authorization.
    Mandate {
        /// The row.
        mandate: Mandate,
        /// The epoch containing the event's time.
        current_epoch: EpochUse,
        /// What a wallet payer was asked to sign, and the signature once given.
        authorization: Option<Authorization>,
    },
    /// A session key, its mandate and its epoch use.
    SessionKey {
        /// The row.
        session_key: SessionKey,
        /// Its mandate.
        mandate: Mandate,
        /// The epoch containing the event's time.
        current_epoch: EpochUse,
    },
    /// A debit pull.
    DebitPull {
        /// The row.
        debit_pull: DebitPull,
        /// The chain of its mandate.
        chain_id: u64,
    },
    /// A payment and its payer's authorization.
    Payment {
        /// The row.
        payment: Payment,
        /// What a wallet source was asked to sign, and the signature once given.
        authorization: Option<Authorization>,
    },
    /// A simulated bank transfer.
    BankTransfer {
        /// The row.
        bank_transfer: BankTransfer,
        /// Its account's currency.
        currency: Currency,
    },
    /// A webhook endpoint (never its secrets).
    WebhookEndpoint {
        /// The row.
        webhook_endpoint: crate::rows::webhooks::WebhookEndpoint,
    },
    /// An identity verification session.
    IdentityVerification {
        /// The row.
        identity_verification: Verification,
    },
    /// An identity attestation.
    IdentityAttestation {
        /// The row.
        attestation: crate::attestation::Attestation,
    },
}

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

async fn row_in<E: Exec>(
    conn: &mut E,
    table: &'static str,
    cols: &'static str,
    id: &str,
) -> Result<E::Row, StoreError> {
    let mut q = Stmt::new(
        conn.backend(),
        format!("SELECT {cols} FROM {table} WHERE id = $1"),
    );
    q.push(id);
    conn.fetch(&q)
        .await?
        .into_iter()
        .next()
        .ok_or(StoreError::NotFound)
}

/// The snapshot of object `id` of `kind` as it is now inside `conn`'s transaction, with its
/// owner and mode.
async fn snapshot_in(
    conn: &mut impl Exec,
    kind: ObjectKind,
    id: &str,
    now: i64,
) -> Result<(Snapshot, AccountId, Mode), StoreError> {
    Ok(match kind {
        ObjectKind::Mandate => {
            let m = agentic::mandate_of(&row_in(conn, "mandates", MANDATE_COLS, id).await?)?;
            let current_epoch = agentic::mandate_use_in(conn, &m, now).await?;
            let authorization = consent::authorization_in(conn, id).await?;
            let (account, mode) = (m.account_id.clone(), m.mode);
            let snap = Snapshot::Mandate {
                mandate: m,
                current_epoch,
                authorization,
            };
            (snap, account, mode)
        }
        ObjectKind::SessionKey => {
            let k = agentic::key_of(&row_in(conn, "session_keys", KEY_COLS, id).await?)?;
            let m = agentic::mandate_of(
                &row_in(conn, "mandates", MANDATE_COLS, k.mandate_id.as_str()).await?,
            )?;
            let current_epoch = agentic::key_use_in(conn, &k, &m, now).await?;
            let (account, mode) = (k.account_id.clone(), k.mode);
            let snap = Snapshot::SessionKey {
                session_key: k,
                mandate: m,
                current_epoch,
            };
            (snap, account, mode)
        }
        ObjectKind::DebitPull => {
            let p = agentic::pull_of(&row_in(conn, "debit_pulls", PULL_COLS, id).await?)?;
            let m = agentic::mandate_of(
                &row_in(conn, "mandates", MANDATE_COLS, p.mandate_id.as_str()).await?,
            )?;
            let (account, mode) = (p.account_id.clone(), p.mode);
            let snap = Snapshot::DebitPull {
                debit_pull: p,
                chain_id: m.chain_id,
            };
            (snap, account, mode)
        }
        ObjectKind::Payment => {
            let p = payments::payment_of(&row_in(conn, "payments", payments::COLS, id).await?)?;
            let authorization = consent::authorization_in(conn, id).await?;
            let (account, mode) = (p.account_id.clone(), p.mode);
            let snap = Snapshot::Payment {
                payment: p,
                authorization,
            };
            (snap, account, mode)
        }
        ObjectKind::BankTransfer => {
            let t = bank::transfer_of(&row_in(conn, "bank_transfers", TRANSFER_COLS, id).await?)?;
            let a = row_in(
                conn,
                "bank_accounts",
                "account_id, mode, currency",
                t.bank_account_id.as_str(),
            )
            .await?;
            let (account, mode, currency) = (
                AccountId::from_trusted(a.string("account_id")?),
                a.string("mode")?,
                a.string("currency")?,
            );
            let bad = |what: &str, v: &str| StoreError::Corrupt(format!("{what} {v:?}"));
            let mode = Mode::parse(&mode).ok_or_else(|| bad("mode", &mode))?;
            let currency = Currency::parse(&currency).ok_or_else(|| bad("currency", &currency))?;
            let snap = Snapshot::BankTransfer {
                bank_transfer: t,
                currency,
            };
            (snap, account, mode)
        }
        ObjectKind::WebhookEndpoint => {
            let id = openrail_domain::WebhookEndpointId::parse(id).ok_or(StoreError::NotFound)?;
            let e = crate::rows::webhooks::endpoint_in(conn, &id).await?;
            let (account, mode) = (e.account_id.clone(), e.mode);
            let snap = Snapshot::WebhookEndpoint {
                webhook_endpoint: e,
            };
            (snap, account, mode)
        }
        // Written with their snapshot by `store::verifications`, which reads the row.
        ObjectKind::IdentityVerification => {
            return Err(StoreError::Corrupt(format!(
                "identity verification {id}: its events are written with their snapshot"
            )));
        }
        ObjectKind::Attestation => {
            let a = agentic::attestation_of(
                &row_in(conn, "identity_attestations", agentic::ATTESTATION_COLS, id).await?,
            )?;
            let (account, mode) = (a.account_id.clone(), a.mode);
            (
                Snapshot::IdentityAttestation { attestation: a },
                account,
                mode,
            )
        }
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
    let (snapshot, account_id, mode) = snapshot_in(conn, kind.object(), id, now).await?;
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
            snapshot: Snapshot::DebitPull {
                debit_pull: p.clone(),
                chain_id,
            },
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
    use openrail_domain::MandateId;

    #[test]
    fn every_type_round_trips() {
        assert_eq!(EventType::ALL.len(), 39);
        for t in EventType::ALL {
            assert_eq!(EventType::parse(t.as_str()), Some(*t));
        }
    }

    #[test]
    fn status_events_are_about_their_object() {
        for s in MandateStatus::ALL {
            assert_eq!(EventType::of_mandate(*s).object(), ObjectKind::Mandate);
        }
        for s in KeyStatus::ALL {
            if let Some(t) = EventType::of_key(*s) {
                assert_eq!(t.object(), ObjectKind::SessionKey);
            }
        }
        for s in PullStatus::ALL {
            assert_eq!(EventType::of_pull(*s).object(), ObjectKind::DebitPull);
        }
        for s in PaymentStatus::ALL {
            assert_eq!(EventType::of_payment(*s).object(), ObjectKind::Payment);
        }
        for s in TransferStatus::ALL {
            assert_eq!(
                EventType::of_transfer(*s).object(),
                ObjectKind::BankTransfer
            );
        }
        for s in VerificationStatus::ALL {
            assert_eq!(
                EventType::of_verification(*s).object(),
                ObjectKind::IdentityVerification
            );
        }
    }

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
        let snap = Snapshot::Mandate {
            mandate: m,
            current_epoch: EpochUse {
                starts_at: 0,
                ends_at: 604_800,
                spent: 5,
                remaining: 12_340,
            },
            authorization: None,
        };
        let json = serde_json::to_string(&snap).unwrap();
        assert_eq!(serde_json::from_str::<Snapshot>(&json).unwrap(), snap);
    }
}
