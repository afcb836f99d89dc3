//! Mandates, session keys and debit pulls: their queries and status writers (their rows
//! are `rows::agentic`'s, re-exported here).

use std::collections::HashMap;

use crate::db::{Store, StoreError};
use crate::events::{self, EventType, NewEvent};
use crate::exec::{Exec, Record, Stmt};
use crate::ids::Mode;
use crate::money::Currency;
use crate::outbox::{self, WorkKind};
use crate::rows::Reads;
pub use crate::rows::agentic::{
    AgentAuthorization, DebitPull, EpochUse, IdentityRequirements, Mandate, SessionKey,
};
pub(crate) use crate::rows::agentic::{
    KEY_COLS, MANDATE_COLS, PULL_COLS, bank_funded, key_of, key_use_in, mandate_from, mandate_of,
    mandate_use_in, pull_of, spend_in,
};
pub use crate::rows::{Page, Scope};
pub(crate) use crate::rows::{corrupt, currency_of, i64_of, in_list, u64_of};
use openrail_domain::FailureReason;
use openrail_domain::journal::{Fate, Intent, TxStatus};
pub use openrail_domain::pulls::{DeclineReason, PullResolution};
use openrail_domain::{AttestationId, BankAccountId, MandateId, PullId, SessionKeyId};
pub use openrail_domain::{KeyStatus, MandateStatus, PullStatus};
use openrail_domain::{MandateTx, PullTx, SessionKeyTx};

/// Session keys: their rows, lists, epoch use and the moves their owner makes (`store.keys()`).
#[derive(Debug, Clone, Copy)]
pub struct Keys<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on session keys ([`Keys`]).
    pub fn keys(&self) -> Keys<'_> {
        Keys(self)
    }
}

/// Debit pulls: accepting them (through the group commit), their outcomes and reads (`store.pulls()`).
#[derive(Debug, Clone, Copy)]
pub struct Pulls<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on debit pulls ([`Pulls`]).
    pub fn pulls(&self) -> Pulls<'_> {
        Pulls(self)
    }
}

/// Mandates: their rows, lists, epoch use and the moves their owner makes (`store.mandates()`).
#[derive(Debug, Clone, Copy)]
pub struct Mandates<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on mandates ([`Mandates`]).
    pub fn mandates(&self) -> Mandates<'_> {
        Mandates(self)
    }
}

string_enum!(
    /// A session key's status as lists filter it: the stored [`KeyStatus`], with `active`
    /// split by time into `active` and `expired` (as the API shows keys).
    KeyFilter {
        /// Issued, its transaction not yet mined.
        Pending = "pending",
        /// On chain and not yet expired.
        Active = "active",
        /// On chain, its time passed.
        Expired = "expired",
        /// Revoked.
        Revoked = "revoked",
        /// Its transaction failed.
        Failed = "failed",
    }
);

impl KeyFilter {
    /// The stored status it selects, and whether the key's time must have passed
    /// (`Some(true)`), must not have (`Some(false)`), or does not matter.
    fn stored(self) -> (KeyStatus, Option<bool>) {
        match self {
            KeyFilter::Pending => (KeyStatus::Pending, None),
            KeyFilter::Active => (KeyStatus::Active, Some(false)),
            KeyFilter::Expired => (KeyStatus::Active, Some(true)),
            KeyFilter::Revoked => (KeyStatus::Revoked, None),
            KeyFilter::Failed => (KeyStatus::Failed, None),
        }
    }
}

impl Mandates<'_> {
    /// Inserts a new mandate with its `mandate.created` event (and
    /// `mandate.requires_authorization` when the payer must sign).
    pub async fn insert(self, m: &Mandate) -> Result<(), StoreError> {
        self.0.mandates().insert_with(m, None).await
    }

    /// [`Mandates::insert`], with what its wallet payer is asked to sign written first
    /// in the same transaction (so the first event shows it, and a crash leaves both or
    /// neither).
    pub async fn insert_with(
        self,
        m: &Mandate,
        authorization: Option<&crate::rows::consent::Authorization>,
    ) -> Result<(), StoreError> {
        let m = m.clone();
        let authorization = authorization.cloned();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    if let Some(a) = &authorization {
                        crate::rows::consent::insert_authorization_in(&mut tx, a).await?;
                    }
                    insert_mandate_in(&mut tx, &m).await
                })
            })
            .await
    }

    /// Fails a mandate no transaction carries (its rows make no usable call, or its only
    /// transaction was refused), with its event, at `now` (unix ms). Every outcome that has
    /// a transaction is that transaction's fate (see [`crate::journal::apply_fates_in`]).
    /// Returns whether it moved.
    pub async fn fail_unsent(self, id: &MandateId, now: i64) -> Result<bool, StoreError> {
        let id = id.clone();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    move_mandate_in(
                        &mut tx,
                        id.as_str(),
                        MandateStatus::Failed,
                        None,
                        Guard::None,
                        now,
                    )
                    .await
                })
            })
            .await
    }

    /// A mandate of this account and mode.
    pub async fn get(self, scope: Scope<'_>, id: &MandateId) -> Result<Mandate, StoreError> {
        mandate_of(
            &self
                .0
                .scoped_row("mandates", MANDATE_COLS, scope, id.as_str())
                .await?,
        )
    }

    /// Mandates, newest first.
    pub async fn list(
        self,
        scope: Scope<'_>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<Mandate>, StoreError> {
        self.0
            .mandates()
            .list_in(scope, None, limit, starting_after)
            .await
    }

    /// Mandates of one stored status when given, newest first.
    pub async fn list_in(
        self,
        scope: Scope<'_>,
        status: Option<MandateStatus>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<Mandate>, StoreError> {
        let filters: Vec<_> = status.map(|s| ("status", s.as_str())).into_iter().collect();
        let (rows, has_more) = self
            .0
            .list_rows(
                "mandates",
                MANDATE_COLS,
                scope,
                &filters,
                limit,
                starting_after,
            )
            .await?;
        Ok(Page {
            data: rows.iter().map(mandate_of).collect::<Result<_, _>>()?,
            has_more,
        })
    }
}

