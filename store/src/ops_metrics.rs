//! What `/metrics` reads from the database at each scrape: a few grouped counts over the
//! journal, the outbox, webhook deliveries and bank transfers. Read-only; each query is one
//! `GROUP BY` over an indexed or small table.

use sqlx::Row;

use crate::db::{Store, StoreError};

/// Counts at one moment (see [`Store::ops_snapshot`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpsSnapshot {
    /// Journaled operator transactions: (chain id, kind, status) → count.
    pub transactions: Vec<(u64, String, String, u64)>,
    /// Open outbox rows per chain: (chain id, open rows, age of the oldest in ms at `now`).
    pub outbox: Vec<(u64, u64, i64)>,
    /// Webhook deliveries: (mode, status) → count.
    pub webhook_deliveries: Vec<(String, String, u64)>,
    /// Simulated bank transfers (the bank legs): (direction, status) → count.
    pub bank_transfers: Vec<(String, String, u64)>,
}

impl Store {
    /// The counts `/metrics` exposes, with ages measured at `now` (unix ms).
    pub async fn ops_snapshot(&self, now: i64) -> Result<OpsSnapshot, StoreError> {
        let mut s = OpsSnapshot::default();
        for r in sqlx::query(
            "SELECT chain_id, kind, status, COUNT(*) AS n FROM chain_txs \
             GROUP BY chain_id, kind, status",
        )
        .fetch_all(self.pool())
        .await?
        {
            s.transactions.push((
                r.try_get::<i64, _>("chain_id")? as u64,
                r.try_get("kind")?,
                r.try_get("status")?,
                r.try_get::<i64, _>("n")? as u64,
            ));
        }
        for r in sqlx::query(
            "SELECT chain_id, COUNT(*) AS n, MIN(created_at) AS oldest FROM outbox \
             WHERE done_at IS NULL GROUP BY chain_id",
        )
        .fetch_all(self.pool())
        .await?
        {
            let oldest: i64 = r.try_get("oldest")?;
            s.outbox.push((
                r.try_get::<i64, _>("chain_id")? as u64,
                r.try_get::<i64, _>("n")? as u64,
                (now - oldest).max(0),
            ));
        }
        for r in sqlx::query(
            "SELECT mode, status, COUNT(*) AS n FROM webhook_deliveries GROUP BY mode, status",
        )
        .fetch_all(self.pool())
        .await?
        {
            s.webhook_deliveries.push((
                r.try_get("mode")?,
                r.try_get("status")?,
                r.try_get::<i64, _>("n")? as u64,
            ));
        }
        for r in sqlx::query(
            "SELECT direction, status, COUNT(*) AS n FROM bank_transfers GROUP BY direction, status",
        )
        .fetch_all(self.pool())
        .await?
        {
            s.bank_transfers.push((
                r.try_get("direction")?,
                r.try_get("status")?,
                r.try_get::<i64, _>("n")? as u64,
            ));
        }
        Ok(s)
    }
}
