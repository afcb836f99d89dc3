//! Agent credentials (`/v1/session-keys/{id}/credential`) end to end: a key with a signer
//! gets one `AgentCredential` (201, then 200 with the same credential), whose claims name
//! the agent, the payer, the mandate, the key and the ceiling that binds it, valid no
//! longer than the key, which verifies through `POST /v1/identity/credentials/verify`
//! until the key is revoked or its mandate canceled (then 422: revoked); a key without a
//! signer, or one that can no longer pull, is refused; the key's own secret may read it
//! but not issue it. Every answer is checked against the OpenAPI document.

use alloy::primitives::{Address, keccak256};
use alloy::signers::local::PrivateKeySigner;
use openrail_chain::devnet::dev_demo_payer;
use openrail_tests::{Harness, Reply};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::openapi::assert_documented;

const PATH: &str = "/v1/session-keys/{id}/credential";

fn payee() -> Address {
    Address::from_slice(&keccak256("agent-credential-payee")[12..])
}

/// An active wallet mandate of 100 USD a week from `payer` to [`payee`].
async fn mandate(h: &Harness, payer: &PrivateKeySigner) -> anyhow::Result<Value> {
    h.remember(payer);
    let m = h
        .post_authorized(
            "/v1/mandates",
            json!({"payer_account_id": payer.address().to_string(), "max_amount": "100",
                   "currency": "USD", "interval": "weekly", "payees": [payee().to_string()]}),
        )
        .await?;
    assert_eq!(m.str("status"), "active", "{}", m.body);
    Ok(m.body)
}

/// A key on `mandate` (created and on chain) with `extra` members.
async fn key(h: &Harness, mandate: &Value, extra: Value) -> anyhow::Result<Value> {
    let mut body = json!({"mandate_id": mandate["id"], "expires_in": 3600});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let k = h.post("/v1/session-keys", body).await?;
    assert_eq!(k.status, StatusCode::CREATED, "{}", k.body);
    assert_eq!(k.str("status"), "active");
    Ok(k.body)
}

fn path_of(key: &Value) -> String {
    format!(
        "/v1/session-keys/{}/credential",
        key["id"].as_str().unwrap()
    )
}

/// Verifies `vc` through the API.
async fn verify(h: &Harness, vc: &Value) -> anyhow::Result<Reply> {
    h.post(
        "/v1/identity/credentials/verify",
        json!({ "verifiableCredential": vc }),
    )
    .await
}

