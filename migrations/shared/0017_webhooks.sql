-- Webhook endpoints: where an account's events of one mode are delivered, signed per the
-- Standard Webhooks specification. `secret` is kept as given (`whsec_…`): the server
-- signs with it, so it cannot be stored as a hash like API keys; it is never shown again
-- after creation or rotation. During a rotation the previous secret keeps signing beside
-- the new one until `previous_secret_expires_at`. `failing_since` is the time of the
-- first failed attempt since the last success; an endpoint failing for long enough is
-- `disabled` (with a `webhook_endpoint.disabled` event).
CREATE TABLE webhook_endpoints (
    id                          TEXT PRIMARY KEY,
    account_id                  TEXT NOT NULL,
    mode                        TEXT NOT NULL,
    url                         TEXT NOT NULL,
    description                 TEXT,
    enabled_events              TEXT NOT NULL,
    status                      TEXT NOT NULL,
    disabled_reason             TEXT,
    secret                      TEXT NOT NULL,
    previous_secret             TEXT,
    previous_secret_expires_at  BIGINT,
    failing_since               BIGINT,
    created_at                  BIGINT NOT NULL,
    updated_at                  BIGINT NOT NULL
);
CREATE INDEX webhook_endpoints_list ON webhook_endpoints (account_id, mode, created_at);
CREATE INDEX webhook_endpoints_mode ON webhook_endpoints (mode, status);

-- One row per event to deliver to one endpoint, written by the lease holder's fan-out
-- (with the fan-out's cursor, in one transaction) or by a redelivery request; it stays
-- `pending` until an attempt gets a 2xx (`succeeded`) or the retry schedule is spent
-- (`failed`). `redelivery` is 0 for the fan-out's row (one per endpoint and event) and
-- the request's time for a redelivery.
CREATE TABLE webhook_deliveries (
    id                TEXT PRIMARY KEY,
    endpoint_id       TEXT NOT NULL,
    event_id          TEXT NOT NULL,
    account_id        TEXT NOT NULL,
    mode              TEXT NOT NULL,
    redelivery        BIGINT NOT NULL,
    status            TEXT NOT NULL,
    attempts          INTEGER NOT NULL,
    next_attempt_at   BIGINT,
    last_attempt_at   BIGINT,
    last_status_code  INTEGER,
    last_error        TEXT,
    last_latency_ms   BIGINT,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);
CREATE UNIQUE INDEX webhook_deliveries_fanout ON webhook_deliveries (endpoint_id, event_id) WHERE redelivery = 0;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (mode, status, next_attempt_at);
CREATE INDEX webhook_deliveries_list ON webhook_deliveries (account_id, mode, endpoint_id, created_at);

-- How far the fan-out of each mode has read the events (`seq`): every event at or below
-- it has its deliveries written.
CREATE TABLE webhook_cursors (
    mode  TEXT PRIMARY KEY,
    seq   BIGINT NOT NULL
);
INSERT INTO webhook_cursors (mode, seq) SELECT 'testnet', COALESCE(MAX(seq), 0) FROM events;
INSERT INTO webhook_cursors (mode, seq) SELECT 'mainnet', COALESCE(MAX(seq), 0) FROM events;
