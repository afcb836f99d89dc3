-- The developer dashboard: people who sign in to an account with an email and a password
-- (argon2id, PHC string), their browser sessions (the cookie's secret is stored only as
-- its SHA-256, with the session's CSRF token), failed sign-ins (per email and per client
-- address, for the rate limit) and when each API key was last used.
CREATE TABLE dashboard_users (
    account_id     TEXT PRIMARY KEY REFERENCES accounts(id),
    email          TEXT NOT NULL UNIQUE,
    password_hash  TEXT NOT NULL,
    created_at     BIGINT NOT NULL
);

CREATE TABLE dashboard_sessions (
    secret_hash  TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    csrf_token   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL
);
CREATE INDEX dashboard_sessions_account ON dashboard_sessions (account_id);

-- One row per failed sign-in; `subject` is `email:<address>` or `ip:<address>`.
CREATE TABLE dashboard_login_failures (
    subject  TEXT NOT NULL,
    at       BIGINT NOT NULL
);
CREATE INDEX dashboard_login_failures_subject ON dashboard_login_failures (subject, at);

ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT;
