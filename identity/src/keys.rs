//! Verification methods: Multikey public keys (Ed25519, P-256, P-384), `did:key` (its
//! document is derived from the key, in process) and `did:web` from a caller-supplied cache.
//! Nothing here reads the network.

use std::collections::HashMap;

use serde_json::Value;

const ED25519_PUB: [u8; 2] = [0xed, 0x01];
const P256_PUB: [u8; 2] = [0x80, 0x24];
const P384_PUB: [u8; 2] = [0x81, 0x24];

/// The verification relationships a `did:key` document lists its key under.
const DID_KEY_RELATIONSHIPS: &[&str] = &[
    "assertionMethod",
    "authentication",
    "capabilityInvocation",
    "capabilityDelegation",
];

/// Why a verification method could not be turned into a key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// Not `z` + base58btc, or an unknown multicodec header, or bad key bytes.
    #[error("not a supported Multikey: {0}")]
    Multikey(String),
    /// The DID method is neither `did:key` nor a cached `did:web`.
    #[error("verification method {0} cannot be resolved without the network")]
    Unresolvable(String),
    /// The DID document does not list the method, or not under the proof's purpose.
    #[error("{0}")]
    NotAuthorized(String),
}

/// A public key a proof can be checked with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublicKey {
    /// Ed25519 (`z6Mk…`).
    Ed25519(ed25519_dalek::VerifyingKey),
    /// NIST P-256 (`zDna…`).
    P256(p256::ecdsa::VerifyingKey),
    /// NIST P-384 (`z82L…`).
    P384(p384::ecdsa::VerifyingKey),
}

impl PublicKey {
    /// Reads a Multikey `publicKeyMultibase` (`z` + base58btc of multicodec header + key).
    pub fn from_multibase(s: &str) -> Result<Self, KeyError> {
        let body = s
            .strip_prefix('z')
            .ok_or_else(|| KeyError::Multikey("no z prefix".into()))?;
        let raw = bs58::decode(body)
            .into_vec()
            .map_err(|e| KeyError::Multikey(e.to_string()))?;
        if raw.len() < 2 {
            return Err(KeyError::Multikey("too short".into()));
        }
        let (header, key) = raw.split_at(2);
        let bad = |e: &dyn std::fmt::Display| KeyError::Multikey(e.to_string());
        match [header[0], header[1]] {
            ED25519_PUB => {
                let bytes: [u8; 32] = key
                    .try_into()
                    .map_err(|_| KeyError::Multikey("Ed25519 key is not 32 bytes".into()))?;
                ed25519_dalek::VerifyingKey::from_bytes(&bytes)
                    .map(Self::Ed25519)
                    .map_err(|e| bad(&e))
            }
            P256_PUB => p256::ecdsa::VerifyingKey::from_sec1_bytes(key)
                .map(Self::P256)
                .map_err(|e| bad(&e)),
            P384_PUB => p384::ecdsa::VerifyingKey::from_sec1_bytes(key)
                .map(Self::P384)
                .map_err(|e| bad(&e)),
            h => Err(KeyError::Multikey(format!(
                "unknown multicodec header {h:02x?}"
            ))),
        }
    }

    /// The Multikey `publicKeyMultibase` form (compressed points for the NIST curves).
    pub fn to_multibase(&self) -> String {
        let mut raw = Vec::with_capacity(51);
        match self {
            Self::Ed25519(k) => {
                raw.extend_from_slice(&ED25519_PUB);
                raw.extend_from_slice(k.as_bytes());
            }
            Self::P256(k) => {
                raw.extend_from_slice(&P256_PUB);
                raw.extend_from_slice(k.to_encoded_point(true).as_bytes());
            }
            Self::P384(k) => {
                raw.extend_from_slice(&P384_PUB);
                raw.extend_from_slice(k.to_encoded_point(true).as_bytes());
            }
        }
        format!("z{}", bs58::encode(raw).into_string())
    }

