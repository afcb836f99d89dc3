//! Identity verification sessions (Stripe Identity's `VerificationSession` shape): a
//! developer asks whether a wallet is a person, is financially healthy or is an agent; the
//! session waits for the flow (`requires_input`), is submitted (`processing`), and the
//! provider's check either passes — Openrail issues the credential and the session is
//! `verified` with its `credential_id` — or fails, which returns it to `requires_input`
//! with a `last_error`. A session not yet submitted may be `canceled`.
//!
//! Testnet's provider is simulated: the session's [`Scenario`] says what it answers and
//! how soon (`due_at`); the lease holder's clock moves due sessions
//! (`Verifications::due`, then [`Verifications::fail`] or
//! [`Verifications::complete`]). Every status change goes through one function,
//! [`move_verification_in`], which checks the move against [`VerificationStatus::sources`]
//! and writes the event in the same transaction.

use crate::agentic::{Page, Scope};
use crate::db::{Store, StoreError};
use crate::events::{self, EventType};
use crate::exec::{Exec, Record, Stmt};
use crate::ids::Mode;
pub use crate::verification::{
    DEFAULT_FAILURE_REASON, FAILED_CHECK_CODE, LastError, Scenario, SimulatedAnswer, Verification,
    VerificationStatus, VerificationType,
};
use openrail_domain::{AccountId, IdentityVerificationId};

/// Identity verification sessions (`store.verifications()`).
#[derive(Debug, Clone, Copy)]
pub struct Verifications<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on identity verification sessions ([`Verifications`]).
    pub fn verifications(&self) -> Verifications<'_> {
        Verifications(self)
    }
}

const COLS: &str = "id, account_id, mode, type, subject, status, scenario, \
     failure_reason, last_error_code, last_error_reason, credential_id, issuer_base, due_at, \
     submissions, created_at, updated_at";

fn corrupt(what: &str, v: &str) -> StoreError {
    StoreError::Corrupt(format!("{what} {v:?}"))
}

/// A session from its row.
fn verification_of(r: &impl Record) -> Result<Verification, StoreError> {
    let mode = r.string("mode")?;
    let kind = r.string("type")?;
    let status = r.string("status")?;
    let scenario = r.string("scenario")?;
    let last_error = match (r.text("last_error_code")?, r.text("last_error_reason")?) {
        (Some(code), reason) => Some(LastError {
            code,
            reason: reason.unwrap_or_default(),
        }),
        (None, _) => None,
    };
    Ok(Verification {
        id: IdentityVerificationId::from_trusted(r.string("id")?),
        account_id: AccountId::from_trusted(r.string("account_id")?),
        mode: Mode::parse(&mode).ok_or_else(|| corrupt("mode", &mode))?,
        kind: VerificationType::parse(&kind).ok_or_else(|| corrupt("verification type", &kind))?,
        subject: r.string("subject")?,
        status: VerificationStatus::parse(&status)
            .ok_or_else(|| corrupt("verification status", &status))?,
        scenario: Scenario::parse(&scenario).ok_or_else(|| corrupt("scenario", &scenario))?,
        failure_reason: r.text("failure_reason")?,
        last_error,
        credential_id: r.text("credential_id")?,
        issuer_base: r.string("issuer_base")?,
        due_at: r.int("due_at")?,
        submissions: r.integer("submissions")?,
        created_at: r.integer("created_at")?,
        updated_at: r.integer("updated_at")?,
    })
}

/// What a new session starts with.
#[derive(Debug, Clone)]
pub struct NewVerification<'a> {
    /// What it verifies.
    pub kind: VerificationType,
    /// The wallet (EIP-55).
    pub subject: &'a str,
    /// What the simulated provider answers.
    pub scenario: Scenario,
    /// The reason a `failed` scenario gives.
    pub failure_reason: Option<&'a str>,
    /// Where the credential's status list is published.
    pub issuer_base: &'a str,
}

