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
    /// The file, for SQLite.
    sqlite_file: Option<String>,
    /// Hot-path reads on a SQLite file (see [`crate::inline`]).
    inline: Option<std::sync::Arc<crate::inline::InlineReader>>,
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
        let store = Self {
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

    /// The first row of `stmt`, read on a request's hot path: inline on a SQLite file
    /// (see [`crate::inline`]), else through sqlx.
    pub(crate) async fn hot_row(
        &self,
        stmt: &crate::exec::Stmt<'_>,
    ) -> Result<Option<crate::exec::HotRow>, StoreError> {
        use crate::exec::HotRow;
        Ok(match &self.inline {
            Some(reader) => reader.fetch(stmt)?.into_iter().next().map(HotRow::Sqlite),
            None => stmt
                .query()
                .fetch_optional(self.pool())
                .await?
                .map(HotRow::Any),
        })
    }

    /// Where reads go.
    pub(crate) fn pool(&self) -> &AnyPool {
        &self.pool
    }

    pub(crate) fn group(&self) -> &crate::group::Group {
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
