//! Issued credentials and presentations round-trip; status bits, validity, challenge and
//! domain, v1 dropped terms, did:web from the cache.

use std::collections::HashMap;

use openrail_identity::ed25519_dalek::SigningKey;
use openrail_identity::{
    MIN_STATUS_LIST_BITS, ProblemType, StatusList, StatusListSource, VerifyOptions,
    did_key_from_ed25519_public, did_key_verification_method, issue_credential, sign_presentation,
    verify_credential, verify_presentation,
};
use serde_json::{Value, json};
use time::macros::datetime;

use crate::common::NOW;

const LIST_URL: &str = "https://openrail.example/v1/status-lists/revocation/1";
const CREATED: time::OffsetDateTime = datetime!(2025-11-01 12:00:00.5 UTC);

fn issuer() -> (SigningKey, String, String) {
    let key = SigningKey::from_bytes(&[42; 32]);
    let did = did_key_from_ed25519_public(&key.verifying_key());
    let vm = did_key_verification_method(&did);
    (key, did, vm)
}

fn unsigned(did: &str, index: u64) -> Value {
    json!({
        "@context": ["https://www.w3.org/ns/credentials/v2", "https://www.w3.org/ns/credentials/examples/v2"],
        "id": "urn:uuid:0b1e7f6a-3c5e-4f7e-9d2b-8a4c1e2f3a4b",
        "type": ["VerifiableCredential", "PaymentMandateCredential"],
        "issuer": did,
        "validFrom": "2025-11-01T00:00:00Z",
        "validUntil": "2027-11-01T00:00:00Z",
        "credentialSubject": {"id": "did:example:payer", "mandate": "mandate_123", "limit": "100.00 USD"},
        "credentialStatus": {
            "id": format!("{LIST_URL}#{index}"),
            "type": "BitstringStatusListEntry",
            "statusPurpose": "revocation",
            "statusListIndex": index.to_string(),
            "statusListCredential": LIST_URL
        }
    })
}

fn trusted(list: StatusList) -> HashMap<String, StatusListSource> {
    HashMap::from([(
        LIST_URL.to_string(),
        StatusListSource::Trusted {
            status_purpose: "revocation".into(),
            list,
        },
    )])
}

#[test]
fn an_issued_credential_verifies_until_its_status_bit_is_set() {
    let (key, did, vm) = issuer();
    let vc = issue_credential(unsigned(&did, 94_567), &key, &vm, CREATED).unwrap();
    assert_eq!(vc["proof"]["cryptosuite"], "eddsa-rdfc-2022");
    assert_eq!(vc["proof"]["proofPurpose"], "assertionMethod");
    assert_eq!(vc["proof"]["created"], "2025-11-01T12:00:00Z");

    let mut list = StatusList::new(MIN_STATUS_LIST_BITS).unwrap();
    let lists = trusted(list.clone());
    let options = VerifyOptions {
        status_lists: Some(&lists),
        ..VerifyOptions::new(NOW)
    };
    let r = verify_credential(&vc, &options);
    assert!(r.verified, "{:#?}", r.problem_details);
    assert_eq!(r.results.status[0].status, Some(false));

    list.set(94_567, true).unwrap();
    let lists = trusted(list);
    let options = VerifyOptions {
        status_lists: Some(&lists),
        ..VerifyOptions::new(NOW)
    };
    let r = verify_credential(&vc, &options);
    assert!(!r.verified);
    assert_eq!(r.problem_details.len(), 1, "{:#?}", r.problem_details);
    assert!(r.has(ProblemType::RangeError));
    assert_eq!(r.results.status[0].status, Some(true));

    // No resolver, or a list it does not know: refused, never fetched.
    let r = verify_credential(&vc, &VerifyOptions::new(NOW));
    assert!(!r.verified && r.has(ProblemType::MalformedValueError));
    let other: HashMap<String, StatusListSource> = HashMap::new();
    let r = verify_credential(
        &vc,
        &VerifyOptions {
            status_lists: Some(&other),
            ..VerifyOptions::new(NOW)
        },
    );
    assert!(!r.verified);
}