impl Keys<'_> {
    /// Inserts a new session key with the hash of its agent secret, and its
    /// `session_key.created` event.
    pub async fn insert(self, k: &SessionKey, secret_hash: &str) -> Result<(), StoreError> {
        let k = k.clone();
        let secret_hash = secret_hash.to_owned();
        self.0
            .write(move |mut tx| {
                Box::pin(async move { insert_key_in(&mut tx, &k, &secret_hash).await })
            })
            .await
    }

    /// Fails a session key no transaction carries, as [`Mandates::fail_unsent`].
    pub async fn fail_unsent(self, id: &SessionKeyId, now: i64) -> Result<bool, StoreError> {
        let id = id.clone();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    move_key_in(
                        &mut tx,
                        id.as_str(),
                        KeyStatus::Failed,
                        None,
                        Guard::None,
                        now,
                    )
                    .await
                })
            })
            .await
    }

    /// A session key of this account and mode.
    pub async fn get(self, scope: Scope<'_>, id: &SessionKeyId) -> Result<SessionKey, StoreError> {
        key_of(
            &self
                .0
                .scoped_row("session_keys", KEY_COLS, scope, id.as_str())
                .await?,
        )
    }

    /// Session key `id` of `scope` with its mandate, in one read (what a pull is judged on).
    pub async fn get_with_mandate(
        self,
        scope: Scope<'_>,
        id: &SessionKeyId,
    ) -> Result<(SessionKey, Mandate), StoreError> {
        static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        let sql = SQL.get_or_init(|| {
            let key: Vec<String> = KEY_COLS
                .split(", ")
                .map(|c| format!("k.{}", c.trim()))
                .collect();
            let mandate: Vec<String> = MANDATE_COLS
                .split(", ")
                .map(|c| format!("m.{0} AS m_{0}", c.trim()))
                .collect();
            format!(
                "SELECT {}, {} FROM session_keys k JOIN mandates m ON m.id = k.mandate_id \
                 AND m.account_id = k.account_id AND m.mode = k.mode \
                 WHERE k.id = $1 AND k.account_id = $2 AND k.mode = $3",
                key.join(", "),
                mandate.join(", ")
            )
        });
        // Read inline on SQLite: this is every pull's read (see `crate::inline`).
        let mut stmt = Stmt::new(self.0.backend(), sql.clone());
        stmt.push(id.as_str())
            .push(scope.account_id.as_str())
            .push(scope.mode.as_str());
        let row = self
            .0
            .fetch_optional(&stmt)
            .await?
            .ok_or(StoreError::NotFound)?;
        Ok((key_of(&row)?, mandate_from(&row, "m_")?))
    }

    /// The session key whose agent secret hashes to `secret_hash`.
    pub async fn by_secret(self, secret_hash: &str) -> Result<Option<SessionKey>, StoreError> {
        // Every agent's request authenticates with this read: inline on SQLite.
        let mut stmt = Stmt::new(
            self.0.backend(),
            format!("SELECT {KEY_COLS} FROM session_keys WHERE secret_hash = $1"),
        );
        stmt.push(secret_hash);
        self.0
            .fetch_optional(&stmt)
            .await?
            .as_ref()
            .map(key_of)
            .transpose()
    }

    /// Session keys, newest first; of one mandate when given.
    pub async fn list(
        self,
        scope: Scope<'_>,
        mandate_id: Option<&str>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<SessionKey>, StoreError> {
        self.0
            .keys()
            .list_in(scope, mandate_id, None, 0, limit, starting_after)
            .await
    }

    /// The account's keys in `scope`, newest first: of `mandate_id` when given, and with
    /// the status `status` shows at `now` (unix ms) when given (the dashboard's filter;
    /// `expired` is an active key whose time passed).
    pub async fn list_in(
        self,
        scope: Scope<'_>,
        mandate_id: Option<&str>,
        status: Option<KeyFilter>,
        now: i64,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<SessionKey>, StoreError> {
        let stored = status.map(KeyFilter::stored);
        let filters: Vec<_> = mandate_id
            .map(|m| ("mandate_id", m))
            .into_iter()
            .chain(stored.map(|(s, _)| ("status", s.as_str())))
            .collect();
        let time = stored
            .and_then(|(_, passed)| passed)
            .map(|passed| ("expires_at", passed, now));
        let (rows, has_more) = self
            .0
            .list_rows_where(
                "session_keys",
                KEY_COLS,
                scope,
                &filters,
                time,
                limit,
                starting_after,
            )
            .await?;
        Ok(Page {
            data: rows.iter().map(key_of).collect::<Result<_, _>>()?,
            has_more,
        })
    }
}

impl Pulls<'_> {
    /// Inserts a new debit pull.
    pub async fn insert(self, p: &DebitPull) -> Result<(), StoreError> {
        self.0.pulls().insert_many(std::slice::from_ref(p)).await
    }

    /// Inserts new pulls in one transaction (requests that arrive together share one
    /// commit), each as [`Pulls::insert`].
    pub async fn insert_many(self, pulls: &[DebitPull]) -> Result<(), StoreError> {
        let pulls = pulls.to_vec();
        self.0
            .write(move |mut tx| Box::pin(async move { insert_pulls_in(&mut tx, &pulls).await }))
            .await
    }

    /// Records how a pull ended on chain, at `now` (unix ms); only a pending pull changes.
    /// Returns whether it changed (false when it was already resolved, e.g. by the relayer
    /// or the API first).
    pub async fn resolve(
        self,
        id: &PullId,
        r: &PullResolution,
        now: i64,
    ) -> Result<bool, StoreError> {
        let id = id.clone();
        let r = r.clone();
        self.0
            .write(move |mut tx| {
                Box::pin(async move { resolve_pull_in(&mut tx, id.as_str(), &r, now).await })
            })
            .await
    }
}

