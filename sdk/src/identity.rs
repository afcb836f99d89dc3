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
//!
//! Verification sessions ([`Identity::create_verification`], testnet: a simulated
//! provider) ask whether a wallet is a person, financially healthy or an agent, and issue
//! the matching credential once verified. Attestations ([`Identity::create_attestation`])
//! attest a verified credential on the mode's attestation chain; posting a credential that
//! does not verify is [`Error::NotVerified`] with its verification.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::http::HasId;
use crate::{Client, Error, ListParams, Pages, RequestOptions};

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

/// An identity verification session (`idv_…`): `requires_input` → (`submit`)
/// `processing` → `verified` (its credential issued), or back to `requires_input` with
/// `last_error` when the check fails; `canceled` when withdrawn before submission.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerificationSession {
    /// `idv_…`.
    pub id: String,
    /// What it verifies: `personhood`, `financial_health` or `agent`.
    #[serde(rename = "type")]
    pub type_: String,
    /// The credential type a verified session issues (`PersonhoodCredential`, …).
    pub credential_type: String,
    /// The wallet verified (EIP-55).
    pub subject: String,
    /// `requires_input`, `processing`, `verified` or `canceled`.
    pub status: String,
    /// Why the last check failed (the session is back in `requires_input`).
    pub last_error: Option<VerificationSessionError>,
    /// Once verified: the issued credential's `id` (`urn:uuid:…`); the credential itself
    /// is [`Identity::verification_credential`].
    pub credential_id: Option<String>,
    /// What the simulated provider answers (testnet).
    pub simulate: Simulate,
    /// Always false (testnet only).
    pub livemode: bool,
    /// RFC 3339.
    pub created_at: String,
}

impl HasId for VerificationSession {
    fn id(&self) -> &str {
        &self.id
    }
}

/// Why a session's check failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerificationSessionError {
    /// A stable code (`verification_failed`).
    pub code: String,
    /// Said for a person.
    pub reason: String,
}

/// What testnet's simulated provider answers a session once submitted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Simulate {
    /// `verified` (the default: after about half a second), `failed` (the first check
    /// fails with `failure_reason`, a later submission passes) or `slow` (verified after
    /// about five seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// The `last_error.reason` of a failed check (free text, at most 500 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
}

/// `POST /v1/identity/verifications`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CreateVerification {
    /// `personhood`, `financial_health` or `agent`.
    #[serde(rename = "type")]
    pub type_: String,
    /// The wallet to verify (0x…; mixed case must be EIP-55): the credential's subject is
    /// its `did:pkh` on the settlement chain.
    pub subject: String,
    /// Testnet: what the simulated provider answers (default: verified).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simulate: Option<Simulate>,
}

/// A verified credential attested on the mode's attestation chain (`att_…`): its digest,
/// issuer, type, expiry and status reference, and the wallet it is about — never its
/// claims.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attestation {
    /// `att_…`.
    pub id: String,
    /// `pending` → `active` → `revoked` (`expired` once its credential's `validUntil`
    /// passed); `failed` when its transaction failed.
    pub status: String,
    /// The wallet the credential is about (EIP-55).
    pub recipient: String,
    /// The credential Openrail issued, when attested from one.
    pub credential_id: Option<String>,
    /// SHA-256 of the credential (64 hex digits).
    pub credential_digest: String,
    /// The credential's issuer (a DID).
    pub issuer: String,
    /// The credential's most specific type.
    pub credential_type: String,
    /// The credential's `validUntil` (RFC 3339): the attestation expires then.
    pub expires_at: Option<String>,
    /// The credential's revocation status list.
    pub status_list_credential: Option<String>,
    /// Its index in that list.
    pub status_list_index: Option<u64>,
    /// The attestation chain.
    pub chain_id: u64,
    /// The attestation registry.
    pub registry: String,
    /// The registry schema (0x, 32 bytes).
    pub schema: String,
    /// Its uid on chain, once mined.
    pub uid: Option<String>,
    /// Its `attest` transaction.
    pub tx_hash: Option<String>,
    /// When its revocation was mined (RFC 3339).
    pub revoked_at: Option<String>,
    /// Testnet or mainnet.
    pub livemode: bool,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub updated_at: String,
}

