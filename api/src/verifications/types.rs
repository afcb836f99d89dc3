//! The request and response types of identity verification sessions:
//! [`IdentityVerificationCreate`] (with what testnet's simulated provider answers), the
//! [`IdentityVerification`] as the API shows it and its list, and the leaf schemas of its
//! own statuses, written in the shared vocabulary of [`crate::types`]. Its rendering of the
//! store's row is in `views`.

use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use crate::body::Fields;
use crate::error::ApiError;
use crate::types::{
    Address, FreeText, FromField, RequestBody, Text, Timestamp, VerificationTypeName, leaf_schema,
    list_new, list_type, object_tag, request_body,
};

request_body!(
    /// `POST /v1/identity/verifications`: a verification session about a wallet (testnet:
    /// answered by a simulated provider).
    #[schema(example = json!({"type": "personhood", "subject": "0x90F79bf6EB2c4f870365E785982E1f101E93b906", "simulate": {"outcome": "failed", "failure_reason": "the document had expired"}}))]
    pub struct IdentityVerificationCreate {
        /// What to verify; a verified session issues the matching credential (`PersonhoodCredential`, `FinancialHealthCredential`, `AgentCredential`).
        #[schema(value_type = VerificationTypeName)]
        pub r#type: String,
        /// The wallet verified: the credential's subject is its `did:pkh` on the settlement chain.
        #[schema(value_type = Address)]
        pub subject: String,
        /// Testnet: what the simulated provider answers once the session is submitted (default: `verified`).
        #[schema(value_type = Option<VerificationSimulateInput>)]
        pub simulate: Option<VerificationSimulate>,
    }
);

request_body!(
    /// What testnet's simulated provider answers a session.
    pub struct VerificationSimulate {
        /// `verified` (about half a second after submission), `failed` (the first check fails with `failure_reason`; a later submission passes) or `slow` (verified after about five seconds). Default `verified`.
        #[schema(value_type = Option<SimulatedOutcome>)]
        pub outcome: Option<String>,
        /// The `last_error.reason` of the failed check (used by `failed` only). Free text, up to 500 characters, without control or bidirectional formatting characters.
        #[schema(value_type = Option<FreeText>)]
        pub failure_reason: Option<Text>,
    }
);

impl FromField for Option<VerificationSimulate> {
    fn from_field(f: &mut Fields, name: &str) -> Result<Self, ApiError> {
        f.opt_object(name)?
            .map(<VerificationSimulate as RequestBody>::read)
            .transpose()
    }
}

leaf_schema!(
    /// `simulate` of a verification session.
    VerificationSimulateInput = json!({
        "type": "object",
        "properties": {
            "outcome": { "$ref": "#/components/schemas/SimulatedOutcome" },
            "failure_reason": { "$ref": "#/components/schemas/FreeText" },
        },
        "additionalProperties": false,
    })
);

leaf_schema!(
    /// What the simulated provider answers.
    SimulatedOutcome = json!({
        "type": "string",
        "enum": openrail_store::verifications::Scenario::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
    })
);

leaf_schema!(
    /// The lifecycle of a verification session.
    VerificationStatusName = json!({
        "type": "string",
        "enum": openrail_store::verifications::VerificationStatus::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        "description": "requires_input: waiting for the flow (again, with `last_error`, after a failed check); processing: submitted, the provider is checking; verified: passed, the credential is issued (`credential_id`); canceled: withdrawn before submission",
    })
);

object_tag!(
    /// `"identity_verification"`
    IdentityVerificationTag = "identity_verification"
);

/// An identity verification session.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IdentityVerification {
    /// `idv_…`
    #[schema(pattern = "^idv_")]
    pub id: String,
    /// Always `identity_verification`.
    pub object: IdentityVerificationTag,
    /// Always false (testnet only).
    pub livemode: bool,
    /// Creation time.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
    /// What it verifies.
    #[serde(rename = "type")]
    #[schema(value_type = VerificationTypeName)]
    pub kind: &'static str,
    /// The credential type a verified session issues.
    pub credential_type: &'static str,
    /// The wallet verified (EIP-55).
    #[schema(value_type = Address)]
    pub subject: String,
    /// Lifecycle.
    #[schema(value_type = VerificationStatusName)]
    pub status: &'static str,
    /// Why the last check failed (the session is back in `requires_input`); cleared by the next submission.
    pub last_error: Option<VerificationError>,
    /// Verified: the issued credential's `id` (`urn:uuid:…`); the credential itself is at `GET /v1/identity/verifications/{id}/credential`.
    pub credential_id: Option<String>,
    /// What the simulated provider answers.
    pub simulate: VerificationSimulation,
}

/// Why a verification's check failed.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VerificationError {
    /// A stable code (`verification_failed`).
    pub code: String,
    /// Said for a person.
    pub reason: String,
}

/// What the simulated provider answers a session.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VerificationSimulation {
    /// The scenario.
    #[schema(value_type = SimulatedOutcome)]
    pub outcome: &'static str,
    /// The reason a failed check gives.
    pub failure_reason: Option<String>,
}

list_type!(
    /// A page of identity verification sessions.
    IdentityVerificationList of IdentityVerification
);

list_new!(
    IdentityVerificationList of IdentityVerification
);
