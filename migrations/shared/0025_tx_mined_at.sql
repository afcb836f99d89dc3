-- When the journal learnt that a transaction was mined (its receipt or the watcher's
-- log), unix ms: with `created_at` (when it was signed and journaled) it gives the time to
-- inclusion that `/metrics` reports. NULL while unmined, and again after a reorganisation.
ALTER TABLE chain_txs ADD COLUMN mined_at BIGINT;
