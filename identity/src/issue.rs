//! Issuance: an `eddsa-rdfc-2022` Data Integrity proof over a credential (purpose
//! `assertionMethod`) or a presentation (purpose `authentication`, with `challenge` and
//! `domain`).

use ed25519_dalek::{Signer as _, SigningKey};
use serde_json::{Map, Value, json};
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

use crate::keys::PublicKey;
use crate::problem::ProblemDetail;
use crate::suites::{self, Cryptosuite};

/// Why a document could not be signed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IssueError {
    /// The input is not an object with `@context` and `type`.
    #[error("not a signable document: {0}")]
    Malformed(String),
    /// The document could not be canonicalized (unknown context, undefined term, …).
    #[error("{}: {}", .0.title, .0.detail)]
    Proof(ProblemDetail),
}

fn timestamp(t: OffsetDateTime) -> String {
    let t = t
        .to_offset(UtcOffset::UTC)
        .replace_nanosecond(0)
        .unwrap_or(t);
    // Formatting a UTC time with whole seconds as RFC 3339 cannot fail.
    t.format(&Rfc3339).unwrap_or_default()
}

fn sign(
    document: Value,
    key: &SigningKey,
    mut proof: Map<String, Value>,
) -> Result<Value, IssueError> {
    let Value::Object(mut doc) = document else {
        return Err(IssueError::Malformed(
            "the document is not a JSON object".into(),
        ));
    };
    for k in ["@context", "type"] {
        if !doc.contains_key(k) {
            return Err(IssueError::Malformed(format!("{k} is missing")));
        }
    }
    // A document that already has proofs gets one more (a proof set, no chain).
    let existing = doc.remove("proof");
    let public = PublicKey::Ed25519(key.verifying_key());
    let hash = suites::hash_data(Cryptosuite::EddsaRdfc2022, &public, &doc, &proof)
        .map_err(IssueError::Proof)?;
    let signature = key.sign(&hash.combined);
    proof.insert(
        "proofValue".into(),
        Value::String(suites::encode_proof_value(&signature.to_bytes())),
    );
    let proof = Value::Object(proof);
    let proofs = match existing {
        None => proof,
        Some(Value::Array(mut a)) => {
            a.push(proof);
            Value::Array(a)
        }
        Some(one) => Value::Array(vec![one, proof]),
    };
    doc.insert("proof".into(), proofs);
    Ok(Value::Object(doc))
}

fn base_proof(
    verification_method: &str,
    purpose: &str,
    created: OffsetDateTime,
) -> Map<String, Value> {
    let Value::Object(m) = json!({
        "type": "DataIntegrityProof",
        "cryptosuite": "eddsa-rdfc-2022",
        "created": timestamp(created),
        "verificationMethod": verification_method,
        "proofPurpose": purpose,
    }) else {
        unreachable!("a json! object literal is an object")
    };
    m
}

/// Signs a credential: adds an `eddsa-rdfc-2022` proof with purpose `assertionMethod`,
/// made by `issuer_key` and naming `verification_method` (for a did:key issuer,
/// [`crate::did_key_verification_method`] of [`crate::did_key_from_ed25519_public`]).
pub fn issue_credential(
    unsigned: Value,
    issuer_key: &SigningKey,
    verification_method: &str,
    created: OffsetDateTime,
) -> Result<Value, IssueError> {
    sign(
        unsigned,
        issuer_key,
        base_proof(verification_method, "assertionMethod", created),
    )
}

/// Signs a presentation: adds an `eddsa-rdfc-2022` proof with purpose `authentication`
/// carrying `challenge` and `domain`.
pub fn sign_presentation(
    unsigned: Value,
    holder_key: &SigningKey,
    verification_method: &str,
    created: OffsetDateTime,
    challenge: &str,
    domain: &str,
) -> Result<Value, IssueError> {
    let mut proof = base_proof(verification_method, "authentication", created);
    proof.insert("challenge".into(), Value::String(challenge.into()));
    proof.insert("domain".into(), Value::String(domain.into()));
    sign(unsigned, holder_key, proof)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_whole_seconds() {
        let t = OffsetDateTime::from_unix_timestamp_nanos(1_677_281_798_123_456_789).unwrap();
        assert_eq!(timestamp(t), "2023-02-24T23:36:38Z");
    }

    #[test]
    fn non_objects_are_refused() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let t = OffsetDateTime::UNIX_EPOCH;
        assert!(matches!(
            issue_credential(json!([1]), &key, "did:key:x#x", t),
            Err(IssueError::Malformed(_))
        ));
        assert!(matches!(
            issue_credential(json!({"type": "X"}), &key, "did:key:x#x", t),
            Err(IssueError::Malformed(_))
        ));
    }
}