/// A session's state after a move: every field the writer sets.
#[derive(Debug, Clone)]
pub struct Change<'a> {
    /// The new status.
    pub to: VerificationStatus,
    /// What the provider answers from now on.
    pub scenario: Scenario,
    /// Its failure reason.
    pub failure_reason: Option<&'a str>,
    /// Why the check failed (`requires_input` after `processing`), else none.
    pub last_error: Option<(&'a str, &'a str)>,
    /// The issued credential: its id and signed JSON (`verified`).
    pub credential: Option<(&'a str, &'a str)>,
    /// When the provider answers (`processing`), else none.
    pub due_at: Option<i64>,
    /// Submissions so far.
    pub submissions: i64,
}

/// **The one place a verification session's status changes**, inside the caller's
/// transaction: moves session `id` from `from` (the status it was read in) as `change`
/// says, when its lifecycle allows it ([`VerificationStatus::sources`]; otherwise
/// [`StoreError::Transition`] and nothing is written), and records the event. Returns false
/// when another writer moved it first.
pub(crate) async fn move_verification_in(
    conn: &mut impl Exec,
    id: &IdentityVerificationId,
    from: VerificationStatus,
    change: &Change<'_>,
    now: i64,
) -> Result<bool, StoreError> {
    use openrail_domain::status::Lifecycle;
    if !change.to.reachable_from(from) {
        return Err(StoreError::Transition(format!(
            "identity verification {id}: {} → {}",
            from.as_str(),
            change.to.as_str()
        )));
    }
    let (code, reason) = change.last_error.unzip();
    let (credential_id, credential) = change.credential.unzip();
    let mut q = Stmt::new(
        conn.backend(),
        "UPDATE identity_verifications SET status = $2, scenario = $3, failure_reason = $4, \
         last_error_code = $5, last_error_reason = $6, \
         credential_id = COALESCE($7, credential_id), credential = COALESCE($8, credential), \
         due_at = $9, updated_at = $10, submissions = $12 WHERE id = $1 AND status = $11"
            .into(),
    );
    q.push(id.as_str())
        .push(change.to.as_str())
        .push(change.scenario.as_str())
        .push(change.failure_reason)
        .push(code)
        .push(reason)
        .push(credential_id)
        .push(credential)
        .push(change.due_at)
        .push(now)
        .push(from.as_str())
        .push(change.submissions);
    let moved = conn.execute(&q).await? == 1;
    if moved {
        record_in(
            conn,
            EventType::of_verification(change.to),
            id.as_str(),
            now,
        )
        .await?;
    }
    Ok(moved)
}

/// Writes the `kind` event of session `id` with the session as it now is in `conn`'s
/// transaction (its snapshot read here: `events` holds sessions but does not read them).
async fn record_in(
    conn: &mut impl Exec,
    kind: EventType,
    id: &str,
    now: i64,
) -> Result<(), StoreError> {
    let mut q = Stmt::new(
        conn.backend(),
        format!("SELECT {COLS} FROM identity_verifications WHERE id = $1"),
    );
    q.push(id);
    let row = conn.fetch(&q).await?.into_iter().next();
    let v = verification_of(&row.ok_or(StoreError::NotFound)?)?;
    let (account_id, mode) = (v.account_id.clone(), v.mode);
    let event = events::NewEvent {
        kind,
        object_id: id,
        account_id: &account_id,
        mode,
        snapshot: events::Snapshot::IdentityVerification(events::IdentityVerificationSnapshot {
            identity_verification: v,
        }),
        created_at: now,
    };
    events::insert_all(conn, &[event]).await
}

