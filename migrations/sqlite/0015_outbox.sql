-- The transactional outbox: what must be sent on chain, written in the same transaction as
-- the object (or the request) it is for. The chain's lease holder claims rows in `seq`
-- order, sends them and records the outcome; `done_at` is set once it is recorded. A row
-- whose transaction is journaled is never sent again (the journal is the fence).
CREATE TABLE outbox (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    intent      TEXT NOT NULL,
    kind        TEXT NOT NULL,
    chain_id    BIGINT NOT NULL,
    mode        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    done_at     BIGINT
);
-- One open row per intent and kind (asking twice to cancel queues one cancel).
CREATE UNIQUE INDEX outbox_open ON outbox (intent, kind) WHERE done_at IS NULL;
CREATE INDEX outbox_queue ON outbox (chain_id, mode, done_at, seq);

-- What earlier versions accepted and never journaled is queued now.
INSERT INTO outbox (intent, kind, chain_id, mode, created_at)
SELECT m.id, 'create_mandate', m.chain_id, m.mode, m.created_at FROM mandates m
WHERE m.status = 'pending' AND NOT EXISTS (
    SELECT 1 FROM chain_tx_intents i JOIN chain_txs t ON t.hash = i.hash
    WHERE i.intent = m.id AND t.kind = 'create_mandate');
INSERT INTO outbox (intent, kind, chain_id, mode, created_at)
SELECT k.id, 'issue_session_key', m.chain_id, k.mode, k.created_at FROM session_keys k
JOIN mandates m ON m.id = k.mandate_id
WHERE k.status = 'pending' AND NOT EXISTS (
    SELECT 1 FROM chain_tx_intents i JOIN chain_txs t ON t.hash = i.hash
    WHERE i.intent = k.id AND t.kind = 'issue_session_key');
INSERT INTO outbox (intent, kind, chain_id, mode, created_at)
SELECT p.id, 'pull_batch', m.chain_id, p.mode, p.created_at FROM debit_pulls p
JOIN mandates m ON m.id = p.mandate_id
WHERE p.status = 'pending' AND NOT EXISTS (
    SELECT 1 FROM chain_tx_intents i JOIN chain_txs t ON t.hash = i.hash
    WHERE i.intent = p.id AND t.kind = 'pull_batch');
