-- Identity attestations on the attestation chain (issue 27 item 7): a verified credential
-- attested by Openrail's operator on the mode's attestation chain registry. The row holds
-- what the on-chain record holds — the credential's digest, issuer, type, expiry and status
-- reference, and the wallet it is about — never the credential's claims.
CREATE TABLE identity_attestations (
    id                    TEXT PRIMARY KEY,
    account_id            TEXT NOT NULL REFERENCES accounts(id),
    mode                  TEXT NOT NULL CHECK (mode IN ('testnet', 'mainnet')),
    chain_id              BIGINT NOT NULL,
    registry              TEXT NOT NULL,
    schema_uid            TEXT NOT NULL,
    recipient             TEXT NOT NULL,
    credential_id         TEXT,
    credential_digest     TEXT NOT NULL,
    issuer                TEXT NOT NULL,
    credential_type       TEXT NOT NULL,
    expires_at            BIGINT,
    status_list_credential TEXT,
    status_list_index     BIGINT,
    status                TEXT NOT NULL CHECK (status IN ('pending', 'active', 'revoked', 'failed')),
    uid                   TEXT,
    tx_hash               TEXT,
    revoked_at            BIGINT,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL
);
CREATE INDEX identity_attestations_by_recipient ON identity_attestations (account_id, mode, recipient, id);
CREATE INDEX identity_attestations_by_credential ON identity_attestations (credential_id);