impl Keys<'_> {
    /// Records `session_key.expired` for active keys whose time passed by `now` (unix ms),
    /// once each (at most `limit` a call). Returns how many.
    pub async fn announce_expired(self, now: i64, limit: u32) -> Result<u64, StoreError> {
        let q = self
            .0
            .stmt(format!(
                "SELECT id FROM session_keys WHERE status = 'active' AND expires_at <= $1 \
                 AND expiry_announced = 0 ORDER BY expires_at LIMIT {limit}"
            ))
            .bind(now);
        let rows = self.0.fetch(&q).await?;
        let mut announced = 0;
        for r in rows {
            let id = r.string("id")?;
            let moved = self
                .0
                .write(move |mut tx| {
                    Box::pin(async move {
                        let q = Stmt::new(
                            tx.backend(),
                            "UPDATE session_keys SET expiry_announced = 1 WHERE id = $1 AND expiry_announced = 0"
                                .into(),
                        )
                        .bind(id.as_str());
                        let moved = tx.execute(&q).await? == 1;
                        if moved {
                            events::record(&mut tx, EventType::SessionKeyExpired, &id, now).await?;
                        }
                        Ok(moved)
                    })
                })
                .await?;
            if moved {
                announced += 1;
            }
        }
        Ok(announced)
    }
}

/// A new mandate with its events and, when pending, its work, inside the caller's
/// transaction (see [`Mandates::insert_with`]).
async fn insert_mandate_in(conn: &mut impl Exec, m: &Mandate) -> Result<(), StoreError> {
    let q = Stmt::new(
        conn.backend(),
        format!(
            "INSERT INTO mandates ({MANDATE_COLS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18)"
        ),
    )
    .bind(m.id.as_str())
    .bind(m.account_id.as_str())
    .bind(m.mode.as_str())
    .bind(&m.payer_account_id)
    .bind(&m.payer_address)
    .bind(m.currency.code())
    .bind(i64_of(m.max_amount))
    .bind(m.interval.as_str())
    .bind(&m.purpose)
    .bind(m.status.as_str())
    .bind(i64_of(m.chain_id))
    .bind(&m.contract)
    .bind(&m.onchain_id)
    .bind(&m.tx_hash)
    .bind(m.created_at)
    .bind(serde_json::to_string(&m.payees).expect("strings serialize"))
    .bind(&m.agent)
    .bind(
        m.requirements
            .as_ref()
            .map(|r| serde_json::to_string(r).expect("requirements serialize")),
    );
    conn.execute(&q).await?;
    events::record(conn, EventType::MandateCreated, m.id.as_str(), m.created_at).await?;
    if m.status == MandateStatus::Pending {
        outbox::enqueue(
            conn,
            &Intent::Mandate(m.id.clone()),
            WorkKind::CreateMandate,
            m.chain_id,
            m.mode,
            m.created_at,
        )
        .await?;
    } else {
        events::record(
            conn,
            EventType::of_mandate(m.status),
            m.id.as_str(),
            m.created_at,
        )
        .await?;
    }
    Ok(())
}

/// A new session key with the hash of its agent secret, its event and, when pending, its
/// work, inside the caller's transaction (see [`Keys::insert`]).
async fn insert_key_in(
    conn: &mut impl Exec,
    k: &SessionKey,
    secret_hash: &str,
) -> Result<(), StoreError> {
    let q = Stmt::new(
        conn.backend(),
        format!(
            "INSERT INTO session_keys ({KEY_COLS}, secret_hash) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13)"
        ),
    )
    .bind(k.id.as_str())
    .bind(k.account_id.as_str())
    .bind(k.mode.as_str())
    .bind(k.mandate_id.as_str())
    .bind(k.expires_at)
    .bind(k.max_amount.map(i64_of))
    .bind(serde_json::to_string(&k.allowed_destinations).expect("strings serialize"))
    .bind(k.status.as_str())
    .bind(&k.onchain_id)
    .bind(&k.tx_hash)
    .bind(k.created_at)
    .bind(&k.signer)
    .bind(secret_hash);
    conn.execute(&q).await?;
    events::record(
        conn,
        EventType::SessionKeyCreated,
        k.id.as_str(),
        k.created_at,
    )
    .await?;
    if k.status == KeyStatus::Pending {
        let chain_id = outbox::chain_of(conn, &k.mandate_id).await?;
        outbox::enqueue(
            conn,
            &Intent::SessionKey(k.id.clone()),
            WorkKind::IssueSessionKey,
            chain_id,
            k.mode,
            k.created_at,
        )
        .await?;
    }
    Ok(())
}

/// Most pulls one statement inserts (22 parameters each).
const PULLS_PER_INSERT: usize = 200;

/// The chain of each of these mandates and whether it is bank-funded, by mandate id.
pub(crate) async fn mandate_chains_in(
    conn: &mut impl Exec,
    mandate_ids: &[&str],
) -> Result<MandateChains, StoreError> {
    let mut ids: Vec<&str> = mandate_ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let mut out = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let mut q = Stmt::new(
            conn.backend(),
            format!(
                "SELECT id, chain_id, payer_account_id FROM mandates WHERE id IN ({})",
                crate::sql::numbered(1, chunk.len())
            ),
        );
        for id in chunk {
            q.push(id);
        }
        for r in conn.fetch(&q).await? {
            let payer = r.string("payer_account_id")?;
            out.insert(
                r.string("id")?,
                (
                    u64::try_from(r.integer("chain_id")?).unwrap_or_default(),
                    bank_funded(&payer),
                ),
            );
        }
    }
    Ok(out)
}

/// New pulls, each with its `debit_pull.created` event and, when pending, its work (a
/// pull declined off chain gets its `debit_pull.declined` event instead) — a few
/// statements for many pulls.
pub(crate) async fn insert_pulls_in(
    conn: &mut impl Exec,
    pulls: &[DebitPull],
) -> Result<(), StoreError> {
    insert_pull_rows_in(conn, pulls).await?;
    let mandate_ids: Vec<&str> = pulls.iter().map(|p| p.mandate_id.as_str()).collect();
    let chains = mandate_chains_in(conn, &mandate_ids).await?;
    let mut events = Vec::with_capacity(pulls.len());
    let mut work = Vec::with_capacity(pulls.len());
    created_effects(pulls, &chains, &mut events, &mut work)?;
    events::insert_all(conn, &events).await?;
    outbox::enqueue_all(conn, &work).await
}

