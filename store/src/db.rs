//! The database: SQLite (default, one file) or PostgreSQL (`postgres://…`), through one
//! code path (`sqlx::Any`, `$N` placeholders, integer times and amounts). Every SQL
//! statement of the project lives in this crate. [`Store`] holds the pools, the inline
//! reader and the group writer's queue; the aggregates' methods are on their handles
//! (`store.pulls()`, …), defined in their modules.

use std::str::FromStr;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, ConnectOptions};

pub use crate::sql::{Backend, StoreError};

/// Where a store keeps its group writer's queue (shared by the store's clones).
pub(crate) type GroupSlot =
    std::sync::Arc<std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>>;

/// A handle on the database; cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    pool: AnyPool,
    /// Where writes go: for SQLite a pool of one connection, so writers queue here (in
    /// order, without holding a thread) instead of in SQLite's busy handler, which sleeps
    /// 1 to 100 ms between tries; for PostgreSQL the same pool as reads.
    writer: AnyPool,
    backend: Backend,
    /// The queue of the group commit of the hot path's writes, started on first use; only
    /// the group writer (`group`, above the aggregates it writes) knows its type.
    group: GroupSlot,
    /// The file, for SQLite.
    sqlite_file: Option<String>,
    /// Hot-path reads on a SQLite file (see [`crate::inline`]).
    inline: Option<std::sync::Arc<crate::inline::InlineReader>>,
    /// Every write on a SQLite file (see [`crate::writer`]).
    sqlite_writer: Option<crate::writer::Writer>,
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
        let (url, pg_connections) = match backend {
            Backend::Postgres => pool_size(&url)?,
            Backend::Sqlite => (url, DEFAULT_PG_CONNECTIONS),
        };
        let options = AnyConnectOptions::from_str(&url)?.disable_statement_logging();
        let sqlite = |connections: u32| {
            AnyPoolOptions::new()
                .max_connections(connections)
                // No ping before handing out an idle connection (sqlx's default): a SQLite
                // connection is a file, it does not hang up, and the ping was one more
                // round trip to the connection's worker thread for every read and every
                // write transaction (context switches per pull in `bench pulls`: 16.4-17.1
                // with it, 12.5-12.7 without).
                .test_before_acquire(false)
                .after_connect(|conn, _| {
                    Box::pin(async move {
                        use sqlx::Executor;
                        // temp_store: a statement's temporary tables and journals in
                        // memory, not in files created and deleted per statement;
                        // cache_size: 16 MiB of pages per connection (default 2).
                        conn.execute(
                            "PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000; \
                             PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; \
                             PRAGMA temp_store = MEMORY; \
                             PRAGMA cache_size = -16384;",
                        )
                        .await?;
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
                    .max_connections(pg_connections)
                    .connect_with(options)
                    .await?;
                (pool.clone(), pool)
            }
        };
        let sqlite_file = sqlite_file(&url);
        let sqlite_writer = sqlite_file
            .as_deref()
            .map(crate::writer::Writer::start)
            .transpose()?;
        let store = Self {
            sqlite_writer,
            pool,
            writer,
            backend,
            group: Default::default(),
            inline: sqlite_file
                .clone()
                .map(|f| std::sync::Arc::new(crate::inline::InlineReader::new(f))),
            sqlite_file,
        };
        store.migrate().await?;
        Ok(store)
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        use crate::migrations::{Folder, migrator};
        migrator(match self.backend {
            Backend::Sqlite => Folder::Sqlite,
            Backend::Postgres => Folder::Postgres,
        })
        .await?
        .run(&self.writer)
        .await?;
        Ok(())
    }

    /// The file of a SQLite database (`None` for PostgreSQL or a database in memory).
    pub(crate) fn sqlite_file(&self) -> Option<String> {
        self.sqlite_file.clone()
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Runs `body` in one write transaction, committed when it returns `Ok` and rolled
    /// back otherwise; returns what it returned. On SQLite every write of the process goes
    /// through here (or the group commit) to the one writing connection, on its thread
    /// ([`crate::writer`]); on PostgreSQL it is a transaction of the pool. The body runs
    /// its statements on the [`Tx`](crate::exec::Tx) it is given (and only there: it may
    /// run on another thread, so it owns what it needs).
    pub(crate) async fn write<T, F>(&self, body: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(crate::exec::Tx<'c>) -> crate::exec::TxFuture<'c, T> + Send + 'static,
    {
        if let Some(writer) = &self.sqlite_writer {
            return writer.write(body).await;
        }
        let mut tx = self.pool.begin().await?;
        match body(crate::exec::Tx::Any(&mut *tx)).await {
            Ok(v) => {
                tx.commit().await?;
                Ok(v)
            }
            Err(e) => {
                let _ = tx.rollback().await;
                Err(e)
            }
        }
    }

    /// Runs one statement that changes rows, in a transaction of its own (see
    /// [`Store::write`]); returns how many rows it changed.
    pub(crate) async fn execute(&self, stmt: crate::exec::Stmt<'_>) -> Result<u64, StoreError> {
        use crate::exec::Exec;
        let stmt = stmt.into_owned();
        self.write(move |mut tx| Box::pin(async move { tx.execute(&stmt).await }))
            .await
    }

    /// The rows `stmt` reads: inline on SQLite (see [`crate::inline`]), from the pool on
    /// PostgreSQL.
    pub(crate) async fn fetch(
        &self,
        stmt: &crate::exec::Stmt<'_>,
    ) -> Result<Vec<crate::exec::Row>, StoreError> {
        use crate::exec::Row;
        Ok(match &self.inline {
            Some(reader) => reader.fetch(stmt)?.into_iter().map(Row::Sqlite).collect(),
            None => stmt
                .query()
                .fetch_all(self.pool())
                .await?
                .into_iter()
                .map(Row::Any)
                .collect(),
        })
    }

    /// The first row `stmt` reads, if any (see [`Store::fetch`]).
    pub(crate) async fn fetch_optional(
        &self,
        stmt: &crate::exec::Stmt<'_>,
    ) -> Result<Option<crate::exec::Row>, StoreError> {
        use crate::exec::Row;
        Ok(match &self.inline {
            Some(reader) => reader.fetch(stmt)?.into_iter().next().map(Row::Sqlite),
            None => stmt
                .query()
                .fetch_optional(self.pool())
                .await?
                .map(Row::Any),
        })
    }

    /// The first row `stmt` reads ([`StoreError::NotFound`] when none).
    pub(crate) async fn fetch_one(
        &self,
        stmt: &crate::exec::Stmt<'_>,
    ) -> Result<crate::exec::Row, StoreError> {
        self.fetch_optional(stmt).await?.ok_or(StoreError::NotFound)
    }

    /// A new statement for this store's backend (see [`crate::exec::Stmt`]).
    pub(crate) fn stmt<'a>(&self, sql: impl Into<String>) -> crate::exec::Stmt<'a> {
        crate::exec::Stmt::new(self.backend, sql.into())
    }

    /// The SQLite writer (`None` on PostgreSQL).
    pub(crate) fn sqlite_writer(&self) -> Option<&crate::writer::Writer> {
        self.sqlite_writer.as_ref()
    }

    /// Where reads go.
    pub(crate) fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// The group writer's queue, once started (see `group`).
    pub(crate) fn group(&self) -> &GroupSlot {
        &self.group
    }

    /// A write transaction. On SQLite it takes the database's write lock at once (`BEGIN
    /// IMMEDIATE`): the group writer writes through a connection of its own (see
    /// [`crate::group`]), and a deferred transaction that read before that connection
    /// committed could not write afterwards (SQLite answers `SQLITE_BUSY_SNAPSHOT`, which
    /// no waiting cures); an immediate one waits for its turn instead.
    pub(crate) async fn write_tx(
        &self,
    ) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
        match self.backend {
            Backend::Sqlite => self.writer.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.writer.begin().await,
        }
    }

    /// Where writes go (transactions and single statements that change rows).
    pub(crate) fn writer(&self) -> &AnyPool {
        &self.writer
    }
}

/// The file a `sqlite:` URL names (`None` for one in memory).
/// Connections a process keeps to PostgreSQL at most, unless its URL says otherwise.
const DEFAULT_PG_CONNECTIONS: u32 = 16;

/// A PostgreSQL URL without its `max_connections=N` query parameter (Openrail's, not
/// libpq's: the pool's size per process, as Prisma's `connection_limit`), and that size
/// ([`DEFAULT_PG_CONNECTIONS`] when absent). Several servers on one database, or a test
/// suite starting many, size their pools to the server's `max_connections` with it.
fn pool_size(url: &str) -> Result<(String, u32), StoreError> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_string(), DEFAULT_PG_CONNECTIONS));
    };
    let mut size = DEFAULT_PG_CONNECTIONS;
    let mut rest = Vec::new();
    for pair in query.split('&') {
        match pair.strip_prefix("max_connections=") {
            Some(v) => {
                size = v
                    .parse()
                    .ok()
                    .filter(|n| (1..=1000).contains(n))
                    .ok_or(StoreError::BadPoolSize)?
            }
            None => rest.push(pair),
        }
    }
    Ok(match rest.is_empty() {
        true => (base.to_string(), size),
        false => (format!("{base}?{}", rest.join("&")), size),
    })
}

