//! `/v1/identity/attestations` end to end: a credential Openrail issued, or one posted
//! whole and verified, attested on the attestation chain (B) by its engine — the registry's
//! `isValid(operator, wallet, schema)` turns true and nothing is sent on the settlement
//! chain (A); revoked through the API or by revoking the credential; events in order; an
//! unverifiable credential refused with its verification.

use alloy::primitives::{Address, B256};
use alloy::providers::{DynProvider, Provider};
use openrail_chain::attestations::{CREDENTIAL_SCHEMA, credential_schema_uid};
use openrail_chain::bindings::AttestationRegistry;
use openrail_chain::devnet::dev_operator;
use openrail_tests::Harness;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The events of `object_id`, oldest first, as (type, the object's status then).
async fn trail(h: &Harness, object_id: &str) -> anyhow::Result<Vec<(String, String)>> {
    let r = h
        .get(&format!("/v1/events?object_id={object_id}&limit=100"))
        .await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let mut out: Vec<(String, String)> = r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            assert_eq!(e["data"]["object"]["id"], object_id, "{e}");
            (
                e["type"].as_str().unwrap().to_string(),
                e["data"]["object"]["status"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    out.reverse();
    Ok(out)
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// The attestation chain, read.
fn chain_b(h: &Harness) -> anyhow::Result<(DynProvider, Address)> {
    let b = &h.devnet.manifest.attestation;
    let provider = openrail_chain::tls::reader(&b.rpc_url.parse()?)?;
    Ok((provider, b.attestation_registry.expect("a registry")))
}

/// Openrail issues a credential about `subject`; returns it signed.
async fn issue(h: &Harness, subject: &str) -> anyhow::Result<Value> {
    let r = h
        .post(
            "/v1/identity/credentials/issue",
            json!({ "credential": {
                "@context": ["https://www.w3.org/ns/credentials/v2", "https://www.w3.org/ns/credentials/examples/v2"],
                "type": ["VerifiableCredential", "ExampleAlumniCredential"],
                "credentialSubject": { "id": subject, "alumniOf": "Example University" },
            } }),
        )
        .await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    Ok(r.body["verifiableCredential"].clone())
}

async fn is_valid(h: &Harness, wallet: Address) -> anyhow::Result<bool> {
    let (p, registry) = chain_b(h)?;
    Ok(AttestationRegistry::new(registry, p)
        .isValid(dev_operator().address(), wallet, credential_schema_uid())
        .call()
        .await?)
}

#[tokio::test]
async fn credentials_are_attested_on_the_second_chain_and_revoked_there() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let operator = dev_operator().address();
    let sent_on_a = h.settlement.get_transaction_count(operator).await?;

    // The schema is registered at deployment, under the uid the code derives.
    let (b, registry) = chain_b(&h)?;
    let schema = AttestationRegistry::new(registry, &b)
        .getSchema(credential_schema_uid())
        .call()
        .await?;
    assert_eq!(schema.uid, credential_schema_uid());
    assert_eq!(schema.schema, CREDENTIAL_SCHEMA);

    // From a credential this account issued (subject: a did:pkh wallet).
    let alice: Address = "0x00000000000000000000000000000000000a11ce".parse()?;
    let vc = issue(&h, &format!("did:pkh:eip155:1:{alice}")).await?;
    let credential_id = vc["id"].as_str().unwrap().to_string();
    assert!(!is_valid(&h, alice).await?);
    let r = h
        .post(
            "/v1/identity/attestations",
            json!({ "credential_id": credential_id }),
        )
        .await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let att = r.body.clone();
    let id = att["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("att_"));
    assert_eq!(att["object"], "identity_attestation");
    assert_eq!(att["status"], "active", "{att}");
    assert_eq!(att["recipient"], alice.to_checksum(None));
    assert_eq!(att["credential_id"], credential_id.as_str());
    assert_eq!(att["issuer"], vc["issuer"]);
    assert_eq!(att["credential_type"], "ExampleAlumniCredential");
    assert_eq!(
        att["status_list_credential"],
        vc["credentialStatus"]["statusListCredential"]
    );
    assert_eq!(
        att["status_list_index"].as_u64().map(|i| i.to_string()),
        vc["credentialStatus"]["statusListIndex"]
            .as_str()
            .map(str::to_string)
    );
    assert_eq!(att["chain_id"], h.devnet.manifest.attestation.chain_id);
    assert_eq!(att["schema"], credential_schema_uid().to_string());
    // No claims in the record.
    assert!(!att.to_string().contains("Example University"), "{att}");
    assert!(is_valid(&h, alice).await?);
    // The uid is the registry's: the attestation it names is the operator's, about alice.
    let uid: B256 = att["uid"].as_str().expect("a uid once active").parse()?;
    let onchain = AttestationRegistry::new(registry, &b)
        .getAttestation(uid)
        .call()
        .await?;
    assert_eq!((onchain.recipient, onchain.attester), (alice, operator));
    // Nothing was sent on the settlement chain.
    assert_eq!(
        h.settlement.get_transaction_count(operator).await?,
        sent_on_a
    );

    // Retrieve, list by subject (both spellings), paginate.
    let got = h.get(&format!("/v1/identity/attestations/{id}")).await?;
    assert_eq!(got.status, StatusCode::OK, "{}", got.body);
    assert_eq!(got.body, att);
    let listed = h
        .get(&format!("/v1/identity/attestations?subject={alice}"))
        .await?;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    assert_eq!(listed.body["data"][0]["id"], id.as_str());
    let other = h
        .get("/v1/identity/attestations?subject=0x00000000000000000000000000000000000b0b00")
        .await?;
    assert_eq!(other.body["data"], json!([]));
    let bad = h
        .get("/v1/identity/attestations?subject=did:key:z6Mk")
        .await?;
    assert_eq!(
        (bad.status, bad.body["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("subject"))
    );

    // Revoked through the API: on chain, and in the API.
    let revoked = h
        .post(&format!("/v1/identity/attestations/{id}/revoke"), json!({}))
        .await?;
    assert_eq!(revoked.status, StatusCode::OK, "{}", revoked.body);
    assert_eq!(revoked.body["status"], "revoked");
    assert!(revoked.body["revoked_at"].is_string());
    assert!(!is_valid(&h, alice).await?);
    assert!(
        AttestationRegistry::new(registry, &b)
            .getAttestation(uid)
            .call()
            .await?
            .revocationTime
            > 0
    );
    assert_eq!(
        trail(&h, &id).await?,
        pairs(&[
            ("identity.attestation.pending", "pending"),
            ("identity.attestation.active", "active"),
            ("identity.attestation.revoked", "revoked"),
        ])
    );

    // From a posted credential: verified first, then attested; revoking the credential
    // (Openrail issued it, so the attestation is linked) revokes the attestation.
    let bob: Address = "0x0000000000000000000000000000000000000b0b".parse()?;
    let vc = issue(&h, &format!("did:pkh:eip155:1:{bob}")).await?;
    let r = h
        .post(
            "/v1/identity/attestations",
            json!({ "verifiableCredential": vc }),
        )
        .await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["status"], "active");
    assert_eq!(r.body["credential_id"], vc["id"]);
    let bob_att = r.body["id"].as_str().unwrap().to_string();
    assert!(is_valid(&h, bob).await?);
    let status = h
        .post(
            "/v1/identity/credentials/status",
            json!({ "credentialId": vc["id"], "status": true }),
        )
        .await?;
    assert_eq!(status.status, StatusCode::OK, "{}", status.body);
    let mut revoked = false;
    for _ in 0..100 {
        let a = h
            .get(&format!("/v1/identity/attestations/{bob_att}"))
            .await?;
        if a.body["status"] == "revoked" {
            revoked = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        revoked,
        "the credential's revocation revokes its attestation"
    );
    assert!(!is_valid(&h, bob).await?);
    // A revoked credential is not attested again.
    let again = h
        .post(
            "/v1/identity/attestations",
            json!({ "credential_id": vc["id"] }),
        )
        .await?;
    assert_eq!(
        (again.status, again.code()),
        (StatusCode::CONFLICT, "credential_revoked")
    );

    // A credential that does not verify (its subject changed after signing): 422 with the
    // verification, nothing written or sent.
    let carol = format!("did:pkh:eip155:1:0x{}", "c".repeat(40));
    let mut forged = issue(&h, &carol).await?;
    forged["credentialSubject"]["id"] = json!(format!("did:pkh:eip155:1:0x{}", "d".repeat(40)));
    let r = h
        .post(
            "/v1/identity/attestations",
            json!({ "verifiableCredential": forged }),
        )
        .await?;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(r.body["verified"], false);
    // A posted credential whose subject is a bare address: the address is no IRI, so its
    // proof does not cover it (it verifies even when swapped); it does not name the wallet.
    let mut swapped = issue(&h, &format!("0x{}", "e".repeat(40))).await?;
    swapped["credentialSubject"]["id"] = json!(format!("0x{}", "f".repeat(40)));
    let r = h
        .post(
            "/v1/identity/attestations",
            json!({ "verifiableCredential": swapped }),
        )
        .await?;
    assert_eq!(
        (r.status, r.body["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("recipient")),
        "{}",
        r.body
    );
    // A subject that is no wallet, and no recipient named: 400.
    let vc = issue(&h, "did:example:dave").await?;
    let r = h
        .post(
            "/v1/identity/attestations",
            json!({ "credential_id": vc["id"] }),
        )
        .await?;
    assert_eq!(
        (r.status, r.body["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("recipient"))
    );
    // Both or neither source: 400; an unknown credential: 404.
    let r = h
        .post(
            "/v1/identity/attestations",
            json!({ "credential_id": vc["id"], "verifiableCredential": vc }),
        )
        .await?;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let r = h.post("/v1/identity/attestations", json!({})).await?;
    assert_eq!(r.code(), "parameter_missing");
    let r = h
        .post(
            "/v1/identity/attestations",
            json!({ "credential_id": "urn:uuid:00000000-0000-4000-8000-000000000000" }),
        )
        .await?;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let listed = h.get("/v1/identity/attestations").await?;
    assert_eq!(listed.body["data"].as_array().unwrap().len(), 2);

    // Still nothing sent on the settlement chain.
    assert_eq!(
        h.settlement.get_transaction_count(operator).await?,
        sent_on_a
    );
    Ok(())
}
