-- Events: one row per state change of a mandate, session key, debit pull, payment or bank
-- transfer, written in the transaction that made the change. `seq` orders them (one
-- object's events in the order its states happened); `data` is the object's snapshot.
CREATE TABLE events (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    account_id  TEXT NOT NULL,
    mode        TEXT NOT NULL,
    type        TEXT NOT NULL,
    object_id   TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    data        TEXT NOT NULL
);
CREATE INDEX events_list ON events (account_id, mode, seq);
CREATE INDEX events_object ON events (object_id, seq);

-- A key's expiry is a state change in time, not in a row: announced once, by the lease
-- holder, as `session_key.expired`.
ALTER TABLE session_keys ADD COLUMN expiry_announced BIGINT NOT NULL DEFAULT 0;
