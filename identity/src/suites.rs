//! The cryptosuites of Data Integrity EdDSA v1.0 (`eddsa-rdfc-2022`, `eddsa-jcs-2022`) and
//! ECDSA v1.0 (`ecdsa-rdfc-2019`, `ecdsa-jcs-2019`, P-256 and P-384): transformation,
//! proof configuration, hashing, and the signature check. One proof at a time; proof sets
//! and chains are `crate::verify`'s business.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256, Sha384};

use crate::jsonld::{self, CanonError, RdfcHash};
use crate::keys::PublicKey;
use crate::problem::{ProblemDetail, ProblemType};

/// A supported cryptosuite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cryptosuite {
    /// Ed25519 over RDFC-1.0 canonical N-Quads.
    EddsaRdfc2022,
    /// Ed25519 over JCS (RFC 8785).
    EddsaJcs2022,
    /// ECDSA (P-256/SHA-256 or P-384/SHA-384) over RDFC-1.0.
    EcdsaRdfc2019,
    /// ECDSA (P-256/SHA-256 or P-384/SHA-384) over JCS.
    EcdsaJcs2019,
}

impl Cryptosuite {
    /// Parses a `cryptosuite` value.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "eddsa-rdfc-2022" => Self::EddsaRdfc2022,
            "eddsa-jcs-2022" => Self::EddsaJcs2022,
            "ecdsa-rdfc-2019" => Self::EcdsaRdfc2019,
            "ecdsa-jcs-2019" => Self::EcdsaJcs2019,
            _ => return None,
        })
    }

    /// The `cryptosuite` value.
    pub fn name(self) -> &'static str {
        match self {
            Self::EddsaRdfc2022 => "eddsa-rdfc-2022",
            Self::EddsaJcs2022 => "eddsa-jcs-2022",
            Self::EcdsaRdfc2019 => "ecdsa-rdfc-2019",
            Self::EcdsaJcs2019 => "ecdsa-jcs-2019",
        }
    }

    fn is_rdfc(self) -> bool {
        matches!(self, Self::EddsaRdfc2022 | Self::EcdsaRdfc2019)
    }

    fn is_eddsa(self) -> bool {
        matches!(self, Self::EddsaRdfc2022 | Self::EddsaJcs2022)
    }

    /// Canonical form of a document for a proof by `key`: RDFC-1.0 N-Quads of its JSON-LD
    /// expansion (blank nodes labelled with SHA-384 for P-384 keys, SHA-256 otherwise), or
    /// JCS (RFC 8785).
    pub fn canonicalize(self, document: &Value, key: &PublicKey) -> Result<String, CanonError> {
        if !self.is_rdfc() {
            return jsonld::jcs(document);
        }
        let hash = match key {
            PublicKey::P384(_) => RdfcHash::Sha384,
            PublicKey::Ed25519(_) | PublicKey::P256(_) => RdfcHash::Sha256,
        };
        jsonld::canonicalize(document, hash)
    }
}

/// The hash used for a key: SHA-256 except for P-384 (SHA-384).
fn hash(key: &PublicKey, data: &[u8]) -> Vec<u8> {
    match key {
        PublicKey::P384(_) => Sha384::digest(data).to_vec(),
        PublicKey::Ed25519(_) | PublicKey::P256(_) => Sha256::digest(data).to_vec(),
    }
}

/// Maps a canonicalization failure to its problem.
pub(crate) fn canon_problem(e: &CanonError) -> ProblemDetail {
    match e {
        CanonError::UnknownContext(_) | CanonError::Syntax(_) => ProblemDetail::new(
            ProblemType::ParsingError,
            "Unprocessable JSON-LD",
            e.to_string(),
        ),
        CanonError::UndefinedTerm(_) => ProblemDetail::new(
            ProblemType::MalformedValueError,
            "Undefined term",
            e.to_string(),
        ),
        CanonError::Transformation(_) => ProblemDetail::new(
            ProblemType::ProofTransformationError,
            "Transformation failed",
            e.to_string(),
        ),
    }
}

fn verification_error(title: &str, detail: impl Into<String>) -> ProblemDetail {
    ProblemDetail::new(ProblemType::ProofVerificationError, title, detail)
}

