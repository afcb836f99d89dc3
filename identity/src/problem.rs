//! What a verification answers: `verified`, the problem details (VC Data Model 2.0 §7.1 and
//! Data Integrity 1.0 error types) and the per-check results, in the shape of the VC API's
//! verify response.

use serde::Serialize;

/// The error types of VC Data Model 2.0 (§7.1, "Verification") and Data Integrity 1.0
/// (§2.1 "Processing errors"), each with its type URI and code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProblemType {
    /// The input could not be parsed (not JSON-LD, not an object, unknown context).
    ParsingError,
    /// The securing mechanism detected a modification, or the key material is unusable.
    CryptographicSecurityError,
    /// A property's value is malformed (missing required property, bad date, dropped term).
    MalformedValueError,
    /// A value is out of range: the credential is not (yet or any more) valid, a status is set.
    RangeError,
    /// A proof could not be generated.
    ProofGenerationError,
    /// A proof did not verify (signature, purpose, verification method, chain).
    ProofVerificationError,
    /// The document could not be transformed (canonicalized) for a proof.
    ProofTransformationError,
    /// The proof's `domain` is not the expected one.
    InvalidDomainError,
    /// The proof's `challenge` is not the expected one.
    InvalidChallengeError,
}

impl ProblemType {
    /// Every type, in declaration order.
    pub const ALL: &'static [ProblemType] = &[
        Self::ParsingError,
        Self::CryptographicSecurityError,
        Self::MalformedValueError,
        Self::RangeError,
        Self::ProofGenerationError,
        Self::ProofVerificationError,
        Self::ProofTransformationError,
        Self::InvalidDomainError,
        Self::InvalidChallengeError,
    ];

    /// The name the specifications give it (`PARSING_ERROR`, …).
    pub fn name(self) -> &'static str {
        match self {
            Self::ParsingError => "PARSING_ERROR",
            Self::CryptographicSecurityError => "CRYPTOGRAPHIC_SECURITY_ERROR",
            Self::MalformedValueError => "MALFORMED_VALUE_ERROR",
            Self::RangeError => "RANGE_ERROR",
            Self::ProofGenerationError => "PROOF_GENERATION_ERROR",
            Self::ProofVerificationError => "PROOF_VERIFICATION_ERROR",
            Self::ProofTransformationError => "PROOF_TRANSFORMATION_ERROR",
            Self::InvalidDomainError => "INVALID_DOMAIN_ERROR",
            Self::InvalidChallengeError => "INVALID_CHALLENGE_ERROR",
        }
    }

    /// The type URI: `https://www.w3.org/TR/vc-data-model#` followed by the name.
    pub fn uri(self) -> String {
        format!("https://www.w3.org/TR/vc-data-model#{}", self.name())
    }

    /// The code the specifications give it (VC DM 2.0: -64…-67; Data Integrity: -16…-20).
    pub fn code(self) -> i32 {
        match self {
            Self::ParsingError => -64,
            Self::CryptographicSecurityError => -65,
            Self::MalformedValueError => -66,
            Self::RangeError => -67,
            Self::ProofGenerationError => -16,
            Self::ProofVerificationError => -17,
            Self::ProofTransformationError => -18,
            Self::InvalidDomainError => -19,
            Self::InvalidChallengeError => -20,
        }
    }

    /// Parses a name or a type URI.
    pub fn parse(s: &str) -> Option<Self> {
        let name = s
            .strip_prefix("https://www.w3.org/TR/vc-data-model#")
            .unwrap_or(s);
        Self::ALL.iter().copied().find(|t| t.name() == name)
    }
}

/// One problem, as VC Data Model 2.0 §7.1 shapes it (RFC 9457 fields `type`, `title`,
/// `detail`, plus the spec's `code`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProblemDetail {
    /// The type URI (`https://www.w3.org/TR/vc-data-model#…`).
    #[serde(rename = "type")]
    pub type_: String,
    /// The spec's integer code for the type.
    pub code: i32,
    /// A short summary of the kind of problem.
    pub title: String,
    /// What exactly went wrong, for a human; never carries secrets.
    pub detail: String,
}

