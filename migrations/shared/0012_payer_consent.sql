-- Payer consent. A mandate on a wallet and a payment from a wallet exist on chain only with
-- the payer's EIP-712 signature: this is what the payer is asked to sign (the object's
-- terms live in its own row; the nonce and deadline here) and, once given, the signature.
CREATE TABLE authorizations (
    object_id      TEXT PRIMARY KEY,
    signer         TEXT NOT NULL,
    nonce          TEXT NOT NULL,
    deadline       BIGINT NOT NULL,
    signature      TEXT,
    authorized_at  BIGINT
);
-- A session key may name an agent whose signature each of its pulls needs.
ALTER TABLE session_keys ADD COLUMN signer TEXT;
-- The agent's signature of a pull on such a key (nonce as a decimal string, deadline in
-- unix seconds), kept so a restart sends the same item.
ALTER TABLE debit_pulls ADD COLUMN agent_nonce TEXT;
ALTER TABLE debit_pulls ADD COLUMN agent_deadline BIGINT;
ALTER TABLE debit_pulls ADD COLUMN agent_signature TEXT;
CREATE INDEX debit_pulls_agent_nonce ON debit_pulls (session_key_id, agent_nonce);
