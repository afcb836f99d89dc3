//! Statements written once and run by either of two executors: sqlx's connection (both
//! backends, every statement a round trip to the connection's worker — a thread of its
//! own for SQLite, the network for PostgreSQL), or, for the group writer on SQLite, a
//! rusqlite connection called synchronously on the writer's own thread (see
//! [`crate::group`]). A statement is its SQL and its arguments ([`Stmt`]); a row read
//! back is read by column name ([`Record`]).

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

use openrail_domain::journal::{Intent, IntentError};
use sqlx::{AnyConnection, Row as _};

use crate::sql::{Backend, StoreError};

/// A value bound to a statement. A NULL keeps its type (PostgreSQL infers a `VALUES`
/// column's type from what is bound).
#[derive(Debug, Clone)]
pub(crate) enum Arg<'a> {
    /// An integer, or NULL.
    Int(Option<i64>),
    /// Text, or NULL.
    Text(Option<Cow<'a, str>>),
}

impl From<i64> for Arg<'_> {
    fn from(v: i64) -> Self {
        Arg::Int(Some(v))
    }
}

impl From<Option<i64>> for Arg<'_> {
    fn from(v: Option<i64>) -> Self {
        Arg::Int(v)
    }
}

impl From<bool> for Arg<'_> {
    fn from(v: bool) -> Self {
        Arg::Int(Some(i64::from(v)))
    }
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(v: &'a str) -> Self {
        Arg::Text(Some(Cow::Borrowed(v)))
    }
}

impl<'a> From<&&'a str> for Arg<'a> {
    fn from(v: &&'a str) -> Self {
        Arg::Text(Some(Cow::Borrowed(*v)))
    }
}

impl<'a> From<&'a String> for Arg<'a> {
    fn from(v: &'a String) -> Self {
        Arg::Text(Some(Cow::Borrowed(v)))
    }
}

impl<'a> From<Option<&'a str>> for Arg<'a> {
    fn from(v: Option<&'a str>) -> Self {
        Arg::Text(v.map(Cow::Borrowed))
    }
}

impl<'a> From<&'a Option<String>> for Arg<'a> {
    fn from(v: &'a Option<String>) -> Self {
        Arg::Text(v.as_deref().map(Cow::Borrowed))
    }
}

impl From<String> for Arg<'_> {
    fn from(v: String) -> Self {
        Arg::Text(Some(Cow::Owned(v)))
    }
}

impl From<Option<String>> for Arg<'_> {
    fn from(v: Option<String>) -> Self {
        Arg::Text(v.map(Cow::Owned))
    }
}

impl<'a> From<&'a Intent> for Arg<'a> {
    /// An intent as it is stored: its text (borrowed when it is only an id).
    fn from(v: &'a Intent) -> Self {
        Arg::Text(Some(v.text()))
    }
}

/// A statement: SQL with numbered `$N` parameters and their values in order.
#[derive(Debug, Clone)]
pub(crate) struct Stmt<'a> {
    sql: String,
    args: Vec<Arg<'a>>,
}

impl<'a> Stmt<'a> {
    /// `sql` for `backend` (see [`crate::sql::positional`]), no arguments yet.
    pub(crate) fn new(backend: Backend, sql: String) -> Self {
        Self {
            sql: crate::sql::positional(backend, sql),
            args: Vec::new(),
        }
    }

    /// Binds `v` next (an integer or text, or NULL of either), builder style:
    /// `Stmt::new(b, sql).bind(id).bind(now)`.
    pub(crate) fn bind(mut self, v: impl Into<Arg<'a>>) -> Self {
        self.args.push(v.into());
        self
    }

    /// Binds `v` next, in place.
    pub(crate) fn push(&mut self, v: impl Into<Arg<'a>>) -> &mut Self {
        self.args.push(v.into());
        self
    }

    /// The statement with its text arguments owned, so it can outlive what they borrowed
    /// (a write sent to the SQLite writer's thread).
    pub(crate) fn into_owned(self) -> Stmt<'static> {
        Stmt {
            sql: self.sql,
            args: self
                .args
                .into_iter()
                .map(|a| match a {
                    Arg::Int(v) => Arg::Int(v),
                    Arg::Text(v) => Arg::Text(v.map(|t| Cow::Owned(t.into_owned()))),
                })
                .collect(),
        }
    }

    pub(crate) fn query(&self) -> sqlx::query::Query<'_, sqlx::Any, sqlx::any::AnyArguments<'_>> {
        let mut q = sqlx::query(&self.sql);
        for a in &self.args {
            q = match a {
                Arg::Int(v) => q.bind(*v),
                Arg::Text(v) => q.bind(v.as_deref()),
            };
        }
        q
    }
}

