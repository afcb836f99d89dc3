-- Agent credentials: the AgentCredential Openrail issued for a session key with a signer
-- (`POST /v1/session-keys/{id}/credential`), one per key. Its record (status slot,
-- revocation) is the `identity_credentials` row `credential_id`, whose id is derived from
-- the key's; the signed credential is kept to hand it out again (it holds no personal
-- data: wallet DIDs, API ids, the ceiling). The key's revocation, or its mandate's
-- cancellation, revokes it in the same transaction (`store::agentic`).
CREATE TABLE agent_credentials (
    session_key_id  TEXT PRIMARY KEY REFERENCES session_keys(id),
    credential_id   TEXT NOT NULL UNIQUE REFERENCES identity_credentials(id),
    credential      TEXT NOT NULL,
    created_at      BIGINT NOT NULL
);
