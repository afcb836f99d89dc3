-- The relayer's event cursor per chain: the last block whose events are applied, and its
-- hash (to notice a reorganisation). Committed in the same transaction as the effects.
CREATE TABLE chain_cursors (
    chain_id      BIGINT PRIMARY KEY,
    block_number  BIGINT NOT NULL,
    block_hash    TEXT NOT NULL,
    updated_at    BIGINT NOT NULL
);
