//! Leases: at most one process holds a named lease at a time, until it expires unless
//! renewed. `openrail serve` processes sharing a database use one lease per settlement
//! chain ([`chain_lease`]): its holder is the only sender of that chain's operator
//! transactions, and journaling a transaction checks the lease in the same statement
//! ([`Journal::record`](crate::journal::Journal::record)), so a holder that stalled past its lease can no longer send.
//!
//! Times are the processes' clocks (unix ms); they are assumed to agree to well within a
//! lease's length.

use crate::db::{Store, StoreError};
use crate::exec::Record;

/// Chain leases: which process sends for a chain (`store.leases()`).
#[derive(Debug, Clone, Copy)]
pub struct Leases<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on chain leases ([`Leases`]).
    pub fn leases(&self) -> Leases<'_> {
        Leases(self)
    }
}

/// The lease of the settlement chain `chain_id`.
pub fn chain_lease(chain_id: u64) -> String {
    format!("chain:{chain_id}")
}

/// The lease that says the process `node_id` is alive (every serving process renews its
/// own; idempotency claims of a process without a live one are recovered).
pub fn node_lease(node_id: &str) -> String {
    format!("node:{node_id}")
}

/// A lease as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// Who holds it.
    pub holder: String,
    /// Where the holder serves the API.
    pub url: String,
    /// Unix ms after which anyone may take it.
    pub expires_at: i64,
}

impl Lease {
    /// Whether it is still held at `now` (unix ms).
    pub fn live_at(&self, now: i64) -> bool {
        self.expires_at > now
    }
}

impl Leases<'_> {
    /// Takes or renews the lease `name` for `holder` (serving at `url`) for `ttl` from `now`
    /// (`Duration::ZERO` lets it lapse at once). Succeeds when the lease is free, expired,
    /// or already `holder`'s; returns whether `holder` holds it now.
    pub async fn acquire(
        self,
        name: &str,
        holder: &str,
        url: &str,
        ttl: std::time::Duration,
        now: i64,
    ) -> Result<bool, StoreError> {
        let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX / 2);
        let q = self
            .0
            .stmt(
                "INSERT INTO leases (name, holder, url, expires_at) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, url = excluded.url, \
                 expires_at = excluded.expires_at \
                 WHERE leases.holder = excluded.holder OR leases.expires_at <= $5",
            )
            .bind(name)
            .bind(holder)
            .bind(url)
            .bind(now + ttl_ms)
            .bind(now);
        Ok(self.0.execute(q).await? == 1)
    }

    /// Gives the lease up at once (a clean shutdown), if `holder` holds it.
    pub async fn release(self, name: &str, holder: &str) -> Result<(), StoreError> {
        let q = self
            .0
            .stmt("UPDATE leases SET expires_at = 0 WHERE name = $1 AND holder = $2")
            .bind(name)
            .bind(holder);
        self.0.execute(q).await?;
        Ok(())
    }

    /// The lease `name`, live or not.
    pub async fn get(self, name: &str) -> Result<Option<Lease>, StoreError> {
        let q = self
            .0
            .stmt("SELECT holder, url, expires_at FROM leases WHERE name = $1")
            .bind(name);
        let row = self.0.fetch_optional(&q).await?;
        row.map(|r| {
            Ok(Lease {
                holder: r.string("holder")?,
                url: r.string("url")?,
                expires_at: r.integer("expires_at")?,
            })
        })
        .transpose()
    }
}
