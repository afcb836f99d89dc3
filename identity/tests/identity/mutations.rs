//! A table of mutations applied to every vector (and every proof of a set or chain): each
//! must be refused with the right problem type.

use std::collections::HashMap;

use openrail_identity::{
    MIN_STATUS_LIST_BITS, ProblemType, StatusList, StatusListSource, VerifyOptions,
    verify_credential,
};
use serde_json::{Map, Value, json};
use time::macros::datetime;

use crate::common::{NOW, VECTORS, proofs_mut};

type ProofMutation = (
    &'static str,
    fn(&mut Map<String, Value>),
    &'static [ProblemType],
);

const PROOF_FAILS: &[ProblemType] = &[ProblemType::ProofVerificationError];

/// Mutations of one proof.
const PROOF_MUTATIONS: &[ProofMutation] = &[
    (
        "wrong cryptosuite",
        |p| drop(p.insert("cryptosuite".into(), "eddsa-rdfc-2019".into())),
        PROOF_FAILS,
    ),
    ("no type", |p| drop(p.remove("type")), PROOF_FAILS),
    (
        "no cryptosuite",
        |p| drop(p.remove("cryptosuite")),
        PROOF_FAILS,
    ),
    (
        "no verificationMethod",
        |p| drop(p.remove("verificationMethod")),
        PROOF_FAILS,
    ),
    (
        "no proofPurpose",
        |p| drop(p.remove("proofPurpose")),
        PROOF_FAILS,
    ),
    (
        "no proofValue",
        |p| drop(p.remove("proofValue")),
        PROOF_FAILS,
    ),
    (
        "wrong proofPurpose",
        |p| drop(p.insert("proofPurpose".into(), "authentication".into())),
        PROOF_FAILS,
    ),
    (
        "broken previousProof",
        |p| drop(p.insert("previousProof".into(), "urn:uuid:not-a-proof-here".into())),
        PROOF_FAILS,
    ),
    (
        "other key",
        |p| {
            // A key no vector signs with (the employ vectors' issuer id).
            let vm = "did:key:zDnaegE6RR3atJtHKwTRTWHsJ3kNHqFwv7n9YjTgmU7TyfU76#zDnaegE6RR3atJtHKwTRTWHsJ3kNHqFwv7n9YjTgmU7TyfU76";
            p.insert("verificationMethod".into(), vm.into());
        },
        PROOF_FAILS,
    ),
    (
        "flipped signature",
        |p| {
            let v = p["proofValue"].as_str().unwrap().to_string();
            let last = if v.ends_with('2') { '3' } else { '2' };
            p.insert(
                "proofValue".into(),
                format!("{}{last}", &v[..v.len() - 1]).into(),
            );
        },
        &[
            ProblemType::ProofVerificationError,
            ProblemType::CryptographicSecurityError,
        ],
    ),
    (
        "created in the future",
        |p| drop(p.insert("created".into(), "2030-01-01T00:00:00Z".into())),
        PROOF_FAILS,
    ),
    (
        "expired proof",
        |p| drop(p.insert("expires".into(), "2025-01-01T00:00:00Z".into())),
        PROOF_FAILS,
    ),
];

type DocMutation = (&'static str, fn(&mut Value), &'static [ProblemType]);

/// Mutations of the document; the ones that change signed content fail the signature too,
/// the expected type must be among the problems.
const DOC_MUTATIONS: &[DocMutation] = &[
    (
        "changed claim",
        |d| {
            let subject = d["credentialSubject"].as_object_mut().unwrap();
            let key = subject
                .iter()
                .find(|(k, v)| *k != "id" && v.is_string())
                .map(|(k, _)| k.clone())
                .unwrap();
            let changed = format!("{}!", subject[&key].as_str().unwrap());
            subject.insert(key, changed.into());
        },
        PROOF_FAILS,
    ),
    (
        "added undefined term",
        |d| {
            drop(
                d.as_object_mut()
                    .unwrap()
                    .insert("undefinedTermAddedLater".into(), "x".into()),
            )
        },
        &[
            ProblemType::ProofVerificationError,
            ProblemType::MalformedValueError,
        ],
    ),
    (
        "added subject term",
        |d| {
            drop(
                d["credentialSubject"]
                    .as_object_mut()
                    .unwrap()
                    .insert("favoriteColor".into(), "blue".into()),
            )
        },
        &[
            ProblemType::ProofVerificationError,
            ProblemType::MalformedValueError,
        ],
    ),
    (
        "expired validUntil",
        |d| {
            drop(
                d.as_object_mut()
                    .unwrap()
                    .insert("validUntil".into(), "2025-06-01T00:00:00Z".into()),
            )
        },
        &[ProblemType::RangeError],
    ),
    (
        "not-yet-valid validFrom",
        |d| {
            drop(
                d.as_object_mut()
                    .unwrap()
                    .insert("validFrom".into(), "2027-01-01T00:00:00Z".into()),
            )
        },
        &[ProblemType::RangeError],
    ),
    (
        "revoked status",
        |d| {
            drop(d.as_object_mut().unwrap().insert(
                "credentialStatus".into(),
                json!({
                    "id": "https://openrail.example/status/1#7",
                    "type": "BitstringStatusListEntry",
                    "statusPurpose": "revocation",
                    "statusListIndex": "7",
                    "statusListCredential": "https://openrail.example/status/1"
                }),
            ))
        },
        &[ProblemType::RangeError],
    ),
];