    /// Checks `signature` over `message`: Ed25519 (RFC 8032), or ECDSA with SHA-256 (P-256)
    /// / SHA-384 (P-384) and a fixed-size `r‖s` signature.
    pub fn verify(&self, message: &[u8], signature: &[u8]) -> bool {
        use p256::ecdsa::signature::Verifier as _;
        match self {
            Self::Ed25519(k) => ed25519_dalek::Signature::from_slice(signature)
                .is_ok_and(|s| k.verify_strict(message, &s).is_ok()),
            Self::P256(k) => p256::ecdsa::Signature::from_slice(signature)
                .is_ok_and(|s| k.verify(message, &s).is_ok()),
            Self::P384(k) => p384::ecdsa::Signature::from_slice(signature)
                .is_ok_and(|s| k.verify(message, &s).is_ok()),
        }
    }
}

/// The `did:key` DID of an Ed25519 public key: `did:key:z6Mk…`. Its verification method is
/// `did:key:z6Mk…#z6Mk…` (see [`did_key_verification_method`]).
pub fn did_key_from_ed25519_public(key: &ed25519_dalek::VerifyingKey) -> String {
    format!("did:key:{}", PublicKey::Ed25519(*key).to_multibase())
}

/// The verification method id of a `did:key` DID: `did:key:X#X`.
pub fn did_key_verification_method(did: &str) -> String {
    let fragment = did.strip_prefix("did:key:").unwrap_or(did);
    format!("{did}#{fragment}")
}

/// Finds the key of `verification_method` and checks that its controller authorizes it for
/// `purpose` (`assertionMethod`, `authentication`, …).
pub(crate) fn resolve(
    verification_method: &str,
    purpose: &str,
    did_web: &HashMap<String, Value>,
) -> Result<PublicKey, KeyError> {
    let (did, fragment) = match verification_method.split_once('#') {
        Some((d, f)) => (d, Some(f)),
        None => (verification_method, None),
    };
    if let Some(multibase) = did.strip_prefix("did:key:") {
        if fragment.is_some_and(|f| f != multibase) {
            return Err(KeyError::NotAuthorized(format!(
                "{verification_method} is not in the did:key document (the fragment must repeat the key)"
            )));
        }
        let key = PublicKey::from_multibase(multibase)?;
        if !DID_KEY_RELATIONSHIPS.contains(&purpose) {
            return Err(KeyError::NotAuthorized(format!(
                "a did:key document does not list its key under {purpose}"
            )));
        }
        return Ok(key);
    }
    if did.starts_with("did:web:") {
        let doc = did_web
            .get(did)
            .ok_or_else(|| KeyError::Unresolvable(verification_method.into()))?;
        return resolve_in_document(did, verification_method, purpose, doc);
    }
    Err(KeyError::Unresolvable(verification_method.into()))
}

fn absolute(did: &str, id: &str) -> String {
    if id.starts_with('#') {
        format!("{did}{id}")
    } else {
        id.to_string()
    }
}

