//! Verification of credentials and presentations: structure, proofs (sets and chains),
//! validity period and Bitstring Status List entries.

use std::collections::HashMap;

use serde_json::{Map, Value};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::keys::{self, KeyError};
use crate::problem::{
    ProblemDetail, ProblemType, ProofResult, StatusResult, ValidityResult, Verification,
};
use crate::status::StatusList;
use crate::suites::{self, Cryptosuite};

/// The credentials v1 context URL (VC Data Model 1.1).
pub const CREDENTIALS_V1: &str = "https://www.w3.org/2018/credentials/v1";
/// The credentials v2 context URL (VC Data Model 2.0).
pub const CREDENTIALS_V2: &str = "https://www.w3.org/ns/credentials/v2";

/// A status list as the caller serves it.
#[derive(Debug, Clone)]
pub enum StatusListSource {
    /// A `BitstringStatusListCredential`: its proof and validity are verified (without its
    /// own status) before its `encodedList` is read.
    Credential(Value),
    /// A list the caller vouches for (its own, from its database): no proof to check.
    Trusted {
        /// The list's `statusPurpose` (`revocation`, `suspension`, …).
        status_purpose: String,
        /// The bits.
        list: StatusList,
    },
}

/// Gives the status list behind a `statusListCredential` URL, from memory or a database:
/// never from the network. `None` means unknown (the credential does not verify).
pub trait StatusListResolver: Send + Sync {
    /// The list published at `url`, if the caller knows it.
    fn status_list(&self, url: &str) -> Option<StatusListSource>;
}

impl StatusListResolver for HashMap<String, StatusListSource> {
    fn status_list(&self, url: &str) -> Option<StatusListSource> {
        self.get(url).cloned()
    }
}

/// What a verification needs besides the document; all of it in memory.
#[derive(Clone, Copy)]
pub struct VerifyOptions<'a> {
    /// The time the validity period, the proofs' `created`/`expires` and lists are judged at.
    pub now: OffsetDateTime,
    /// For presentations: the `challenge` the proof must carry.
    pub challenge: Option<&'a str>,
    /// For presentations: the `domain` the proof must carry (or list).
    pub domain: Option<&'a str>,
    /// Where `credentialStatus` lists come from; `None`: any status entry fails.
    pub status_lists: Option<&'a dyn StatusListResolver>,
    /// `did:web` documents by DID (`did:web:example.com`), an allow-list; every other
    /// `did:web` fails. `did:key` needs nothing.
    pub did_web: Option<&'a HashMap<String, Value>>,
}

impl<'a> VerifyOptions<'a> {
    /// Options judging at `now`, with no challenge, domain, status lists or did:web.
    pub fn new(now: OffsetDateTime) -> Self {
        Self {
            now,
            challenge: None,
            domain: None,
            status_lists: None,
            did_web: None,
        }
    }

    /// Options judging at the Unix time `seconds`.
    pub fn at_unix(seconds: i64) -> Self {
        Self::new(
            OffsetDateTime::from_unix_timestamp(seconds).unwrap_or(OffsetDateTime::UNIX_EPOCH),
        )
    }
}

impl std::fmt::Debug for VerifyOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifyOptions")
            .field("now", &self.now)
            .field("challenge", &self.challenge)
            .field("domain", &self.domain)
            .field("status_lists", &self.status_lists.is_some())
            .field("did_web", &self.did_web.map(|m| m.len()))
            .finish()
    }
}

/// Verifies a credential (VC Data Model 1.1 or 2.0, secured with Data Integrity proofs).
pub fn verify_credential(credential: &Value, options: &VerifyOptions<'_>) -> Verification {
    verify_credential_inner(credential, options, true)
}