/// The rows of new pulls (their events and work are [`created_effects`]).
pub(crate) async fn insert_pull_rows_in(
    conn: &mut impl Exec,
    pulls: &[DebitPull],
) -> Result<(), StoreError> {
    for chunk in pulls.chunks(PULLS_PER_INSERT) {
        let mut q = Stmt::new(
            conn.backend(),
            format!(
                "INSERT INTO debit_pulls ({PULL_COLS}) VALUES {}",
                crate::sql::placeholders(chunk.len(), 22)
            ),
        );
        for p in chunk {
            q.push(p.id.as_str())
                .push(p.account_id.as_str())
                .push(p.mode.as_str())
                .push(p.session_key_id.as_str())
                .push(p.mandate_id.as_str())
                .push(i64_of(p.amount))
                .push(p.currency.code())
                .push(&p.destination)
                .push(&p.destination_address)
                .push(p.description.as_deref())
                .push(p.status.as_str())
                .push(p.decline_code.map(DeclineReason::as_str))
                .push(p.remaining.map(i64_of))
                .push(p.resets_at)
                .push(p.tx_hash.as_deref())
                .push(p.authorized_at)
                .push(p.created_at)
                .push(p.updated_at)
                .push(p.failure_reason.map(FailureReason::as_str))
                .push(p.agent.as_ref().map(|a| a.nonce.as_str()))
                .push(p.agent.as_ref().map(|a| a.deadline))
                .push(p.agent.as_ref().map(|a| a.signature.as_str()));
        }
        conn.execute(&q).await?;
    }
    Ok(())
}

/// The chain of each mandate and whether it is bank-funded, by mandate id.
pub(crate) type MandateChains = HashMap<String, (u64, bool)>;

/// The chain of pull `p`'s mandate and whether it is bank-funded, from `chains`.
fn chain_of(chains: &MandateChains, p: &DebitPull) -> Result<(u64, bool), StoreError> {
    chains
        .get(p.mandate_id.as_str())
        .copied()
        .ok_or(StoreError::NotFound)
}

/// Work queued for an intent: (intent, kind, chain, mode, at).
pub(crate) type NewWork = (Intent, WorkKind, u64, Mode, i64);

/// What new pulls' rows bring: each its `debit_pull.created` event and, when pending, its
/// work; a pull declined off chain its `debit_pull.declined` event instead.
pub(crate) fn created_effects<'a>(
    pulls: &'a [DebitPull],
    chains: &MandateChains,
    events: &mut Vec<NewEvent<'a>>,
    work: &mut Vec<NewWork>,
) -> Result<(), StoreError> {
    for p in pulls {
        let (chain_id, _) = chain_of(chains, p)?;
        events.push(NewEvent::of_pull(
            EventType::DebitPullCreated,
            p,
            chain_id,
            p.created_at,
        ));
        if p.status == PullStatus::Pending {
            work.push((
                Intent::Pull(p.id.clone()),
                WorkKind::PullBatch,
                chain_id,
                p.mode,
                p.created_at,
            ));
        } else {
            events.push(NewEvent::of_pull(
                EventType::of_pull(p.status),
                p,
                chain_id,
                p.created_at,
            ));
        }
    }
    Ok(())
}

/// An extra condition on a status change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Guard {
    /// None.
    None,
    /// No other transaction for the object is still live (signed or succeeded): a failed
    /// transaction fails the object only if nothing else may still carry it.
    NoLiveTransaction,
    /// The object still waits for its payer's signature (nothing of it was sent).
    Unauthorized,
}

impl Guard {
    /// The guard's condition, for a statement whose first parameter is the object's id.
    fn sql(self) -> String {
        self.sql_for("$1")
    }

    /// The guard's condition, the object's id read from `id` (an expression).
    fn sql_for(self, id: &str) -> String {
        match self {
            Guard::None => String::new(),
            Guard::NoLiveTransaction => format!(
                " AND NOT EXISTS (SELECT 1 FROM chain_tx_intents i JOIN chain_txs t ON t.hash = i.hash \
                 WHERE i.intent = {id} AND t.status IN ('signed', 'succeeded'))"
            ),
            Guard::Unauthorized => " AND status = 'requires_authorization'".into(),
        }
    }
}

/// **The one place a mandate's status changes after creation.** Moves mandate `id` to `to`
/// from a status it may move from ([`MandateStatus::sources`]) and under `guard`, sets its
/// transaction when given, and records the event — inside the caller's transaction.
/// Returns whether it moved.
pub(crate) async fn move_mandate_in(
    conn: &mut impl Exec,
    id: &str,
    to: MandateStatus,
    tx_hash: Option<&str>,
    guard: Guard,
    now: i64,
) -> Result<bool, StoreError> {
    let mut q = Stmt::new(
        conn.backend(),
        format!(
            "UPDATE mandates SET status = $2, tx_hash = COALESCE($3, tx_hash) WHERE id = $1 AND status IN ({}){}",
            in_list(to.sources().iter().map(|s| s.as_str())),
            guard.sql()
        ),
    );
    q.push(id).push(to.as_str()).push(tx_hash);
    let moved = conn.execute(&q).await? == 1;
    if moved {
        events::record(conn, EventType::of_mandate(to), id, now).await?;
        if to == MandateStatus::Canceled {
            // Its keys can no longer pull: their agent credentials say so too.
            revoke_agent_credentials_in(
                conn,
                "SELECT id FROM session_keys WHERE mandate_id = $1",
                id,
                now,
            )
            .await?;
        }
    }
    Ok(moved)
}

/// **The one place a session key's status changes after creation**, as [`move_mandate_in`]
/// (a revoke also stamps `revoked_at`).
pub(crate) async fn move_key_in(
    conn: &mut impl Exec,
    id: &str,
    to: KeyStatus,
    tx_hash: Option<&str>,
    guard: Guard,
    now: i64,
) -> Result<bool, StoreError> {
    let revoked_at = (to == KeyStatus::Revoked).then_some(now);
    let mut q = Stmt::new(
        conn.backend(),
        format!(
            "UPDATE session_keys SET status = $2, tx_hash = COALESCE(tx_hash, $3), revoked_at = COALESCE(revoked_at, $4) \
             WHERE id = $1 AND status IN ({}){}",
            in_list(to.sources().iter().map(|s| s.as_str())),
            guard.sql()
        ),
    );
    q.push(id).push(to.as_str()).push(tx_hash).push(revoked_at);
    let moved = conn.execute(&q).await? == 1;
    if let (true, Some(kind)) = (moved, EventType::of_key(to)) {
        events::record(conn, kind, id, now).await?;
    }
    if moved && to == KeyStatus::Revoked {
        revoke_agent_credentials_in(conn, "$1", id, now).await?;
    }
    Ok(moved)
}

