//! Every object's row as the store reads it: its type, its columns and how a row becomes
//! it (`*_of`), and what an object's events hold (`<Object>Snapshot`) with the read that
//! takes it inside the writer's transaction (`read_in`). [`Snapshot`] and [`snapshot_in`]
//! are composed from the list that declares these modules (`rows!`), so no other module
//! names every object. Below every aggregate and `events` (whose snapshots these are),
//! above the executor; no module here writes a status.

use crate::db::{Store, StoreError};
use crate::exec::{Exec, Record, Row, Stmt};
use crate::ids::Mode;
use crate::money::Currency;
use openrail_domain::{AccountId, ObjectKind};

/// The rows modules, declared here and nowhere else, and for each object whose changes are
/// events, its snapshot type (declared in its module, with `read_in`: the object as it is
/// inside a transaction) and the `object` tag its JSON carries. [`Snapshot`] and
/// [`snapshot_in`] are composed from these lines, so a new object adds its rows module and
/// its line here; the compiler fails on an [`ObjectKind`] left without one.
macro_rules! rows {
    ($($module:ident $({ $($kind:ident($snapshot:ident) = $tag:literal),+ $(,)? })?),+ $(,)?) => {
        $(pub(crate) mod $module;)+

        /// The object of an event and what its representation is computed from, at the
        /// moment of the event (stored as JSON, `object` naming which).
        #[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        #[serde(tag = "object")]
        pub enum Snapshot {
            $($($(
                #[doc = concat!("`", $tag, "`")]
                #[serde(rename = $tag)]
                $kind($module::$snapshot),
            )+)?)+
        }

        /// The snapshot of object `id` of `kind` as it is now inside `conn`'s transaction,
        /// with its owner and mode.
        pub(crate) async fn snapshot_in(
            conn: &mut impl Exec,
            kind: ObjectKind,
            id: &str,
            now: i64,
        ) -> Result<(Snapshot, AccountId, Mode), StoreError> {
            Ok(match kind {
                $($($(ObjectKind::$kind => {
                    let (s, account, mode) = $module::$snapshot::read_in(conn, id, now).await?;
                    (Snapshot::$kind(s), account, mode)
                })+)?)+
            })
        }

        /// Every object's snapshot type.
        pub mod snapshots {
            $($($(pub use super::$module::$snapshot;)+)?)+
        }
    };
}

rows! {
    agentic {
        Mandate(MandateSnapshot) = "mandate",
        SessionKey(SessionKeySnapshot) = "session_key",
        DebitPull(DebitPullSnapshot) = "debit_pull",
        Attestation(AttestationSnapshot) = "identity_attestation",
    },
    bank { BankTransfer(BankTransferSnapshot) = "bank_transfer" },
    consent,
    payments { Payment(PaymentSnapshot) = "payment" },
    verification { IdentityVerification(IdentityVerificationSnapshot) = "identity_verification" },
    webhooks { WebhookEndpoint(WebhookEndpointSnapshot) = "webhook_endpoint" },
}

/// The row of `table` with id `id` (columns `cols`), inside `conn`'s transaction.
pub(crate) async fn row_in<E: Exec>(
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

pub(crate) fn corrupt(what: &str, v: &str) -> StoreError {
    StoreError::Corrupt(format!("{what} {v:?}"))
}

pub(crate) fn u64_of(v: i64) -> u64 {
    u64::try_from(v).unwrap_or_default()
}

pub(crate) fn i64_of(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(crate) fn mode_of(r: &impl Record, col: &str) -> Result<Mode, StoreError> {
    let s = r.string(col)?;
    Mode::parse(&s).ok_or_else(|| corrupt("mode", &s))
}

/// The `failure_reason` column.
pub(crate) fn failure_of(
    r: &impl Record,
) -> Result<Option<openrail_domain::FailureReason>, StoreError> {
    r.text("failure_reason")?
        .map(|s| {
            openrail_domain::FailureReason::parse(&s).ok_or_else(|| corrupt("failure reason", &s))
        })
        .transpose()
}

pub(crate) fn currency_of(r: &impl Record, col: &str) -> Result<Currency, StoreError> {
    let s = r.string(col)?;
    Currency::parse(&s).ok_or_else(|| corrupt("currency", &s))
}

/// The store's reads as an executor, for the reads written once for a transaction and
/// for a read alone ([`crate::rows::agentic::spend_in`], [`crate::rows::consent::authorization_in`]):
/// each statement is a read of its own ([`Store::fetch`]). It writes nothing: a statement
/// that changes rows is refused.
pub(crate) struct Reads<'a>(pub(crate) &'a Store);

impl Exec for Reads<'_> {
    type Row = Row;

    fn backend(&self) -> crate::sql::Backend {
        self.0.backend()
    }

    async fn execute(&mut self, _stmt: &Stmt<'_>) -> Result<u64, StoreError> {
        Err(StoreError::Corrupt(
            "a write outside a transaction (the store's reads write nothing)".into(),
        ))
    }

    async fn fetch(&mut self, stmt: &Stmt<'_>) -> Result<Vec<Row>, StoreError> {
        self.0.fetch(stmt).await
    }
}

impl Store {
    /// One row of `table` by id, within the account and mode of `scope`.
    pub(crate) async fn scoped_row(
        &self,
        table: &'static str,
        cols: &'static str,
        scope: Scope<'_>,
        id: &str,
    ) -> Result<Row, StoreError> {
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
    ) -> Result<Row, StoreError> {
        let q = self
            .stmt(sql)
            .bind(id)
            .bind(scope.account_id.as_str())
            .bind(scope.mode.as_str());
        self.fetch_optional(&q).await?.ok_or(StoreError::NotFound)
    }

    pub(crate) async fn list_rows(
        &self,
        table: &'static str,
        cols: &'static str,
        scope: Scope<'_>,
        filters: &[(&'static str, &str)],
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<(Vec<Row>, bool), StoreError> {
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
    ) -> Result<(Vec<Row>, bool), StoreError> {
        let limit = limit.clamp(1, 100);
        // An unknown cursor is an error, not an empty page (which would look like the end).
        if let Some(after) = starting_after {
            let q = self
                .stmt(format!(
                    "SELECT 1 FROM {table} WHERE id = $1 AND account_id = $2 AND mode = $3"
                ))
                .bind(after)
                .bind(scope.account_id.as_str())
                .bind(scope.mode.as_str());
            let known = self.fetch_optional(&q).await?;
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
        let mut query = self
            .stmt(sql)
            .bind(scope.account_id.as_str())
            .bind(scope.mode.as_str())
            .bind(starting_after);
        for (_, v) in filters {
            query.push(*v);
        }
        if let Some((_, _, at)) = time {
            query.push(at);
        }
        let mut rows = self.fetch(&query).await?;
        let has_more = rows.len() > limit as usize;
        rows.truncate(limit as usize);
        Ok((rows, has_more))
    }
}