fn resolve_in_document(
    did: &str,
    vm_id: &str,
    purpose: &str,
    doc: &Value,
) -> Result<PublicKey, KeyError> {
    if doc.get("id").and_then(Value::as_str) != Some(did) {
        return Err(KeyError::NotAuthorized(format!(
            "the cached document of {did} has another id"
        )));
    }
    let matches = |v: &Value| {
        v.get("id")
            .and_then(Value::as_str)
            .map(|i| absolute(did, i))
            .as_deref()
            == Some(vm_id)
    };
    // The relationship must list the method, by reference or embedded.
    let listed = doc.get(purpose).and_then(Value::as_array).ok_or_else(|| {
        KeyError::NotAuthorized(format!(
            "the document of {did} has no {purpose} relationship"
        ))
    })?;
    let mut method = None;
    for entry in listed {
        match entry {
            Value::String(s) if absolute(did, s) == vm_id => {
                method = doc
                    .get("verificationMethod")
                    .and_then(Value::as_array)
                    .and_then(|vms| vms.iter().find(|v| matches(v)));
            }
            Value::Object(_) if matches(entry) => method = Some(entry),
            _ => continue,
        }
        break;
    }
    let method = method.ok_or_else(|| {
        KeyError::NotAuthorized(format!(
            "{vm_id} is not listed under {purpose} in the document of {did}"
        ))
    })?;
    if let Some(controller) = method.get("controller").and_then(Value::as_str)
        && controller != did
    {
        return Err(KeyError::NotAuthorized(format!(
            "{vm_id} is controlled by {controller}, not {did}"
        )));
    }
    let multibase = method
        .get("publicKeyMultibase")
        .and_then(Value::as_str)
        .ok_or_else(|| KeyError::Multikey(format!("{vm_id} has no publicKeyMultibase")))?;
    PublicKey::from_multibase(multibase)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ED: &str = "z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2";
    const P256: &str = "zDnaepBuvsQ8cpsWrVKw8fbpGpvPeNSjVPTWoq6cRqaYzBKVP";
    const P384: &str = "z82LkuBieyGShVBhvtE2zoiD6Kma4tJGFtkAhxR5pfkp5QPw4LutoYWhvQCnGjdVn14kujQ";

    #[test]
    fn multikeys_round_trip() {
        for s in [ED, P256, P384] {
            assert_eq!(PublicKey::from_multibase(s).unwrap().to_multibase(), s);
        }
        assert!(matches!(
            PublicKey::from_multibase(ED).unwrap(),
            PublicKey::Ed25519(_)
        ));
        assert!(matches!(
            PublicKey::from_multibase(P256).unwrap(),
            PublicKey::P256(_)
        ));
        assert!(matches!(
            PublicKey::from_multibase(P384).unwrap(),
            PublicKey::P384(_)
        ));
        assert!(PublicKey::from_multibase("z1111").is_err());
        assert!(PublicKey::from_multibase(&ED[1..]).is_err());
    }

    #[test]
    fn did_key_resolves_in_process_for_its_relationships_only() {
        let vm = format!("did:key:{ED}#{ED}");
        let none = HashMap::new();
        assert!(resolve(&vm, "assertionMethod", &none).is_ok());
        assert!(resolve(&vm, "authentication", &none).is_ok());
        assert!(matches!(
            resolve(&vm, "keyAgreement", &none),
            Err(KeyError::NotAuthorized(_))
        ));
        let wrong = format!("did:key:{ED}#{P256}");
        assert!(matches!(
            resolve(&wrong, "assertionMethod", &none),
            Err(KeyError::NotAuthorized(_))
        ));
    }

    #[test]
    fn did_web_comes_from_the_cache_only() {
        let did = "did:web:issuer.example";
        let doc = json!({
            "id": did,
            "verificationMethod": [{"id": "#key-1", "type": "Multikey", "controller": did, "publicKeyMultibase": ED}],
            "assertionMethod": ["#key-1"]
        });
        let mut cache = HashMap::new();
        let vm = format!("{did}#key-1");
        assert!(matches!(
            resolve(&vm, "assertionMethod", &cache),
            Err(KeyError::Unresolvable(_))
        ));
        cache.insert(did.to_string(), doc);
        assert!(resolve(&vm, "assertionMethod", &cache).is_ok());
        assert!(matches!(
            resolve(&vm, "authentication", &cache),
            Err(KeyError::NotAuthorized(_))
        ));
        assert!(matches!(
            resolve(&format!("{did}#key-2"), "assertionMethod", &cache),
            Err(KeyError::NotAuthorized(_))
        ));
        assert!(matches!(
            resolve("https://example.com/keys/1", "assertionMethod", &cache),
            Err(KeyError::Unresolvable(_))
        ));
    }

    #[test]
    fn did_key_helper_matches_the_vector_key() {
        let PublicKey::Ed25519(k) = PublicKey::from_multibase(ED).unwrap() else {
            panic!()
        };
        let did = did_key_from_ed25519_public(&k);
        assert_eq!(did, format!("did:key:{ED}"));
        assert_eq!(
            did_key_verification_method(&did),
            format!("did:key:{ED}#{ED}")
        );
    }
}