/// Revokes the agent credentials (`agent_credentials`, issued by
/// `POST /v1/session-keys/{id}/credential`) of the session keys `keys` selects — an SQL
/// list or subquery of key ids reading `$1` = `id` — inside the caller's transaction, so a
/// key's revocation or its mandate's cancellation and its credential's status bit commit
/// together; and queues the revoke of those credentials' attestations, as
/// `Identity::revoke_credential` does. Written here, beside the two status writers that call
/// it (`identity` imports this module). A credential recorded concurrently is not missed:
/// `Identity::record_agent_credential` checks the key and its mandate under their row locks.
async fn revoke_agent_credentials_in(
    conn: &mut impl Exec,
    keys: &str,
    id: &str,
    now: i64,
) -> Result<(), StoreError> {
    let of_keys =
        format!("SELECT credential_id FROM agent_credentials WHERE session_key_id IN ({keys})");
    let mut q = Stmt::new(
        conn.backend(),
        format!(
            "UPDATE identity_credentials SET revoked_at = $2 WHERE revoked_at IS NULL AND id IN ({of_keys})"
        ),
    );
    q.push(id).push(now);
    if conn.execute(&q).await? == 0 {
        return Ok(());
    }
    let mut q = Stmt::new(
        conn.backend(),
        format!(
            "SELECT id, chain_id, mode FROM identity_attestations \
             WHERE status IN ('pending', 'active') AND credential_id IN ({of_keys}) ORDER BY created_at, id"
        ),
    );
    q.push(id);
    let mut work = Vec::new();
    for r in conn.fetch(&q).await? {
        let mode = r.string("mode")?;
        work.push((
            Intent::Attestation(AttestationId::from_trusted(r.string("id")?)),
            WorkKind::RevokeAttestation,
            u64::try_from(r.integer("chain_id")?).unwrap_or_default(),
            Mode::parse(&mode).ok_or_else(|| corrupt("mode", &mode))?,
            now,
        ));
    }
    outbox::enqueue_all(conn, &work).await
}

/// Records how pending pull `id` ended, inside the caller's transaction (see
/// [`change_pulls_in`]); returns whether it moved.
pub(crate) async fn resolve_pull_in(
    conn: &mut impl Exec,
    id: &str,
    r: &PullResolution,
    now: i64,
) -> Result<bool, StoreError> {
    let (moved, _) =
        change_pulls_in(conn, &[(id, PullChange::Resolve(r))], Guard::None, now).await?;
    Ok(moved[0])
}

/// What moves a debit pull's status: the one vocabulary of [`change_pulls_in`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum PullChange<'a> {
    /// `pending` → `authorized`, `declined` or `failed`: its outcome on chain, or that no
    /// transaction can carry it any more.
    Resolve(&'a PullResolution),
    /// `authorized` → `settled` or `failed`: the bank leg of a bank-funded pull ended.
    BankLeg {
        status: PullStatus,
        failure_reason: Option<FailureReason>,
    },
    /// `authorized` or `declined` → `pending`: the block that resolved it left the chain
    /// (it is resolved again from the new chain).
    Reorg,
}

impl PullChange<'_> {
    /// The status it moves a pull to.
    fn to(&self) -> PullStatus {
        match self {
            PullChange::Resolve(r) => r.status,
            PullChange::BankLeg { status, .. } => *status,
            PullChange::Reorg => PullStatus::Pending,
        }
    }

    /// The statuses it moves a pull from (one or two).
    fn from(&self) -> &'static [PullStatus] {
        match self {
            PullChange::Resolve(_) => &[PullStatus::Pending],
            PullChange::BankLeg { .. } => &[PullStatus::Authorized],
            PullChange::Reorg => &[PullStatus::Authorized, PullStatus::Declined],
        }
    }
}