impl HasId for Attestation {
    fn id(&self) -> &str {
        &self.id
    }
}

/// `POST /v1/identity/attestations`: a credential this account issued, or one posted
/// whole (verified first), optionally with the wallet it is about.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateAttestation {
    source: AttestationSource,
    recipient: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
enum AttestationSource {
    CredentialId(String),
    Credential(Value),
}

impl CreateAttestation {
    /// Attests a credential this account issued (its `id`, `urn:uuid:…`), not revoked:
    /// revoking it later revokes the attestation too.
    pub fn credential_id(id: impl Into<String>) -> Self {
        Self {
            source: AttestationSource::CredentialId(id.into()),
            recipient: None,
        }
    }

    /// Verifies `credential` (any issuer) and attests it; one that does not verify is
    /// [`Error::NotVerified`].
    pub fn credential(credential: Value) -> Self {
        Self {
            source: AttestationSource::Credential(credential),
            recipient: None,
        }
    }

    /// The wallet (0x…) the attestation is about, when the credential's subject is none
    /// (`did:pkh:eip155:…:0x…`); when both are given they must agree.
    pub fn recipient(mut self, wallet: impl Into<String>) -> Self {
        self.recipient = Some(wallet.into());
        self
    }

    fn body(&self) -> Value {
        let mut body = match &self.source {
            AttestationSource::CredentialId(id) => json!({ "credential_id": id }),
            AttestationSource::Credential(vc) => json!({ "verifiableCredential": vc }),
        };
        if let Some(r) = &self.recipient {
            body["recipient"] = json!(r);
        }
        body
    }
}

/// What `POST /v1/identity/attestations` answers: the attestation, or (422) the
/// verification of a posted credential that did not verify.
#[derive(Deserialize)]
#[serde(untagged)]
enum Attested {
    Attestation(Box<Attestation>),
    NotVerified(Box<Verification>),
}

/// What `GET /v1/identity/verifications/{id}/credential` answers.
#[derive(Deserialize)]
struct SessionCredential {
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

    /// Starts a verification session (testnet; mainnet keys get [`Error::Api`] 503
    /// `mainnet_unavailable`): `requires_input`, waiting for [`Identity::submit_verification`].
    pub async fn create_verification(
        &self,
        v: &CreateVerification,
    ) -> Result<VerificationSession, Error> {
        self.0
            .post("/v1/identity/verifications", v, &RequestOptions::default())
            .await
    }

    /// A verification session.
    pub async fn verification(&self, id: &str) -> Result<VerificationSession, Error> {
        self.0
            .get(&format!(
                "/v1/identity/verifications/{}",
                crate::http::seg(id)
            ))
            .await
    }

    /// The verification sessions, newest first.
    pub fn verifications(&self, params: ListParams) -> Pages<VerificationSession> {
        self.0.pages("/v1/identity/verifications", params)
    }

    /// The flow is finished: the provider checks (`requires_input` → `processing`). A
    /// session in any other status is [`Error::Api`] 409 `verification_not_submittable`.
    pub async fn submit_verification(&self, id: &str) -> Result<VerificationSession, Error> {
        self.0
            .post_empty(
                &format!("/v1/identity/verifications/{}/submit", crate::http::seg(id)),
                &RequestOptions::default(),
            )
            .await
    }

    /// Withdraws a session not yet submitted (`canceled`); once processing or verified,
    /// [`Error::Api`] 409 `verification_not_cancelable`.
    pub async fn cancel_verification(&self, id: &str) -> Result<VerificationSession, Error> {
        self.0
            .post_empty(
                &format!("/v1/identity/verifications/{}/cancel", crate::http::seg(id)),
                &RequestOptions::default(),
            )
            .await
    }

    /// The signed credential a verified session issued, for its holder. Before it is
    /// verified: [`Error::Api`] 409 `verification_not_verified`.
    pub async fn verification_credential(&self, id: &str) -> Result<Value, Error> {
        let c: SessionCredential = self
            .0
            .get(&format!(
                "/v1/identity/verifications/{}/credential",
                crate::http::seg(id)
            ))
            .await?;
        Ok(c.verifiable_credential)
    }

