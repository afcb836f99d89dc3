-- One-time payments. status: pending -> processing -> succeeded | failed.
CREATE TABLE payments (
    id                   TEXT PRIMARY KEY,
    account_id           TEXT NOT NULL REFERENCES accounts(id),
    mode                 TEXT NOT NULL,
    amount               BIGINT NOT NULL,
    currency             TEXT NOT NULL,
    source_type          TEXT NOT NULL,
    source_id            TEXT NOT NULL,
    destination_type     TEXT NOT NULL,
    destination_address  TEXT NOT NULL,
    status               TEXT NOT NULL,
    failure_reason       TEXT,
    chain_id             BIGINT NOT NULL,
    tx_hash              TEXT,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL
);
CREATE INDEX payments_list ON payments (account_id, mode, created_at, id);