/// **The one place a debit pull's status changes after creation**, inside the caller's
/// transaction: each `(id, change)` moves its pull when it is in one of the change's
/// source statuses and the move is allowed by [`PullStatus::sources`] (otherwise
/// [`StoreError::Transition`], nothing written), under `guard`; then each moved pull's
/// event, and for a resolution its closed `pull_batch` work and, authorized on a
/// bank-funded mandate, its payout work. Many pulls at once: one statement per chunk of
/// distinct ids (a repeated id, or a guarded change, in a statement of its own). Returns,
/// per item, whether it moved, and the moved pulls' new rows in the items' order.
pub(crate) async fn change_pulls_in(
    conn: &mut impl Exec,
    items: &[(&str, PullChange<'_>)],
    guard: Guard,
    now: i64,
) -> Result<(Vec<bool>, Vec<DebitPull>), StoreError> {
    use openrail_domain::status::Lifecycle;
    for (id, c) in items {
        let to = c.to();
        if let Some(from) = c.from().iter().find(|f| !to.reachable_from(**f)) {
            return Err(StoreError::Transition(format!(
                "debit pull {id}: {} to {}",
                from.as_str(),
                to.as_str()
            )));
        }
    }
    // `remaining` is kept in minor units, the same for every supported currency.
    let scale = 10u128.pow(crate::money::TOKEN_DECIMALS - crate::money::MINOR_DECIMALS);
    let returning = PULL_COLS
        .split(", ")
        .map(|c| format!("debit_pulls.{}", c.trim()))
        .collect::<Vec<_>>()
        .join(", ");
    let mut moved = vec![false; items.len()];
    let mut resolved: Vec<(usize, DebitPull)> = Vec::with_capacity(items.len());
    // Rounds of distinct ids (a repeated id waits for the next round); a guarded change
    // alone (its guard reads the row's own id).
    let mut rounds: Vec<Vec<usize>> = Vec::new();
    let mut round_of: HashMap<&str, usize> = HashMap::new();
    for (i, (id, _)) in items.iter().enumerate() {
        let r = round_of.entry(id).and_modify(|r| *r += 1).or_insert(0);
        if rounds.len() <= *r {
            rounds.push(Vec::new());
        }
        rounds[*r].push(i);
    }
    let per_statement = if guard == Guard::None {
        PULLS_PER_INSERT
    } else {
        1
    };
    for chunk in rounds.iter().flat_map(|r| r.chunks(per_statement)) {
        let mut q = Stmt::new(
            conn.backend(),
            format!(
                "UPDATE debit_pulls SET status = v.column2, \
                 decline_code = CASE WHEN v.column5 = 1 THEN v.column6 ELSE debit_pulls.decline_code END, \
                 remaining = CASE WHEN v.column5 = 1 THEN v.column7 ELSE debit_pulls.remaining END, \
                 resets_at = CASE WHEN v.column5 = 1 THEN v.column8 ELSE debit_pulls.resets_at END, \
                 tx_hash = CASE WHEN v.column5 = 1 THEN v.column9 ELSE debit_pulls.tx_hash END, \
                 authorized_at = CASE WHEN v.column5 = 1 THEN v.column10 ELSE debit_pulls.authorized_at END, \
                 failure_reason = COALESCE(v.column11, debit_pulls.failure_reason), updated_at = v.column12 \
                 FROM (VALUES {}) AS v WHERE debit_pulls.id = v.column1 \
                 AND debit_pulls.status IN (v.column3, v.column4){} RETURNING {returning}",
                crate::sql::placeholders(chunk.len(), 12),
                guard.sql_for("debit_pulls.id")
            ),
        );
        for &i in chunk {
            let (id, c) = &items[i];
            let from = c.from();
            q.push(id)
                .push(c.to().as_str())
                .push(from[0].as_str())
                .push(from[from.len() - 1].as_str());
            match c {
                PullChange::Resolve(r) => {
                    q.push(1)
                        .push(r.decline_code.map(DeclineReason::as_str))
                        .push(
                            r.remaining_token_units
                                .map(|u| i64::try_from(u / scale).unwrap_or(i64::MAX)),
                        )
                        .push(r.resets_at_s.map(|s| s.saturating_mul(1000)))
                        .push(r.tx_hash.as_deref())
                        .push(r.authorized_at)
                        .push(None::<&str>);
                }
                PullChange::BankLeg { failure_reason, .. } => {
                    q.push(0)
                        .push(None::<&str>)
                        .push(None::<i64>)
                        .push(None::<i64>)
                        .push(None::<&str>)
                        .push(None::<i64>)
                        .push(failure_reason.map(FailureReason::as_str));
                }
                // The outcome read from the lost block goes with it.
                PullChange::Reorg => {
                    q.push(1)
                        .push(None::<&str>)
                        .push(None::<i64>)
                        .push(None::<i64>)
                        .push(None::<&str>)
                        .push(None::<i64>)
                        .push(None::<&str>);
                }
            }
            q.push(now);
        }
        let mut at: HashMap<&str, usize> = chunk.iter().map(|&i| (items[i].0, i)).collect();
        for row in conn.fetch(&q).await? {
            let p = pull_of(&row)?;
            let i = at
                .remove(p.id.as_str())
                .ok_or_else(|| StoreError::Corrupt(format!("pull {} changed twice", p.id)))?;
            moved[i] = true;
            resolved.push((i, p));
        }
    }
    // Effects in the order of the items.
    resolved.sort_by_key(|(i, _)| *i);
    let changes: Vec<PullChange<'_>> = resolved.iter().map(|(i, _)| items[*i].1).collect();
    let resolved: Vec<DebitPull> = resolved.into_iter().map(|(_, p)| p).collect();
    if !resolved.is_empty() {
        let mandate_ids: Vec<&str> = resolved.iter().map(|p| p.mandate_id.as_str()).collect();
        let chains = mandate_chains_in(conn, &mandate_ids).await?;
        let mut events = Vec::with_capacity(resolved.len());
        let mut payouts = Vec::new();
        let mut closed = Vec::new();
        for (p, c) in resolved.iter().zip(&changes) {
            let (chain_id, bank_funded) = chain_of(&chains, p)?;
            events.push(NewEvent::of_pull(
                EventType::of_pull(p.status),
                p,
                chain_id,
                now,
            ));
            if let PullChange::Resolve(_) = c {
                closed.push(Intent::Pull(p.id.clone()));
                if p.status == PullStatus::Authorized && bank_funded {
                    // The payout's work is the pull's (its transaction's intent is the
                    // pull's payout leg).
                    payouts.push((
                        Intent::Pull(p.id.clone()),
                        WorkKind::Payout,
                        chain_id,
                        p.mode,
                        now,
                    ));
                }
            }
        }
        events::insert_all(conn, &events).await?;
        outbox::close_all(conn, &closed, WorkKind::PullBatch, now).await?;
        outbox::enqueue_all(conn, &payouts).await?;
    }
    Ok((moved, resolved))
}

impl Pulls<'_> {
    /// Records how several pulls ended, in one transaction (as [`Pulls::resolve`] each).
    pub async fn resolve_many(
        self,
        items: &[(PullId, PullResolution)],
        now: i64,
    ) -> Result<Vec<bool>, StoreError> {
        let resolutions = items.to_vec();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    let items: Vec<(&str, PullChange<'_>)> = resolutions
                        .iter()
                        .map(|(id, r)| (id.as_str(), PullChange::Resolve(r)))
                        .collect();
                    let (moved, _) = change_pulls_in(&mut tx, &items, Guard::None, now).await?;
                    Ok(moved)
                })
            })
            .await
    }

    /// The status of pull `id` (`None`: no such pull), one column read: what a request
    /// waiting for its pull asks.
    pub async fn status(self, id: &str) -> Result<Option<PullStatus>, StoreError> {
        let q = self
            .0
            .stmt("SELECT status FROM debit_pulls WHERE id = $1")
            .bind(id);
        let row = self.0.fetch_optional(&q).await?;
        row.map(|r| {
            let s = r.string("status")?;
            PullStatus::parse(&s).ok_or_else(|| StoreError::Corrupt(format!("pull status {s:?}")))
        })
        .transpose()
    }

    /// A debit pull by id alone (the relayer's and the submitter's view, not a request's).
    pub async fn get_unscoped(self, id: &PullId) -> Result<DebitPull, StoreError> {
        let q = self
            .0
            .stmt(format!("SELECT {PULL_COLS} FROM debit_pulls WHERE id = $1"))
            .bind(id.as_str());
        pull_of(&self.0.fetch_one(&q).await?)
    }

    /// The token transfer pull `id` asked for (its amount, its mandate's payer and
    /// currency), by id alone: what the diagnosis of a `transfer_failed` decline reads.
    pub async fn transfer(
        self,
        id: &PullId,
    ) -> Result<openrail_domain::pulls::PullTransfer, StoreError> {
        let p = self.0.pulls().get_unscoped(id).await?;
        let m = self.0.mandates().get_unscoped(&p.mandate_id).await?;
        Ok(openrail_domain::pulls::PullTransfer {
            payer_address: m.payer_address,
            currency: m.currency,
            amount: p.amount,
        })
    }

    /// The pulls with these ids (by id alone, the engine's view), in one query; ids with
    /// no pull are left out.
    pub async fn get_many_unscoped(self, ids: &[PullId]) -> Result<Vec<DebitPull>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {PULL_COLS} FROM debit_pulls WHERE id IN ({})",
            crate::sql::numbered(1, ids.len())
        );
        let mut q = self.0.stmt(sql);
        for id in ids {
            q.push(id.as_str());
        }
        self.0.fetch(&q).await?.iter().map(pull_of).collect()
    }
}

