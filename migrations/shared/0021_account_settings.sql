-- Where an account's one-time payments settle, per mode: on the settlement chain (the
-- default, also when no row exists) or on the attestation chain. Chosen by the account
-- (`POST /v1/account`), never by a request; a payment keeps the chain it was created on.
CREATE TABLE account_settings (
    account_id      TEXT NOT NULL REFERENCES accounts(id),
    mode            TEXT NOT NULL CHECK (mode IN ('testnet', 'mainnet')),
    payments_chain  TEXT NOT NULL CHECK (payments_chain IN ('settlement', 'attestation')),
    updated_at      BIGINT NOT NULL,
    PRIMARY KEY (account_id, mode)
);
