-- Identity verification sessions (Stripe Identity's shape): a developer asks for a
-- credential type about a wallet; the person (or agent) goes through a provider's flow
-- (`requires_input`), submits (`processing`), and the provider's check either passes —
-- Openrail then issues the credential (`verified`, `credential_id`) — or fails, which
-- returns the session to `requires_input` with `last_error_code`/`last_error_reason`.
-- Testnet's provider is simulated: `scenario` is what it will answer (`failed`: the first
-- check fails, a later submission passes) and `due_at` when; `submissions` counts them.
-- No personal data: the subject is a wallet address; the credential kept (to hand it to
-- its holder) says only its type, the subject's did:pkh and Openrail's signature.
CREATE TABLE identity_verifications (
    id                 TEXT PRIMARY KEY,
    account_id         TEXT NOT NULL REFERENCES accounts(id),
    mode               TEXT NOT NULL CHECK (mode IN ('testnet', 'mainnet')),
    type               TEXT NOT NULL CHECK (type IN ('personhood', 'financial_health', 'agent')),
    subject            TEXT NOT NULL,
    status             TEXT NOT NULL CHECK (status IN ('requires_input', 'processing', 'verified', 'canceled')),
    scenario           TEXT NOT NULL CHECK (scenario IN ('verified', 'failed', 'slow')),
    failure_reason     TEXT,
    last_error_code    TEXT,
    last_error_reason  TEXT,
    credential_id      TEXT REFERENCES identity_credentials(id),
    credential         TEXT,
    issuer_base        TEXT NOT NULL,
    due_at             BIGINT,
    submissions        BIGINT NOT NULL,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL
);
CREATE INDEX identity_verifications_by_account ON identity_verifications (account_id, mode, created_at, id);
CREATE INDEX identity_verifications_due ON identity_verifications (status, due_at);
