//! `/v1/identity` end to end: W3C vectors verified through the API (and refused once
//! changed), verification without a key, Openrail issuing a credential with a status entry,
//! its revocation seen through the public status list, and presentations with single-use
//! challenges.

use openrail_identity::ed25519_dalek::SigningKey;
use openrail_identity::{did_key_from_ed25519_public, did_key_verification_method};
use openrail_tests::Harness;
use reqwest::StatusCode;
use serde_json::{Value, json};

const ALUMNI: &str =
    include_str!("../../../identity/tests/vectors/vc-di-eddsa/eddsa-rdfc-2022/signedDataInt.json");
const JCS: &str =
    include_str!("../../../identity/tests/vectors/vc-di-eddsa/eddsa-jcs-2022/signedJCS.json");
const P384: &str = include_str!(
    "../../../identity/tests/vectors/vc-di-ecdsa/ecdsa-rdfc-2019-p384/signedECDSAP384.json"
);

fn vector(text: &str) -> Value {
    serde_json::from_str(text).expect("a vector is JSON")
}

fn problem_types(body: &Value) -> Vec<String> {
    body["problemDetails"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p["type"].as_str())
                .map(|t| t.rsplit('#').next().unwrap_or(t).to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn w3c_vectors_verify_and_their_mutations_are_refused() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    for text in [ALUMNI, JCS, P384] {
        let vc = vector(text);
        let ok = h
            .post(
                "/v1/identity/credentials/verify",
                json!({ "verifiableCredential": vc, "options": { "checks": ["proof"] } }),
            )
            .await?;
        assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
        assert_eq!(ok.body["verified"], true);
        assert_eq!(ok.body["problemDetails"], json!([]));

        // A changed claim, an added undefined term, another cryptosuite: 422, not verified.
        let mut changed = vc.clone();
        changed["credentialSubject"]["id"] = json!("did:example:mallory");
        let mut added = vc.clone();
        added["credentialSubject"]["undefinedTerm"] = json!("added after signing");
        let mut suite = vc.clone();
        suite["proof"]["cryptosuite"] = json!("eddsa-rdfc-2019");
        let mut unproved = vc.clone();
        unproved["proof"]
            .as_object_mut()
            .unwrap()
            .remove("proofValue");
        for bad in [changed, added, suite, unproved] {
            let r = h
                .post(
                    "/v1/identity/credentials/verify",
                    json!({ "verifiableCredential": bad }),
                )
                .await?;
            assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
            assert_eq!(r.body["verified"], false);
            assert!(!problem_types(&r.body).is_empty(), "{}", r.body);
        }
    }
    // Not a credential at all, or no body member: 400 with the parameter named.
    let r = h
        .post(
            "/v1/identity/credentials/verify",
            json!({ "verifiableCredential": { "hello": 1 } }),
        )
        .await?;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert_eq!(r.body["param"], "verifiableCredential");
    let r = h.post("/v1/identity/credentials/verify", json!({})).await?;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::BAD_REQUEST, "parameter_missing")
    );

    // Without a key: verified as well (public verifiers are), and rate-limited per address.
    let anon = reqwest::Client::new();
    let url = format!("{}/v1/identity/credentials/verify", h.server().base_url);
    let res = anon
        .post(&url)
        .json(&json!({ "verifiableCredential": vector(ALUMNI) }))
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::OK);
    // Other operations still need a key.
    let res = anon
        .post(format!("{}/v1/identity/challenges", h.server().base_url))
        .json(&json!({}))
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    let mut limited = false;
    for _ in 0..80 {
        let res = anon
            .post(&url)
            .json(&json!({ "verifiableCredential": {} }))
            .send()
            .await?;
        if res.status() == StatusCode::TOO_MANY_REQUESTS {
            assert!(res.headers().contains_key("retry-after"));
            limited = true;
            break;
        }
    }
    assert!(
        limited,
        "anonymous verification is rate-limited per address"
    );
    // A key is never limited by the anonymous budget.
    let r = h
        .post(
            "/v1/identity/credentials/verify",
            json!({ "verifiableCredential": vector(ALUMNI) }),
        )
        .await?;
    assert_eq!(r.status, StatusCode::OK);
    Ok(())
}