/// Polls key `id` until it reads `revoked` (its revoke mined).
async fn revoked(h: &Harness, id: &str) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let k = h.get(&format!("/v1/session-keys/{id}")).await?;
        if k.body["status"] == "revoked" {
            return Ok(());
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "key {id} never revoked: {}",
            k.body
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Asserts that `r` is a verification that failed because the credential is revoked.
fn says_revoked(r: &Reply) {
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(r.body["verified"], false, "{}", r.body);
    assert_eq!(r.body["results"]["status"][0]["status"], true, "{}", r.body);
}

fn time_of(v: &Value) -> OffsetDateTime {
    OffsetDateTime::parse(v.as_str().expect("a time"), &Rfc3339).expect("RFC 3339")
}

#[tokio::test]
async fn a_keys_agent_credential_binds_its_signer_verifies_and_is_revoked_with_the_key()
-> anyhow::Result<()> {
    let h = Harness::builder().start().await?;
    let doc = h.get("/v1/openapi.json").await?.body;
    let payer = dev_demo_payer();
    let m = mandate(&h, &payer).await?;
    let agent = PrivateKeySigner::random();
    let k = key(
        &h,
        &m,
        json!({"signer": agent.address().to_string(), "max_amount": "25",
               "allowed_destinations": [payee().to_string()]}),
    )
    .await?;
    let key_id = k["id"].as_str().unwrap();
    let path = path_of(&k);

    // Nothing issued yet.
    let none = h.get(&path).await?;
    assert_eq!(none.status, StatusCode::NOT_FOUND, "{}", none.body);
    assert_eq!(none.code(), "resource_missing");
    assert_documented(&doc, "get", PATH, &none);

    // Issued: 201.
    let before = OffsetDateTime::now_utc().unix_timestamp();
    let issued = h.post(&path, json!({})).await?;
    assert_eq!(issued.status, StatusCode::CREATED, "{}", issued.body);
    assert_documented(&doc, "post", PATH, &issued);
    let vc = issued.body["verifiableCredential"].clone();
    assert_eq!(
        vc["type"],
        json!(["VerifiableCredential", "AgentCredential"])
    );
    assert_eq!(vc["@context"][0], "https://www.w3.org/ns/credentials/v2");
    assert!(vc["id"].as_str().unwrap().starts_with("urn:uuid:"), "{vc}");
    assert_eq!(vc["proof"]["cryptosuite"], "eddsa-rdfc-2022");
    // The issuer is the mode's, as credentials/issue signs.
    let other = h
        .post(
            "/v1/identity/credentials/issue",
            json!({"credential": {"@context": ["https://www.w3.org/ns/credentials/v2"],
                   "type": ["VerifiableCredential"], "credentialSubject": {"id": "did:example:x"}}}),
        )
        .await?;
    assert_eq!(other.status, StatusCode::CREATED, "{}", other.body);
    assert_eq!(vc["issuer"], other.body["verifiableCredential"]["issuer"]);
    assert_eq!(vc["credentialStatus"]["type"], "BitstringStatusListEntry");
    assert_eq!(vc["credentialStatus"]["statusPurpose"], "revocation");
    // Valid from now until the key's expiry, never later.
    let valid_from = time_of(&vc["validFrom"]).unix_timestamp();
    assert!(
        valid_from >= before - 1 && valid_from <= OffsetDateTime::now_utc().unix_timestamp(),
        "{vc}"
    );
    let valid_until = time_of(&vc["validUntil"]);
    let expires_at = time_of(&k["expires_at"]);
    assert!(valid_until <= expires_at, "{vc} / {k}");
    assert!(expires_at - valid_until < time::Duration::seconds(1));
    // The claims.
    let chain = h.settlement_deployment().chain_id;
    let s = &vc["credentialSubject"];
    assert_eq!(
        s["id"],
        format!(
            "did:pkh:eip155:{chain}:{}",
            agent.address().to_checksum(None)
        )
    );
    assert_eq!(
        s["payer"],
        format!(
            "did:pkh:eip155:{chain}:{}",
            payer.address().to_checksum(None)
        )
    );
    assert_eq!(s["mandate"], m["id"]);
    assert_eq!(s["sessionKey"], key_id);
    assert_eq!(
        s["ceiling"],
        json!({"amount": "25.00", "currency": "USD", "interval": "weekly"}),
        "the key's own ceiling binds it"
    );
    assert_eq!(s["allowedDestinations"], json!([payee().to_checksum(None)]));

    // It verifies (every term defined: strict expansion refuses unknown ones).
    let ok = verify(&h, &vc).await?;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    assert_eq!(ok.body["verified"], true);
    assert_eq!(ok.body["results"]["status"][0]["status"], false);

    // Idempotent: the same credential again, 200; and readable.
    let again = h.post(&path, json!({})).await?;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_documented(&doc, "post", PATH, &again);
    assert_eq!(again.body["verifiableCredential"], vc);
    let read = h.get(&path).await?;
    assert_eq!(read.status, StatusCode::OK, "{}", read.body);
    assert_documented(&doc, "get", PATH, &read);
    assert_eq!(read.body["verifiableCredential"], vc);

    // The key's own secret reads it, but issues nothing.
    let secret = k["secret"].as_str().unwrap();
    let by_agent = h.call(Method::GET, &path, None, Some(secret), &[]).await?;
    assert_eq!(by_agent.status, StatusCode::OK, "{}", by_agent.body);
    assert_eq!(by_agent.body["verifiableCredential"], vc);
    let issue_by_agent = h
        .call(Method::POST, &path, Some(&json!({})), Some(secret), &[])
        .await?;
    assert_eq!(
        issue_by_agent.status,
        StatusCode::FORBIDDEN,
        "{}",
        issue_by_agent.body
    );

    // A key without a signer has no agent to name: 409, nothing issued.
    let plain = key(&h, &m, json!({})).await?;
    let refused = h.post(&path_of(&plain), json!({})).await?;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.body);
    assert_eq!(refused.code(), "session_key_without_signer");
    assert_documented(&doc, "post", PATH, &refused);
    assert_eq!(h.get(&path_of(&plain)).await?.status, StatusCode::NOT_FOUND);
    // Unknown keys and ids of another kind: 404.
    let unknown = h
        .post("/v1/session-keys/sk_nope/credential", json!({}))
        .await?;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{}", unknown.body);
    let other_kind = h
        .post(
            &format!("/v1/session-keys/{}/credential", m["id"].as_str().unwrap()),
            json!({}),
        )
        .await?;
    assert_eq!(other_kind.status, StatusCode::NOT_FOUND);

    // Revoking the key revokes the credential: verify says so.
    let r = h.delete(&format!("/v1/session-keys/{key_id}")).await?;
    assert!(r.status.is_success(), "{}", r.body);
    revoked(&h, key_id).await?;
    says_revoked(&verify(&h, &vc).await?);
    // It stays readable, and issuing again answers it (revoked) rather than a new one.
    assert_eq!(h.get(&path).await?.body["verifiableCredential"], vc);
    let after = h.post(&path, json!({})).await?;
    assert_eq!(after.status, StatusCode::OK, "{}", after.body);
    assert_eq!(after.body["verifiableCredential"], vc);

    // A revoked key never given one gets none.
    let late = key(&h, &m, json!({"signer": agent.address().to_string()})).await?;
    let late_id = late["id"].as_str().unwrap();
    h.delete(&format!("/v1/session-keys/{late_id}")).await?;
    revoked(&h, late_id).await?;
    let refused = h.post(&path_of(&late), json!({})).await?;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    assert_eq!(refused.code(), "session_key_revoked");
    assert_documented(&doc, "post", PATH, &refused);
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn canceling_the_mandate_revokes_its_keys_agent_credentials() -> anyhow::Result<()> {
    let h = Harness::builder().start().await?;
    let payer = dev_demo_payer();
    let m = mandate(&h, &payer).await?;
    let mid = m["id"].as_str().unwrap();
    // Two keys with agents, one credential each; a third key of another mandate keeps its
    // own.
    let mut credentials = Vec::new();
    for _ in 0..2 {
        let k = key(
            &h,
            &m,
            json!({"signer": PrivateKeySigner::random().address().to_string()}),
        )
        .await?;
        let issued = h.post(&path_of(&k), json!({})).await?;
        assert_eq!(issued.status, StatusCode::CREATED, "{}", issued.body);
        let vc = issued.body["verifiableCredential"].clone();
        // No ceiling of its own: the mandate's binds it; its destinations are the
        // mandate's payees, as the key shows them.
        assert_eq!(
            vc["credentialSubject"]["ceiling"],
            json!({"amount": "100.00", "currency": "USD", "interval": "weekly"})
        );
        assert_eq!(
            vc["credentialSubject"]["allowedDestinations"],
            k["allowed_destinations"]
        );
        assert_eq!(
            k["allowed_destinations"],
            json!([payee().to_checksum(None)])
        );
        assert_eq!(verify(&h, &vc).await?.status, StatusCode::OK);
        credentials.push(vc);
    }
    let other = mandate(&h, &PrivateKeySigner::random()).await?;
    let kept = key(
        &h,
        &other,
        json!({"signer": PrivateKeySigner::random().address().to_string()}),
    )
    .await?;
    let kept = h.post(&path_of(&kept), json!({})).await?.body["verifiableCredential"].clone();
    // A key with an agent that asks only after the cancellation.
    let late = key(
        &h,
        &m,
        json!({"signer": PrivateKeySigner::random().address().to_string()}),
    )
    .await?;

    let canceled = h
        .post(&format!("/v1/mandates/{mid}/cancel"), json!({}))
        .await?;
    assert!(canceled.status.is_success(), "{}", canceled.body);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    while h.get(&format!("/v1/mandates/{mid}")).await?.body["status"] != "canceled" {
        anyhow::ensure!(tokio::time::Instant::now() < deadline, "never canceled");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    for vc in &credentials {
        says_revoked(&verify(&h, vc).await?);
    }
    let ok = verify(&h, &kept).await?;
    assert_eq!(
        ok.status,
        StatusCode::OK,
        "another mandate's key keeps its credential: {}",
        ok.body
    );

    // A key of the canceled mandate gets none.
    let refused = h.post(&path_of(&late), json!({})).await?;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    assert_eq!(refused.code(), "mandate_not_active");
    h.stop().await;
    Ok(())
}
