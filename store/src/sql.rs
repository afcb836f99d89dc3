//! The bottom of the store: which database it talks to ([`Backend`]), its errors
//! ([`StoreError`]), and how a statement's SQL is written for a backend (numbered
//! placeholders, and SQLite's anonymous ones when they come in order).

/// Which database the store talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// SQLite, one file.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

/// What every SQLite connection of the store sets first: WAL (readers beside the writer),
/// a 5 s busy wait (another process writing the same file), foreign keys, `NORMAL`
/// synchronous (a process crash loses no commit; a power loss may lose the last ones), a statement's temporary tables in memory, and 16 MiB of page cache.
pub(crate) const SQLITE_PRAGMAS: &str = "PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000; \
     PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; \
     PRAGMA temp_store = MEMORY; PRAGMA cache_size = -16384;";

/// Errors of the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database URL is neither `sqlite:` nor `postgres://`.
    #[error("unsupported database url (use sqlite://PATH or postgres://…)")]
    UnsupportedUrl,
    /// A PostgreSQL URL's `max_connections` is not a whole number from 1 to 1000.
    #[error("max_connections in the database url must be a whole number from 1 to 1000")]
    BadPoolSize,
    /// A query failed.
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    /// A statement of the group writer's own SQLite connection failed.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// Applying migrations failed.
    #[error("migration error: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A row the caller named does not exist.
    #[error("not found")]
    NotFound,
    /// A stored value could not be understood (a bug or a hand-edited database).
    #[error("corrupt row: {0}")]
    Corrupt(String),
    /// A list's `starting_after` names no object of that list (for this account and mode).
    #[error("starting_after names no object of this list")]
    UnknownCursor,
    /// A status change the object's lifecycle does not allow (a bug: callers move objects
    /// only along `openrail_domain::status`).
    #[error("transition not allowed: {0}")]
    Transition(String),
}

impl StoreError {
    /// Whether the same operation may succeed if retried (pool exhausted, connection lost,
    /// serialization failure, SQLite busy).
    pub fn is_transient(&self) -> bool {
        match self {
            StoreError::Db(
                sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) | sqlx::Error::PoolClosed,
            ) => true,
            StoreError::Db(sqlx::Error::Database(e)) => {
                // 40001 serialization_failure, 40P01 deadlock, 53300 too_many_connections
                // (Postgres); 5/6 busy/locked (SQLite).
                matches!(
                    e.code().as_deref(),
                    Some("40001" | "40P01" | "53300" | "5" | "6" | "517")
                )
            }
            StoreError::Sqlite(e) => matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            ),
            StoreError::Db(_)
            | StoreError::UnsupportedUrl
            | StoreError::BadPoolSize
            | StoreError::Migrate(_)
            | StoreError::NotFound
            | StoreError::UnknownCursor
            | StoreError::Transition(_)
            | StoreError::Corrupt(_) => false,
        }
    }
}

impl StoreError {
    /// Whether a unique index refused a row (PostgreSQL's `unique_violation`; SQLite's
    /// `UNIQUE` or `PRIMARY KEY` constraint).
    pub fn is_unique_violation(&self) -> bool {
        match self {
            StoreError::Db(e) => e
                .as_database_error()
                .is_some_and(|d| d.is_unique_violation()),
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(f, _)) => matches!(
                f.extended_code,
                rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                    | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
            ),
            StoreError::Sqlite(_)
            | StoreError::UnsupportedUrl
            | StoreError::BadPoolSize
            | StoreError::Migrate(_)
            | StoreError::NotFound
            | StoreError::UnknownCursor
            | StoreError::Transition(_)
            | StoreError::Corrupt(_) => false,
        }
    }
}

