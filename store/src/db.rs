//! The database: SQLite (default, one file) or PostgreSQL (`postgres://…`), through one
//! code path (`sqlx::Any`, `$N` placeholders, integer times and amounts). Every SQL
//! statement of the project lives in this crate.

use std::str::FromStr;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, ConnectOptions};

/// Which database the store talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// SQLite, one file.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

/// Errors of the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database URL is neither `sqlite:` nor `postgres://`.
    #[error("unsupported database url (use sqlite://PATH or postgres://…)")]
    UnsupportedUrl,
    /// A query failed.
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
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
                // 40001 serialization_failure, 40P01 deadlock (Postgres); 5/6 busy/locked (SQLite).
                matches!(
                    e.code().as_deref(),
                    Some("40001" | "40P01" | "5" | "6" | "517")
                )
            }
            StoreError::Db(_)
            | StoreError::UnsupportedUrl
            | StoreError::Migrate(_)
            | StoreError::NotFound
            | StoreError::UnknownCursor
            | StoreError::Corrupt(_) => false,
        }
    }
}

/// A handle on the database; cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    pool: AnyPool,
    /// Where writes go: for SQLite a pool of one connection, so writers queue here (in
    /// order, without holding a thread) instead of in SQLite's busy handler, which sleeps
    /// 1 to 100 ms between tries; for PostgreSQL the same pool as reads.
    writer: AnyPool,
    backend: Backend,
    /// The group commit of the hot path's writes (see [`crate::group`]).
    group: crate::group::Group,
}

impl Store {
    /// Connects to `url` (`sqlite://path/to/file.db` creates the file; `postgres://…`) and
    /// applies the migrations of that backend.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else {
            return Err(StoreError::UnsupportedUrl);
        };
        let url = match backend {
            Backend::Sqlite if !url.contains('?') => format!("{url}?mode=rwc"),
            _ => url.to_string(),
        };
        let options = AnyConnectOptions::from_str(&url)?.disable_statement_logging();
        let sqlite = |connections: u32| {
            AnyPoolOptions::new()
                .max_connections(connections)
                .after_connect(|conn, _| {
                    Box::pin(async move {
                        use sqlx::Executor;
                        conn.execute("PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;").await?;
                        Ok(())
                    })
                })
        };
        let (pool, writer) = match backend {
            // One writer at a time is SQLite's model; WAL lets readers run beside it.
            Backend::Sqlite => {
                let pool = sqlite(8).connect_with(options.clone()).await?;
                let writer = sqlite(1).connect_with(options).await?;
                (pool, writer)
            }
            Backend::Postgres => {
                let pool = AnyPoolOptions::new()
                    .max_connections(16)
                    .connect_with(options)
                    .await?;
                (pool.clone(), pool)
            }
        };
        let store = Self {
            pool,
            writer,
            backend,
            group: Default::default(),
        };
        store.migrate().await?;
        Ok(store)
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        match self.backend {
            Backend::Sqlite => {
                sqlx::migrate!("../migrations/sqlite")
                    .run(&self.writer)
                    .await?
            }
            Backend::Postgres => {
                sqlx::migrate!("../migrations/postgres")
                    .run(&self.writer)
                    .await?
            }
        }
        Ok(())
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Where reads go.
    pub(crate) fn pool(&self) -> &AnyPool {
        &self.pool
    }

    pub(crate) fn group(&self) -> &crate::group::Group {
        &self.group
    }

    /// Where writes go (transactions and single statements that change rows).
    pub(crate) fn writer(&self) -> &AnyPool {
        &self.writer
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

#[cfg(test)]
mod tests {
    #[test]
    fn numbered_counts_from_first() {
        assert_eq!(super::numbered(3, 3), "$3, $4, $5");
        assert_eq!(super::numbered(1, 1), "$1");
    }

    #[test]
    fn placeholders_number_rows_then_columns() {
        assert_eq!(super::placeholders(1, 1), "($1)");
        assert_eq!(super::placeholders(2, 3), "($1, $2, $3), ($4, $5, $6)");
    }
}