fn verify_credential_inner(
    credential: &Value,
    options: &VerifyOptions<'_>,
    check_status: bool,
) -> Verification {
    let Some(doc) = credential.as_object() else {
        return Verification::malformed(
            ProblemType::ParsingError,
            "Not a credential",
            "the input is not a JSON object",
        );
    };
    let version = match structure(doc, "VerifiableCredential") {
        Ok(v) => v,
        Err(detail) => {
            return Verification::malformed(
                ProblemType::MalformedValueError,
                "Not a credential",
                detail,
            );
        }
    };
    if let Err(detail) = credential_structure(doc, version) {
        return Verification::malformed(
            ProblemType::MalformedValueError,
            "Not a credential",
            detail,
        );
    }
    let mut v = Verification::default();
    verify_proofs(doc, "assertionMethod", None, None, options, &mut v);
    v.results.validity = Some(validity(doc, version, options.now, &mut v));
    if check_status {
        status(doc, options, &mut v);
    }
    v.verified = v.problem_details.is_empty();
    v
}

/// Verifies a presentation: its proof (purpose `authentication`, with the options'
/// `challenge` and `domain`) and every embedded credential.
pub fn verify_presentation(presentation: &Value, options: &VerifyOptions<'_>) -> Verification {
    let Some(doc) = presentation.as_object() else {
        return Verification::malformed(
            ProblemType::ParsingError,
            "Not a presentation",
            "the input is not a JSON object",
        );
    };
    if let Err(detail) = structure(doc, "VerifiablePresentation") {
        return Verification::malformed(
            ProblemType::MalformedValueError,
            "Not a presentation",
            detail,
        );
    }
    let mut v = Verification::default();
    verify_proofs(
        doc,
        "authentication",
        options.challenge,
        options.domain,
        options,
        &mut v,
    );
    let credentials = match doc.get("verifiableCredential") {
        None => Vec::new(),
        Some(Value::Array(a)) => a.iter().collect(),
        Some(one) => vec![one],
    };
    for (i, c) in credentials.into_iter().enumerate() {
        let inner = verify_credential(c, options);
        for p in &inner.problem_details {
            let mut p = p.clone();
            p.detail = format!("verifiableCredential[{i}]: {}", p.detail);
            v.problem_details.push(p);
        }
        v.results.credentials.push(inner);
    }
    v.verified = v.problem_details.is_empty();
    v
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V1,
    V2,
}

/// `@context` (first item the v1 or v2 URL) and `type` (containing `required_type`).
fn structure(doc: &Map<String, Value>, required_type: &str) -> Result<Version, String> {
    let first = match doc.get("@context") {
        Some(Value::Array(a)) => a.first(),
        Some(other) => Some(other),
        None => return Err("@context is missing".into()),
    };
    let version = match first.and_then(Value::as_str) {
        Some(CREDENTIALS_V2) => Version::V2,
        Some(CREDENTIALS_V1) => Version::V1,
        _ => {
            return Err(format!(
                "the first @context must be {CREDENTIALS_V2} or {CREDENTIALS_V1}"
            ));
        }
    };
    let has_type = match doc.get("type") {
        Some(Value::String(s)) => s == required_type,
        Some(Value::Array(a)) => a.iter().any(|t| t.as_str() == Some(required_type)),
        _ => return Err("type is missing".into()),
    };
    if !has_type {
        return Err(format!("type does not include {required_type}"));
    }
    Ok(version)
}

fn credential_structure(doc: &Map<String, Value>, version: Version) -> Result<(), String> {
    match doc.get("issuer") {
        Some(Value::String(s)) if !s.is_empty() => {}
        Some(Value::Object(o))
            if o.get("id")
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty()) => {}
        Some(_) => return Err("issuer must be a URL or an object with an id".into()),
        None => return Err("issuer is missing".into()),
    }
    match doc.get("credentialSubject") {
        Some(Value::Object(_)) => {}
        Some(Value::Array(a)) if !a.is_empty() && a.iter().all(Value::is_object) => {}
        Some(_) => {
            return Err(
                "credentialSubject must be an object or a non-empty array of objects".into(),
            );
        }
        None => return Err("credentialSubject is missing".into()),
    }
    if version == Version::V1 && !doc.contains_key("issuanceDate") {
        return Err("issuanceDate is missing (VC Data Model 1.1)".into());
    }
    Ok(())
}

fn proof_list(doc: &Map<String, Value>) -> Result<Vec<&Map<String, Value>>, String> {
    match doc.get("proof") {
        None => Err("there is no proof".into()),
        Some(Value::Object(p)) => Ok(vec![p]),
        Some(Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|p| {
                p.as_object()
                    .ok_or_else(|| "a proof is not an object".to_string())
            })
            .collect(),
        Some(_) => Err("proof must be an object or a non-empty array of objects".into()),
    }
}

