-- Agentic debits: mandates, session keys, debit pulls; the outbound transaction journal;
-- idempotency records. Times are unix milliseconds; amounts are integer minor units.
CREATE TABLE mandates (
    id                TEXT PRIMARY KEY,
    account_id        TEXT NOT NULL REFERENCES accounts(id),
    mode              TEXT NOT NULL,
    payer_account_id  TEXT NOT NULL,
    payer_address     TEXT NOT NULL,
    currency          TEXT NOT NULL,
    max_amount        BIGINT NOT NULL,
    interval          TEXT NOT NULL,
    purpose           TEXT,
    status            TEXT NOT NULL,
    chain_id          BIGINT NOT NULL,
    contract          TEXT NOT NULL,
    onchain_id        TEXT NOT NULL UNIQUE,
    tx_hash           TEXT,
    created_at        BIGINT NOT NULL,
    canceled_at       BIGINT
);
CREATE INDEX mandates_list ON mandates (account_id, mode, created_at, id);

CREATE TABLE session_keys (
    id                    TEXT PRIMARY KEY,
    account_id            TEXT NOT NULL REFERENCES accounts(id),
    mode                  TEXT NOT NULL,
    mandate_id            TEXT NOT NULL REFERENCES mandates(id),
    expires_at            BIGINT NOT NULL,
    max_amount            BIGINT,
    allowed_destinations  TEXT NOT NULL,
    status                TEXT NOT NULL,
    secret_hash           TEXT NOT NULL UNIQUE,
    onchain_id            TEXT NOT NULL UNIQUE,
    tx_hash               TEXT,
    revoke_tx_hash        TEXT,
    created_at            BIGINT NOT NULL,
    revoked_at            BIGINT
);
CREATE INDEX session_keys_list ON session_keys (account_id, mode, created_at, id);
CREATE INDEX session_keys_mandate ON session_keys (mandate_id);

CREATE TABLE debit_pulls (
    id                   TEXT PRIMARY KEY,
    account_id           TEXT NOT NULL REFERENCES accounts(id),
    mode                 TEXT NOT NULL,
    session_key_id       TEXT NOT NULL REFERENCES session_keys(id),
    mandate_id           TEXT NOT NULL REFERENCES mandates(id),
    amount               BIGINT NOT NULL,
    currency             TEXT NOT NULL,
    destination          TEXT NOT NULL,
    destination_address  TEXT NOT NULL,
    description          TEXT,
    status               TEXT NOT NULL,
    decline_code         TEXT,
    remaining            BIGINT,
    resets_at            BIGINT,
    tx_hash              TEXT,
    authorized_at        BIGINT,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL
);
CREATE INDEX debit_pulls_list ON debit_pulls (account_id, mode, created_at, id);
CREATE INDEX debit_pulls_key ON debit_pulls (session_key_id, status, authorized_at);
CREATE INDEX debit_pulls_mandate ON debit_pulls (mandate_id, status, authorized_at);

-- Outbound transactions, written before broadcast. status: signed -> succeeded | reverted,
-- or rejected (the node refused it; its nonce was given to a later transaction).
CREATE TABLE chain_txs (
    hash        TEXT PRIMARY KEY,
    chain_id    BIGINT NOT NULL,
    nonce       BIGINT NOT NULL,
    raw         TEXT NOT NULL,
    kind        TEXT NOT NULL,
    intents     TEXT NOT NULL,
    status      TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX chain_txs_nonce ON chain_txs (chain_id, nonce);

CREATE TABLE idempotency_keys (
    api_key_id       TEXT NOT NULL,
    idempotency_key  TEXT NOT NULL,
    fingerprint      TEXT NOT NULL,
    status           TEXT NOT NULL,
    response_status  BIGINT,
    response_body    TEXT,
    created_at       BIGINT NOT NULL,
    PRIMARY KEY (api_key_id, idempotency_key)
);
