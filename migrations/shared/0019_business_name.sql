-- What payers are told about who asks them to sign: the account's business name (set at
-- dashboard sign-up and in the dashboard's settings; none for accounts made before, or
-- without one), and whether Openrail verified it (0 until a verification exists: the
-- consent page shows every name as unverified until then). Never the sign-in email.
ALTER TABLE accounts ADD COLUMN business_name TEXT;
ALTER TABLE accounts ADD COLUMN business_verified BIGINT NOT NULL DEFAULT 0;
