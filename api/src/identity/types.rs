//! The request and response schemas of the W3C Verifiable Credentials operations
//! (verification, presentation challenges, issuance, status lists), written as JSON
//! (`leaf_schema!`): the handlers read and answer these as JSON objects (credentials and
//! presentations are open-ended), not as Rust types. What other modules answer too
//! ([`crate::types::VerificationResult`], [`crate::types::IssuedCredential`]) is in
//! [`crate::types`].

use serde_json::json;

use crate::types::leaf_schema;

leaf_schema!(
    /// `POST /v1/identity/credentials/verify` (VC API).
    CredentialVerifyRequest = json!({
        "type": "object",
        "required": ["verifiableCredential"],
        "properties": {
            "verifiableCredential": {
                "type": "object",
                "description": "A Verifiable Credential (VC Data Model 1.1 or 2.0) with one or more Data Integrity proofs",
                "additionalProperties": true,
            },
            "options": {
                "type": "object",
                "description": "Accepted and ignored (the legacy `checks` too): every check always runs",
                "additionalProperties": true,
            },
        },
        "example": {"verifiableCredential": {"@context": ["https://www.w3.org/ns/credentials/v2"], "type": ["VerifiableCredential"], "issuer": "did:key:z6Mk…", "credentialSubject": {"id": "did:example:alice"}, "proof": {"type": "DataIntegrityProof", "cryptosuite": "eddsa-rdfc-2022", "…": "…"}}},
    })
);

leaf_schema!(
    /// `POST /v1/identity/presentations/verify` (VC API).
    PresentationVerifyRequest = json!({
        "type": "object",
        "required": ["verifiablePresentation", "options"],
        "properties": {
            "verifiablePresentation": {
                "type": "object",
                "description": "A Verifiable Presentation with a Data Integrity proof of purpose `authentication`",
                "additionalProperties": true,
            },
            "options": {
                "type": "object",
                "required": ["challenge"],
                "properties": {
                    "challenge": { "type": "string", "description": "A challenge from `POST /v1/identity/challenges` (used up here)" },
                    "domain": { "type": "string", "description": "The domain the proof must carry (default: the challenge's)" },
                },
                "additionalProperties": true,
            },
        },
    })
);

leaf_schema!(
    /// `POST /v1/identity/challenges`.
    ChallengeCreate = json!({
        "type": "object",
        "properties": {
            "domain": { "type": ["string", "null"], "minLength": 1, "maxLength": 253, "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f]+$", "description": "Binds the challenge to this domain (the proof's `domain`)" },
        },
        "example": {"domain": "shop.example"},
    })
);

leaf_schema!(
    /// `POST /v1/identity/credentials/issue` (VC API).
    CredentialIssueRequest = json!({
        "type": "object",
        "required": ["credential"],
        "properties": {
            "credential": {
                "type": "object",
                "description": "An unsigned VC 2.0 credential: `@context` starting with https://www.w3.org/ns/credentials/v2, `type` with VerifiableCredential, one `credentialSubject` object; no `proof` or `credentialStatus`",
                "additionalProperties": true,
            },
            "options": { "type": "object", "description": "Accepted and ignored", "additionalProperties": true },
        },
        "example": {"credential": {"@context": ["https://www.w3.org/ns/credentials/v2", "https://www.w3.org/ns/credentials/examples/v2"], "type": ["VerifiableCredential", "ExampleAlumniCredential"], "credentialSubject": {"id": "did:example:alice", "alumniOf": "Example University"}}},
    })
);

leaf_schema!(
    /// `POST /v1/identity/credentials/status` (VC API).
    CredentialStatusUpdate = json!({
        "type": "object",
        "required": ["credentialId"],
        "properties": {
            "credentialId": { "type": "string", "description": "The `id` of a credential this account issued" },
            "credentialStatus": {
                "type": "object",
                "properties": {
                    "type": { "type": "string", "description": "BitstringStatusListEntry" },
                    "statusPurpose": { "type": "string", "enum": ["revocation"] },
                },
                "additionalProperties": true,
            },
            "status": { "type": "boolean", "description": "true (the default): revoke. Revocation is final" },
        },
        "example": {"credentialId": "urn:uuid:…", "credentialStatus": {"type": "BitstringStatusListEntry", "statusPurpose": "revocation"}, "status": true},
    })
);

leaf_schema!(
    /// A presentation challenge.
    IdentityChallenge = json!({
        "type": "object",
        "properties": {
            "object": { "const": "identity_challenge" },
            "challenge": { "type": "string", "pattern": "^chl_" },
            "domain": { "type": ["string", "null"] },
            "expires_at": { "type": "integer", "description": "Unix seconds" },
            "livemode": { "type": "boolean" },
        },
    })
);

leaf_schema!(
    /// A credential Openrail issued: its record (the credential itself is not kept).
    IdentityCredential = json!({
        "type": "object",
        "properties": {
            "object": { "const": "identity_credential" },
            "id": { "type": "string" },
            "type": { "type": "string", "description": "Its most specific type" },
            "subject": { "type": ["string", "null"], "description": "`credentialSubject.id`" },
            "status": { "type": "string", "enum": ["active", "revoked"] },
            "status_list_id": { "type": "string", "pattern": "^sl_" },
            "status_list_index": { "type": "integer", "minimum": 0 },
            "revoked_at": { "type": ["integer", "null"], "description": "Unix seconds" },
            "valid_until": { "type": ["integer", "null"], "description": "Unix seconds" },
            "created": { "type": "integer", "description": "Unix seconds" },
            "livemode": { "type": "boolean" },
        },
    })
);

leaf_schema!(
    /// A `BitstringStatusListCredential`.
    StatusListCredential = json!({
        "type": "object",
        "required": ["@context", "id", "type", "issuer", "validFrom", "credentialSubject", "proof"],
        "properties": {
            "@context": { "type": "array", "items": { "type": "string" } },
            "id": { "type": "string" },
            "type": { "type": "array", "items": { "type": "string" } },
            "issuer": { "type": "string" },
            "validFrom": { "type": "string" },
            "credentialSubject": { "type": "object", "additionalProperties": true },
            "proof": { "type": "object", "additionalProperties": true },
        },
        "additionalProperties": true,
    })
);