/// Data Integrity "verify proof sets and chains": every proof must verify, a chained proof
/// over the document with the proofs it names (`previousProof`) attached.
fn verify_proofs(
    doc: &Map<String, Value>,
    purpose: &str,
    challenge: Option<&str>,
    domain: Option<&str>,
    options: &VerifyOptions<'_>,
    v: &mut Verification,
) {
    let proofs = match proof_list(doc) {
        Ok(p) => p,
        Err(detail) => {
            v.push(
                ProblemType::ProofVerificationError,
                "No usable proof",
                detail,
            );
            return;
        }
    };
    let mut unsecured = doc.clone();
    unsecured.remove("proof");
    for proof in &proofs {
        let str_of = |k: &str| proof.get(k).and_then(Value::as_str).map(str::to_string);
        let mut result = ProofResult {
            id: str_of("id"),
            cryptosuite: str_of("cryptosuite"),
            verification_method: str_of("verificationMethod"),
            proof_purpose: str_of("proofPurpose"),
            verified: false,
        };
        let outcome = previous_proofs(proof, &proofs).and_then(|matching| {
            let mut input = unsecured.clone();
            if !matching.is_empty() {
                input.insert("proof".into(), Value::Array(matching));
            }
            verify_one(&input, proof, purpose, challenge, domain, options)
        });
        match outcome {
            Ok(()) => result.verified = true,
            Err(p) => v.problem_details.push(p),
        }
        v.results.proofs.push(result);
    }
}

fn previous_proofs(
    proof: &Map<String, Value>,
    all: &[&Map<String, Value>],
) -> Result<Vec<Value>, ProblemDetail> {
    let ids: Vec<&str> = match proof.get("previousProof") {
        None => return Ok(Vec::new()),
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a
            .iter()
            .map(Value::as_str)
            .collect::<Option<_>>()
            .ok_or_else(|| {
                ProblemDetail::new(
                    ProblemType::ProofVerificationError,
                    "Bad previousProof",
                    "previousProof items must be strings",
                )
            })?,
        Some(_) => {
            return Err(ProblemDetail::new(
                ProblemType::ProofVerificationError,
                "Bad previousProof",
                "previousProof must be a string or a list of strings",
            ));
        }
    };
    for id in &ids {
        if !all
            .iter()
            .any(|p| p.get("id").and_then(Value::as_str) == Some(id))
        {
            return Err(ProblemDetail::new(
                ProblemType::ProofVerificationError,
                "Broken proof chain",
                format!("previousProof {id} is not a proof of this document"),
            ));
        }
    }
    Ok(all
        .iter()
        .filter(|p| {
            p.get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| ids.contains(&id))
        })
        .map(|p| Value::Object((*p).clone()))
        .collect())
}

fn parse_time(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &Rfc3339).ok()
}

