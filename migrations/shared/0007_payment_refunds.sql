-- A payment whose second leg failed after its source leg succeeded is refunded to its
-- source. refund_status: NULL (no refund owed) | pending | succeeded | failed.
ALTER TABLE payments ADD COLUMN refund_status TEXT;
