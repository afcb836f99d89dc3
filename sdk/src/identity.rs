//! Identity (`/v1/identity`): W3C Verifiable Credentials. Verify a credential or a
//! presentation (Data Integrity proofs, validity, status), hand out single-use challenges
//! for presentations, and use Openrail as an issuer: sign a credential with a revocation
//! entry, revoke it, read its public status list.
//!
//! A verification that ran is an answer, never an error: a credential that does not verify
//! (the API's 422) is `Ok(Verification { verified: false, problem_details, .. })`. An input
//! that is no credential at all is [`Error::Api`] 400 `parameter_invalid`.
//!
//! Whether the issuer is *trusted* is not part of verification: decide that from the
//! credential's `issuer` with your own policy.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{Client, Error, RequestOptions};

/// The outcome of a verification (the VC API's verify response).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    /// Whether every proof, the validity period and every status entry held.
    pub verified: bool,
    /// Why not (empty when verified): VC Data Model 2.0 and Data Integrity error types.
    #[serde(rename = "problemDetails")]
    pub problem_details: Vec<VerificationProblem>,
    /// Each check's outcome: `proofs`, `validity`, `status`, and for a presentation its
    /// `credentials`.
    pub results: Value,
}

impl Verification {
    /// The names of the problems (`RANGE_ERROR`, `PROOF_VERIFICATION_ERROR`, …), in order.
    pub fn problem_names(&self) -> Vec<&str> {
        self.problem_details.iter().map(|p| p.name()).collect()
    }
}

/// One reason a verification failed (VC Data Model 2.0 §7.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerificationProblem {
    /// The type URI: `https://www.w3.org/TR/vc-data-model#RANGE_ERROR`, …
    #[serde(rename = "type")]
    pub type_: String,
    /// The specification's code (-64…-67, -16…-20).
    pub code: i32,
    /// A short summary.
    pub title: String,
    /// What exactly went wrong.
    pub detail: String,
}

impl VerificationProblem {
    /// The type's name: the part of the URI after `#` (`RANGE_ERROR`, …).
    pub fn name(&self) -> &str {
        self.type_.rsplit('#').next().unwrap_or(&self.type_)
    }
}

/// A single-use challenge for a presentation (ten minutes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Challenge {
    /// `chl_…`: what the holder signs into its presentation's proof.
    pub challenge: String,
    /// The domain the proof must carry, when the challenge was bound to one.
    pub domain: Option<String>,
    /// Unix seconds.
    pub expires_at: i64,
    /// Testnet or mainnet.
    pub livemode: bool,
}

/// A credential Openrail issued, as its issuer keeps it (not the credential itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CredentialRecord {
    /// The credential's `id` (`urn:uuid:…` unless the issuer was given one).
    pub id: String,
    /// Its most specific type.
    #[serde(rename = "type")]
    pub type_: String,
    /// `credentialSubject.id`.
    pub subject: Option<String>,
    /// `active` or `revoked`.
    pub status: String,
    /// The status list of its revocation entry (`sl_…`).
    pub status_list_id: String,
    /// Its bit in that list.
    pub status_list_index: u64,
    /// Unix seconds.
    pub revoked_at: Option<i64>,
    /// Unix seconds.
    pub valid_until: Option<i64>,
    /// Unix seconds.
    pub created: i64,
    /// Testnet or mainnet.
    pub livemode: bool,
}

/// What `POST /v1/identity/credentials/issue` answers.
#[derive(Deserialize)]
struct Issued {
    #[serde(rename = "verifiableCredential")]
    verifiable_credential: Value,
}

/// The identity routes (from [`Client::identity`]).
#[derive(Debug, Clone, Copy)]
pub struct Identity<'a>(pub(crate) &'a Client);

impl Identity<'_> {
    /// Verifies a Verifiable Credential (VC 1.1 or 2.0, Data Integrity proofs). Works
    /// without a key too ([`Client::anonymous`]), rate-limited per address.
    pub async fn verify_credential(&self, credential: &Value) -> Result<Verification, Error> {
        self.0
            .post_verdict(
                "/v1/identity/credentials/verify",
                &json!({ "verifiableCredential": credential }),
                &RequestOptions::default(),
            )
            .await
    }

    /// Verifies a Verifiable Presentation signed for `challenge` (from
    /// [`Identity::create_challenge`]; used up by this call, so a replay fails) and, when
    /// given, `domain` (default: the challenge's).
    pub async fn verify_presentation(
        &self,
        presentation: &Value,
        challenge: &str,
        domain: Option<&str>,
    ) -> Result<Verification, Error> {
        let mut options = json!({ "challenge": challenge });
        if let Some(d) = domain {
            options["domain"] = json!(d);
        }
        self.0
            .post_verdict(
                "/v1/identity/presentations/verify",
                &json!({ "verifiablePresentation": presentation, "options": options }),
                &RequestOptions::default(),
            )
            .await
    }

    /// A single-use challenge for a holder to sign into a presentation, bound to
    /// `domain` when given.
    pub async fn create_challenge(&self, domain: Option<&str>) -> Result<Challenge, Error> {
        self.0
            .post(
                "/v1/identity/challenges",
                &json!({ "domain": domain }),
                &RequestOptions::default(),
            )
            .await
    }

    /// Signs `credential` (unsigned, VC 2.0) as Openrail's issuer: adds `id` (when
    /// absent), `issuer`, `validFrom` (when absent), a revocation entry of a Bitstring
    /// Status List and an `eddsa-rdfc-2022` proof. Answers the signed credential.
    pub async fn issue_credential(&self, credential: &Value) -> Result<Value, Error> {
        let issued: Issued = self
            .0
            .post(
                "/v1/identity/credentials/issue",
                &json!({ "credential": credential }),
                &RequestOptions::default(),
            )
            .await?;
        Ok(issued.verifiable_credential)
    }

    /// Revokes a credential this account issued (final): its status bit is set, and it no
    /// longer verifies (`RANGE_ERROR`).
    pub async fn revoke_credential(&self, id: &str) -> Result<CredentialRecord, Error> {
        self.0
            .post(
                "/v1/identity/credentials/status",
                &json!({
                    "credentialId": id,
                    "credentialStatus": {
                        "type": "BitstringStatusListEntry",
                        "statusPurpose": "revocation",
                    },
                    "status": true,
                }),
                &RequestOptions::default(),
            )
            .await
    }

    /// A status list as its public URL serves it (`sl_…`): a signed
    /// `BitstringStatusListCredential` (no key needed; cacheable for a minute).
    pub async fn status_list(&self, id: &str) -> Result<Value, Error> {
        self.0
            .get(&format!(
                "/v1/identity/status-lists/{}",
                crate::http::seg(id)
            ))
            .await
    }
}
