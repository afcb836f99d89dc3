//! Identity verification sessions (`/v1/identity/verifications`) end to end with testnet's
//! simulated provider: each scenario (verified, failed with a reason then passed, slow)
//! with its events, cancel, the lifecycle refusing moves outside its table (409), the
//! issued credential verifying through `POST /v1/identity/credentials/verify` until it is
//! revoked, paging, bad input, and mainnet's 503.

use std::time::{Duration, Instant};

use openrail_store::Mode;
use openrail_tests::Harness;

use crate::openapi::assert_documented;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const SUBJECT: &str = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";

/// Creates a session; answers its body.
async fn create(h: &Harness, body: Value) -> anyhow::Result<Value> {
    let r = h.post("/v1/identity/verifications", body).await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["status"], "requires_input");
    Ok(r.body)
}

/// Submits session `id`; answers its body (`processing`).
async fn submit(h: &Harness, id: &str) -> anyhow::Result<Value> {
    let r = h
        .post(
            &format!("/v1/identity/verifications/{id}/submit"),
            json!({}),
        )
        .await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["status"], "processing");
    assert_eq!(r.body["last_error"], Value::Null);
    Ok(r.body)
}

/// Waits until session `id` leaves `processing`; answers it and how long that took.
async fn settled(h: &Harness, id: &str) -> anyhow::Result<(Value, Duration)> {
    let start = Instant::now();
    loop {
        let r = h.get(&format!("/v1/identity/verifications/{id}")).await?;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        if r.body["status"] != "processing" {
            return Ok((r.body, start.elapsed()));
        }
        anyhow::ensure!(
            start.elapsed() < Duration::from_secs(20),
            "session {id} still processing: {}",
            r.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The types of session `id`'s events, oldest first, each checked against the status its
/// `data.object` shows.
async fn events(h: &Harness, id: &str) -> anyhow::Result<Vec<String>> {
    let r = h
        .get(&format!("/v1/events?object_id={id}&limit=100"))
        .await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let mut out = Vec::new();
    for e in r.body["data"].as_array().expect("a list").iter().rev() {
        let kind = e["type"].as_str().expect("a type").to_string();
        let object = &e["data"]["object"];
        assert_eq!(object["object"], "identity_verification", "{e}");
        assert_eq!(object["id"], id);
        let status = kind.rsplit('.').next().expect("a status");
        if status != "created" {
            assert_eq!(object["status"], status, "{e}");
        }
        out.push(kind);
    }
    Ok(out)
}

/// Fetches a verified session's credential and verifies it through the API.
async fn credential(h: &Harness, v: &Value) -> anyhow::Result<Value> {
    let id = v["id"].as_str().expect("an id");
    let r = h
        .get(&format!("/v1/identity/verifications/{id}/credential"))
        .await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let vc = r.body["verifiableCredential"].clone();
    assert_eq!(vc["id"], v["credential_id"]);
    assert_eq!(
        vc["type"],
        json!(["VerifiableCredential", v["credential_type"]])
    );
    let chain = h.settlement_deployment().chain_id;
    assert_eq!(
        vc["credentialSubject"]["id"],
        format!("did:pkh:eip155:{chain}:{}", v["subject"].as_str().unwrap())
    );
    assert_eq!(
        vc["credentialStatus"]["statusPurpose"], "revocation",
        "{vc}"
    );
    let ok = h
        .post(
            "/v1/identity/credentials/verify",
            json!({ "verifiableCredential": vc }),
        )
        .await?;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    assert_eq!(ok.body["verified"], true);
    Ok(vc)
}

#[tokio::test]
async fn each_scenario_ends_as_it_says_with_its_events_and_a_credential_that_verifies()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let doc = h.get("/v1/openapi.json").await?.body;

    // verified (the default): requires_input → processing → verified, the subject kept
    // checksummed even when sent in lowercase.
    let v = create(
        &h,
        json!({ "type": "personhood", "subject": SUBJECT.to_lowercase() }),
    )
    .await?;
    let id = v["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("idv_"), "{v}");
    assert_eq!(v["subject"], SUBJECT);
    assert_eq!(v["credential_type"], "PersonhoodCredential");
    assert_eq!(v["credential_id"], Value::Null);
    assert_eq!(
        v["simulate"],
        json!({ "outcome": "verified", "failure_reason": null })
    );
    let early = h
        .get(&format!("/v1/identity/verifications/{id}/credential"))
        .await?;
    assert_eq!(
        (early.status, early.code()),
        (StatusCode::CONFLICT, "verification_not_verified")
    );
    submit(&h, &id).await?;
    // Under check: neither submitted again nor canceled (the lifecycle's table refuses).
    for (path, code) in [
        ("submit", "verification_not_submittable"),
        ("cancel", "verification_not_cancelable"),
    ] {
        let r = h
            .post(
                &format!("/v1/identity/verifications/{id}/{path}"),
                json!({}),
            )
            .await?;
        assert_eq!(
            (r.status, r.code()),
            (StatusCode::CONFLICT, code),
            "{}",
            r.body
        );
    }
    let (done, took) = settled(&h, &id).await?;
    assert_eq!(done["status"], "verified", "{done}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    for path in ["", "/credential"] {
        let r = h
            .get(&format!("/v1/identity/verifications/{id}{path}"))
            .await?;
        let documented = format!("/v1/identity/verifications/{{id}}{path}");
        assert_documented(&doc, "get", &documented, &r);
    }
    let credential_id = done["credential_id"].as_str().expect("a credential id");
    assert!(credential_id.starts_with("urn:uuid:"), "{done}");
    let vc = credential(&h, &done).await?;
    assert_eq!(
        events(&h, &id).await?,
        [
            "identity.verification.created",
            "identity.verification.processing",
            "identity.verification.verified"
        ]
    );
    // Verified is final.
    for (path, code) in [
        ("submit", "verification_not_submittable"),
        ("cancel", "verification_not_cancelable"),
    ] {
        let r = h
            .post(
                &format!("/v1/identity/verifications/{id}/{path}"),
                json!({}),
            )
            .await?;
        assert_eq!(
            (r.status, r.code()),
            (StatusCode::CONFLICT, code),
            "{}",
            r.body
        );
    }
    // The credential is Openrail's like any other it issued: revocable, and then refused.
    let revoked = h
        .post(
            "/v1/identity/credentials/status",
            json!({ "credentialId": credential_id, "status": true }),
        )
        .await?;
    assert_eq!(revoked.status, StatusCode::OK, "{}", revoked.body);
    assert_eq!(revoked.body["type"], "PersonhoodCredential");
    let refused = h
        .post(
            "/v1/identity/credentials/verify",
            json!({ "verifiableCredential": vc }),
        )
        .await?;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );

    // failed: the first check fails with the reason given (back to requires_input with
    // last_error); the next submission passes.
    let v = create(
        &h,
        json!({
            "type": "financial_health",
            "subject": SUBJECT,
            "simulate": { "outcome": "failed", "failure_reason": "the bank statement was unreadable" },
        }),
    )
    .await?;
    let failing = v["id"].as_str().unwrap().to_string();
    submit(&h, &failing).await?;
    let (back, _) = settled(&h, &failing).await?;
    assert_eq!(back["status"], "requires_input", "{back}");
    assert_eq!(
        back["last_error"],
        json!({ "code": "verification_failed", "reason": "the bank statement was unreadable" })
    );
    assert_eq!(back["credential_id"], Value::Null);
    submit(&h, &failing).await?;
    let (passed, _) = settled(&h, &failing).await?;
    assert_eq!(passed["status"], "verified", "{passed}");
    assert_eq!(passed["credential_type"], "FinancialHealthCredential");
    credential(&h, &passed).await?;
    assert_eq!(
        events(&h, &failing).await?,
        [
            "identity.verification.created",
            "identity.verification.processing",
            "identity.verification.requires_input",
            "identity.verification.processing",
            "identity.verification.verified"
        ]
    );

    // slow: still processing after a second, verified after about five.
    let v = create(
        &h,
        json!({ "type": "agent", "subject": SUBJECT, "simulate": { "outcome": "slow" } }),
    )
    .await?;
    let slow = v["id"].as_str().unwrap().to_string();
    submit(&h, &slow).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let r = h.get(&format!("/v1/identity/verifications/{slow}")).await?;
    assert_eq!(r.body["status"], "processing", "{}", r.body);
    let (done, took) = settled(&h, &slow).await?;
    assert_eq!(done["status"], "verified", "{done}");
    assert!(
        took + Duration::from_secs(1) >= Duration::from_millis(4_500),
        "{took:?}"
    );
    assert_eq!(done["credential_type"], "AgentCredential");
    credential(&h, &done).await?;

    // The events filter knows the object.
    let r = h
        .get("/v1/events?type=identity.verification.*&limit=100")
        .await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["data"].as_array().unwrap().len(), 3 + 5 + 3);
    assert_documented(&doc, "get", "/v1/events", &r);
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn sessions_cancel_page_refuse_bad_input_and_mainnet_is_unavailable() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let doc = h.get("/v1/openapi.json").await?.body;

    // Cancel: only waiting for input; a second cancel answers it as it is; then final.
    let r = h
        .post(
            "/v1/identity/verifications",
            json!({ "type": "personhood", "subject": SUBJECT }),
        )
        .await?;
    assert_documented(&doc, "post", "/v1/identity/verifications", &r);
    let id = r.str("id").to_string();
    for _ in 0..2 {
        let r = h
            .post(
                &format!("/v1/identity/verifications/{id}/cancel"),
                json!({}),
            )
            .await?;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(r.body["status"], "canceled");
        assert_documented(&doc, "post", "/v1/identity/verifications/{id}/cancel", &r);
    }
    let r = h
        .post(
            &format!("/v1/identity/verifications/{id}/submit"),
            json!({}),
        )
        .await?;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::CONFLICT, "verification_not_submittable")
    );
    assert_documented(&doc, "post", "/v1/identity/verifications/{id}/submit", &r);
    let r = h
        .get(&format!("/v1/identity/verifications/{id}/credential"))
        .await?;
    assert_documented(
        &doc,
        "get",
        "/v1/identity/verifications/{id}/credential",
        &r,
    );
    assert_eq!(
        events(&h, &id).await?,
        [
            "identity.verification.created",
            "identity.verification.canceled"
        ]
    );
    // Nothing is checked for a canceled session.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let r = h.get(&format!("/v1/identity/verifications/{id}")).await?;
    assert_eq!(r.body["status"], "canceled");

    // Paging, newest first.
    let second = create(&h, json!({ "type": "agent", "subject": SUBJECT })).await?;
    let page = h.get("/v1/identity/verifications?limit=1").await?;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_eq!(page.body["object"], "list");
    assert_eq!(page.body["has_more"], true);
    assert_eq!(page.body["data"][0]["id"], second["id"]);
    assert_documented(&doc, "get", "/v1/identity/verifications", &page);
    let next = h
        .get(&format!(
            "/v1/identity/verifications?limit=1&starting_after={}",
            second["id"].as_str().unwrap()
        ))
        .await?;
    assert_eq!(next.body["has_more"], false, "{}", next.body);
    assert_eq!(next.body["data"][0]["id"], id.as_str());

    // Bad input: 400 naming the parameter; unknown ids 404.
    for (body, param) in [
        (json!({ "type": "kyc", "subject": SUBJECT }), "type"),
        (
            json!({ "type": "agent", "subject": "0x90f79bf6EB2c4f870365E785982E1f101E93b906" }),
            "subject",
        ),
        (
            json!({ "type": "agent", "subject": "0x0000000000000000000000000000000000000000" }),
            "subject",
        ),
        (
            json!({ "type": "agent", "subject": SUBJECT, "simulate": { "outcome": "maybe" } }),
            "simulate.outcome",
        ),
        (
            json!({ "type": "agent", "subject": SUBJECT, "simulate": { "failure_reason": "a\u{7}" } }),
            "simulate.failure_reason",
        ),
        (
            json!({ "type": "agent", "subject": SUBJECT, "simulate": { "delay": 1 } }),
            "simulate.delay",
        ),
        (json!({ "subject": SUBJECT }), "type"),
    ] {
        let r = h.post("/v1/identity/verifications", body.clone()).await?;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{body}: {}", r.body);
        assert_eq!(r.body["param"], param, "{body}: {}", r.body);
    }
    for path in [
        "/v1/identity/verifications/idv_missing",
        "/v1/identity/verifications/pay_other_kind",
        "/v1/identity/verifications/idv_missing/credential",
    ] {
        assert_eq!(h.get(path).await?.status, StatusCode::NOT_FOUND, "{path}");
    }
    let r = h
        .post("/v1/identity/verifications/idv_missing/submit", json!({}))
        .await?;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);

    // Mainnet: no provider is connected, 503 — never the simulator.
    let s = h.server();
    let (_, live) = s
        .store
        .api_keys()
        .create(&s.account_id, Mode::Mainnet, openrail_store::now_ms())
        .await?;
    for (method, path, body) in [
        (
            Method::POST,
            "/v1/identity/verifications",
            Some(json!({ "type": "personhood", "subject": SUBJECT })),
        ),
        (Method::GET, "/v1/identity/verifications", None),
        (Method::GET, "/v1/identity/verifications/idv_x", None),
    ] {
        let r = h
            .call(method, path, body.as_ref(), Some(&live), &[])
            .await?;
        assert_eq!(
            (r.status, r.code()),
            (StatusCode::SERVICE_UNAVAILABLE, "mainnet_unavailable"),
            "{path}: {}",
            r.body
        );
    }
    h.stop().await;
    Ok(())
}