/// A row read back, by column name.
pub(crate) trait Record {
    /// An integer column (NULL: `None`).
    fn int(&self, col: &str) -> Result<Option<i64>, StoreError>;
    /// A text column (NULL: `None`).
    fn text(&self, col: &str) -> Result<Option<String>, StoreError>;

    /// A text column that is never NULL.
    fn string(&self, col: &str) -> Result<String, StoreError> {
        self.text(col)?
            .ok_or_else(|| StoreError::Corrupt(format!("{col} is NULL")))
    }

    /// An integer column that is never NULL.
    fn integer(&self, col: &str) -> Result<i64, StoreError> {
        self.int(col)?
            .ok_or_else(|| StoreError::Corrupt(format!("{col} is NULL")))
    }

    /// A text column holding an [`Intent`] (never NULL; text that is no intent is corrupt).
    fn intent(&self, col: &str) -> Result<Intent, StoreError> {
        let text = self.string(col)?;
        text.parse()
            .map_err(|e: IntentError| StoreError::Corrupt(format!("{col}: {e}")))
    }

    /// A text column holding a JSON array of [`Intent`]s (a journaled transaction's
    /// `intents`).
    fn intents(&self, col: &str) -> Result<Vec<Intent>, StoreError> {
        let text = self.string(col)?;
        serde_json::from_str(&text).map_err(|e| StoreError::Corrupt(format!("{col} {text:?}: {e}")))
    }
}

impl Record for sqlx::any::AnyRow {
    fn int(&self, col: &str) -> Result<Option<i64>, StoreError> {
        Ok(self.try_get(col)?)
    }

    fn text(&self, col: &str) -> Result<Option<String>, StoreError> {
        Ok(self.try_get(col)?)
    }
}

/// Runs statements inside the caller's transaction.
pub(crate) trait Exec: Send {
    /// The rows it reads back.
    type Row: Record + Send;

    /// Which SQL dialect it speaks.
    fn backend(&self) -> Backend;

    /// Runs `stmt`; returns how many rows it changed.
    fn execute(&mut self, stmt: &Stmt<'_>) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Runs `stmt` and returns its rows.
    fn fetch(
        &mut self,
        stmt: &Stmt<'_>,
    ) -> impl Future<Output = Result<Vec<Self::Row>, StoreError>> + Send;

    /// Runs `stmt` and returns its first row, if any.
    fn fetch_optional(
        &mut self,
        stmt: &Stmt<'_>,
    ) -> impl Future<Output = Result<Option<Self::Row>, StoreError>> + Send {
        async move { Ok(self.fetch(stmt).await?.into_iter().next()) }
    }

    /// Runs `stmt` and returns the text column `col` of every row (never NULL).
    fn strings(
        &mut self,
        stmt: &Stmt<'_>,
        col: &str,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send {
        async move {
            self.fetch(stmt)
                .await?
                .iter()
                .map(|r| r.string(col))
                .collect()
        }
    }

    /// Runs `stmt` and returns its first row ([`StoreError::NotFound`] when none).
    fn fetch_one(
        &mut self,
        stmt: &Stmt<'_>,
    ) -> impl Future<Output = Result<Self::Row, StoreError>> + Send {
        async move { self.fetch_optional(stmt).await?.ok_or(StoreError::NotFound) }
    }
}

impl Exec for AnyConnection {
    type Row = sqlx::any::AnyRow;

    fn backend(&self) -> Backend {
        crate::sql::backend_of(self)
    }

    async fn execute(&mut self, stmt: &Stmt<'_>) -> Result<u64, StoreError> {
        Ok(stmt.query().execute(&mut *self).await?.rows_affected())
    }

    async fn fetch(&mut self, stmt: &Stmt<'_>) -> Result<Vec<Self::Row>, StoreError> {
        Ok(stmt.query().fetch_all(&mut *self).await?)
    }
}

/// A sqlx transaction runs statements on its connection.
impl Exec for sqlx::Transaction<'_, sqlx::Any> {
    type Row = sqlx::any::AnyRow;

    fn backend(&self) -> Backend {
        Exec::backend(&**self)
    }

    async fn execute(&mut self, stmt: &Stmt<'_>) -> Result<u64, StoreError> {
        Exec::execute(&mut **self, stmt).await
    }

    async fn fetch(&mut self, stmt: &Stmt<'_>) -> Result<Vec<Self::Row>, StoreError> {
        Exec::fetch(&mut **self, stmt).await
    }
}

impl rusqlite::ToSql for Arg<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(match self {
            Arg::Int(Some(v)) => ToSqlOutput::Borrowed(ValueRef::Integer(*v)),
            Arg::Text(Some(v)) => ToSqlOutput::Borrowed(ValueRef::Text(v.as_bytes())),
            Arg::Int(None) | Arg::Text(None) => ToSqlOutput::Borrowed(ValueRef::Null),
        })
    }
}

