-- Payments and the payouts of bank-funded pulls run on the engine too: the outbox gets
-- driving work (`payment`, `payout`) that stays open until its object is final, and
-- `due_at`, the time such work is next due (NULL: now) while it waits for a bank transfer
-- or a confirmation.
ALTER TABLE outbox ADD COLUMN due_at BIGINT;

-- What earlier versions' payment worker would still have moved is queued now.
INSERT INTO outbox (intent, kind, chain_id, mode, created_at)
SELECT p.id, 'payment', p.chain_id, p.mode, p.created_at FROM payments p
WHERE p.status IN ('pending', 'processing') OR p.refund_status = 'pending';
INSERT INTO outbox (intent, kind, chain_id, mode, created_at)
SELECT p.id, 'payout', m.chain_id, p.mode, p.created_at FROM debit_pulls p
JOIN mandates m ON m.id = p.mandate_id
WHERE p.status = 'authorized' AND m.payer_account_id LIKE 'ba\_%' ESCAPE '\';