fn revoked_lists() -> HashMap<String, StatusListSource> {
    let mut list = StatusList::new(MIN_STATUS_LIST_BITS).unwrap();
    list.set(7, true).unwrap();
    let source = StatusListSource::Trusted {
        status_purpose: "revocation".into(),
        list,
    };
    HashMap::from([("https://openrail.example/status/1".to_string(), source)])
}

fn assert_refused(name: &str, doc: &Value, options: &VerifyOptions<'_>, expected: &[ProblemType]) {
    let r = verify_credential(doc, options);
    assert!(!r.verified, "{name}: verified");
    assert!(!r.malformed, "{name}: should be 422, not 400");
    assert!(
        r.problem_details
            .iter()
            .any(|p| p.kind().is_some_and(|k| expected.contains(&k))),
        "{name}: expected one of {expected:?}, got {:#?}",
        r.problem_details
    );
}

#[test]
fn every_proof_mutation_of_every_vector_is_refused() {
    let options = VerifyOptions::new(NOW);
    let mut cases = 0;
    for v in VECTORS {
        let n = proofs_mut(&mut v.signed()).len();
        for i in 0..n {
            for (what, mutate, expected) in PROOF_MUTATIONS {
                let mut doc = v.signed();
                mutate(proofs_mut(&mut doc)[i]);
                assert_refused(
                    &format!("{} proof {i}: {what}", v.name),
                    &doc,
                    &options,
                    expected,
                );
                cases += 1;
            }
        }
    }
    assert!(cases >= VECTORS.len() * PROOF_MUTATIONS.len());
}

#[test]
fn every_document_mutation_of_every_vector_is_refused() {
    let lists = revoked_lists();
    let options = VerifyOptions {
        status_lists: Some(&lists),
        ..VerifyOptions::new(NOW)
    };
    for v in VECTORS {
        for (what, mutate, expected) in DOC_MUTATIONS {
            let mut doc = v.signed();
            mutate(&mut doc);
            assert_refused(&format!("{}: {what}", v.name), &doc, &options, expected);
        }
    }
}

#[test]
fn a_vector_judged_outside_its_validity_period_is_refused_for_that_alone() {
    // The employ vectors carry validFrom 2019-12-03 and validUntil 2029-12-03; the others
    // validFrom 2023-01-01. Unchanged documents, other clocks.
    for v in VECTORS {
        let doc = v.signed();
        if doc.get("validUntil").is_some() {
            let r = verify_credential(&doc, &VerifyOptions::new(datetime!(2030-01-01 00:00 UTC)));
            assert!(!r.verified, "{}", v.name);
            assert_eq!(
                r.problem_details.len(),
                1,
                "{}: {:#?}",
                v.name,
                r.problem_details
            );
            assert!(r.has(ProblemType::RangeError));
        }
    }
    let doc = VECTORS[0].signed();
    // Before validFrom (and before the proof was created: two problems).
    let r = verify_credential(&doc, &VerifyOptions::new(datetime!(2022-06-01 00:00 UTC)));
    assert!(!r.verified && r.has(ProblemType::RangeError));
}

#[test]
fn a_broken_previous_proof_in_a_chain_is_refused() {
    let v = VECTORS.iter().find(|v| v.name == "proof chain 2").unwrap();
    let mut doc = v.signed();
    proofs_mut(&mut doc)[2].insert(
        "previousProof".into(),
        json!([
            "urn:uuid:26329423-bec9-4b2e-88cb-a7c7d9dc4544",
            "urn:uuid:gone"
        ]),
    );
    let r = verify_credential(&doc, &VerifyOptions::new(NOW));
    assert!(!r.verified && r.has(ProblemType::ProofVerificationError));
    // Dropping a proof a chain points at breaks it too.
    let mut doc = v.signed();
    doc["proof"].as_array_mut().unwrap().remove(0);
    let r = verify_credential(&doc, &VerifyOptions::new(NOW));
    assert!(!r.verified);
    assert!(
        r.problem_details
            .iter()
            .any(|p| p.title == "Broken proof chain"),
        "{:#?}",
        r.problem_details
    );
}