/// A row rusqlite read, owned: its columns' names (shared by the statement's rows) and
/// values.
#[derive(Debug)]
pub(crate) struct SqliteRow {
    names: Arc<[String]>,
    values: Vec<rusqlite::types::Value>,
}

impl SqliteRow {
    fn value(&self, col: &str) -> Result<&rusqlite::types::Value, StoreError> {
        self.names
            .iter()
            .position(|n| n == col)
            .map(|i| &self.values[i])
            .ok_or_else(|| StoreError::Corrupt(format!("no column {col}")))
    }
}

impl Record for SqliteRow {
    fn int(&self, col: &str) -> Result<Option<i64>, StoreError> {
        use rusqlite::types::Value;
        match self.value(col)? {
            Value::Null => Ok(None),
            Value::Integer(v) => Ok(Some(*v)),
            v => Err(StoreError::Corrupt(format!(
                "{col} is {v:?}, not an integer"
            ))),
        }
    }

    fn text(&self, col: &str) -> Result<Option<String>, StoreError> {
        use rusqlite::types::Value;
        match self.value(col)? {
            Value::Null => Ok(None),
            Value::Text(v) => Ok(Some(v.clone())),
            v => Err(StoreError::Corrupt(format!("{col} is {v:?}, not text"))),
        }
    }
}

impl Exec for rusqlite::Connection {
    type Row = SqliteRow;

    fn backend(&self) -> Backend {
        Backend::Sqlite
    }

    async fn execute(&mut self, stmt: &Stmt<'_>) -> Result<u64, StoreError> {
        execute_sqlite(self, stmt)
    }

    async fn fetch(&mut self, stmt: &Stmt<'_>) -> Result<Vec<Self::Row>, StoreError> {
        fetch_sqlite(self, stmt)
    }
}

/// Binds `args` to `st` by number: SQLite numbers a named parameter (`$2`) by where it
/// first appears in the text, not by its name, so a statement that names `$2` before `$1`
/// (or repeats one) would otherwise get its arguments in the wrong places. An anonymous
/// `?` (what [`crate::sql::positional`] writes) is bound by its position.
fn bind_sqlite(st: &mut rusqlite::Statement<'_>, args: &[Arg<'_>]) -> Result<(), StoreError> {
    for i in 1..=st.parameter_count() {
        let n = match st.parameter_name(i) {
            None => i,
            Some(name) => name
                .trim_start_matches(['$', '?'])
                .parse::<usize>()
                .map_err(|_| StoreError::Corrupt(format!("SQL parameter {name}")))?,
        };
        let arg = n
            .checked_sub(1)
            .and_then(|at| args.get(at))
            .ok_or_else(|| StoreError::Corrupt(format!("no argument for SQL parameter {n}")))?;
        st.raw_bind_parameter(i, arg)?;
    }
    Ok(())
}

/// Runs `stmt` on `conn` synchronously; returns how many rows it changed.
pub(crate) fn execute_sqlite(
    conn: &mut rusqlite::Connection,
    stmt: &Stmt<'_>,
) -> Result<u64, StoreError> {
    let mut st = conn.prepare_cached(&stmt.sql)?;
    bind_sqlite(&mut st, &stmt.args)?;
    Ok(st.raw_execute()? as u64)
}