#[tokio::test]
async fn issued_credentials_verify_until_revoked_through_the_public_status_list()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let unsigned = json!({
        "@context": ["https://www.w3.org/ns/credentials/v2", "https://www.w3.org/ns/credentials/examples/v2"],
        "type": ["VerifiableCredential", "ExampleAlumniCredential"],
        "credentialSubject": { "id": "did:example:alice", "alumniOf": "Example University" },
    });
    let issued = h
        .post(
            "/v1/identity/credentials/issue",
            json!({ "credential": unsigned }),
        )
        .await?;
    assert_eq!(issued.status, StatusCode::CREATED, "{}", issued.body);
    let vc = issued.body["verifiableCredential"].clone();
    let issuer = vc["issuer"].as_str().unwrap().to_string();
    assert!(issuer.starts_with("did:key:z6Mk"), "{issuer}");
    assert_eq!(vc["proof"]["cryptosuite"], "eddsa-rdfc-2022");
    assert_eq!(vc["credentialStatus"]["type"], "BitstringStatusListEntry");
    let id = vc["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("urn:uuid:"));

    // The same issuer signs the next one; an id issued before is 409.
    let again = h
        .post("/v1/identity/credentials/issue", json!({ "credential": { "id": id, "@context": ["https://www.w3.org/ns/credentials/v2"], "type": ["VerifiableCredential"], "credentialSubject": { "id": "did:example:bob" } } }))
        .await?;
    assert_eq!(
        (again.status, again.code()),
        (StatusCode::CONFLICT, "credential_exists")
    );
    // What the issuer adds may not be given; VC 1.1 is not issued.
    for (credential, param) in [
        (
            json!({ "@context": ["https://www.w3.org/2018/credentials/v1"], "type": ["VerifiableCredential"], "credentialSubject": {} }),
            "credential.@context",
        ),
        (
            json!({ "@context": ["https://www.w3.org/ns/credentials/v2"], "type": ["VerifiableCredential"], "credentialSubject": {}, "proof": {} }),
            "credential.proof",
        ),
        (
            json!({ "@context": ["https://www.w3.org/ns/credentials/v2"], "type": ["VerifiableCredential"], "credentialSubject": {}, "issuer": "did:example:someone-else" }),
            "credential.issuer",
        ),
    ] {
        let r = h
            .post(
                "/v1/identity/credentials/issue",
                json!({ "credential": credential }),
            )
            .await?;
        assert_eq!(
            (r.status, r.body["param"].as_str()),
            (StatusCode::BAD_REQUEST, Some(param)),
            "{}",
            r.body
        );
    }

    // The URL signed into the credential is the server's own, whatever `Host` a client
    // sends (else a client could make Openrail sign a list URL of its choosing).
    let base = h.server().base_url.clone();
    assert!(
        vc["credentialStatus"]["statusListCredential"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{base}/v1/identity/status-lists/sl_")),
        "{}",
        vc["credentialStatus"]
    );
    let spoofed: Value = reqwest::Client::new()
        .post(format!("{base}/v1/identity/credentials/issue"))
        .bearer_auth(&h.server().api_key)
        .header("host", "evil.example")
        .json(&json!({ "credential": { "@context": ["https://www.w3.org/ns/credentials/v2"], "type": ["VerifiableCredential"], "credentialSubject": { "id": "did:example:carol" } } }))
        .send()
        .await?
        .json()
        .await?;
    let url = spoofed["verifiableCredential"]["credentialStatus"]["statusListCredential"]
        .as_str()
        .unwrap_or_default();
    assert!(url.starts_with(&base), "{url}");

    let verify = |vc: Value| {
        let h = &h;
        async move {
            h.post(
                "/v1/identity/credentials/verify",
                json!({ "verifiableCredential": vc }),
            )
            .await
        }
    };
    let ok = verify(vc.clone()).await?;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    assert_eq!(ok.body["results"]["status"][0]["status"], false);

    // The public list: signed by the issuer, cacheable, no key needed; it verifies too.
    let list_url = vc["credentialStatus"]["statusListCredential"]
        .as_str()
        .unwrap()
        .to_string();
    let res = reqwest::get(&list_url).await?;
    assert_eq!(res.status(), StatusCode::OK);
    assert!(
        res.headers()["cache-control"]
            .to_str()?
            .contains("max-age=")
    );
    let list: Value = res.json().await?;
    assert_eq!(list["issuer"], issuer.as_str());
    assert_eq!(list["credentialSubject"]["statusPurpose"], "revocation");
    assert!(
        list["credentialSubject"]["encodedList"]
            .as_str()
            .unwrap()
            .starts_with('u')
    );
    let r = verify(list.clone()).await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    // Revoked: the status list says so, and the credential no longer verifies.
    let revoked = h
        .post("/v1/identity/credentials/status", json!({ "credentialId": id, "credentialStatus": { "type": "BitstringStatusListEntry", "statusPurpose": "revocation" }, "status": true }))
        .await?;
    assert_eq!(revoked.status, StatusCode::OK, "{}", revoked.body);
    assert_eq!(revoked.body["status"], "revoked");
    let r = verify(vc.clone()).await?;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(problem_types(&r.body), ["RANGE_ERROR"]);
    let list: Value = reqwest::get(&list_url).await?.json().await?;
    let bits = openrail_identity::StatusList::decode(
        list["credentialSubject"]["encodedList"].as_str().unwrap(),
    )?;
    let index: u64 = vc["credentialStatus"]["statusListIndex"]
        .as_str()
        .unwrap()
        .parse()?;
    assert!(bits.get(index)?);
    // Final: un-revoking is 409; another account cannot touch it.
    let back = h
        .post(
            "/v1/identity/credentials/status",
            json!({ "credentialId": id, "status": false }),
        )
        .await?;
    assert_eq!(
        (back.status, back.code()),
        (StatusCode::CONFLICT, "credential_revoked")
    );
    let unknown = h
        .post(
            "/v1/identity/credentials/status",
            json!({ "credentialId": "urn:uuid:nobody" }),
        )
        .await?;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    let missing = reqwest::get(format!(
        "{}/v1/identity/status-lists/sl_nope",
        h.server().base_url
    ))
    .await?;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    Ok(())
}

#[tokio::test]
async fn presentations_need_a_fresh_challenge_of_this_server() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let holder = SigningKey::from_bytes(&[7u8; 32]);
    let did = did_key_from_ed25519_public(&holder.verifying_key());
    let vm = did_key_verification_method(&did);
    let ch = h
        .post(
            "/v1/identity/challenges",
            json!({ "domain": "shop.example" }),
        )
        .await?;
    assert_eq!(ch.status, StatusCode::CREATED, "{}", ch.body);
    let challenge = ch.body["challenge"].as_str().unwrap().to_string();
    let vp = |challenge: &str, domain: &str| {
        openrail_identity::sign_presentation(
            json!({
                "@context": ["https://www.w3.org/ns/credentials/v2"],
                "type": ["VerifiablePresentation"],
                "holder": did,
                "verifiableCredential": [vector(ALUMNI)],
            }),
            &holder,
            &vm,
            time::OffsetDateTime::now_utc() - time::Duration::seconds(5),
            challenge,
            domain,
        )
        .expect("a presentation signs")
    };
    let signed = vp(&challenge, "shop.example");
    let body = json!({ "verifiablePresentation": signed, "options": { "challenge": challenge, "domain": "shop.example" } });
    let ok = h
        .post("/v1/identity/presentations/verify", body.clone())
        .await?;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    assert_eq!(ok.body["verified"], true);
    // The same presentation again: its challenge is used up.
    let replay = h.post("/v1/identity/presentations/verify", body).await?;
    assert_eq!(replay.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(problem_types(&replay.body), ["INVALID_CHALLENGE_ERROR"]);
    // A challenge this server never gave, or a domain other than the challenge's.
    let made_up = vp("chl_madeup", "shop.example");
    let r = h
        .post(
            "/v1/identity/presentations/verify",
            json!({ "verifiablePresentation": made_up, "options": { "challenge": "chl_madeup" } }),
        )
        .await?;
    assert_eq!(problem_types(&r.body), ["INVALID_CHALLENGE_ERROR"]);
    let fresh = h
        .post(
            "/v1/identity/challenges",
            json!({ "domain": "shop.example" }),
        )
        .await?;
    let c2 = fresh.body["challenge"].as_str().unwrap().to_string();
    let elsewhere = vp(&c2, "evil.example");
    let r = h
        .post("/v1/identity/presentations/verify", json!({ "verifiablePresentation": elsewhere, "options": { "challenge": c2, "domain": "evil.example" } }))
        .await?;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(problem_types(&r.body), ["INVALID_DOMAIN_ERROR"]);
    Ok(())
}