#[test]
fn a_status_list_credential_is_verified_before_it_is_read() {
    let (key, did, vm) = issuer();
    let vc = issue_credential(unsigned(&did, 3), &key, &vm, CREATED).unwrap();
    let list_vc = |list: &StatusList| {
        issue_credential(
            json!({
                "@context": ["https://www.w3.org/ns/credentials/v2"],
                "id": LIST_URL,
                "type": ["VerifiableCredential", "BitstringStatusListCredential"],
                "issuer": did,
                "validFrom": "2025-11-01T00:00:00Z",
                "credentialSubject": {
                    "id": format!("{LIST_URL}#list"),
                    "type": "BitstringStatusList",
                    "statusPurpose": "revocation",
                    "encodedList": list.encode()
                }
            }),
            &key,
            &vm,
            CREATED,
        )
        .unwrap()
    };
    let mut list = StatusList::new(MIN_STATUS_LIST_BITS).unwrap();
    for (bit, verified) in [(false, true), (true, false)] {
        list.set(3, bit).unwrap();
        let lists = HashMap::from([(
            LIST_URL.to_string(),
            StatusListSource::Credential(list_vc(&list)),
        )]);
        let r = verify_credential(
            &vc,
            &VerifyOptions {
                status_lists: Some(&lists),
                ..VerifyOptions::new(NOW)
            },
        );
        assert_eq!(r.verified, verified, "bit {bit}: {:#?}", r.problem_details);
    }
    // A tampered list credential is not read.
    let mut forged = list_vc(&StatusList::new(MIN_STATUS_LIST_BITS).unwrap());
    forged["credentialSubject"]["encodedList"] = list.encode().into();
    let lists = HashMap::from([(LIST_URL.to_string(), StatusListSource::Credential(forged))]);
    let r = verify_credential(
        &vc,
        &VerifyOptions {
            status_lists: Some(&lists),
            ..VerifyOptions::new(NOW)
        },
    );
    assert!(!r.verified);
    assert!(
        r.problem_details
            .iter()
            .any(|p| p.title == "Status list does not verify"),
        "{:#?}",
        r.problem_details
    );
}

#[test]
fn validity_is_judged_at_the_given_now_only() {
    let (key, did, vm) = issuer();
    let mut doc = unsigned(&did, 0);
    doc.as_object_mut().unwrap().remove("credentialStatus");
    let vc = issue_credential(doc, &key, &vm, CREATED).unwrap();
    assert!(verify_credential(&vc, &VerifyOptions::new(NOW)).verified);
    let late = verify_credential(&vc, &VerifyOptions::new(datetime!(2028-01-01 00:00 UTC)));
    assert!(!late.verified && late.has(ProblemType::RangeError) && late.problem_details.len() == 1);
    // Before validFrom but after the proof's creation is impossible here; judge before both.
    let early = verify_credential(&vc, &VerifyOptions::at_unix(1_700_000_000));
    assert!(!early.verified && early.has(ProblemType::RangeError));
}

#[test]
fn a_v1_credential_with_a_term_added_after_signing_is_refused() {
    let (key, did, vm) = issuer();
    let doc = json!({
        "@context": [
            "https://www.w3.org/2018/credentials/v1",
            "https://w3id.org/security/data-integrity/v2",
            "https://www.w3.org/2018/credentials/examples/v1"
        ],
        "id": "http://example.edu/credentials/1872",
        "type": ["VerifiableCredential", "AlumniCredential"],
        "issuer": did,
        "issuanceDate": "2025-01-01T00:00:00Z",
        "expirationDate": "2027-01-01T00:00:00Z",
        "credentialSubject": {"id": "did:example:ebfeb1f712ebc6f1c276e12ec21", "alumniOf": "Example University"}
    });
    let vc = issue_credential(doc, &key, &vm, CREATED).unwrap();
    let r = verify_credential(&vc, &VerifyOptions::new(NOW));
    assert!(r.verified, "{:#?}", r.problem_details);
    // An undefined term: JSON-LD expansion with v1 contexts would drop it and the signature
    // would still match; it must fail.
    let mut added = vc.clone();
    added["credentialSubject"]["notInAnyContext"] = "surprise".into();
    let r = verify_credential(&added, &VerifyOptions::new(NOW));
    assert!(
        !r.verified && r.has(ProblemType::MalformedValueError),
        "{:#?}",
        r.problem_details
    );
    let mut added = vc;
    added["unsignedTopLevel"] = json!({"a": 1});
    let r = verify_credential(&added, &VerifyOptions::new(NOW));
    assert!(
        !r.verified && r.has(ProblemType::MalformedValueError),
        "{:#?}",
        r.problem_details
    );
    // Issuing such a document is refused as well.
    let (key, did, vm) = issuer();
    let bad = json!({
        "@context": ["https://www.w3.org/2018/credentials/v1", "https://w3id.org/security/data-integrity/v2"],
        "type": ["VerifiableCredential"], "issuer": did, "issuanceDate": "2025-01-01T00:00:00Z",
        "credentialSubject": {"id": "did:example:x", "undefinedClaim": 1}
    });
    assert!(issue_credential(bad, &key, &vm, CREATED).is_err());
}

