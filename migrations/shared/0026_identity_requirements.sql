-- Mandates that require identity (issue 27 item 10), and the settlement chain's view of
-- attestations.
--
-- `mandates.requirements`: JSON `{"attester": "0x…", "payer": "personhood", "agent": "agent"}`
-- (kinds of the credentials Openrail issues; absent: none), what the payer signs and the
-- state machine enforces on every pull; NULL for a mandate that requires nothing.
ALTER TABLE mandates ADD COLUMN requirements TEXT;

-- An attestation's receipts for the settlement chain's `AttestationMirror`: `receipt` is the
-- last one signed (JSON: the EIP-712 `AttestationReceipt` and its signature) and
-- `receipt_sequence` its sequence, `relayed` how far its relay went (0: nothing yet; 1: the
-- receipt of its attestation queued; 2: the receipt of its revocation queued),
-- `mirrored_sequence` the sequence the mirror recorded (NULL: none).
ALTER TABLE identity_attestations ADD COLUMN receipt TEXT;
ALTER TABLE identity_attestations ADD COLUMN receipt_sequence BIGINT;
ALTER TABLE identity_attestations ADD COLUMN relayed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE identity_attestations ADD COLUMN mirrored_sequence BIGINT;
CREATE INDEX identity_attestations_by_subject ON identity_attestations (mode, recipient, schema_uid);
-- What the attestation chain's engine looks for every quarter second: rows still to relay.
CREATE INDEX identity_attestations_to_relay ON identity_attestations (chain_id, relayed);
