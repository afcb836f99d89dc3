//! Test support: fresh databases for tests of the store and of the end-to-end harness.
//!
//! PostgreSQL tests use `OPENRAIL_TEST_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`) to create a fresh database per test. In CI
//! (`CI=true`) an unreachable server fails the test; elsewhere the test is skipped with a
//! message written straight to stderr, so it shows even when output is captured.

use std::io::Write;

use sqlx::{Connection, Executor};

use crate::db::{Store, StoreError};
use crate::ids::random_id;

/// The PostgreSQL server tests use.
pub fn postgres_server_url() -> String {
    std::env::var("OPENRAIL_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

/// A store on a fresh SQLite file in `dir`.
pub async fn fresh_sqlite(dir: &std::path::Path) -> Result<Store, StoreError> {
    Store::connect(&format!("sqlite://{}", dir.join("openrail.db").display())).await
}

/// The URL of a fresh, empty PostgreSQL database, or `None` (after a visible message)
/// when no server is reachable outside CI. In CI, an unreachable server is an error.
pub async fn fresh_postgres_url() -> Result<Option<String>, StoreError> {
    sqlx::any::install_default_drivers();
    let server = postgres_server_url();
    let mut admin = match sqlx::AnyConnection::connect(&server).await {
        Ok(c) => c,
        Err(e) if std::env::var("CI").as_deref() != Ok("true") => {
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED (PostgreSQL not reachable at {server}: {e}; CI runs it)"
            );
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    };
    let name = random_id("openrail_test_", 12).to_lowercase();
    admin
        .execute(format!("CREATE DATABASE {name}").as_str())
        .await?;
    let base = server.rsplit_once('/').map(|(b, _)| b).unwrap_or(&server);
    Ok(Some(format!("{base}/{name}")))
}

/// A store on a fresh PostgreSQL database (see [`fresh_postgres_url`]).
pub async fn fresh_postgres() -> Result<Option<Store>, StoreError> {
    match fresh_postgres_url().await? {
        Some(url) => Ok(Some(Store::connect(&url).await?)),
        None => Ok(None),
    }
}
