-- Identity (W3C Verifiable Credentials). Openrail issues credentials as one issuer per
-- mode (an Ed25519 key, did:key); each issued credential has a random index in one of the
-- mode's Bitstring Status Lists (revocation), served publicly. Verification challenges
-- for presentations are single use and expire. No personal data is kept: a credential's
-- subject is an identifier (a wallet, a DID), its claims stay in the credential it was
-- given back as.
CREATE TABLE identity_issuers (
    mode        TEXT PRIMARY KEY CHECK (mode IN ('testnet', 'mainnet')),
    secret_key  TEXT NOT NULL,
    did         TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

CREATE TABLE identity_status_lists (
    id          TEXT PRIMARY KEY,
    mode        TEXT NOT NULL CHECK (mode IN ('testnet', 'mainnet')),
    purpose     TEXT NOT NULL CHECK (purpose IN ('revocation')),
    length      BIGINT NOT NULL,
    created_at  BIGINT NOT NULL
);

CREATE TABLE identity_credentials (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts(id),
    mode            TEXT NOT NULL CHECK (mode IN ('testnet', 'mainnet')),
    type            TEXT NOT NULL,
    subject         TEXT,
    digest          TEXT NOT NULL,
    status_list_id  TEXT NOT NULL REFERENCES identity_status_lists(id),
    status_index    BIGINT NOT NULL,
    revoked_at      BIGINT,
    valid_until     BIGINT,
    created_at      BIGINT NOT NULL,
    UNIQUE (status_list_id, status_index)
);
CREATE INDEX identity_credentials_by_account ON identity_credentials (account_id, mode, id);

CREATE TABLE identity_challenges (
    challenge   TEXT PRIMARY KEY,
    mode        TEXT NOT NULL CHECK (mode IN ('testnet', 'mainnet')),
    domain      TEXT,
    expires_at  BIGINT NOT NULL,
    used_at     BIGINT,
    created_at  BIGINT NOT NULL
);
