//! Every signed W3C vector verifies, and the canonical forms and hashes this crate computes
//! equal the vectors' intermediate values.

use openrail_identity::{Cryptosuite, ProblemType, PublicKey, VerifyOptions, verify_credential};
use serde_json::Value;
use sha2::{Digest, Sha256, Sha384};

use crate::common::{Hash, NOW, VECTORS, json, text};

#[test]
fn every_signed_vector_verifies() {
    let options = VerifyOptions::new(NOW);
    for v in VECTORS {
        let doc = v.signed();
        let result = verify_credential(&doc, &options);
        assert!(result.verified, "{}: {:#?}", v.name, result.problem_details);
        assert!(!result.malformed);
        let n = match &doc["proof"] {
            Value::Array(a) => a.len(),
            _ => 1,
        };
        assert_eq!(result.results.proofs.len(), n, "{}", v.name);
        assert!(
            result.results.proofs.iter().all(|p| p.verified),
            "{}",
            v.name
        );
        assert!(result.results.validity.as_ref().is_some_and(|r| r.valid));
    }
}

#[test]
fn proof_sets_and_chains_are_there() {
    let chain = json("vc-di-eddsa/proof-set-chain", "signedProofChain2.json");
    let proofs = chain["proof"].as_array().unwrap();
    assert_eq!(proofs.len(), 4);
    assert!(proofs[2]["previousProof"].is_array() && proofs[3]["previousProof"].is_string());
}

fn hex_hash(h: Hash, data: &str) -> String {
    match h {
        Hash::Sha256 => hex::encode(Sha256::digest(data.as_bytes())),
        Hash::Sha384 => hex::encode(Sha384::digest(data.as_bytes())),
    }
}

#[test]
fn intermediate_values_equal_the_vectors() {
    for v in VECTORS {
        let Some((canon_doc, proof_config, proof_canon, doc_hash, proof_hash, hash)) =
            v.intermediate
        else {
            continue;
        };
        let mut doc = v.signed();
        let suite = Cryptosuite::parse(doc["proof"]["cryptosuite"].as_str().unwrap()).unwrap();
        let vm = doc["proof"]["verificationMethod"].as_str().unwrap();
        let key = PublicKey::from_multibase(vm.split_once('#').unwrap().1).unwrap();
        doc.as_object_mut().unwrap().remove("proof");
        let canonical = suite
            .canonicalize(&doc, &key)
            .unwrap_or_else(|e| panic!("{}: {e}", v.name));
        assert_eq!(
            canonical,
            text(v.dir, canon_doc),
            "{}: canonical document",
            v.name
        );
        assert_eq!(
            hex_hash(hash, &canonical),
            text(v.dir, doc_hash).trim(),
            "{}: docHash",
            v.name
        );

        let mut config = json(v.dir, proof_config);
        config["@context"] = doc["@context"].clone();
        let canonical_config = suite.canonicalize(&config, &key).unwrap();
        assert_eq!(
            canonical_config,
            text(v.dir, proof_canon),
            "{}: canonical proof config",
            v.name
        );
        assert_eq!(
            hex_hash(hash, &canonical_config),
            text(v.dir, proof_hash).trim(),
            "{}: proofHash",
            v.name
        );
    }
}

#[test]
fn unknown_contexts_fail_without_the_network() {
    let mut doc = VECTORS[0].signed();
    doc["@context"]
        .as_array_mut()
        .unwrap()
        .push("https://example.com/never-fetched/v1".into());
    let r = verify_credential(&doc, &VerifyOptions::new(NOW));
    assert!(!r.verified && !r.malformed);
    assert!(r.has(ProblemType::ParsingError), "{:#?}", r.problem_details);
}

#[test]
fn malformed_input_is_told_apart_from_a_credential_that_does_not_verify() {
    let options = VerifyOptions::new(NOW);
    let good = VECTORS[0].signed();
    let r = verify_credential(&Value::String("x".into()), &options);
    assert!(r.malformed && r.has(ProblemType::ParsingError));
    for field in ["@context", "type", "issuer", "credentialSubject"] {
        let mut doc = good.clone();
        doc.as_object_mut().unwrap().remove(field);
        let r = verify_credential(&doc, &options);
        assert!(r.malformed && !r.verified, "without {field}");
        assert!(r.has(ProblemType::MalformedValueError), "without {field}");
    }
    let mut tampered = good.clone();
    tampered["credentialSubject"]["alumniOf"] = "Another School".into();
    let r = verify_credential(&tampered, &options);
    assert!(!r.malformed && !r.verified);
    let mut no_proof = good;
    no_proof.as_object_mut().unwrap().remove("proof");
    let r = verify_credential(&no_proof, &options);
    assert!(!r.malformed && !r.verified && r.has(ProblemType::ProofVerificationError));
}

#[test]
fn the_verification_serializes_in_the_vc_api_shape() {
    let r = verify_credential(&VECTORS[0].signed(), &VerifyOptions::new(NOW));
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["verified"], true);
    assert!(v["problemDetails"].as_array().unwrap().is_empty());
    assert_eq!(v["results"]["proofs"][0]["cryptosuite"], "eddsa-rdfc-2022");
    assert_eq!(v["results"]["proofs"][0]["verified"], true);
}