impl Verifications<'_> {
    /// Creates session `id` (`requires_input`) with its `identity.verification.created`
    /// event.
    pub async fn create(
        self,
        scope: Scope<'_>,
        id: &IdentityVerificationId,
        n: &NewVerification<'_>,
        now: i64,
    ) -> Result<Verification, StoreError> {
        let id = id.clone();
        let account_id = scope.account_id.clone();
        let mode = scope.mode;
        let (kind, scenario) = (n.kind, n.scenario);
        let subject = n.subject.to_owned();
        let failure_reason = n.failure_reason.map(str::to_owned);
        let issuer_base = n.issuer_base.to_owned();
        let id = self
            .0
            .write(move |mut tx| {
                Box::pin(async move {
                    let q = Stmt::new(
                        tx.backend(),
                        format!(
                            "INSERT INTO identity_verifications ({COLS}) \
                             VALUES ($1, $2, $3, $4, $5, 'requires_input', $6, $7, NULL, NULL, NULL, $8, NULL, 0, $9, $9)"
                        ),
                    )
                    .bind(id.as_str())
                    .bind(account_id.as_str())
                    .bind(mode.as_str())
                    .bind(kind.as_str())
                    .bind(subject)
                    .bind(scenario.as_str())
                    .bind(failure_reason)
                    .bind(issuer_base)
                    .bind(now);
                    tx.execute(&q).await?;
                    record_in(
                        &mut tx,
                        EventType::IdentityVerificationCreated,
                        id.as_str(),
                        now,
                    )
                    .await?;
                    Ok(id)
                })
            })
            .await?;
        self.0.verifications().get(scope, &id).await
    }

    /// A session of this account and mode.
    pub async fn get(
        self,
        scope: Scope<'_>,
        id: &IdentityVerificationId,
    ) -> Result<Verification, StoreError> {
        let row = self
            .0
            .scoped_row("identity_verifications", COLS, scope, id.as_str())
            .await?;
        verification_of(&row)
    }

    /// Sessions of this account and mode, newest first.
    pub async fn list(
        self,
        scope: Scope<'_>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<Verification>, StoreError> {
        let (rows, has_more) = self
            .0
            .list_rows(
                "identity_verifications",
                COLS,
                scope,
                &[],
                limit,
                starting_after,
            )
            .await?;
        Ok(Page {
            data: rows.iter().map(verification_of).collect::<Result<_, _>>()?,
            has_more,
        })
    }

    /// The signed credential a verified session issued (none before).
    pub async fn credential(
        self,
        scope: Scope<'_>,
        id: &IdentityVerificationId,
    ) -> Result<Option<String>, StoreError> {
        let row = self
            .0
            .scoped_row("identity_verifications", "credential", scope, id.as_str())
            .await?;
        row.text("credential")
    }

    /// Submits a session (the flow is finished): `requires_input` → `processing`, due
    /// after its scenario's delay. The last error is cleared. A session in another status
    /// is [`StoreError::Transition`].
    pub async fn submit(
        self,
        scope: Scope<'_>,
        id: &IdentityVerificationId,
        now: i64,
    ) -> Result<Verification, StoreError> {
        let v = self.0.verifications().get(scope, id).await?;
        let scenario = v.scenario;
        let change = Change {
            to: VerificationStatus::Processing,
            scenario,
            failure_reason: v.failure_reason.as_deref(),
            last_error: None,
            credential: None,
            due_at: Some(now + scenario.delay_ms()),
            submissions: v.submissions + 1,
        };
        self.0.move_scoped(scope, &v, &change, now).await
    }

    /// Cancels a session that was not submitted: `requires_input` → `canceled`. Canceling a
    /// canceled session answers it as it is; any other status is
    /// [`StoreError::Transition`].
    pub async fn cancel(
        self,
        scope: Scope<'_>,
        id: &IdentityVerificationId,
        now: i64,
    ) -> Result<Verification, StoreError> {
        let v = self.0.verifications().get(scope, id).await?;
        if v.status == VerificationStatus::Canceled {
            return Ok(v);
        }
        let change = Change {
            to: VerificationStatus::Canceled,
            scenario: v.scenario,
            failure_reason: v.failure_reason.as_deref(),
            last_error: v
                .last_error
                .as_ref()
                .map(|e| (e.code.as_str(), e.reason.as_str())),
            credential: None,
            due_at: None,
            submissions: v.submissions,
        };
        self.0.move_scoped(scope, &v, &change, now).await
    }
}

