//! Identity verification sessions as data (see [`crate::verifications`] for their SQL):
//! the session, its type and simulated scenario, and what the simulated provider answers
//! (sans-IO). Apart from the SQL so that `events` can hold a session in its snapshot
//! without importing the module that records events.

use crate::ids::Mode;
pub use openrail_domain::VerificationStatus;
use openrail_domain::{AccountId, IdentityVerificationId};

string_enum!(
    /// What a session verifies: each is one credential type Openrail issues.
    VerificationType {
        /// The subject is one human (Sybil resistance).
        Personhood = "personhood",
        /// The subject's finances are in order.
        FinancialHealth = "financial_health",
        /// The subject is an agent known to its operator.
        Agent = "agent",
    }
);

impl VerificationType {
    /// The type of the credential a verified session issues.
    pub fn credential_type(self) -> &'static str {
        match self {
            VerificationType::Personhood => "PersonhoodCredential",
            VerificationType::FinancialHealth => "FinancialHealthCredential",
            VerificationType::Agent => "AgentCredential",
        }
    }
}

string_enum!(
    /// What testnet's simulated provider answers a submitted session.
    Scenario {
        /// The check passes shortly after submission.
        Verified = "verified",
        /// The first check fails shortly after submission (`last_error`, back to
        /// `requires_input`); a later submission passes.
        Failed = "failed",
        /// The check passes, after a longer wait.
        Slow = "slow",
    }
);

impl Scenario {
    /// How long the simulated check takes after submission, ms.
    pub fn delay_ms(self) -> i64 {
        match self {
            Scenario::Verified | Scenario::Failed => 500,
            Scenario::Slow => 5_000,
        }
    }
}

/// The `last_error.code` of a check the simulated provider failed.
pub const FAILED_CHECK_CODE: &str = "verification_failed";

/// The `last_error.reason` of a failed check when the session named none.
pub const DEFAULT_FAILURE_REASON: &str = "the simulated provider could not verify the subject";

/// Why the last check failed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LastError {
    /// A stable code.
    pub code: String,
    /// Said for a person.
    pub reason: String,
}

/// A verification session.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Verification {
    /// `idv_…`
    pub id: IdentityVerificationId,
    /// Owner.
    pub account_id: AccountId,
    /// Mode.
    pub mode: Mode,
    /// What it verifies.
    pub kind: VerificationType,
    /// The wallet verified (EIP-55).
    pub subject: String,
    /// Lifecycle.
    pub status: VerificationStatus,
    /// What the simulated provider answers.
    pub scenario: Scenario,
    /// The reason a `failed` scenario gives (none: [`DEFAULT_FAILURE_REASON`]).
    pub failure_reason: Option<String>,
    /// Why the last check failed (cleared by the next submission).
    pub last_error: Option<LastError>,
    /// The credential issued once verified (`urn:uuid:…`).
    pub credential_id: Option<String>,
    /// Where the issued credential's status list is published (the URL the session's
    /// creator reached).
    pub issuer_base: String,
    /// While processing: when the provider answers, unix ms.
    pub due_at: Option<i64>,
    /// How many times it was submitted.
    pub submissions: i64,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms.
    pub updated_at: i64,
}

/// What testnet's simulated provider answers a due session (sans-IO).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimulatedAnswer<'a> {
    /// The check passed: issue the credential.
    Verified,
    /// The check failed: back to `requires_input` with this error.
    Failed {
        /// `last_error.code`.
        code: &'static str,
        /// `last_error.reason`.
        reason: &'a str,
    },
}

impl Verification {
    /// The simulated provider's answer to this session's current submission: `failed`
    /// fails the first one (with the session's reason) and passes the next; `verified`
    /// and `slow` pass.
    pub fn simulated_answer(&self) -> SimulatedAnswer<'_> {
        match self.scenario {
            Scenario::Failed if self.submissions <= 1 => SimulatedAnswer::Failed {
                code: FAILED_CHECK_CODE,
                reason: self
                    .failure_reason
                    .as_deref()
                    .unwrap_or(DEFAULT_FAILURE_REASON),
            },
            Scenario::Failed | Scenario::Verified | Scenario::Slow => SimulatedAnswer::Verified,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(scenario: Scenario, submissions: i64, reason: Option<&str>) -> Verification {
        Verification {
            id: IdentityVerificationId::parse("idv_1").expect("an id"),
            account_id: AccountId::parse("acct_1").expect("an id"),
            mode: Mode::Testnet,
            kind: VerificationType::Personhood,
            subject: "0x0000000000000000000000000000000000000001".into(),
            status: VerificationStatus::Processing,
            scenario,
            failure_reason: reason.map(str::to_string),
            last_error: None,
            credential_id: None,
            issuer_base: "http://127.0.0.1:1".into(),
            due_at: Some(0),
            submissions,
            created_at: 0,
            updated_at: 0,
        }
    }

    #[test]
    fn the_simulated_provider_fails_a_failed_scenario_once_with_its_reason() {
        let first = session(Scenario::Failed, 1, Some("document expired"));
        assert_eq!(
            first.simulated_answer(),
            SimulatedAnswer::Failed {
                code: FAILED_CHECK_CODE,
                reason: "document expired"
            }
        );
        let unnamed = session(Scenario::Failed, 1, None);
        assert_eq!(
            unnamed.simulated_answer(),
            SimulatedAnswer::Failed {
                code: FAILED_CHECK_CODE,
                reason: DEFAULT_FAILURE_REASON
            }
        );
        assert_eq!(
            session(Scenario::Failed, 2, Some("x")).simulated_answer(),
            SimulatedAnswer::Verified
        );
        for s in [Scenario::Verified, Scenario::Slow] {
            assert_eq!(
                session(s, 1, None).simulated_answer(),
                SimulatedAnswer::Verified
            );
        }
        assert!(Scenario::Slow.delay_ms() > Scenario::Verified.delay_ms());
        assert!(Scenario::Verified.delay_ms() <= 1_000);
    }

    #[test]
    fn a_session_survives_its_snapshot_json() {
        let v = session(Scenario::Slow, 3, Some("r"));
        let json = serde_json::to_string(&v).unwrap();
        assert_eq!(serde_json::from_str::<Verification>(&json).unwrap(), v);
    }
}
