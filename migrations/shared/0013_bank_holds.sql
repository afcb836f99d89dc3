-- Money a pending debit holds: the available balance is balance - held, checked and held
-- in one statement when a debit starts, so concurrent debits can never spend it twice and
-- the balance never goes below zero.
ALTER TABLE bank_accounts ADD COLUMN held BIGINT NOT NULL DEFAULT 0;
UPDATE bank_accounts SET held = (
    SELECT COALESCE(SUM(t.amount), 0) FROM bank_transfers t
    WHERE t.bank_account_id = bank_accounts.id AND t.direction = 'debit' AND t.status = 'pending'
);
