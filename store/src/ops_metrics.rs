//! What `/metrics` reads from the database at each scrape: a few grouped counts over the
//! journal, the outbox, webhook deliveries and bank transfers. Read-only; each query is one
//! `GROUP BY` over an indexed or small table.

use crate::db::{Store, StoreError};
use crate::exec::Record;

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
    /// Time to inclusion of the transactions mined in the last hour, per chain: (chain
    /// id, how many, p50, p90, p99 in ms) — from journaling to the journal learning it was
    /// mined (receipt polling included).
    pub inclusion: Vec<(u64, u64, i64, i64, i64)>,
}

/// Most recent mined transactions per scrape the inclusion quantiles are read from.
const INCLUSION_SAMPLE: i64 = 10_000;

/// The `q` quantile (0 to 1) of sorted `xs` (nearest rank).
fn quantile(xs: &[i64], q: f64) -> i64 {
    if xs.is_empty() {
        return 0;
    }
    let rank = ((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len());
    xs[rank - 1]
}

impl Store {
    /// The counts `/metrics` exposes, with ages measured at `now` (unix ms).
    pub async fn ops_snapshot(&self, now: i64) -> Result<OpsSnapshot, StoreError> {
        let mut s = OpsSnapshot::default();
        let mut per_chain: std::collections::BTreeMap<u64, Vec<i64>> = Default::default();
        let q = self
            .stmt(
                "SELECT chain_id, mined_at - created_at AS took FROM chain_txs \
                 WHERE mined_at IS NOT NULL AND mined_at >= $1 ORDER BY mined_at DESC LIMIT $2",
            )
            .bind(now - 3_600_000)
            .bind(INCLUSION_SAMPLE);
        for r in self.fetch(&q).await? {
            per_chain
                .entry(r.integer("chain_id")? as u64)
                .or_default()
                .push(r.integer("took")?.max(0));
        }
        for (chain, mut took) in per_chain {
            took.sort_unstable();
            s.inclusion.push((
                chain,
                took.len() as u64,
                quantile(&took, 0.5),
                quantile(&took, 0.9),
                quantile(&took, 0.99),
            ));
        }
        let q = self.stmt(
            "SELECT chain_id, kind, status, COUNT(*) AS n FROM chain_txs \
             GROUP BY chain_id, kind, status",
        );
        for r in self.fetch(&q).await? {
            s.transactions.push((
                r.integer("chain_id")? as u64,
                r.string("kind")?,
                r.string("status")?,
                r.integer("n")? as u64,
            ));
        }
        let q = self.stmt(
            "SELECT chain_id, COUNT(*) AS n, MIN(created_at) AS oldest FROM outbox \
             WHERE done_at IS NULL GROUP BY chain_id",
        );
        for r in self.fetch(&q).await? {
            let oldest = r.integer("oldest")?;
            s.outbox.push((
                r.integer("chain_id")? as u64,
                r.integer("n")? as u64,
                (now - oldest).max(0),
            ));
        }
        let q = self.stmt(
            "SELECT mode, status, COUNT(*) AS n FROM webhook_deliveries GROUP BY mode, status",
        );
        for r in self.fetch(&q).await? {
            s.webhook_deliveries.push((
                r.string("mode")?,
                r.string("status")?,
                r.integer("n")? as u64,
            ));
        }
        let q = self.stmt(
            "SELECT direction, status, COUNT(*) AS n FROM bank_transfers GROUP BY direction, status",
        );
        for r in self.fetch(&q).await? {
            s.bank_transfers.push((
                r.string("direction")?,
                r.string("status")?,
                r.integer("n")? as u64,
            ));
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn quantiles_are_nearest_rank() {
        let xs: Vec<i64> = (1..=100).collect();
        assert_eq!(super::quantile(&xs, 0.5), 50);
        assert_eq!(super::quantile(&xs, 0.9), 90);
        assert_eq!(super::quantile(&xs, 0.99), 99);
        assert_eq!(super::quantile(&[7], 0.99), 7);
        assert_eq!(super::quantile(&[], 0.5), 0);
    }
}
