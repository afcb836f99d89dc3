-- What a wallet payer signs names who may be paid and, optionally, the one agent whose keys
-- may pull: the payees (a JSON array of checksummed addresses, in the order signed; empty
-- only for a bank-funded mandate) and the agent (a checksummed address, or NULL).
ALTER TABLE mandates ADD COLUMN payees TEXT NOT NULL DEFAULT '[]';
ALTER TABLE mandates ADD COLUMN agent TEXT;
