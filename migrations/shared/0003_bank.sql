-- Testnet's simulated bank: accounts with a chosen behaviour, and their transfers.
-- Times are unix milliseconds; amounts are integer minor units.
CREATE TABLE bank_accounts (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    mode         TEXT NOT NULL,
    owner_name   TEXT NOT NULL,
    currency     TEXT NOT NULL,
    balance      BIGINT NOT NULL,
    behavior     TEXT NOT NULL,
    delay_ms     BIGINT NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX bank_accounts_list ON bank_accounts (account_id, mode, created_at, id);

-- status: pending -> settled | failed; a `fails_late` debit goes settled -> failed (returned).
CREATE TABLE bank_transfers (
    id               TEXT PRIMARY KEY,
    bank_account_id  TEXT NOT NULL REFERENCES bank_accounts(id),
    direction        TEXT NOT NULL,
    amount           BIGINT NOT NULL,
    status           TEXT NOT NULL,
    failure_reason   TEXT,
    idempotency_key  TEXT NOT NULL UNIQUE,
    due_at           BIGINT NOT NULL,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL
);
CREATE INDEX bank_transfers_account ON bank_transfers (bank_account_id, created_at);
CREATE INDEX bank_transfers_due ON bank_transfers (status, due_at);