impl ProblemDetail {
    /// A problem of `kind` with a title and detail.
    pub fn new(kind: ProblemType, title: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            type_: kind.uri(),
            code: kind.code(),
            title: title.into(),
            detail: detail.into(),
        }
    }

    /// The type of this problem, when it is one of ours.
    pub fn kind(&self) -> Option<ProblemType> {
        ProblemType::parse(&self.type_)
    }
}

/// The outcome of one proof of a proof set or chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProofResult {
    /// The proof's `id`, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The proof's `cryptosuite` as written (may be unsupported).
    pub cryptosuite: Option<String>,
    /// The proof's `verificationMethod` as written.
    pub verification_method: Option<String>,
    /// The proof's `proofPurpose` as written.
    pub proof_purpose: Option<String>,
    /// Whether this proof verified.
    pub verified: bool,
}

/// The outcome of the validity-period check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidityResult {
    /// `validFrom` (VC 2.0) or `issuanceDate` (VC 1.1), as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<String>,
    /// `validUntil` (VC 2.0) or `expirationDate` (VC 1.1), as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_until: Option<String>,
    /// Whether `now` lies in the period.
    pub valid: bool,
}

/// The outcome of one `credentialStatus` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusResult {
    /// `statusPurpose` (`revocation`, `suspension`, …).
    pub status_purpose: Option<String>,
    /// `statusListCredential`.
    pub status_list_credential: Option<String>,
    /// `statusListIndex`, parsed.
    pub status_list_index: Option<u64>,
    /// The bit, when the list could be read.
    pub status: Option<bool>,
    /// Whether this entry lets the credential verify (bit read and clear).
    pub verified: bool,
}

/// The checks that were run and what each found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerificationResults {
    /// One entry per proof, in document order.
    pub proofs: Vec<ProofResult>,
    /// The validity period (credentials only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validity: Option<ValidityResult>,
    /// One entry per `credentialStatus` entry.
    pub status: Vec<StatusResult>,
    /// For a presentation: the result of each embedded credential, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub credentials: Vec<Verification>,
}

/// What [`crate::verify_credential`] and [`crate::verify_presentation`] answer.
///
/// `verified` is true only when there is no problem at all. `malformed` tells an input
/// that is not a credential/presentation at all (not an object, missing `@context`,
/// `type`, `issuer`, `credentialSubject`, …: an HTTP API answers 400) from one that is
/// well-formed but does not verify (422).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verification {
    /// True when every check passed.
    pub verified: bool,
    /// True when the input is structurally not a credential/presentation.
    #[serde(skip)]
    pub malformed: bool,
    /// Every problem found, in the order found.
    pub problem_details: Vec<ProblemDetail>,
    /// The checks and their outcomes.
    pub results: VerificationResults,
}

impl Verification {
    /// Whether some problem of `kind` was reported.
    pub fn has(&self, kind: ProblemType) -> bool {
        self.problem_details.iter().any(|p| p.kind() == Some(kind))
    }

    pub(crate) fn push(&mut self, kind: ProblemType, title: &str, detail: impl Into<String>) {
        self.problem_details
            .push(ProblemDetail::new(kind, title, detail));
    }

    pub(crate) fn malformed(kind: ProblemType, title: &str, detail: impl Into<String>) -> Self {
        let mut v = Self {
            malformed: true,
            ..Self::default()
        };
        v.push(kind, title, detail);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_and_codes_follow_the_specs() {
        assert_eq!(
            ProblemType::ProofVerificationError.uri(),
            "https://www.w3.org/TR/vc-data-model#PROOF_VERIFICATION_ERROR"
        );
        assert_eq!(ProblemType::ParsingError.code(), -64);
        assert_eq!(ProblemType::InvalidChallengeError.code(), -20);
        for t in ProblemType::ALL {
            assert_eq!(ProblemType::parse(&t.uri()), Some(*t));
            assert_eq!(ProblemType::parse(t.name()), Some(*t));
        }
        assert_eq!(ProblemType::parse("NOPE"), None);
    }

    #[test]
    fn a_problem_detail_serializes_with_type() {
        let p = ProblemDetail::new(ProblemType::RangeError, "Expired", "validUntil passed");
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v["type"], "https://www.w3.org/TR/vc-data-model#RANGE_ERROR");
        assert_eq!(v["code"], -67);
    }
}
