-- Openrail schema v1 (PostgreSQL). Times are unix milliseconds; amounts are integer minor units.
CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    mode         TEXT NOT NULL CHECK (mode IN ('testnet', 'mainnet')),
    secret_hash  TEXT NOT NULL UNIQUE,
    last4        TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    revoked_at   BIGINT
);
CREATE INDEX api_keys_account ON api_keys (account_id, created_at);
