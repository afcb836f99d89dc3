-- The block a journaled transaction was mined in, so that a reorganisation can find the
-- transactions (and the effects) of the blocks it removed.
ALTER TABLE chain_txs ADD COLUMN block_number BIGINT;
CREATE INDEX chain_txs_block ON chain_txs (chain_id, block_number);
