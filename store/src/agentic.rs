//! Mandates, session keys and debit pulls: rows and queries.

use std::collections::HashMap;

use sqlx::AnyConnection;
use sqlx::Row;
use sqlx::any::AnyRow;

use crate::attestation::Attestation;
use crate::db::{Store, StoreError};
use crate::epoch::Interval;
use crate::events::{self, EventType, NewEvent};
use crate::exec::{Exec, Record, Stmt};
use crate::ids::{AccountId, AttestationId, BankAccountId, MandateId, Mode, PullId, SessionKeyId};
use crate::journal::{TxKind, TxStatus};
use crate::money::Currency;
use crate::outbox::{self, WorkKind};
pub use openrail_domain::pulls::{DeclineReason, PullResolution};
use openrail_domain::status::AttestationStatus;
pub use openrail_domain::status::{KeyStatus, MandateStatus, PullStatus};

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

/// `'a', 'b'` of statuses, for a conditional `UPDATE` (`IN (…)`; never empty: `NULL`
/// matches nothing).
pub(crate) fn in_list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let list: Vec<String> = names.map(|n| format!("'{n}'")).collect();
    if list.is_empty() {
        "NULL".into()
    } else {
        list.join(", ")
    }
}

/// A mandate row.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mandate {
    /// `man_…`
    pub id: MandateId,
    /// Owner.
    pub account_id: AccountId,
    /// Mode of the key that created it.
    pub mode: Mode,
    /// As given: a wallet address (or, later, a bank account id).
    pub payer_account_id: String,
    /// The wallet the chain pulls from.
    pub payer_address: String,
    /// Currency.
    pub currency: Currency,
    /// Ceiling per epoch, minor units.
    pub max_amount: u64,
    /// Epoch length.
    pub interval: Interval,
    /// Free text, part of what a wallet payer signs.
    pub purpose: Option<String>,
    /// Who may be paid (checksummed addresses, in the order signed): every key's
    /// destinations are among them. Empty only for a bank-funded mandate (any destination).
    pub payees: Vec<String>,
    /// The agent every key must have as its signer (checksummed), when the payer named one.
    pub agent: Option<String>,
    /// The identity it requires (signed by the payer, enforced on chain), when any.
    pub requirements: Option<IdentityRequirements>,
    /// Lifecycle.
    pub status: MandateStatus,
    /// Chain holding it.
    pub chain_id: u64,
    /// Allowance state machine address.
    pub contract: String,
    /// On-chain id (0x bytes32).
    pub onchain_id: String,
    /// Creating transaction.
    pub tx_hash: Option<String>,
    /// Unix ms.
    pub created_at: i64,
}

/// The identity a mandate requires: the payer holds an active attestation of the `payer`
/// kind, and every key's signer one of the `agent` kind, attested by `attester` (the mode's
/// attestation chain operator) and recorded in the settlement chain's attestation mirror.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IdentityRequirements {
    /// Whose attestations count (checksummed).
    pub attester: String,
    /// The kind of credential the payer must hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payer: Option<crate::verification::VerificationType>,
    /// The kind of credential every key's signer must hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<crate::verification::VerificationType>,
}

impl Mandate {
    /// Whether a bank account pays it (its payer on chain is the treasury, and each pull's
    /// bank leg runs after the chain authorized it).
    pub fn is_bank_funded(&self) -> bool {
        bank_funded(&self.payer_account_id)
    }
}

/// Whether a mandate whose payer is `payer_account_id` is funded from a bank account.
fn bank_funded(payer_account_id: &str) -> bool {
    payer_account_id.starts_with("ba_")
}

/// A session key row.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SessionKey {
    /// `sk_…`
    pub id: SessionKeyId,
    /// Owner.
    pub account_id: AccountId,
    /// Mode.
    pub mode: Mode,
    /// Parent mandate.
    pub mandate_id: MandateId,
    /// Unix ms.
    pub expires_at: i64,
    /// Key ceiling per epoch, minor units.
    pub max_amount: Option<u64>,
    /// As given.
    pub allowed_destinations: Vec<String>,
    /// Stored status.
    pub status: KeyStatus,
    /// On-chain id (0x bytes32).
    pub onchain_id: String,
    /// Issuing transaction.
    pub tx_hash: Option<String>,
    /// Unix ms.
    pub created_at: i64,
    /// The agent whose signature each pull needs (checksummed address), if any.
    pub signer: Option<String>,
}

/// An agent's signature of one pull on a key with a signer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AgentAuthorization {
    /// The agent's nonce, decimal.
    pub nonce: String,
    /// Unix seconds.
    pub deadline: i64,
    /// 0x hex.
    pub signature: String,
}

/// A debit pull row.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DebitPull {
    /// `pull_…`
    pub id: PullId,
    /// Owner.
    pub account_id: AccountId,
    /// Mode.
    pub mode: Mode,
    /// The key pulled against.
    pub session_key_id: SessionKeyId,
    /// Its mandate.
    pub mandate_id: MandateId,
    /// Minor units.
    pub amount: u64,
    /// Currency.
    pub currency: Currency,
    /// As given (or the default).
    pub destination: String,
    /// The wallet paid.
    pub destination_address: String,
    /// Free text.
    pub description: Option<String>,
    /// Lifecycle.
    pub status: PullStatus,
    /// Why it was declined.
    pub decline_code: Option<DeclineReason>,
    /// Allowance left when declined for the ceiling (minor units).
    pub remaining: Option<u64>,
    /// When that allowance resets (unix ms).
    pub resets_at: Option<i64>,
    /// The transaction that carried it.
    pub tx_hash: Option<String>,
    /// Block time of the authorization (unix ms).
    pub authorized_at: Option<i64>,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms.
    pub updated_at: i64,
    /// Why the bank leg of an authorized pull failed.
    pub failure_reason: Option<String>,
    /// The agent's signature, on a key with a signer.
    pub agent: Option<AgentAuthorization>,
}

