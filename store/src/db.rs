//! The database: SQLite (default, one file) or PostgreSQL (`postgres://…`). Every SQL
//! statement of the project lives in this crate, written once as a [`crate::exec::Stmt`]
//! (`$N` placeholders, integer times and amounts) and run by the backend's executor:
//! on SQLite rusqlite, every write on the one writer's thread ([`Store::write`],
//! [`crate::writer`]) and every read inline ([`Store::fetch`], [`crate::inline`]); on
//! PostgreSQL a sqlx pool. The aggregates' methods are on their handles
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
    exec: Executor,
    /// The queue of the group commit of the hot path's writes on PostgreSQL, started on
    /// first use; only the group writer (`group`, above the aggregates it writes) knows
    /// its type. (On SQLite the group goes to the writer's thread.)
    group: GroupSlot,
}

/// Who runs the statements.
#[derive(Debug, Clone)]
enum Executor {
    /// One SQLite file: every write on the one writer's thread ([`crate::writer`]), every
    /// read inline on the calling thread ([`crate::inline`]); both rusqlite.
    Sqlite {
        writer: crate::writer::Writer,
        reader: std::sync::Arc<crate::inline::InlineReader>,
    },
    /// PostgreSQL: a sqlx pool for reads and write transactions alike.
    Postgres(AnyPool),
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
        let exec = match backend {
            Backend::Sqlite => {
                // A file: a database in memory would be one per connection.
                let file = sqlite_file(url).ok_or(StoreError::UnsupportedUrl)?;
                let url = match url.contains('?') {
                    true => url.to_string(),
                    false => format!("{url}?mode=rwc"),
                };
                // The migrations run on a connection of their own, closed before the
                // writer opens: sqlx's migrator keeps its ledger, and nothing else writes
                // yet.
                let mut conn = AnyConnectOptions::from_str(&url)?
                    .disable_statement_logging()
                    .connect()
                    .await?;
                sqlx::Executor::execute(&mut conn, crate::sql::SQLITE_PRAGMAS).await?;
                migrate(Backend::Sqlite, &mut conn).await?;
                sqlx::Connection::close(conn).await?;
                Executor::Sqlite {
                    writer: crate::writer::Writer::start(&file)?,
                    reader: std::sync::Arc::new(crate::inline::InlineReader::new(file)),
                }
            }
            Backend::Postgres => {
                let (url, connections) = pool_size(url)?;
                let options = AnyConnectOptions::from_str(&url)?.disable_statement_logging();
                let pool = AnyPoolOptions::new()
                    .max_connections(connections)
                    .connect_with(options)
                    .await?;
                migrate(Backend::Postgres, &mut *pool.acquire().await?).await?;
                Executor::Postgres(pool)
            }
        };
        Ok(Self {
            exec,
            group: Default::default(),
        })
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        match self.exec {
            Executor::Sqlite { .. } => Backend::Sqlite,
            Executor::Postgres(_) => Backend::Postgres,
        }
    }

    /// The group writer's queue on PostgreSQL, once started (see `group`).
    pub(crate) fn group(&self) -> &GroupSlot {
        &self.group
    }

    /// The PostgreSQL pool (`None` on SQLite).
    pub(crate) fn pg_pool(&self) -> Option<&AnyPool> {
        match &self.exec {
            Executor::Postgres(pool) => Some(pool),
            Executor::Sqlite { .. } => None,
        }
    }

    /// The SQLite writer (`None` on PostgreSQL).
    pub(crate) fn sqlite_writer(&self) -> Option<&crate::writer::Writer> {
        match &self.exec {
            Executor::Sqlite { writer, .. } => Some(writer),
            Executor::Postgres(_) => None,
        }
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
        self.write_keeping(body, |_| true).await
    }

    /// [`Store::write`] whose body may decline: it returns `None` to roll back what it
    /// wrote (and `write_or_undo` answers `None`), `Some` to commit.
    pub(crate) async fn write_or_undo<T, F>(&self, body: F) -> Result<Option<T>, StoreError>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(crate::exec::Tx<'c>) -> crate::exec::TxFuture<'c, Option<T>>
            + Send
            + 'static,
    {
        self.write_keeping(body, Option::is_some).await
    }

    /// Runs `body` in one write transaction, committed when it returns `Ok` with a value
    /// `keep` accepts, rolled back otherwise.
    async fn write_keeping<T, F>(&self, body: F, keep: fn(&T) -> bool) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(crate::exec::Tx<'c>) -> crate::exec::TxFuture<'c, T> + Send + 'static,
    {
        let pool = match &self.exec {
            Executor::Sqlite { writer, .. } => return writer.write(body, keep).await,
            Executor::Postgres(pool) => pool,
        };
        let mut tx = pool.begin().await?;
        match body(crate::exec::Tx::Any(&mut tx)).await {
            Ok(v) if keep(&v) => {
                tx.commit().await?;
                Ok(v)
            }
            Ok(v) => {
                tx.rollback().await?;
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
        Ok(match &self.exec {
            Executor::Sqlite { reader, .. } => {
                reader.fetch(stmt)?.into_iter().map(Row::Sqlite).collect()
            }
            Executor::Postgres(pool) => stmt
                .query()
                .fetch_all(pool)
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
        Ok(match &self.exec {
            Executor::Sqlite { reader, .. } => {
                reader.fetch(stmt)?.into_iter().next().map(Row::Sqlite)
            }
            Executor::Postgres(pool) => stmt.query().fetch_optional(pool).await?.map(Row::Any),
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
        crate::exec::Stmt::new(self.backend(), sql.into())
    }
}

/// Applies the migrations of `backend` on `conn`.
async fn migrate(backend: Backend, conn: &mut sqlx::AnyConnection) -> Result<(), StoreError> {
    use crate::migrations::{Folder, migrator};
    migrator(match backend {
        Backend::Sqlite => Folder::Sqlite,
        Backend::Postgres => Folder::Postgres,
    })
    .await?
    .run(conn)
    .await?;
    Ok(())
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
    use crate::exec::{Exec, Record, Stmt};

    /// Writes `k` (a key of the `leases` table) in a transaction whose body then answers
    /// `outcome`.
    fn put(
        k: &'static str,
        outcome: Result<Option<()>, super::StoreError>,
    ) -> impl for<'c> FnOnce(crate::exec::Tx<'c>) -> crate::exec::TxFuture<'c, Option<()>> {
        move |mut tx| {
            Box::pin(async move {
                let q = Stmt::new(
                    tx.backend(),
                    "INSERT INTO leases (name, holder, url, expires_at) VALUES ($1, 'h', 'u', 0)"
                        .into(),
                )
                .bind(k);
                tx.execute(&q).await?;
                outcome
            })
        }
    }

    /// A fresh SQLite store in `dir` (not through `crate::testing`, which sits above `db`).
    async fn sqlite_in(dir: &tempfile::TempDir) -> super::Store {
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        super::Store::connect(&url).await.unwrap()
    }

    async fn written(store: &super::Store) -> Vec<String> {
        let q = store.stmt("SELECT name FROM leases ORDER BY name");
        store
            .fetch(&q)
            .await
            .unwrap()
            .iter()
            .map(|r| r.string("name").unwrap())
            .collect()
    }

    /// The one writer commits a body that succeeds, rolls back one that fails, declines
    /// (`write_or_undo` answered `None`) or panics, and keeps writing after each.
    #[tokio::test]
    async fn the_sqlite_writer_commits_only_what_succeeds_and_survives_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let store = sqlite_in(&dir).await;
        store.write(put("a", Ok(Some(())))).await.unwrap();
        let failed = store
            .write(put("b", Err(super::StoreError::NotFound)))
            .await;
        assert!(matches!(failed, Err(super::StoreError::NotFound)));
        assert_eq!(store.write_or_undo(put("c", Ok(None))).await.unwrap(), None);
        let panicked = store
            .write(|_tx| -> crate::exec::TxFuture<'_, ()> { panic!("a bug in a body") })
            .await;
        assert!(matches!(panicked, Err(super::StoreError::Corrupt(_))));
        assert_eq!(
            store.write_or_undo(put("d", Ok(Some(())))).await.unwrap(),
            Some(())
        );
        assert_eq!(written(&store).await, ["a", "d"]);
    }

    /// Writes sent at once from many tasks all land, each once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_writes_go_through_the_one_writer() {
        let dir = tempfile::tempdir().unwrap();
        let store = sqlite_in(&dir).await;
        const NAMES: [&str; 8] = ["k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"];
        let mut tasks = tokio::task::JoinSet::new();
        for k in NAMES {
            let store = store.clone();
            tasks.spawn(async move { store.write(put(k, Ok(Some(())))).await });
        }
        while let Some(done) = tasks.join_next().await {
            done.unwrap().unwrap();
        }
        assert_eq!(written(&store).await, NAMES);
    }

    /// A SQLite database is a file: one in memory would be a different database on each
    /// connection, so it is refused.
    #[tokio::test]
    async fn a_sqlite_database_in_memory_is_refused() {
        for url in ["sqlite::memory:", "sqlite://a.db?mode=memory"] {
            assert!(matches!(
                super::Store::connect(url).await,
                Err(super::StoreError::UnsupportedUrl)
            ));
        }
    }
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
