-- Leases: which `openrail serve` process holds a chain (sends its operator transactions,
-- runs its watcher and payment worker). A holder renews before `expires_at`; anyone may
-- take an expired lease. `url` is where the holder serves the API (followers forward
-- chain writes there).
CREATE TABLE leases (
    name        TEXT PRIMARY KEY,
    holder      TEXT NOT NULL,
    url         TEXT NOT NULL,
    expires_at  BIGINT NOT NULL
);
