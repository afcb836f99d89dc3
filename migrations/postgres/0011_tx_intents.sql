-- One row per intent a journaled transaction carries (the JSON `intents` column stays the
-- ordered list), so an intent's transactions are an index lookup, not a scan.
CREATE TABLE chain_tx_intents (
    intent  TEXT NOT NULL,
    hash    TEXT NOT NULL REFERENCES chain_txs(hash),
    PRIMARY KEY (intent, hash)
);
INSERT INTO chain_tx_intents (intent, hash) SELECT j.value, t.hash FROM chain_txs t, json_array_elements_text(t.intents::json) AS j(value);
-- Whether the effects of a transaction's known fate on the API's objects are recorded
-- (`Store::apply_journal_fates`); a reorganisation sets it back with the fate.
ALTER TABLE chain_txs ADD COLUMN applied BIGINT NOT NULL DEFAULT 0;
CREATE INDEX chain_txs_unapplied ON chain_txs (chain_id) WHERE applied = 0;