/// The hashes a proof signs: `hash(canonical proof configuration) ‖ hash(canonical document)`,
/// with both canonical forms for inspection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashData {
    /// The canonical unsecured document.
    pub canonical_document: String,
    /// The canonical proof configuration.
    pub canonical_proof_config: String,
    /// `proofHash ‖ docHash`.
    pub combined: Vec<u8>,
}

/// Steps of the cryptosuite's "verify proof" algorithm up to the hash data: checks the
/// proof's `@context` against the document's, builds the proof configuration, canonicalizes
/// both and hashes them.
pub(crate) fn hash_data(
    suite: Cryptosuite,
    key: &PublicKey,
    unsecured: &Map<String, Value>,
    proof_options: &Map<String, Value>,
) -> Result<HashData, ProblemDetail> {
    let mut unsecured = unsecured.clone();
    if let Some(proof_ctx) = proof_options.get("@context") {
        let doc_ctx = as_list(unsecured.get("@context"));
        let proof_ctx_list = as_list(Some(proof_ctx));
        if doc_ctx.len() < proof_ctx_list.len()
            || doc_ctx[..proof_ctx_list.len()] != proof_ctx_list[..]
        {
            return Err(verification_error(
                "Context mismatch",
                "the document's @context does not start with the proof's @context",
            ));
        }
        unsecured.insert("@context".into(), proof_ctx.clone());
    }
    let mut config = proof_options.clone();
    if let Some(ctx) = unsecured.get("@context") {
        config.insert("@context".into(), ctx.clone());
    }
    let document = Value::Object(unsecured);
    let canonical_document = suite
        .canonicalize(&document, key)
        .map_err(|e| canon_problem(&e))?;
    let canonical_proof_config = suite
        .canonicalize(&Value::Object(config), key)
        .map_err(|e| canon_problem(&e))?;
    let mut combined = hash(key, canonical_proof_config.as_bytes());
    combined.extend(hash(key, canonical_document.as_bytes()));
    Ok(HashData {
        canonical_document,
        canonical_proof_config,
        combined,
    })
}

fn as_list(v: Option<&Value>) -> Vec<Value> {
    match v {
        None => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(other) => vec![other.clone()],
    }
}

/// Checks that the key's type fits the suite (Ed25519 for eddsa, P-256/P-384 for ecdsa).
pub(crate) fn key_fits(suite: Cryptosuite, key: &PublicKey) -> bool {
    suite.is_eddsa() == matches!(key, PublicKey::Ed25519(_))
}

/// Decodes a `proofValue` (`z` + base58btc).
pub(crate) fn decode_proof_value(v: &str) -> Result<Vec<u8>, ProblemDetail> {
    let body = v.strip_prefix('z').ok_or_else(|| {
        ProblemDetail::new(
            ProblemType::CryptographicSecurityError,
            "Bad proofValue",
            "proofValue is not base58btc (z…)",
        )
    })?;
    bs58::decode(body).into_vec().map_err(|e| {
        ProblemDetail::new(
            ProblemType::CryptographicSecurityError,
            "Bad proofValue",
            e.to_string(),
        )
    })
}

/// Encodes a signature as a `proofValue`.
pub(crate) fn encode_proof_value(sig: &[u8]) -> String {
    format!("z{}", bs58::encode(sig).into_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in [
            Cryptosuite::EddsaRdfc2022,
            Cryptosuite::EddsaJcs2022,
            Cryptosuite::EcdsaRdfc2019,
            Cryptosuite::EcdsaJcs2019,
        ] {
            assert_eq!(Cryptosuite::parse(s.name()), Some(s));
        }
        assert_eq!(Cryptosuite::parse("ecdsa-sd-2023"), None);
        assert_eq!(Cryptosuite::parse("Ed25519Signature2020"), None);
    }

    #[test]
    fn proof_values_are_base58btc() {
        let v = encode_proof_value(&[1, 2, 3, 255]);
        assert!(v.starts_with('z'));
        assert_eq!(decode_proof_value(&v).unwrap(), vec![1, 2, 3, 255]);
        assert!(decode_proof_value("u123").is_err());
        assert!(decode_proof_value("z0OIl").is_err());
    }
}