fn verify_one(
    input: &Map<String, Value>,
    proof: &Map<String, Value>,
    purpose: &str,
    challenge: Option<&str>,
    domain: Option<&str>,
    options: &VerifyOptions<'_>,
) -> Result<(), ProblemDetail> {
    let fail = |title: &str, detail: String| {
        ProblemDetail::new(ProblemType::ProofVerificationError, title, detail)
    };
    let field = |k: &str| {
        proof
            .get(k)
            .and_then(Value::as_str)
            .ok_or_else(|| fail("Incomplete proof", format!("the proof has no {k}")))
    };
    let type_ = field("type")?;
    if type_ != "DataIntegrityProof" {
        return Err(fail(
            "Unsupported proof",
            format!("proof type {type_} is not supported"),
        ));
    }
    let suite_name = field("cryptosuite")?;
    let vm = field("verificationMethod")?;
    let proof_purpose = field("proofPurpose")?;
    let proof_value = field("proofValue")?;
    let suite = Cryptosuite::parse(suite_name).ok_or_else(|| {
        fail(
            "Unsupported cryptosuite",
            format!("cryptosuite {suite_name} is not supported"),
        )
    })?;
    if proof_purpose != purpose {
        return Err(fail(
            "Wrong proof purpose",
            format!("proofPurpose is {proof_purpose}, expected {purpose}"),
        ));
    }
    for (k, must_be_past) in [("created", true), ("expires", false)] {
        let Some(raw) = proof.get(k) else { continue };
        let t = raw.as_str().and_then(parse_time).ok_or_else(|| {
            ProblemDetail::new(
                ProblemType::MalformedValueError,
                "Bad proof date",
                format!("proof {k} is not an XML Schema dateTime"),
            )
        })?;
        if must_be_past && t > options.now {
            return Err(fail(
                "Proof from the future",
                format!("proof created {} is after now", raw),
            ));
        }
        if !must_be_past && t <= options.now {
            return Err(fail("Proof expired", format!("proof expired at {raw}")));
        }
    }
    if let Some(expected) = challenge
        && proof.get("challenge").and_then(Value::as_str) != Some(expected)
    {
        return Err(ProblemDetail::new(
            ProblemType::InvalidChallengeError,
            "Invalid challenge",
            "the proof's challenge is not the expected one",
        ));
    }
    if let Some(expected) = domain {
        let ok = match proof.get("domain") {
            Some(Value::String(s)) => s == expected,
            Some(Value::Array(a)) => a.iter().any(|d| d.as_str() == Some(expected)),
            _ => false,
        };
        if !ok {
            return Err(ProblemDetail::new(
                ProblemType::InvalidDomainError,
                "Invalid domain",
                "the proof's domain is not the expected one",
            ));
        }
    }
    let empty = HashMap::new();
    let key =
        keys::resolve(vm, purpose, options.did_web.unwrap_or(&empty)).map_err(|e| match e {
            KeyError::Multikey(_) => ProblemDetail::new(
                ProblemType::CryptographicSecurityError,
                "Unusable key",
                e.to_string(),
            ),
            KeyError::Unresolvable(_) | KeyError::NotAuthorized(_) => {
                fail("Unusable verification method", e.to_string())
            }
        })?;
    if !suites::key_fits(suite, &key) {
        return Err(fail(
            "Key does not fit the suite",
            format!("{suite_name} cannot use the key of {vm}"),
        ));
    }
    let signature = suites::decode_proof_value(proof_value)?;
    let mut proof_options = proof.clone();
    proof_options.remove("proofValue");
    let hash = suites::hash_data(suite, &key, input, &proof_options)?;
    if !key.verify(&hash.combined, &signature) {
        return Err(fail(
            "Invalid signature",
            format!("the {suite_name} signature by {vm} does not verify"),
        ));
    }
    Ok(())
}

fn validity(
    doc: &Map<String, Value>,
    version: Version,
    now: OffsetDateTime,
    v: &mut Verification,
) -> ValidityResult {
    let (from_key, until_key) = match version {
        Version::V2 => ("validFrom", "validUntil"),
        Version::V1 => ("issuanceDate", "expirationDate"),
    };
    let read = |k: &str, v: &mut Verification| -> (Option<String>, Option<OffsetDateTime>) {
        let Some(raw) = doc.get(k) else {
            return (None, None);
        };
        let text = raw.as_str().map(str::to_string);
        let t = text.as_deref().and_then(parse_time);
        if t.is_none() {
            v.push(
                ProblemType::MalformedValueError,
                "Bad date",
                format!("{k} is not an XML Schema dateTimeStamp"),
            );
        }
        (text, t)
    };
    let (valid_from, from) = read(from_key, v);
    let (valid_until, until) = read(until_key, v);
    let mut valid = true;
    if from.is_some_and(|f| now < f) {
        valid = false;
        v.push(
            ProblemType::RangeError,
            "Not yet valid",
            format!("{from_key} is after now"),
        );
    }
    if until.is_some_and(|u| now > u) {
        valid = false;
        v.push(
            ProblemType::RangeError,
            "Expired",
            format!("{until_key} is before now"),
        );
    }
    ValidityResult {
        valid_from,
        valid_until,
        valid,
    }
}

fn has_type(v: &Value, t: &str) -> bool {
    match v.get("type") {
        Some(Value::String(s)) => s == t,
        Some(Value::Array(a)) => a.iter().any(|x| x.as_str() == Some(t)),
        _ => false,
    }
}