#[test]
fn did_web_verification_methods_come_from_the_allow_list() {
    let key = SigningKey::from_bytes(&[9; 32]);
    let did = "did:web:issuer.openrail.example";
    let vm = format!("{did}#key-1");
    let public = openrail_identity::PublicKey::Ed25519(key.verifying_key()).to_multibase();
    let document = json!({
        "@context": ["https://www.w3.org/ns/did/v1", "https://w3id.org/security/multikey/v1"],
        "id": did,
        "verificationMethod": [{"id": vm, "type": "Multikey", "controller": did, "publicKeyMultibase": public}],
        "assertionMethod": [vm]
    });
    let mut doc = unsigned(did, 0);
    doc.as_object_mut().unwrap().remove("credentialStatus");
    let vc = issue_credential(doc, &key, &vm, CREATED).unwrap();
    let r = verify_credential(&vc, &VerifyOptions::new(NOW));
    assert!(!r.verified && r.has(ProblemType::ProofVerificationError));
    let cache = HashMap::from([(did.to_string(), document)]);
    let r = verify_credential(
        &vc,
        &VerifyOptions {
            did_web: Some(&cache),
            ..VerifyOptions::new(NOW)
        },
    );
    assert!(r.verified, "{:#?}", r.problem_details);
}

fn presentation(vc: Value, holder: &str) -> Value {
    json!({
        "@context": ["https://www.w3.org/ns/credentials/v2"],
        "type": ["VerifiablePresentation"],
        "holder": holder,
        "verifiableCredential": [vc]
    })
}

#[test]
fn presentations_check_challenge_domain_and_each_credential() {
    let (key, did, vm) = issuer();
    let mut doc = unsigned(&did, 0);
    doc.as_object_mut().unwrap().remove("credentialStatus");
    let vc = issue_credential(doc, &key, &vm, CREATED).unwrap();
    let holder = SigningKey::from_bytes(&[5; 32]);
    let holder_did = did_key_from_ed25519_public(&holder.verifying_key());
    let holder_vm = did_key_verification_method(&holder_did);
    let vp = sign_presentation(
        presentation(vc.clone(), &holder_did),
        &holder,
        &holder_vm,
        CREATED,
        "c-123",
        "openrail.example",
    )
    .unwrap();
    assert_eq!(vp["proof"]["proofPurpose"], "authentication");

    let at = |challenge, domain| VerifyOptions {
        challenge,
        domain,
        ..VerifyOptions::new(NOW)
    };
    let r = verify_presentation(&vp, &at(Some("c-123"), Some("openrail.example")));
    assert!(r.verified, "{:#?}", r.problem_details);
    assert_eq!(r.results.credentials.len(), 1);
    assert!(r.results.credentials[0].verified);

    let r = verify_presentation(&vp, &at(Some("c-999"), Some("openrail.example")));
    assert!(!r.verified && r.has(ProblemType::InvalidChallengeError));
    let r = verify_presentation(&vp, &at(Some("c-123"), Some("evil.example")));
    assert!(!r.verified && r.has(ProblemType::InvalidDomainError));

    // A credential proof purpose is not a presentation's.
    let as_vc = sign_presentation(
        presentation(vc.clone(), &holder_did),
        &holder,
        &holder_vm,
        CREATED,
        "c-123",
        "d",
    )
    .map(|mut p| {
        p["proof"]["proofPurpose"] = "assertionMethod".into();
        p
    })
    .unwrap();
    assert!(!verify_presentation(&as_vc, &at(Some("c-123"), None)).verified);

    // A tampered embedded credential fails the presentation, and its proof too.
    let mut tampered_vc = vc;
    tampered_vc["credentialSubject"]["limit"] = "1000000.00 USD".into();
    let vp = sign_presentation(
        presentation(tampered_vc, &holder_did),
        &holder,
        &holder_vm,
        CREATED,
        "c-123",
        "d",
    )
    .unwrap();
    let r = verify_presentation(&vp, &at(Some("c-123"), Some("d")));
    assert!(!r.verified && !r.results.credentials[0].verified);
    assert!(
        r.results.proofs[0].verified,
        "the holder's own proof is fine"
    );

    // Not a presentation at all.
    let r = verify_presentation(
        &json!({"@context": ["https://www.w3.org/ns/credentials/v2"]}),
        &at(None, None),
    );
    assert!(r.malformed);
}
