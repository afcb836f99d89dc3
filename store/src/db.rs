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
    backend: Backend,
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
        let pool_options = match backend {
            // One writer at a time is SQLite's model; WAL lets readers run beside it.
            Backend::Sqlite => AnyPoolOptions::new().max_connections(8).after_connect(|conn, _| {
                Box::pin(async move {
                    use sqlx::Executor;
                    conn.execute("PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;").await?;
                    Ok(())
                })
            }),
            Backend::Postgres => AnyPoolOptions::new().max_connections(16),
        };
        let pool = pool_options.connect_with(options).await?;
        let store = Self { pool, backend };
        store.migrate().await?;
        Ok(store)
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        match self.backend {
            Backend::Sqlite => {
                sqlx::migrate!("../migrations/sqlite")
                    .run(&self.pool)
                    .await?
            }
            Backend::Postgres => {
                sqlx::migrate!("../migrations/postgres")
                    .run(&self.pool)
                    .await?
            }
        }
        Ok(())
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub(crate) fn pool(&self) -> &AnyPool {
        &self.pool
    }
}