impl Keys<'_> {
    /// A session key by id alone (the engine's view, not a request's).
    pub async fn get_unscoped(self, id: &SessionKeyId) -> Result<SessionKey, StoreError> {
        let q = self
            .0
            .stmt(format!("SELECT {KEY_COLS} FROM session_keys WHERE id = $1"))
            .bind(id.as_str());
        key_of(&self.0.fetch_one(&q).await?)
    }
}

impl Mandates<'_> {
    /// A mandate by id alone (the relayer's and the submitter's view, not a request's).
    pub async fn get_unscoped(self, id: &MandateId) -> Result<Mandate, StoreError> {
        let q = self
            .0
            .stmt(format!("SELECT {MANDATE_COLS} FROM mandates WHERE id = $1"))
            .bind(id.as_str());
        mandate_of(&self.0.fetch_one(&q).await?)
    }
}

impl Pulls<'_> {
    /// A debit pull of this account and mode.
    pub async fn get(self, scope: Scope<'_>, id: &PullId) -> Result<DebitPull, StoreError> {
        pull_of(
            &self
                .0
                .scoped_row("debit_pulls", PULL_COLS, scope, id.as_str())
                .await?,
        )
    }

    /// Debit pulls, newest first; of one session key when given.
    pub async fn list(
        self,
        scope: Scope<'_>,
        session_key_id: Option<&str>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<DebitPull>, StoreError> {
        self.0
            .pulls()
            .list_in(scope, session_key_id, None, limit, starting_after)
            .await
    }

    /// Debit pulls, newest first; of one session key and one status when given.
    pub async fn list_in(
        self,
        scope: Scope<'_>,
        session_key_id: Option<&str>,
        status: Option<PullStatus>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<DebitPull>, StoreError> {
        let filters: Vec<_> = session_key_id
            .map(|k| ("session_key_id", k))
            .into_iter()
            .chain(status.map(|s| ("status", s.as_str())))
            .collect();
        let (rows, has_more) = self
            .0
            .list_rows(
                "debit_pulls",
                PULL_COLS,
                scope,
                &filters,
                limit,
                starting_after,
            )
            .await?;
        Ok(Page {
            data: rows.iter().map(pull_of).collect::<Result<_, _>>()?,
            has_more,
        })
    }

    /// Whether a pull on `session_key_id` carrying the agent's `nonce` is in flight or
    /// went through (a declined or failed one used no nonce on chain).
    pub async fn agent_nonce_taken(
        self,
        session_key_id: &SessionKeyId,
        nonce: &str,
    ) -> Result<bool, StoreError> {
        let q = self
            .0
            .stmt(
                "SELECT 1 FROM debit_pulls WHERE session_key_id = $1 AND agent_nonce = $2 \
                 AND status IN ('pending', 'authorized', 'settled')",
            )
            .bind(session_key_id.as_str())
            .bind(nonce);
        Ok(self.0.fetch_optional(&q).await?.is_some())
    }
}

impl Keys<'_> {
    /// Sum of pulls of a key the chain authorized since `since_ms` (block time): authorized,
    /// settled, and failed after authorization (a bank-funded pull whose debit failed still
    /// used its ceiling on chain).
    pub async fn spend(
        self,
        session_key_id: &SessionKeyId,
        since_ms: i64,
    ) -> Result<u64, StoreError> {
        spend_in(
            &mut Reads(self.0),
            "session_key_id",
            session_key_id.as_str(),
            since_ms,
        )
        .await
    }
}

impl Mandates<'_> {
    /// Sum of pulls of a mandate the chain authorized since `since_ms` (block time), as
    /// [`Keys::spend`].
    pub async fn spend(self, mandate_id: &MandateId, since_ms: i64) -> Result<u64, StoreError> {
        spend_in(
            &mut Reads(self.0),
            "mandate_id",
            mandate_id.as_str(),
            since_ms,
        )
        .await
    }

    /// Spend and remaining of a mandate in the epoch containing `now` (unix ms).
    pub async fn epoch_use(self, m: &Mandate, now: i64) -> Result<EpochUse, StoreError> {
        mandate_use_in(&mut Reads(self.0), m, now).await
    }
}

impl Keys<'_> {
    /// Spend and remaining of a key in the epoch containing `now` (unix ms): its own
    /// ceiling and its mandate's, whichever is tighter.
    pub async fn epoch_use(
        self,
        k: &SessionKey,
        m: &Mandate,
        now: i64,
    ) -> Result<EpochUse, StoreError> {
        key_use_in(&mut Reads(self.0), k, m, now).await
    }
}

/// A pull whose mandate is funded from a bank account: what its bank leg and payout need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BankFundedPull {
    /// The pull.
    pub pull_id: PullId,
    /// Its status: the bank leg runs while it is `authorized`.
    pub status: PullStatus,
    /// Whether the transaction that authorized it is confirmed: its block is at or below
    /// the relayer's cursor (which stays the chain's confirmation depth behind its head).
    /// The bank is never debited for a pull a reorganisation could still remove.
    pub confirmed: bool,
    /// Its amount, minor units.
    pub amount: u64,
    /// The payer's bank account (`ba_…`).
    pub bank_account_id: BankAccountId,
    /// The wallet the treasury pays once the debit is final.
    pub destination: String,
    /// Its currency.
    pub currency: Currency,
}