    /// Attests a credential on the mode's attestation chain: `active` once mined within
    /// the wait ([`Client::prefer_wait`]), else `pending` (read it again with
    /// [`Identity::attestation`]). A posted credential that does not verify is
    /// [`Error::NotVerified`]; a revoked one named by id is [`Error::Api`] 409
    /// `credential_revoked`.
    pub async fn create_attestation(&self, a: &CreateAttestation) -> Result<Attestation, Error> {
        match self
            .0
            .post_verdict(
                "/v1/identity/attestations",
                &a.body(),
                &RequestOptions::default(),
            )
            .await?
        {
            Attested::Attestation(a) => Ok(*a),
            Attested::NotVerified(v) => Err(Error::NotVerified(v)),
        }
    }

    /// An attestation.
    pub async fn attestation(&self, id: &str) -> Result<Attestation, Error> {
        self.0
            .get(&format!(
                "/v1/identity/attestations/{}",
                crate::http::seg(id)
            ))
            .await
    }

    /// The account's attestations, newest first; only those about one wallet with
    /// `params.filter("subject", "0x…")` (or `did:pkh:eip155:…:0x…`).
    pub fn attestations(&self, params: ListParams) -> Pages<Attestation> {
        self.0.pages("/v1/identity/attestations", params)
    }

    /// Revokes an attestation on chain (final): `revoked` once mined within the wait, else
    /// still `active` with its revocation queued (read it again). A revoked or failed one
    /// is answered as it is.
    pub async fn revoke_attestation(&self, id: &str) -> Result<Attestation, Error> {
        self.0
            .post_empty(
                &format!("/v1/identity/attestations/{}/revoke", crate::http::seg(id)),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attestation_or_a_verdict_is_told_apart() {
        let a: Attested = serde_json::from_value(json!({
            "id": "att_1", "object": "identity_attestation", "status": "pending",
            "recipient": "0x90F79bf6EB2c4f870365E785982E1f101E93b906", "credential_id": null,
            "credential_digest": "00", "issuer": "did:key:z6Mk", "credential_type": "X",
            "expires_at": null, "status_list_credential": null, "status_list_index": null,
            "chain_id": 31338, "registry": "0x01", "schema": "0x02", "uid": null,
            "tx_hash": null, "revoked_at": null, "livemode": false,
            "created_at": "2026-11-27T00:00:00Z", "updated_at": "2026-11-27T00:00:00Z",
        }))
        .unwrap();
        assert!(matches!(a, Attested::Attestation(a) if a.id == "att_1"));
        let v: Attested = serde_json::from_value(json!({
            "verified": false, "results": {},
            "problemDetails": [{"type": "https://www.w3.org/TR/vc-data-model#RANGE_ERROR",
                "code": -67, "title": "t", "detail": "d"}],
        }))
        .unwrap();
        let Attested::NotVerified(v) = v else {
            panic!("a verdict read as an attestation")
        };
        assert_eq!(v.problem_names(), ["RANGE_ERROR"]);
        let e = Error::NotVerified(v);
        assert_eq!(e.code(), None);
        assert_eq!(e.to_string(), "the credential does not verify: RANGE_ERROR");
    }

    #[test]
    fn an_attestation_request_names_one_source() {
        assert_eq!(
            CreateAttestation::credential_id("urn:uuid:1").body(),
            json!({ "credential_id": "urn:uuid:1" })
        );
        assert_eq!(
            CreateAttestation::credential(json!({ "id": "urn:x" }))
                .recipient("0x1")
                .body(),
            json!({ "verifiableCredential": { "id": "urn:x" }, "recipient": "0x1" })
        );
        let s = serde_json::to_value(CreateVerification {
            type_: "agent".into(),
            subject: "0x1".into(),
            simulate: Some(Simulate {
                outcome: Some("slow".into()),
                failure_reason: None,
            }),
        })
        .unwrap();
        assert_eq!(
            s,
            json!({ "type": "agent", "subject": "0x1", "simulate": { "outcome": "slow" } })
        );
    }
}