fn sqlite_file(url: &str) -> Option<String> {
    let rest = url.strip_prefix("sqlite:")?;
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    let path = rest.split('?').next().unwrap_or_default();
    (!path.is_empty() && path != ":memory:" && !url.contains("mode=memory"))
        .then(|| path.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_postgres_url_may_size_its_pool() {
        use super::pool_size;
        let pg = "postgres://u@h:5432/db";
        assert_eq!(pool_size(pg).unwrap(), (pg.to_string(), 16));
        assert_eq!(
            pool_size(&format!("{pg}?max_connections=4")).unwrap(),
            (pg.to_string(), 4)
        );
        assert_eq!(
            pool_size(&format!(
                "{pg}?sslmode=require&max_connections=3&application_name=x"
            ))
            .unwrap(),
            (format!("{pg}?sslmode=require&application_name=x"), 3)
        );
        for bad in ["0", "1001", "-1", "", "four"] {
            assert!(matches!(
                pool_size(&format!("{pg}?max_connections={bad}")),
                Err(super::StoreError::BadPoolSize)
            ));
        }
    }

    #[test]
    fn sqlite_files_are_read_off_their_urls() {
        use super::sqlite_file;
        assert_eq!(
            sqlite_file("sqlite:///tmp/a.db?mode=rwc").as_deref(),
            Some("/tmp/a.db")
        );
        assert_eq!(
            sqlite_file("sqlite://rel/a.db").as_deref(),
            Some("rel/a.db")
        );
        assert_eq!(sqlite_file("sqlite:a.db").as_deref(), Some("a.db"));
        assert_eq!(sqlite_file("sqlite::memory:"), None);
        assert_eq!(sqlite_file("sqlite://a.db?mode=memory"), None);
        assert_eq!(sqlite_file("postgres://x@h/db"), None);
    }
}