impl Pulls<'_> {
    /// Pull `id` when its mandate is funded from a bank account (`None` otherwise).
    pub async fn bank_funded(self, id: &PullId) -> Result<Option<BankFundedPull>, StoreError> {
        let q = self.0.stmt(
            "SELECT p.id, p.status, p.amount, m.payer_account_id, p.destination_address, p.currency, \
             CAST(CASE WHEN EXISTS (SELECT 1 FROM chain_txs t JOIN chain_cursors c ON c.chain_id = t.chain_id \
                         WHERE t.hash = p.tx_hash AND t.block_number <= c.block_number) \
             THEN 1 ELSE 0 END AS BIGINT) AS confirmed \
             FROM debit_pulls p JOIN mandates m ON m.id = p.mandate_id \
             WHERE p.id = $1 AND m.payer_account_id LIKE 'ba\\_%' ESCAPE '\\'",
        )
        .bind(id.as_str());
        let row = self.0.fetch_optional(&q).await?;
        row.map(|r| {
            let status = r.string("status")?;
            Ok(BankFundedPull {
                pull_id: PullId::from_trusted(r.string("id")?),
                status: PullStatus::parse(&status)
                    .ok_or_else(|| StoreError::Corrupt(format!("pull status {status:?}")))?,
                confirmed: r.integer("confirmed")? == 1,
                amount: u64_of(r.integer("amount")?),
                bank_account_id: BankAccountId::from_trusted(r.string("payer_account_id")?),
                destination: r.string("destination_address")?,
                currency: currency_of(&r, "currency")?,
            })
        })
        .transpose()
    }

    /// Ends an authorized pull's bank leg at `now` (unix ms): `settled`, or `failed` with the
    /// bank's reason.
    pub async fn finish_bank_leg(
        self,
        id: &PullId,
        status: PullStatus,
        failure_reason: Option<FailureReason>,
        now: i64,
    ) -> Result<bool, StoreError> {
        let id = id.clone();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    let change = PullChange::BankLeg {
                        status,
                        failure_reason,
                    };
                    let (moved, _) =
                        change_pulls_in(&mut tx, &[(id.as_str(), change)], Guard::None, now)
                            .await?;
                    Ok(moved[0])
                })
            })
            .await
    }
}

/// What the fate of a mandate's transaction does to it, inside the caller's transaction
/// (see [`crate::journal::apply_fates_in`], the only caller): a mandate still `pending`
/// whose create succeeded (→ `active`) or was reverted or refused with no other live
/// transaction (→ `failed`); one whose cancel succeeded (→ `canceled`). A cancel that
/// failed changes nothing. Whether the mandate moved is not asked: a fate recorded again,
/// or a mandate another path moved first, changes nothing.
pub(crate) async fn mandate_fate_in(
    conn: &mut impl Exec,
    kind: MandateTx,
    fate: TxStatus,
    hash: &str,
    intent: &Intent,
    now: i64,
) -> Result<(), StoreError> {
    let Intent::Mandate(id) = intent else {
        // Never journaled so: a mandate's transaction carries the mandate.
        return Ok(());
    };
    let (to, hash, guard) = match (kind, fate.fate()) {
        (MandateTx::CreateMandate, Fate::Succeeded) => {
            (MandateStatus::Active, Some(hash), Guard::None)
        }
        (MandateTx::CreateMandate, Fate::Failed) => {
            (MandateStatus::Failed, None, Guard::NoLiveTransaction)
        }
        (MandateTx::CancelMandate, Fate::Succeeded) => (MandateStatus::Canceled, None, Guard::None),
        (MandateTx::CreateMandate | MandateTx::CancelMandate, _) => return Ok(()),
    };
    move_mandate_in(conn, id.as_str(), to, hash, guard, now).await?;
    Ok(())
}

/// What the fate of a session key's transaction does to it (as [`mandate_fate_in`]): a key
/// still `pending` whose issue succeeded (→ `active`) or was reverted or refused with no
/// other live transaction (→ `failed`); one whose revoke succeeded (→ `revoked`).
pub(crate) async fn key_fate_in(
    conn: &mut impl Exec,
    kind: SessionKeyTx,
    fate: TxStatus,
    hash: &str,
    intent: &Intent,
    now: i64,
) -> Result<(), StoreError> {
    let Intent::SessionKey(id) = intent else {
        return Ok(());
    };
    let (to, hash, guard) = match (kind, fate.fate()) {
        (SessionKeyTx::IssueSessionKey, Fate::Succeeded) => {
            (KeyStatus::Active, Some(hash), Guard::None)
        }
        (SessionKeyTx::IssueSessionKey, Fate::Failed) => {
            (KeyStatus::Failed, None, Guard::NoLiveTransaction)
        }
        (SessionKeyTx::RevokeSessionKey, Fate::Succeeded) => {
            (KeyStatus::Revoked, None, Guard::None)
        }
        (SessionKeyTx::IssueSessionKey | SessionKeyTx::RevokeSessionKey, _) => return Ok(()),
    };
    move_key_in(conn, id.as_str(), to, hash, guard, now).await?;
    Ok(())
}

/// What the fate of a `pullBatch` does to a pull it carries (as [`mandate_fate_in`]): a
/// `pending` pull whose batch was reverted or refused with no other live transaction
/// (→ `failed`: a reverted batch emits no outcome to read). A successful batch changes no
/// pull here: its pulls' outcomes are its logs, recorded from its receipt or by the
/// watcher.
pub(crate) async fn pull_fate_in(
    conn: &mut impl Exec,
    kind: PullTx,
    fate: TxStatus,
    intent: &Intent,
    now: i64,
) -> Result<(), StoreError> {
    let (PullTx::PullBatch, Intent::Pull(id), Fate::Failed) = (kind, intent, fate.fate()) else {
        return Ok(());
    };
    let failed = PullResolution::failed();
    let change = [(id.as_str(), PullChange::Resolve(&failed))];
    change_pulls_in(conn, &change, Guard::NoLiveTransaction, now).await?;
    Ok(())
}