/// The current epoch of a mandate or key: its bounds, what was spent and what is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EpochUse {
    /// Unix seconds.
    pub starts_at: i64,
    /// Unix seconds.
    pub ends_at: i64,
    /// Minor units spent this epoch.
    pub spent: u64,
    /// Minor units left this epoch (0 unless the mandate, or key, can pull).
    pub remaining: u64,
}

/// A page of a list.
#[derive(Debug, Clone)]
pub struct Page<T> {
    /// Newest first.
    pub data: Vec<T>,
    /// Whether older objects follow.
    pub has_more: bool,
}

/// Who is asking, for scoping every read.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    /// Account.
    pub account_id: &'a AccountId,
    /// Mode.
    pub mode: Mode,
}

fn corrupt(what: &str, v: &str) -> StoreError {
    StoreError::Corrupt(format!("{what} {v:?}"))
}

fn u64_of(v: i64) -> u64 {
    u64::try_from(v).unwrap_or_default()
}

fn i64_of(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(crate) const MANDATE_COLS: &str = "id, account_id, mode, payer_account_id, payer_address, currency, max_amount, interval, \
    purpose, status, chain_id, contract, onchain_id, tx_hash, created_at, payees, agent, requirements";
pub(crate) const KEY_COLS: &str = "id, account_id, mode, mandate_id, expires_at, max_amount, allowed_destinations, status, \
    onchain_id, tx_hash, created_at, signer";
pub(crate) const PULL_COLS: &str = "id, account_id, mode, session_key_id, mandate_id, amount, currency, destination, \
    destination_address, description, status, decline_code, remaining, resets_at, tx_hash, authorized_at, \
    created_at, updated_at, failure_reason, agent_nonce, agent_deadline, agent_signature";

fn mode_of(r: &impl Record, col: &str) -> Result<Mode, StoreError> {
    let s = r.string(col)?;
    Mode::parse(&s).ok_or_else(|| corrupt("mode", &s))
}

fn currency_of(r: &impl Record, col: &str) -> Result<Currency, StoreError> {
    let s = r.string(col)?;
    Currency::parse(&s).ok_or_else(|| corrupt("currency", &s))
}

pub(crate) fn mandate_of(r: &impl Record) -> Result<Mandate, StoreError> {
    mandate_from(r, "")
}

/// A mandate from the columns of `r` named with `prefix`.
fn mandate_from(r: &impl Record, prefix: &str) -> Result<Mandate, StoreError> {
    // Column names as written when there is no prefix (every read but one), without an
    // allocation each.
    let c = |name: &'static str| -> std::borrow::Cow<'static, str> {
        if prefix.is_empty() {
            name.into()
        } else {
            format!("{prefix}{name}").into()
        }
    };
    let interval = r.string(&c("interval"))?;
    let status = r.string(&c("status"))?;
    let payees = r.string(&c("payees"))?;
    let requirements = match r.text(&c("requirements"))? {
        Some(j) => Some(serde_json::from_str(&j).map_err(|_| corrupt("requirements", &j))?),
        None => None,
    };
    Ok(Mandate {
        id: MandateId::from_trusted(r.string(&c("id"))?),
        account_id: AccountId::from_trusted(r.string(&c("account_id"))?),
        mode: mode_of(r, &c("mode"))?,
        payer_account_id: r.string(&c("payer_account_id"))?,
        payer_address: r.string(&c("payer_address"))?,
        currency: currency_of(r, &c("currency"))?,
        max_amount: u64_of(r.integer(&c("max_amount"))?),
        interval: Interval::parse(&interval).ok_or_else(|| corrupt("interval", &interval))?,
        purpose: r.text(&c("purpose"))?,
        payees: serde_json::from_str(&payees).map_err(|_| corrupt("payees", &payees))?,
        agent: r.text(&c("agent"))?,
        requirements,
        status: MandateStatus::parse(&status).ok_or_else(|| corrupt("mandate status", &status))?,
        chain_id: u64_of(r.integer(&c("chain_id"))?),
        contract: r.string(&c("contract"))?,
        onchain_id: r.string(&c("onchain_id"))?,
        tx_hash: r.text(&c("tx_hash"))?,
        created_at: r.integer(&c("created_at"))?,
    })
}

pub(crate) fn key_of(r: &impl Record) -> Result<SessionKey, StoreError> {
    let dests = r.string("allowed_destinations")?;
    let status = r.string("status")?;
    Ok(SessionKey {
        id: SessionKeyId::from_trusted(r.string("id")?),
        account_id: AccountId::from_trusted(r.string("account_id")?),
        mode: mode_of(r, "mode")?,
        mandate_id: MandateId::from_trusted(r.string("mandate_id")?),
        expires_at: r.integer("expires_at")?,
        max_amount: r.int("max_amount")?.map(u64_of),
        allowed_destinations: serde_json::from_str(&dests)
            .map_err(|_| corrupt("destinations", &dests))?,
        status: KeyStatus::parse(&status).ok_or_else(|| corrupt("key status", &status))?,
        onchain_id: r.string("onchain_id")?,
        tx_hash: r.text("tx_hash")?,
        created_at: r.integer("created_at")?,
        signer: r.text("signer")?,
    })
}

pub(crate) fn pull_of(r: &impl Record) -> Result<DebitPull, StoreError> {
    let status = r.string("status")?;
    let mode = r.string("mode")?;
    let currency = r.string("currency")?;
    Ok(DebitPull {
        id: PullId::from_trusted(r.string("id")?),
        account_id: AccountId::from_trusted(r.string("account_id")?),
        mode: Mode::parse(&mode).ok_or_else(|| corrupt("mode", &mode))?,
        session_key_id: SessionKeyId::from_trusted(r.string("session_key_id")?),
        mandate_id: MandateId::from_trusted(r.string("mandate_id")?),
        amount: u64_of(r.integer("amount")?),
        currency: Currency::parse(&currency).ok_or_else(|| corrupt("currency", &currency))?,
        destination: r.string("destination")?,
        destination_address: r.string("destination_address")?,
        description: r.text("description")?,
        status: PullStatus::parse(&status).ok_or_else(|| corrupt("pull status", &status))?,
        decline_code: match r.text("decline_code")? {
            None => None,
            Some(c) => Some(DeclineReason::parse(&c).ok_or_else(|| corrupt("decline code", &c))?),
        },
        remaining: r.int("remaining")?.map(u64_of),
        resets_at: r.int("resets_at")?,
        tx_hash: r.text("tx_hash")?,
        authorized_at: r.int("authorized_at")?,
        created_at: r.integer("created_at")?,
        updated_at: r.integer("updated_at")?,
        failure_reason: r.text("failure_reason")?,
        agent: match (
            r.text("agent_nonce")?,
            r.int("agent_deadline")?,
            r.text("agent_signature")?,
        ) {
            (Some(nonce), Some(deadline), Some(signature)) => Some(AgentAuthorization {
                nonce,
                deadline,
                signature,
            }),
            _ => None,
        },
    })
}

impl Store {
    /// One row of `table` by id, within the account and mode of `scope`.
    pub(crate) async fn scoped_row(
        &self,
        table: &'static str,
        cols: &'static str,
        scope: Scope<'_>,
        id: &str,
    ) -> Result<AnyRow, StoreError> {
        let sql =
            format!("SELECT {cols} FROM {table} WHERE id = $1 AND account_id = $2 AND mode = $3");
        self.scoped_sql_row(&sql, scope, id).await
    }

    /// The row `sql` reads for object `id` of `scope`: `$1` is the id, `$2` the account,
    /// `$3` the mode.
    pub(crate) async fn scoped_sql_row(
        &self,
        sql: &str,
        scope: Scope<'_>,
        id: &str,
    ) -> Result<AnyRow, StoreError> {
        sqlx::query(sql)
            .bind(id)
            .bind(scope.account_id)
            .bind(scope.mode.as_str())
            .fetch_optional(self.pool())
            .await?
            .ok_or(StoreError::NotFound)
    }

    pub(crate) async fn list_rows(
        &self,
        table: &'static str,
        cols: &'static str,
        scope: Scope<'_>,
        filters: &[(&'static str, &str)],
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<(Vec<AnyRow>, bool), StoreError> {
        self.list_rows_where(table, cols, scope, filters, None, limit, starting_after)
            .await
    }

    /// [`Store::list_rows`], with one more condition on an integer column: `(column,
    /// passed, at)` keeps rows whose `column <= at` when `passed`, `column > at` when not
    /// (a session key's expiry).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn list_rows_where(
        &self,
        table: &'static str,
        cols: &'static str,
        scope: Scope<'_>,
        filters: &[(&'static str, &str)],
        time: Option<(&'static str, bool, i64)>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<(Vec<AnyRow>, bool), StoreError> {
        let limit = limit.clamp(1, 100);
        // An unknown cursor is an error, not an empty page (which would look like the end).
        if let Some(after) = starting_after {
            let known = sqlx::query(&format!(
                "SELECT 1 FROM {table} WHERE id = $1 AND account_id = $2 AND mode = $3"
            ))
            .bind(after)
            .bind(scope.account_id)
            .bind(scope.mode.as_str())
            .fetch_optional(self.pool())
            .await?;
            if known.is_none() {
                return Err(StoreError::UnknownCursor);
            }
        }
        // Each filter is a column (named by the caller, never by a request) equal to a bound
        // value: $4, $5, …
        let mut filter_sql: String = filters
            .iter()
            .enumerate()
            .map(|(i, (col, _))| format!(" AND {col} = ${}", i + 4))
            .collect();
        if let Some((col, passed, _)) = time {
            let op = if passed { "<=" } else { ">" };
            filter_sql.push_str(&format!(" AND {col} {op} ${}", filters.len() + 4));
        }
        // Cursor: rows strictly older than the named row, in (created_at, id) order.
        let sql = format!(
            "SELECT {cols} FROM {table} WHERE account_id = $1 AND mode = $2{filter_sql} AND \
             ($3 IS NULL OR (created_at, id) < (SELECT created_at, id FROM {table} WHERE id = $3 AND account_id = $1)) \
             ORDER BY created_at DESC, id DESC LIMIT {}",
            limit + 1
        );
        let query = sqlx::query(&sql)
            .bind(scope.account_id)
            .bind(scope.mode.as_str())
            .bind(starting_after);
        let mut query = query;
        for (_, v) in filters {
            query = query.bind(*v);
        }
        if let Some((_, _, at)) = time {
            query = query.bind(at);
        }
        let mut rows = query.fetch_all(self.pool()).await?;
        let has_more = rows.len() > limit as usize;
        rows.truncate(limit as usize);
        Ok((rows, has_more))
    }

    /// Inserts a new mandate with its `mandate.created` event (and
    /// `mandate.requires_authorization` when the payer must sign).
    pub async fn insert_mandate(&self, m: &Mandate) -> Result<(), StoreError> {
        self.insert_mandate_with(m, None).await
    }

    /// [`Store::insert_mandate`], with what its wallet payer is asked to sign written first
    /// in the same transaction (so the first event shows it, and a crash leaves both or
    /// neither).
    pub async fn insert_mandate_with(
        &self,
        m: &Mandate,
        authorization: Option<&crate::consent::Authorization>,
    ) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        if let Some(a) = authorization {
            crate::consent::insert_authorization_in(&mut tx, a).await?;
        }
        sqlx::query(&format!(
            "INSERT INTO mandates ({MANDATE_COLS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18)"
        ))
        .bind(&m.id)
        .bind(&m.account_id)
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
        )
        .execute(&mut *tx)
        .await?;
        events::record(
            &mut tx,
            EventType::MandateCreated,
            m.id.as_str(),
            m.created_at,
        )
        .await?;
        if m.status == MandateStatus::Pending {
            outbox::enqueue(
                &mut tx,
                m.id.as_str(),
                WorkKind::CreateMandate,
                m.chain_id,
                m.mode,
                m.created_at,
            )
            .await?;
        } else {
            events::record(
                &mut tx,
                EventType::of_mandate(m.status),
                m.id.as_str(),
                m.created_at,
            )
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Fails a mandate no transaction carries (its rows make no usable call, or its only
    /// transaction was refused), with its event, at `now` (unix ms). Every outcome that has
    /// a transaction is that transaction's fate (see [`crate::journal::apply_fates_in`]).
    /// Returns whether it moved.
    pub async fn fail_unsent_mandate(&self, id: &MandateId, now: i64) -> Result<bool, StoreError> {
        let mut tx = self.write_tx().await?;
        let moved = move_mandate_in(
            &mut tx,
            id.as_str(),
            MandateStatus::Failed,
            None,
            Guard::None,
            now,
        )
        .await?;
        tx.commit().await?;
        Ok(moved)
    }

    /// A mandate of this account and mode.
    pub async fn mandate(&self, scope: Scope<'_>, id: &MandateId) -> Result<Mandate, StoreError> {
        mandate_of(
            &self
                .scoped_row("mandates", MANDATE_COLS, scope, id.as_str())
                .await?,
        )
    }

    /// Mandates, newest first.
    pub async fn list_mandates(
        &self,
        scope: Scope<'_>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<Mandate>, StoreError> {
        self.list_mandates_in(scope, None, limit, starting_after)
            .await
    }

    /// Mandates of one stored status when given, newest first.
    pub async fn list_mandates_in(
        &self,
        scope: Scope<'_>,
        status: Option<MandateStatus>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<Mandate>, StoreError> {
        let filters: Vec<_> = status.map(|s| ("status", s.as_str())).into_iter().collect();
        let (rows, has_more) = self
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

    /// Inserts a new session key with the hash of its agent secret, and its
    /// `session_key.created` event.
    pub async fn insert_session_key(
        &self,
        k: &SessionKey,
        secret_hash: &str,
    ) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        sqlx::query(&format!(
            "INSERT INTO session_keys ({KEY_COLS}, secret_hash) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13)"
        ))
        .bind(&k.id)
        .bind(&k.account_id)
        .bind(k.mode.as_str())
        .bind(&k.mandate_id)
        .bind(k.expires_at)
        .bind(k.max_amount.map(i64_of))
        .bind(serde_json::to_string(&k.allowed_destinations).expect("strings serialize"))
        .bind(k.status.as_str())
        .bind(&k.onchain_id)
        .bind(&k.tx_hash)
        .bind(k.created_at)
        .bind(&k.signer)
        .bind(secret_hash)
        .execute(&mut *tx)
        .await?;
        events::record(
            &mut tx,
            EventType::SessionKeyCreated,
            k.id.as_str(),
            k.created_at,
        )
        .await?;
        if k.status == KeyStatus::Pending {
            let chain_id = outbox::chain_of(&mut tx, &k.mandate_id).await?;
            outbox::enqueue(
                &mut tx,
                k.id.as_str(),
                WorkKind::IssueSessionKey,
                chain_id,
                k.mode,
                k.created_at,
            )
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Fails a session key no transaction carries, as [`Store::fail_unsent_mandate`].
    pub async fn fail_unsent_key(&self, id: &SessionKeyId, now: i64) -> Result<bool, StoreError> {
        let mut tx = self.write_tx().await?;
        let moved = move_key_in(
            &mut tx,
            id.as_str(),
            KeyStatus::Failed,
            None,
            Guard::None,
            now,
        )
        .await?;
        tx.commit().await?;
        Ok(moved)
    }

    /// A session key of this account and mode.
    pub async fn session_key(
        &self,
        scope: Scope<'_>,
        id: &SessionKeyId,
    ) -> Result<SessionKey, StoreError> {
        key_of(
            &self
                .scoped_row("session_keys", KEY_COLS, scope, id.as_str())
                .await?,
        )
    }

    /// Session key `id` of `scope` with its mandate, in one read (what a pull is judged on).
    pub async fn session_key_and_mandate(
        &self,
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
        let mut stmt = Stmt::new(self.backend(), sql.clone());
        stmt.text(Some(id.as_str()))
            .text(Some(scope.account_id.as_str()))
            .text(Some(scope.mode.as_str()));
        let row = self.hot_row(&stmt).await?.ok_or(StoreError::NotFound)?;
        Ok((key_of(&row)?, mandate_from(&row, "m_")?))
    }

    /// The session key whose agent secret hashes to `secret_hash`.
    pub async fn session_key_by_secret(
        &self,
        secret_hash: &str,
    ) -> Result<Option<SessionKey>, StoreError> {
        // Every agent's request authenticates with this read: inline on SQLite.
        let mut stmt = Stmt::new(
            self.backend(),
            format!("SELECT {KEY_COLS} FROM session_keys WHERE secret_hash = $1"),
        );
        stmt.text(Some(secret_hash));
        self.hot_row(&stmt).await?.as_ref().map(key_of).transpose()
    }

    /// Session keys, newest first; of one mandate when given.
    pub async fn list_session_keys(
        &self,
        scope: Scope<'_>,
        mandate_id: Option<&str>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<SessionKey>, StoreError> {
        self.list_session_keys_in(scope, mandate_id, None, 0, limit, starting_after)
            .await
    }

    /// The account's keys in `scope`, newest first: of `mandate_id` when given, and with
    /// the status `status` shows at `now` (unix ms) when given (the dashboard's filter;
    /// `expired` is an active key whose time passed).
    pub async fn list_session_keys_in(
        &self,
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

    /// Inserts a new debit pull.
    pub async fn insert_pull(&self, p: &DebitPull) -> Result<(), StoreError> {
        self.insert_pulls(std::slice::from_ref(p)).await
    }

    /// Inserts new pulls in one transaction (requests that arrive together share one
    /// commit), each as [`Store::insert_pull`].
    pub async fn insert_pulls(&self, pulls: &[DebitPull]) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        insert_pulls_in(&mut tx, pulls).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Records how a pull ended on chain, at `now` (unix ms); only a pending pull changes.
    /// Returns whether it changed (false when it was already resolved, e.g. by the relayer
    /// or the API first).
    pub async fn resolve_pull(
        &self,
        id: &PullId,
        r: &PullResolution,
        now: i64,
    ) -> Result<bool, StoreError> {
        let mut tx = self.write_tx().await?;
        let moved = resolve_pull_in(&mut tx, id.as_str(), r, now).await?;
        tx.commit().await?;
        Ok(moved)
    }
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
                crate::db::numbered(1, chunk.len())
            ),
        );
        for id in chunk {
            q.text(Some(id));
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
    conn: &mut AnyConnection,
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
                crate::db::placeholders(chunk.len(), 22)
            ),
        );
        for p in chunk {
            q.text(Some(p.id.as_str()))
                .text(Some(p.account_id.as_str()))
                .text(Some(p.mode.as_str()))
                .text(Some(p.session_key_id.as_str()))
                .text(Some(p.mandate_id.as_str()))
                .int(i64_of(p.amount))
                .text(Some(p.currency.code()))
                .text(Some(&p.destination))
                .text(Some(&p.destination_address))
                .text(p.description.as_deref())
                .text(Some(p.status.as_str()))
                .text(p.decline_code.map(DeclineReason::as_str))
                .int(p.remaining.map(i64_of))
                .int(p.resets_at)
                .text(p.tx_hash.as_deref())
                .int(p.authorized_at)
                .int(p.created_at)
                .int(p.updated_at)
                .text(p.failure_reason.as_deref())
                .text(p.agent.as_ref().map(|a| a.nonce.as_str()))
                .int(p.agent.as_ref().map(|a| a.deadline))
                .text(p.agent.as_ref().map(|a| a.signature.as_str()));
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
pub(crate) type NewWork<'a> = (&'a str, WorkKind, u64, Mode, i64);

/// What new pulls' rows bring: each its `debit_pull.created` event and, when pending, its
/// work; a pull declined off chain its `debit_pull.declined` event instead.
pub(crate) fn created_effects<'a>(
    pulls: &'a [DebitPull],
    chains: &MandateChains,
    events: &mut Vec<NewEvent<'a>>,
    work: &mut Vec<NewWork<'a>>,
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
                p.id.as_str(),
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
    q.text(Some(id)).text(Some(to.as_str())).text(tx_hash);
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
    q.text(Some(id))
        .text(Some(to.as_str()))
        .text(tx_hash)
        .int(revoked_at);
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
/// `Store::revoke_credential` does. Written here, beside the two status writers that call
/// it (`identity` imports this module). A credential recorded concurrently is not missed:
/// `Store::record_agent_credential` checks the key and its mandate under their row locks.
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
    q.text(Some(id)).int(Some(now));
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
    q.text(Some(id));
    let mut work = Vec::new();
    for r in conn.fetch(&q).await? {
        let mode = r.string("mode")?;
        work.push((
            r.string("id")?,
            u64::try_from(r.integer("chain_id")?).unwrap_or_default(),
            Mode::parse(&mode).ok_or_else(|| corrupt("mode", &mode))?,
        ));
    }
    let work: Vec<_> = work
        .iter()
        .map(|(a, chain_id, mode)| {
            (
                a.as_str(),
                WorkKind::RevokeAttestation,
                *chain_id,
                *mode,
                now,
            )
        })
        .collect();
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
        failure_reason: Option<&'a str>,
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
                crate::db::placeholders(chunk.len(), 12),
                guard.sql_for("debit_pulls.id")
            ),
        );
        for &i in chunk {
            let (id, c) = &items[i];
            let from = c.from();
            q.text(Some(id))
                .text(Some(c.to().as_str()))
                .text(Some(from[0].as_str()))
                .text(Some(from[from.len() - 1].as_str()));
            match c {
                PullChange::Resolve(r) => {
                    q.int(1)
                        .text(r.decline_code.map(DeclineReason::as_str))
                        .int(
                            r.remaining_token_units
                                .map(|u| i64::try_from(u / scale).unwrap_or(i64::MAX)),
                        )
                        .int(r.resets_at_s.map(|s| s.saturating_mul(1000)))
                        .text(r.tx_hash.as_deref())
                        .int(r.authorized_at)
                        .text(None);
                }
                PullChange::BankLeg { failure_reason, .. } => {
                    q.int(0)
                        .text(None)
                        .int(None)
                        .int(None)
                        .text(None)
                        .int(None)
                        .text(*failure_reason);
                }
                // The outcome read from the lost block goes with it.
                PullChange::Reorg => {
                    q.int(1)
                        .text(None)
                        .int(None)
                        .int(None)
                        .text(None)
                        .int(None)
                        .text(None);
                }
            }
            q.int(now);
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
                closed.push(p.id.as_str());
                if p.status == PullStatus::Authorized && bank_funded {
                    payouts.push((p.id.as_str(), WorkKind::Payout, chain_id, p.mode, now));
                }
            }
        }
        events::insert_all(conn, &events).await?;
        outbox::close_all(conn, &closed, WorkKind::PullBatch, now).await?;
        outbox::enqueue_all(conn, &payouts).await?;
    }
    Ok((moved, resolved))
}

impl Store {
    /// Records how several pulls ended, in one transaction (as [`Store::resolve_pull`] each).
    pub async fn resolve_pulls(
        &self,
        items: &[(PullId, PullResolution)],
        now: i64,
    ) -> Result<Vec<bool>, StoreError> {
        let items: Vec<(&str, PullChange<'_>)> = items
            .iter()
            .map(|(id, r)| (id.as_str(), PullChange::Resolve(r)))
            .collect();
        let mut tx = self.write_tx().await?;
        let (moved, _) = change_pulls_in(&mut tx, &items, Guard::None, now).await?;
        tx.commit().await?;
        Ok(moved)
    }

    /// The status of pull `id` (`None`: no such pull), one column read: what a request
    /// waiting for its pull asks.
    pub async fn pull_status(&self, id: &str) -> Result<Option<PullStatus>, StoreError> {
        let row = sqlx::query("SELECT status FROM debit_pulls WHERE id = $1")
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        row.map(|r| {
            let s: String = r.try_get("status")?;
            PullStatus::parse(&s).ok_or_else(|| StoreError::Corrupt(format!("pull status {s:?}")))
        })
        .transpose()
    }

    /// A debit pull by id alone (the relayer's and the submitter's view, not a request's).
    pub async fn pull_unscoped(&self, id: &PullId) -> Result<DebitPull, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {PULL_COLS} FROM debit_pulls WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(self.pool())
        .await?
        .ok_or(StoreError::NotFound)?;
        pull_of(&row)
    }

    /// The token transfer pull `id` asked for (its amount, its mandate's payer and
    /// currency), by id alone: what the diagnosis of a `transfer_failed` decline reads.
    pub async fn pull_transfer(
        &self,
        id: &PullId,
    ) -> Result<openrail_domain::pulls::PullTransfer, StoreError> {
        let p = self.pull_unscoped(id).await?;
        let m = self.mandate_unscoped(&p.mandate_id).await?;
        Ok(openrail_domain::pulls::PullTransfer {
            payer_address: m.payer_address,
            currency: m.currency,
            amount: p.amount,
        })
    }

    /// The pulls with these ids (by id alone, the engine's view), in one query; ids with
    /// no pull are left out.
    pub async fn pulls_unscoped(&self, ids: &[PullId]) -> Result<Vec<DebitPull>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {PULL_COLS} FROM debit_pulls WHERE id IN ({})",
            crate::db::numbered(1, ids.len())
        );
        let sql = crate::db::positional(self.backend(), sql);
        let mut q = sqlx::query(&sql);
        for id in ids {
            q = q.bind(id);
        }
        q.fetch_all(self.pool())
            .await?
            .iter()
            .map(pull_of)
            .collect()
    }

    /// A session key by id alone (the engine's view, not a request's).
    pub async fn session_key_unscoped(&self, id: &SessionKeyId) -> Result<SessionKey, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {KEY_COLS} FROM session_keys WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(self.pool())
        .await?
        .ok_or(StoreError::NotFound)?;
        key_of(&row)
    }

    /// A mandate by id alone (the relayer's and the submitter's view, not a request's).
    pub async fn mandate_unscoped(&self, id: &MandateId) -> Result<Mandate, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {MANDATE_COLS} FROM mandates WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(self.pool())
        .await?
        .ok_or(StoreError::NotFound)?;
        mandate_of(&row)
    }

    /// A debit pull of this account and mode.
    pub async fn pull(&self, scope: Scope<'_>, id: &PullId) -> Result<DebitPull, StoreError> {
        pull_of(
            &self
                .scoped_row("debit_pulls", PULL_COLS, scope, id.as_str())
                .await?,
        )
    }

    /// Debit pulls, newest first; of one session key when given.
    pub async fn list_pulls(
        &self,
        scope: Scope<'_>,
        session_key_id: Option<&str>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<DebitPull>, StoreError> {
        self.list_pulls_in(scope, session_key_id, None, limit, starting_after)
            .await
    }

    /// Debit pulls, newest first; of one session key and one status when given.
    pub async fn list_pulls_in(
        &self,
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
        &self,
        session_key_id: &SessionKeyId,
        nonce: &str,
    ) -> Result<bool, StoreError> {
        let row = sqlx::query(
            "SELECT 1 FROM debit_pulls WHERE session_key_id = $1 AND agent_nonce = $2 \
             AND status IN ('pending', 'authorized', 'settled')",
        )
        .bind(session_key_id)
        .bind(nonce)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.is_some())
    }

    /// Sum of pulls of a key the chain authorized since `since_ms` (block time): authorized,
    /// settled, and failed after authorization (a bank-funded pull whose debit failed still
    /// used its ceiling on chain).
    pub async fn key_spend(
        &self,
        session_key_id: &SessionKeyId,
        since_ms: i64,
    ) -> Result<u64, StoreError> {
        spend_in(
            &mut *self.pool().acquire().await?,
            "session_key_id",
            session_key_id.as_str(),
            since_ms,
        )
        .await
    }

    /// Sum of pulls of a mandate the chain authorized since `since_ms` (block time), as
    /// [`Store::key_spend`].
    pub async fn mandate_spend(
        &self,
        mandate_id: &MandateId,
        since_ms: i64,
    ) -> Result<u64, StoreError> {
        spend_in(
            &mut *self.pool().acquire().await?,
            "mandate_id",
            mandate_id.as_str(),
            since_ms,
        )
        .await
    }

    /// Spend and remaining of a mandate in the epoch containing `now` (unix ms).
    pub async fn mandate_use(&self, m: &Mandate, now: i64) -> Result<EpochUse, StoreError> {
        mandate_use_in(&mut *self.pool().acquire().await?, m, now).await
    }

    /// Spend and remaining of a key in the epoch containing `now` (unix ms): its own
    /// ceiling and its mandate's, whichever is tighter.
    pub async fn key_use(
        &self,
        k: &SessionKey,
        m: &Mandate,
        now: i64,
    ) -> Result<EpochUse, StoreError> {
        key_use_in(&mut *self.pool().acquire().await?, k, m, now).await
    }
}

async fn spend_in(
    conn: &mut impl Exec,
    col: &'static str,
    id: &str,
    since_ms: i64,
) -> Result<u64, StoreError> {
    let mut q = Stmt::new(
        conn.backend(),
        format!(
            "SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) AS spent FROM debit_pulls WHERE {col} = $1 \
             AND status IN ('authorized', 'settled', 'failed') AND authorized_at >= $2"
        ),
    );
    q.text(Some(id)).int(since_ms);
    let rows = conn.fetch(&q).await?;
    let row = rows
        .first()
        .ok_or_else(|| StoreError::Corrupt("a sum returned no row".into()))?;
    Ok(u64_of(row.integer("spent")?))
}

/// [`Store::mandate_use`] on a connection (inside a transaction when recording an event).
pub(crate) async fn mandate_use_in(
    conn: &mut impl Exec,
    m: &Mandate,
    now: i64,
) -> Result<EpochUse, StoreError> {
    let epoch = m.interval.epoch_at(now / 1000);
    let spent = spend_in(conn, "mandate_id", m.id.as_str(), epoch.starts_at * 1000).await?;
    let remaining = if m.status == MandateStatus::Active {
        m.max_amount.saturating_sub(spent)
    } else {
        0
    };
    Ok(EpochUse {
        starts_at: epoch.starts_at,
        ends_at: epoch.ends_at,
        spent,
        remaining,
    })
}

/// [`Store::key_use`] on a connection.
pub(crate) async fn key_use_in(
    conn: &mut impl Exec,
    k: &SessionKey,
    m: &Mandate,
    now: i64,
) -> Result<EpochUse, StoreError> {
    let mandate = mandate_use_in(conn, m, now).await?;
    let spent = spend_in(
        conn,
        "session_key_id",
        k.id.as_str(),
        mandate.starts_at * 1000,
    )
    .await?;
    let live = k.status == KeyStatus::Active && now < k.expires_at;
    let own = k
        .max_amount
        .map(|max| max.saturating_sub(spent))
        .unwrap_or(u64::MAX);
    let remaining = if live { own.min(mandate.remaining) } else { 0 };
    Ok(EpochUse {
        spent,
        remaining,
        ..mandate
    })
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

impl Store {
    /// Pull `id` when its mandate is funded from a bank account (`None` otherwise).
    pub async fn bank_funded_pull(
        &self,
        id: &PullId,
    ) -> Result<Option<BankFundedPull>, StoreError> {
        let row = sqlx::query(
            "SELECT p.id, p.status, p.amount, m.payer_account_id, p.destination_address, p.currency, \
             CAST(CASE WHEN EXISTS (SELECT 1 FROM chain_txs t JOIN chain_cursors c ON c.chain_id = t.chain_id \
                         WHERE t.hash = p.tx_hash AND t.block_number <= c.block_number) \
             THEN 1 ELSE 0 END AS BIGINT) AS confirmed \
             FROM debit_pulls p JOIN mandates m ON m.id = p.mandate_id \
             WHERE p.id = $1 AND m.payer_account_id LIKE 'ba\\_%' ESCAPE '\\'",
        )
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        row.map(|r| {
            let status: String = r.try_get("status")?;
            Ok(BankFundedPull {
                pull_id: r.try_get("id")?,
                status: PullStatus::parse(&status)
                    .ok_or_else(|| StoreError::Corrupt(format!("pull status {status:?}")))?,
                confirmed: r.try_get::<i64, _>("confirmed")? == 1,
                amount: u64_of(r.try_get("amount")?),
                bank_account_id: r.try_get("payer_account_id")?,
                destination: r.try_get("destination_address")?,
                currency: currency_of(&r, "currency")?,
            })
        })
        .transpose()
    }

    /// Ends an authorized pull's bank leg at `now` (unix ms): `settled`, or `failed` with the
    /// bank's reason.
    pub async fn finish_pull_bank_leg(
        &self,
        id: &PullId,
        status: PullStatus,
        failure_reason: Option<&str>,
        now: i64,
    ) -> Result<bool, StoreError> {
        let change = PullChange::BankLeg {
            status,
            failure_reason,
        };
        let mut tx = self.write_tx().await?;
        let (moved, _) =
            change_pulls_in(&mut tx, &[(id.as_str(), change)], Guard::None, now).await?;
        tx.commit().await?;
        Ok(moved[0])
    }
}

/// What one journaled transaction's fate does to the object `intent` it carries, inside
/// the caller's transaction (see [`crate::journal::apply_fates_in`], its only caller): a
/// mandate or key still `pending` whose creating transaction succeeded (→ `active`) or was
/// reverted or refused with no other live one (→ `failed`); a mandate whose cancel, or a
/// key whose revoke, succeeded (→ `canceled`, `revoked`); a `pending` pull whose batch was
/// reverted or refused with no other live transaction (→ `failed`: a reverted batch emits
/// no outcome to read). A successful batch changes no pull here: its pulls' outcomes are
/// its logs, recorded from its receipt or by the watcher.
pub(crate) async fn fate_effect_in(
    conn: &mut impl Exec,
    kind: TxKind,
    fate: TxStatus,
    hash: &str,
    intent: &str,
    now: i64,
) -> Result<(), StoreError> {
    let failed = matches!(fate, TxStatus::Reverted | TxStatus::Rejected);
    let succeeded = fate == TxStatus::Succeeded;
    let live = Guard::NoLiveTransaction;
    // Whether the object moved is not asked: a fate recorded again, or an object another
    // path moved first, changes nothing.
    match kind {
        TxKind::CreateMandate if succeeded => {
            move_mandate_in(
                conn,
                intent,
                MandateStatus::Active,
                Some(hash),
                Guard::None,
                now,
            )
            .await?
        }
        TxKind::IssueSessionKey if succeeded => {
            move_key_in(
                conn,
                intent,
                KeyStatus::Active,
                Some(hash),
                Guard::None,
                now,
            )
            .await?
        }
        TxKind::CancelMandate if succeeded => {
            move_mandate_in(
                conn,
                intent,
                MandateStatus::Canceled,
                None,
                Guard::None,
                now,
            )
            .await?
        }
        TxKind::RevokeSessionKey if succeeded => {
            move_key_in(conn, intent, KeyStatus::Revoked, None, Guard::None, now).await?
        }
        TxKind::CreateMandate if failed => {
            move_mandate_in(conn, intent, MandateStatus::Failed, None, live, now).await?
        }
        TxKind::IssueSessionKey if failed => {
            move_key_in(conn, intent, KeyStatus::Failed, None, live, now).await?
        }
        TxKind::PullBatch if failed => {
            let failed = PullResolution::failed();
            let change = [(intent, PullChange::Resolve(&failed))];
            change_pulls_in(conn, &change, live, now).await?.0[0]
        }
        TxKind::Attest if succeeded => {
            move_attestation_in(conn, intent, AttestationStatus::Active, Some(hash), "", now)
                .await?
        }
        TxKind::Attest if failed => {
            move_attestation_in(
                conn,
                intent,
                AttestationStatus::Failed,
                None,
                NO_LIVE_TRANSACTION,
                now,
            )
            .await?
        }
        TxKind::RevokeAttestation if succeeded => {
            move_attestation_in(conn, intent, AttestationStatus::Revoked, None, "", now).await?
        }
        // The mirror recorded the attestation's latest receipt (not a status: the
        // settlement chain's view, which the API's identity checks require).
        TxKind::MirrorAttested | TxKind::MirrorRevoked if succeeded => {
            let mut q = Stmt::new(
                conn.backend(),
                "UPDATE identity_attestations SET mirrored_sequence = receipt_sequence \
                 WHERE id = $1 AND receipt_sequence IS NOT NULL \
                 AND (mirrored_sequence IS NULL OR mirrored_sequence < receipt_sequence)"
                    .to_string(),
            );
            q.text(Some(intent));
            conn.execute(&q).await? == 1
        }
        // Recorded elsewhere: pull outcomes from a batch's logs, payment legs and payouts by
        // the engine's payment driver (which reads their fates); a cancel or revoke that
        // failed changed nothing.
        TxKind::CreateMandate
        | TxKind::IssueSessionKey
        | TxKind::CancelMandate
        | TxKind::RevokeSessionKey
        | TxKind::PullBatch
        | TxKind::Settle
        | TxKind::Attest
        | TxKind::RevokeAttestation
        | TxKind::MirrorAttested
        | TxKind::MirrorRevoked
        | TxKind::CancelNonce => false,
    };
    Ok(())
}

// Identity attestations' rows and their one status writer live here, with the other
// objects whose status a journaled transaction's fate moves (`fate_effect_in`): the fate's
// dispatch is inside the store's known module circle, and a module it calls that records
// events would join it.

/// The columns [`attestation_of`] reads.
pub(crate) const ATTESTATION_COLS: &str = "id, account_id, mode, chain_id, registry, schema_uid, recipient, \
     credential_id, credential_digest, issuer, credential_type, expires_at, status_list_credential, \
     status_list_index, status, uid, tx_hash, revoked_at, created_at, updated_at, mirrored_sequence";

/// An attestation from its row (columns [`ATTESTATION_COLS`]).
pub(crate) fn attestation_of(r: &impl crate::exec::Record) -> Result<Attestation, StoreError> {
    let mode = r.string("mode")?;
    let status = r.string("status")?;
    Ok(Attestation {
        id: AttestationId::from_trusted(r.string("id")?),
        account_id: AccountId::from_trusted(r.string("account_id")?),
        mode: Mode::parse(&mode).ok_or_else(|| corrupt("mode", &mode))?,
        chain_id: u64::try_from(r.integer("chain_id")?).unwrap_or_default(),
        registry: r.string("registry")?,
        schema_uid: r.string("schema_uid")?,
        recipient: r.string("recipient")?,
        credential_id: r.text("credential_id")?,
        credential_digest: r.string("credential_digest")?,
        issuer: r.string("issuer")?,
        credential_type: r.string("credential_type")?,
        expires_at: r.int("expires_at")?,
        status_list_credential: r.text("status_list_credential")?,
        status_list_index: r.int("status_list_index")?.map(|i| i as u64),
        status: AttestationStatus::parse(&status).ok_or_else(|| corrupt("status", &status))?,
        uid: r.text("uid")?,
        tx_hash: r.text("tx_hash")?,
        revoked_at: r.int("revoked_at")?,
        mirrored_sequence: r.int("mirrored_sequence")?,
        created_at: r.integer("created_at")?,
        updated_at: r.integer("updated_at")?,
    })
}

/// **The one place an attestation's status changes after creation.** Moves attestation `id`
/// to `to` from a status it may move from ([`AttestationStatus::sources`]), under `guard`
/// (an extra SQL condition, `""` for none), sets its transaction when given and its
/// revocation time on `revoked`, and records the event — inside the caller's transaction.
/// Returns whether it moved; a move outside the table is [`StoreError::Transition`].
pub(crate) async fn move_attestation_in(
    conn: &mut impl Exec,
    id: &str,
    to: AttestationStatus,
    tx_hash: Option<&str>,
    guard: &str,
    now: i64,
) -> Result<bool, StoreError> {
    if to.sources().is_empty() {
        return Err(StoreError::Transition(format!(
            "attestation {id}: nothing moves to {}",
            to.as_str()
        )));
    }
    let revoked_at = (to == AttestationStatus::Revoked).then_some(now);
    let mut q = Stmt::new(
        conn.backend(),
        format!(
            "UPDATE identity_attestations SET status = $2, tx_hash = COALESCE(tx_hash, $3), \
             revoked_at = COALESCE(revoked_at, $4), updated_at = $5 \
             WHERE id = $1 AND status IN ({}){guard}",
            in_list(to.sources().iter().map(|s| s.as_str()))
        ),
    );
    q.text(Some(id))
        .text(Some(to.as_str()))
        .text(tx_hash)
        .int(revoked_at)
        .int(Some(now));
    let moved = conn.execute(&q).await? == 1;
    if moved {
        events::record(conn, EventType::of_attestation(to), id, now).await?;
    }
    Ok(moved)
}

/// No other transaction carrying the attestation (`$1`) is still live: a failed `attest`
/// fails it only if nothing else may still carry it.
pub(crate) const NO_LIVE_TRANSACTION: &str = " AND NOT EXISTS (SELECT 1 FROM chain_tx_intents i \
     JOIN chain_txs t ON t.hash = i.hash WHERE i.intent = $1 AND t.status IN ('signed', 'succeeded') \
     AND t.kind = 'attest')";