fn status(doc: &Map<String, Value>, options: &VerifyOptions<'_>, v: &mut Verification) {
    let entries: Vec<&Value> = match doc.get("credentialStatus") {
        None => return,
        Some(Value::Array(a)) => a.iter().collect(),
        Some(one) => vec![one],
    };
    for entry in entries {
        let str_of = |k: &str| entry.get(k).and_then(Value::as_str).map(str::to_string);
        let index = match entry.get("statusListIndex") {
            Some(Value::String(s)) => s.parse::<u64>().ok(),
            Some(Value::Number(n)) => n.as_u64(),
            _ => None,
        };
        let mut result = StatusResult {
            status_purpose: str_of("statusPurpose"),
            status_list_credential: str_of("statusListCredential"),
            status_list_index: index,
            status: None,
            verified: false,
        };
        match check_status(entry, &result, options) {
            Ok(bit) => {
                result.status = Some(bit);
                if bit {
                    let purpose = result.status_purpose.as_deref().unwrap_or("status");
                    v.push(
                        ProblemType::RangeError,
                        "Status set",
                        format!("the credential's {purpose} bit is set"),
                    );
                } else {
                    result.verified = true;
                }
            }
            Err(p) => v.problem_details.push(p),
        }
        v.results.status.push(result);
    }
}

fn check_status(
    entry: &Value,
    r: &StatusResult,
    options: &VerifyOptions<'_>,
) -> Result<bool, ProblemDetail> {
    let bad = |title: &str, detail: String| {
        ProblemDetail::new(ProblemType::MalformedValueError, title, detail)
    };
    if !has_type(entry, "BitstringStatusListEntry") {
        return Err(bad(
            "Unsupported status",
            "only BitstringStatusListEntry is supported".into(),
        ));
    }
    if entry
        .get("statusSize")
        .and_then(Value::as_u64)
        .is_some_and(|s| s != 1)
    {
        return Err(bad(
            "Unsupported status",
            "only statusSize 1 is supported".into(),
        ));
    }
    let (Some(purpose), Some(url), Some(index)) = (
        r.status_purpose.as_deref(),
        r.status_list_credential.as_deref(),
        r.status_list_index,
    ) else {
        return Err(bad(
            "Incomplete status entry",
            "statusPurpose, statusListIndex (an integer) and statusListCredential are required"
                .into(),
        ));
    };
    let source = options
        .status_lists
        .and_then(|s| s.status_list(url))
        .ok_or_else(|| {
            bad(
                "Unknown status list",
                format!("status list {url} is not known to this verifier"),
            )
        })?;
    let (list_purpose, list) = match source {
        StatusListSource::Trusted {
            status_purpose,
            list,
        } => (status_purpose, list),
        StatusListSource::Credential(list_vc) => {
            let inner = verify_credential_inner(&list_vc, options, false);
            if !inner.verified {
                let why: Vec<_> = inner
                    .problem_details
                    .iter()
                    .map(|p| p.detail.as_str())
                    .collect();
                return Err(bad(
                    "Status list does not verify",
                    format!("{url}: {}", why.join("; ")),
                ));
            }
            let subject = list_vc
                .get("credentialSubject")
                .filter(|s| has_type(s, "BitstringStatusList"));
            let subject = subject.ok_or_else(|| {
                bad(
                    "Bad status list",
                    format!("{url} is not a BitstringStatusListCredential"),
                )
            })?;
            let encoded = subject
                .get("encodedList")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("Bad status list", format!("{url} has no encodedList")))?;
            let list_purpose = match subject.get("statusPurpose") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(a)) if a.iter().any(|p| p.as_str() == Some(purpose)) => {
                    purpose.to_string()
                }
                _ => String::new(),
            };
            let list = StatusList::decode(encoded)
                .map_err(|e| bad("Bad status list", format!("{url}: {e}")))?;
            (list_purpose, list)
        }
    };
    if list_purpose != purpose {
        return Err(bad(
            "Status purpose mismatch",
            format!("{url} is a {list_purpose} list, the entry says {purpose}"),
        ));
    }
    list.get(index)
        .map_err(|e| ProblemDetail::new(ProblemType::RangeError, "Bad status index", e.to_string()))
}