/// The rows of `stmt` on `conn`, read synchronously.
pub(crate) fn fetch_sqlite(
    conn: &mut rusqlite::Connection,
    stmt: &Stmt<'_>,
) -> Result<Vec<SqliteRow>, StoreError> {
    let mut st = conn.prepare_cached(&stmt.sql)?;
    let names: Arc<[String]> = st.column_names().iter().map(|n| n.to_string()).collect();
    let width = names.len();
    bind_sqlite(&mut st, &stmt.args)?;
    let mut rows = st.raw_query();
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let values = (0..width)
            .map(|i| row.get::<_, rusqlite::types::Value>(i))
            .collect::<Result<_, _>>()?;
        out.push(SqliteRow {
            names: names.clone(),
            values,
        });
    }
    Ok(out)
}

/// A row read by either executor.
pub(crate) enum Row {
    /// Read by rusqlite (SQLite).
    Sqlite(SqliteRow),
    /// Read through sqlx (PostgreSQL).
    Any(sqlx::any::AnyRow),
}

impl Record for Row {
    fn int(&self, col: &str) -> Result<Option<i64>, StoreError> {
        match self {
            Row::Sqlite(r) => r.int(col),
            Row::Any(r) => r.int(col),
        }
    }

    fn text(&self, col: &str) -> Result<Option<String>, StoreError> {
        match self {
            Row::Sqlite(r) => r.text(col),
            Row::Any(r) => r.text(col),
        }
    }
}

/// The connection of a write transaction (see [`crate::db::Store::write`]): on SQLite the
/// writer's own rusqlite connection, on its thread ([`crate::writer`]); on PostgreSQL a
/// sqlx transaction's.
pub(crate) enum Tx<'c> {
    /// The SQLite writer's connection, inside its transaction.
    Sqlite(&'c mut rusqlite::Connection),
    /// A sqlx transaction's connection.
    Any(&'c mut AnyConnection),
}

impl Exec for Tx<'_> {
    type Row = Row;

    fn backend(&self) -> Backend {
        match self {
            Tx::Sqlite(_) => Backend::Sqlite,
            Tx::Any(c) => crate::sql::backend_of(c),
        }
    }

    async fn execute(&mut self, stmt: &Stmt<'_>) -> Result<u64, StoreError> {
        match self {
            Tx::Sqlite(c) => execute_sqlite(c, stmt),
            Tx::Any(c) => Exec::execute(&mut **c, stmt).await,
        }
    }

    async fn fetch(&mut self, stmt: &Stmt<'_>) -> Result<Vec<Self::Row>, StoreError> {
        Ok(match self {
            Tx::Sqlite(c) => fetch_sqlite(c, stmt)?
                .into_iter()
                .map(Row::Sqlite)
                .collect(),
            Tx::Any(c) => Exec::fetch(&mut **c, stmt)
                .await?
                .into_iter()
                .map(Row::Any)
                .collect(),
        })
    }
}

/// What a write transaction's body returns: a future borrowing the transaction's
/// connection for `'c` (see [`crate::db::Store::write`]).
pub(crate) type TxFuture<'c, T> =
    std::pin::Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'c>>;

#[cfg(test)]
mod tests {
    use super::*;

    /// A statement that names its parameters out of order, or repeats one, gets each
    /// argument where its number says on rusqlite, as on sqlx.
    #[tokio::test]
    async fn sqlite_binds_numbered_parameters_by_number() {
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        let mut q = Stmt::new(
            Backend::Sqlite,
            "SELECT $2 AS two, $1 AS one, $2 || $1 AS both".into(),
        );
        q.push("a").push(7);
        let rows = conn.fetch(&q).await.unwrap();
        assert_eq!(rows[0].integer("two").unwrap(), 7);
        assert_eq!(rows[0].string("one").unwrap(), "a");
        assert_eq!(rows[0].string("both").unwrap(), "7a");
        // In order, rewritten to anonymous `?`: bound by position.
        let mut q = Stmt::new(Backend::Sqlite, "SELECT $1 AS one, $2 AS two".into());
        q.push("a").push(7);
        let rows = conn.fetch(&q).await.unwrap();
        assert_eq!(rows[0].string("one").unwrap(), "a");
        assert_eq!(rows[0].integer("two").unwrap(), 7);
    }
}
