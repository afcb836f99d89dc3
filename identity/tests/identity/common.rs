//! The vector table and helpers shared by the test modules.

use std::path::PathBuf;

use serde_json::Value;
use time::OffsetDateTime;
use time::macros::datetime;

/// A fixed "now" for the vectors: after every proof's `created`, before the employ
/// vectors' `validUntil` (2029-12-03).
pub const NOW: OffsetDateTime = datetime!(2026-01-01 00:00 UTC);

/// Which hash a vector's intermediate values use.
#[derive(Debug, Clone, Copy)]
pub enum Hash {
    Sha256,
    Sha384,
}

/// One signed vector, with the names of its intermediate files (same folder) if it has them.
#[derive(Debug, Clone, Copy)]
pub struct Vector {
    pub name: &'static str,
    pub dir: &'static str,
    pub signed: &'static str,
    /// (canonDoc, proofConfig, proofCanon, docHash, proofHash) file names, and the hash.
    pub intermediate: Option<(
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        Hash,
    )>,
}

const fn with(
    name: &'static str,
    dir: &'static str,
    signed: &'static str,
    files: (
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    ),
    hash: Hash,
) -> Vector {
    Vector {
        name,
        dir,
        signed,
        intermediate: Some((files.0, files.1, files.2, files.3, files.4, hash)),
    }
}

const EDDSA_RDFC: (&str, &str, &str, &str, &str) = (
    "canonDocDataInt.txt",
    "proofConfigDataInt.json",
    "proofCanonDataInt.txt",
    "docHashDataInt.txt",
    "proofHashDataInt.txt",
);
const P256_RDFC: (&str, &str, &str, &str, &str) = (
    "canonDocECDSAP256.txt",
    "proofConfigECDSAP256.json",
    "proofCanonECDSAP256.txt",
    "docHashECDSAP256.txt",
    "proofHashECDSAP256.txt",
);
const P384_RDFC: (&str, &str, &str, &str, &str) = (
    "canonDocECDSAP384.txt",
    "proofConfigECDSAP384.json",
    "proofCanonECDSAP384.txt",
    "docHashECDSAP384.txt",
    "proofHashECDSAP384.txt",
);

/// Every signed vector this crate must verify.
pub const VECTORS: &[Vector] = &[
    with(
        "eddsa-rdfc-2022",
        "vc-di-eddsa/eddsa-rdfc-2022",
        "signedDataInt.json",
        EDDSA_RDFC,
        Hash::Sha256,
    ),
    with(
        "eddsa-rdfc-2022 employ",
        "vc-di-eddsa/eddsa-rdfc-2022/employ",
        "signedDataInt.json",
        EDDSA_RDFC,
        Hash::Sha256,
    ),
    with(
        "eddsa-jcs-2022",
        "vc-di-eddsa/eddsa-jcs-2022",
        "signedJCS.json",
        (
            "canonDocJCS.txt",
            "proofConfigJCS.json",
            "proofCanonJCS.txt",
            "docHashJCS.txt",
            "proofHashJCS.txt",
        ),
        Hash::Sha256,
    ),
    with(
        "ecdsa-rdfc-2019 P-256",
        "vc-di-ecdsa/ecdsa-rdfc-2019-p256",
        "signedECDSAP256.json",
        P256_RDFC,
        Hash::Sha256,
    ),
    with(
        "ecdsa-rdfc-2019 P-256 employ",
        "vc-di-ecdsa/ecdsa-rdfc-2019-p256/employ",
        "signedECDSAP256.json",
        P256_RDFC,
        Hash::Sha256,
    ),
    with(
        "ecdsa-rdfc-2019 P-384",
        "vc-di-ecdsa/ecdsa-rdfc-2019-p384",
        "signedECDSAP384.json",
        P384_RDFC,
        Hash::Sha384,
    ),
    with(
        "ecdsa-rdfc-2019 P-384 employ",
        "vc-di-ecdsa/ecdsa-rdfc-2019-p384/employ",
        "signedECDSAP384.json",
        P384_RDFC,
        Hash::Sha384,
    ),
    with(
        "ecdsa-jcs-2019 P-256",
        "vc-di-ecdsa/ecdsa-jcs-2019-p256",
        "signedJCSECDSAP256.json",
        (
            "canonDocJCSECDSAP256.txt",
            "proofConfigJCSECDSAP256.json",
            "proofCanonJCSECDSAP256.txt",
            "docHashJCSECDSAP256.txt",
            "proofHashJCSECDSAP256.txt",
        ),
        Hash::Sha256,
    ),
    with(
        "ecdsa-jcs-2019 P-384",
        "vc-di-ecdsa/ecdsa-jcs-2019-p384",
        "signedJCSECDSAP384.json",
        (
            "canonDocJCSECDSAP384.txt",
            "proofConfigJCSECDSAP384.json",
            "proofCanonJCSECDSAP384.txt",
            "docHashJCSECDSAP384.txt",
            "proofHashJCSECDSAP384.txt",
        ),
        Hash::Sha384,
    ),
    Vector {
        name: "proof set 1",
        dir: "vc-di-eddsa/proof-set-chain",
        signed: "signedProofSet1.json",
        intermediate: None,
    },
    Vector {
        name: "proof set 2",
        dir: "vc-di-eddsa/proof-set-chain",
        signed: "signedProofSet2.json",
        intermediate: None,
    },
    Vector {
        name: "proof chain 1",
        dir: "vc-di-eddsa/proof-set-chain",
        signed: "signedProofChain1.json",
        intermediate: None,
    },
    Vector {
        name: "proof chain 2",
        dir: "vc-di-eddsa/proof-set-chain",
        signed: "signedProofChain2.json",
        intermediate: None,
    },
];

pub fn path(dir: &str, file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors")
        .join(dir)
        .join(file)
}

pub fn text(dir: &str, file: &str) -> String {
    let p = path(dir, file);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

pub fn json(dir: &str, file: &str) -> Value {
    serde_json::from_str(&text(dir, file)).unwrap_or_else(|e| panic!("{dir}/{file}: {e}"))
}

impl Vector {
    pub fn signed(&self) -> Value {
        json(self.dir, self.signed)
    }
}

/// The proofs of a document as a list (a single proof is a list of one).
pub fn proofs_mut(doc: &mut Value) -> Vec<&mut serde_json::Map<String, Value>> {
    match doc.get_mut("proof") {
        Some(Value::Array(a)) => a.iter_mut().filter_map(Value::as_object_mut).collect(),
        Some(Value::Object(o)) => vec![o],
        _ => Vec::new(),
    }
}