/// `sql` as `backend` runs it best. SQLite looks a numbered parameter (`$7`) up by its name
/// in a list it scans from the start — when it parses the statement and again, through
/// sqlx, at every execution — so a statement with `n` of them costs `n²`: a group's
/// 64-row insert of 22 columns took milliseconds in that scan alone. Its anonymous `?`
/// parameters are bound by position without a lookup. So for SQLite, a statement whose
/// parameters appear in the text in the order of their numbers (`$1`, `$2`, … — what
/// [`placeholders`] and [`numbered`] build) is rewritten with `?`; any other statement, and
/// every statement for PostgreSQL, is left as written.
pub(crate) fn positional(backend: Backend, sql: String) -> String {
    if backend != Backend::Sqlite {
        return sql;
    }
    let mut out = String::with_capacity(sql.len());
    let mut expected = 1usize;
    let mut rest = sql.as_str();
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let digits = rest[at + 1..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        match rest[at + 1..at + 1 + digits].parse::<usize>() {
            Ok(n) if n == expected => {
                out.push('?');
                expected += 1;
            }
            // Out of order (or a `$` that is no parameter): as written.
            _ => return sql,
        }
        rest = &rest[at + 1 + digits..];
    }
    out.push_str(rest);
    out
}

/// The backend of a connection of the store.
pub(crate) fn backend_of(conn: &sqlx::AnyConnection) -> Backend {
    if conn.backend_name().eq_ignore_ascii_case("sqlite") {
        Backend::Sqlite
    } else {
        Backend::Postgres
    }
}

/// `rows` groups of `cols` numbered placeholders, `($1, $2), ($3, $4)`: the `VALUES` of a
/// statement that writes many rows (both backends number their parameters this way).
pub(crate) fn placeholders(rows: usize, cols: usize) -> String {
    (0..rows)
        .map(|r| format!("({})", numbered(r * cols + 1, cols)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `n` numbered placeholders from `$first`, `$3, $4, $5`: the list of an `IN (…)`.
pub(crate) fn numbered(first: usize, n: usize) -> String {
    (first..first + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `ORDER BY` of an intent's transactions (`t`), the one that tells its fate first: a
/// mined one, else one still live, else the newest dead one. An intent has several when
/// a transaction was replaced with other fees or re-sent under another nonce.
pub(crate) const LIVE_FIRST: &str = "CASE t.status WHEN 'succeeded' THEN 0 WHEN 'reverted' THEN 0 \
     WHEN 'signed' THEN 1 ELSE 2 END";

#[cfg(test)]
mod tests {
    #[test]
    fn numbered_counts_from_first() {
        assert_eq!(super::numbered(3, 3), "$3, $4, $5");
        assert_eq!(super::numbered(1, 1), "$1");
    }

    #[test]
    fn sqlite_gets_anonymous_parameters_only_when_they_come_in_order() {
        use super::{Backend, placeholders, positional};
        let sql = format!("INSERT INTO t (a, b) VALUES {}", placeholders(2, 2));
        assert_eq!(
            positional(Backend::Sqlite, sql.clone()),
            "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)"
        );
        assert_eq!(positional(Backend::Postgres, sql.clone()), sql);
        // Numbers out of text order, a repeated number, or a bare `$`: left as written.
        for sql in [
            "UPDATE t SET a = $2 WHERE id = $1",
            "SELECT $1, $1",
            "SELECT '$' || $1",
        ] {
            assert_eq!(positional(Backend::Sqlite, sql.into()), sql);
        }
        assert_eq!(
            positional(
                Backend::Sqlite,
                "UPDATE t SET a = $1 WHERE id IN ($2, $3)".into()
            ),
            "UPDATE t SET a = ? WHERE id IN (?, ?)"
        );
        assert_eq!(positional(Backend::Sqlite, "SELECT 1".into()), "SELECT 1");
    }

    #[test]
    fn placeholders_number_rows_then_columns() {
        assert_eq!(super::placeholders(1, 1), "($1)");
        assert_eq!(super::placeholders(2, 3), "($1, $2, $3), ($4, $5, $6)");
    }
}