impl Store {
    /// Moves `v` (as read) and answers it as it then is; a session another writer moved
    /// first is a [`StoreError::Transition`] from its new status.
    async fn move_scoped(
        &self,
        scope: Scope<'_>,
        v: &Verification,
        change: &Change<'_>,
        now: i64,
    ) -> Result<Verification, StoreError> {
        let moved = self.move_verification(v, change, now).await?;
        let now_is = self.verifications().get(scope, &v.id).await?;
        if !moved {
            return Err(StoreError::Transition(format!(
                "identity verification {}: {} → {}",
                v.id,
                now_is.status.as_str(),
                change.to.as_str()
            )));
        }
        Ok(now_is)
    }

    /// Moves `v` (as read) as `change` says, in a transaction of its own (see
    /// [`move_verification_in`]). Returns false when another writer moved it first.
    async fn move_verification(
        &self,
        v: &Verification,
        change: &Change<'_>,
        now: i64,
    ) -> Result<bool, StoreError> {
        let (id, from) = (v.id.clone(), v.status);
        let (to, scenario, due_at, submissions) = (
            change.to,
            change.scenario,
            change.due_at,
            change.submissions,
        );
        let failure_reason = change.failure_reason.map(str::to_owned);
        let last_error = change
            .last_error
            .map(|(code, reason)| (code.to_owned(), reason.to_owned()));
        let credential = change
            .credential
            .map(|(id, json)| (id.to_owned(), json.to_owned()));
        self.write(move |mut tx| {
            Box::pin(async move {
                let change = Change {
                    to,
                    scenario,
                    failure_reason: failure_reason.as_deref(),
                    last_error: last_error.as_ref().map(|(c, r)| (c.as_str(), r.as_str())),
                    credential: credential.as_ref().map(|(i, j)| (i.as_str(), j.as_str())),
                    due_at,
                    submissions,
                };
                move_verification_in(&mut tx, &id, from, &change, now).await
            })
        })
        .await
    }
}

impl Verifications<'_> {
    /// Sessions the provider must answer by `now` (`processing`, due), oldest due first,
    /// of every account of `mode`.
    pub async fn due(
        self,
        mode: Mode,
        now: i64,
        limit: u32,
    ) -> Result<Vec<Verification>, StoreError> {
        let q = self
            .0
            .stmt(format!(
                "SELECT {COLS} FROM identity_verifications \
                 WHERE status = 'processing' AND due_at <= $1 AND mode = $2 ORDER BY due_at, id LIMIT {limit}"
            ))
            .bind(now)
            .bind(mode.as_str());
        let rows = self.0.fetch(&q).await?;
        rows.iter().map(verification_of).collect()
    }

    /// The provider's check of `v` (read `processing`) failed: back to `requires_input`
    /// with `last_error`. False when another worker answered it first.
    pub async fn fail(
        self,
        v: &Verification,
        (code, reason): (&str, &str),
        now: i64,
    ) -> Result<bool, StoreError> {
        let change = Change {
            to: VerificationStatus::RequiresInput,
            scenario: v.scenario,
            failure_reason: v.failure_reason.as_deref(),
            last_error: Some((code, reason)),
            credential: None,
            due_at: None,
            submissions: v.submissions,
        };
        self.0.move_verification(v, &change, now).await
    }

    /// The provider's check of `v` (read `processing`) passed and credential
    /// `credential_id` (signed: `credential`) was issued: `verified`. False when another
    /// worker answered it first.
    pub async fn complete(
        self,
        v: &Verification,
        credential_id: &str,
        credential: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        let change = Change {
            to: VerificationStatus::Verified,
            scenario: v.scenario,
            failure_reason: v.failure_reason.as_deref(),
            last_error: None,
            credential: Some((credential_id, credential)),
            due_at: None,
            submissions: v.submissions,
        };
        self.0.move_verification(v, &change, now).await
    }
}
