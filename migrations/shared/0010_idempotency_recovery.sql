-- Idempotency claims remember which process holds them (its liveness is the lease
-- `node:<node_id>`) and the object the request created (its API path), so a retry after
-- the process died gets that object instead of 409 forever, or runs again when the
-- request had created nothing.
ALTER TABLE idempotency_keys ADD COLUMN node_id TEXT;
ALTER TABLE idempotency_keys ADD COLUMN resource TEXT;
