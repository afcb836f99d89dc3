//! The agentic-debit API through HTTP: mandates, session keys, debit pulls, declines,
//! the agent credential, idempotency and bad input.

use alloy::primitives::Address;
use openrail_chain::devnet::{dev_demo_payer, dev_spare};
use openrail_store::Mode;
use openrail_tests::{Harness, intent_of, units};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// A daily mandate of `max` USD from the funded demo payer to the one payee the tests pull
/// to ([`dest`]), signed by the payer; returns its id.
async fn funded_mandate(h: &Harness, max: &str) -> anyhow::Result<String> {
    funded_mandate_to(h, max, &[dest()]).await
}

/// [`funded_mandate`] naming `payees`.
async fn funded_mandate_to(h: &Harness, max: &str, payees: &[String]) -> anyhow::Result<String> {
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 10_000).await?;
    let body = json!({"payer_account_id": payer.address().to_string(), "max_amount": max, "currency": "usd", "interval": "daily", "purpose": "agent groceries", "payees": payees});
    let created = h.post("/v1/mandates", body).await?;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.str("status"), "requires_authorization");
    assert_eq!(created.body["payees"], json!(payees), "{}", created.body);
    // The payer signs; the mandate then goes on chain.
    let r = h.authorize("/v1/mandates", &created.body, &payer).await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.str("status"), "active");
    assert_eq!(r.str("currency"), "USD");
    assert!(r.str("id").starts_with("man_"));
    Ok(r.str("id").to_string())
}

async fn key(h: &Harness, mandate: &str, extra: Value) -> anyhow::Result<Value> {
    let mut body = json!({"mandate_id": mandate, "expires_in": 3600});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let r = h.post("/v1/session-keys", body).await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.str("status"), "active");
    Ok(r.body)
}

fn dest() -> String {
    dev_spare().address().to_string()
}

#[tokio::test]
async fn mandate_key_pulls_declines_and_revocation() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mandate = funded_mandate(&h, "100").await?;
    let k1 = key(&h, &mandate, json!({"max_amount": 60})).await?;
    let k2 = key(&h, &mandate, json!({})).await?;
    let (k1, k2) = (
        k1["id"].as_str().unwrap().to_string(),
        k2["id"].as_str().unwrap().to_string(),
    );
    assert!(k1.starts_with("sk_") && !k1.starts_with("sk_testnet_"));

    for _ in 0..2 {
        let r = h
            .post(
                "/v1/debit-pulls",
                json!({"session_key_id": k1, "amount": "25.00", "destination": dest()}),
            )
            .await?;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        assert_eq!(r.str("status"), "authorized");
        assert_eq!(r.str("amount"), "25.00");
    }
    // Over the key's ceiling: 422 with what is left and the declined pull's id.
    let r = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": k1, "amount": 25, "destination": dest()}),
        )
        .await?;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(r.str("code"), "allowance_exceeded");
    assert_eq!(r.str("remaining"), "10.00");
    assert!(r.str("resets_at").ends_with("T00:00:00Z"));
    assert_eq!(r.headers["content-type"], "application/problem+json");
    let declined = r.str("pull_id").to_string();
    // Every intent was journaled before broadcast, in exactly one transaction.
    let store = &h.server().store;
    for intent in [&declined, &mandate, &k1] {
        assert_eq!(
            store.journal().count_for_intent(&intent_of(intent)).await?,
            1,
            "{intent}"
        );
    }
    let g = h.get(&format!("/v1/debit-pulls/{declined}")).await?;
    assert_eq!(
        (g.status, g.str("status"), g.str("decline_code")),
        (StatusCode::OK, "declined", "allowance_exceeded")
    );

    // Key 2 has no ceiling of its own: 45 fits, 10 more passes the mandate's 100.
    let r = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": k2, "amount": "45", "destination": dest()}),
        )
        .await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let r = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": k2, "amount": "10", "destination": dest()}),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("code"), r.str("remaining")),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            "allowance_exceeded",
            "5.00"
        )
    );

    // Revoke key 1: its pulls are declined as revoked, key 2 still pulls.
    let r = h.delete(&format!("/v1/session-keys/{k1}")).await?;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::OK, "revoked"),
        "{}",
        r.body
    );
    let r = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": k1, "amount": "1", "destination": dest()}),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("code")),
        (StatusCode::UNPROCESSABLE_ENTITY, "session_key_revoked"),
        "{}",
        r.body
    );
    let r = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": k2, "amount": "5", "destination": dest()}),
        )
        .await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);

    // The API's spend equals the chain's.
    let m = h.get(&format!("/v1/mandates/{mandate}")).await?;
    assert_eq!(m.body["current_epoch"]["spent"], "100.00");
    assert_eq!(m.body["current_epoch"]["remaining"], "0.00");
    let onchain_id: alloy::primitives::B256 = m.body["onchain"]["id"].as_str().unwrap().parse()?;
    let view = h
        .allowance_state_machine()
        .getMandate(onchain_id)
        .call()
        .await?;
    assert_eq!(
        alloy::primitives::U256::from(view.spentThisEpoch),
        units(100)
    );
    let dest_addr: Address = dest().parse()?;
    assert_eq!(h.balance("USD", dest_addr).await?, units(100));
    let k = h.get(&format!("/v1/session-keys/{k2}")).await?;
    assert_eq!(
        (
            k.body["current_epoch"]["spent"].as_str(),
            k.body["current_epoch"]["remaining"].as_str()
        ),
        (Some("50.00"), Some("0.00"))
    );

    // Lists.
    let l = h.get("/v1/debit-pulls?limit=2").await?;
    assert_eq!(
        (
            l.status,
            l.body["object"].as_str(),
            l.body["data"].as_array().unwrap().len()
        ),
        (StatusCode::OK, Some("list"), 2)
    );
    assert_eq!(l.body["has_more"], true);
    let last = l.body["data"][1]["id"].as_str().unwrap();
    let next = h
        .get(&format!("/v1/debit-pulls?limit=100&starting_after={last}"))
        .await?;
    assert_eq!(next.body["data"].as_array().unwrap().len(), 7 - 2);
    let keys = h
        .get(&format!("/v1/session-keys?mandate_id={mandate}"))
        .await?;
    assert_eq!(keys.body["data"].as_array().unwrap().len(), 2);
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn agent_secret_is_scoped_to_its_key() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mandate = funded_mandate(&h, "50").await?;
    let k1 = key(&h, &mandate, json!({})).await?;
    let k2 = key(&h, &mandate, json!({})).await?;
    let secret = k1["secret"].as_str().unwrap();
    assert!(secret.starts_with("sks_testnet_"));
    let id1 = k1["id"].as_str().unwrap();
    let id2 = k2["id"].as_str().unwrap();
    let as_agent = |m: Method, path: String, body: Option<Value>| {
        let h = &h;
        async move { h.call(m, &path, body.as_ref(), Some(secret), &[]).await }
    };
    let r = as_agent(
        Method::POST,
        "/v1/debit-pulls".into(),
        Some(json!({"session_key_id": id1, "amount": "1.50", "destination": dest()})),
    )
    .await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let pull = r.str("id").to_string();
    assert_eq!(
        as_agent(Method::GET, format!("/v1/session-keys/{id1}"), None)
            .await?
            .status,
        StatusCode::OK
    );
    assert_eq!(
        as_agent(Method::GET, format!("/v1/debit-pulls/{pull}"), None)
            .await?
            .status,
        StatusCode::OK
    );
    let l = as_agent(Method::GET, "/v1/debit-pulls".into(), None).await?;
    assert_eq!(l.body["data"].as_array().unwrap().len(), 1);
    // Its keys: its own alone (how an agent holding only its secret learns its key's id),
    // whatever else the account has; a cursor that is not its key names nothing.
    let keys = as_agent(Method::GET, "/v1/session-keys".into(), None).await?;
    assert_eq!(keys.status, StatusCode::OK, "{}", keys.body);
    let ids: Vec<&str> = keys.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["id"].as_str().unwrap())
        .collect();
    assert_eq!((ids, &keys.body["has_more"]), (vec![id1], &json!(false)));
    let after = as_agent(
        Method::GET,
        format!("/v1/session-keys?starting_after={id1}"),
        None,
    )
    .await?;
    assert_eq!(after.body["data"], json!([]));
    let other = as_agent(
        Method::GET,
        format!("/v1/session-keys?starting_after={id2}"),
        None,
    )
    .await?;
    assert_eq!(
        (other.status, other.str("code")),
        (StatusCode::BAD_REQUEST, "parameter_invalid")
    );
    let filtered = as_agent(
        Method::GET,
        format!("/v1/session-keys?mandate_id={mandate}"),
        None,
    )
    .await?;
    assert_eq!(filtered.body["data"].as_array().unwrap().len(), 1);
    for (m, path, body) in [
        (
            Method::POST,
            "/v1/debit-pulls".to_string(),
            Some(json!({"session_key_id": id2, "amount": "1", "destination": dest()})),
        ),
        (Method::GET, format!("/v1/session-keys/{id2}"), None),
        (Method::GET, "/v1/mandates".to_string(), None),
        (Method::GET, format!("/v1/mandates/{mandate}"), None),
        (Method::DELETE, format!("/v1/session-keys/{id1}"), None),
        (
            Method::POST,
            "/v1/session-keys".to_string(),
            Some(json!({"mandate_id": mandate, "expires_in": 600})),
        ),
    ] {
        let r = as_agent(m.clone(), path.clone(), body).await?;
        assert_eq!(
            (r.status, r.str("code")),
            (StatusCode::FORBIDDEN, "forbidden"),
            "{m} {path}"
        );
    }
    // Revoking the key voids its credential, and its pulls are declined (off chain: the
    // database knows the key is dead).
    assert_eq!(
        h.delete(&format!("/v1/session-keys/{id1}")).await?.status,
        StatusCode::OK
    );
    let r = as_agent(
        Method::POST,
        "/v1/debit-pulls".into(),
        Some(json!({"session_key_id": id1, "amount": "1", "destination": dest()})),
    )
    .await?;
    assert_eq!(
        (r.status, r.str("code")),
        (StatusCode::UNAUTHORIZED, "unauthenticated")
    );
    let r = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": id1, "amount": "1", "destination": dest()}),
        )
        .await?;
    assert_eq!(r.str("code"), "session_key_revoked");
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn allow_list_cancel_and_key_ceiling() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    // The payer signs two payees; the key's allow-list narrows them to one, so a pull to
    // the other payee is refused by the key, not by the mandate.
    let other = Address::repeat_byte(0x42).to_string();
    let mandate = funded_mandate_to(&h, "100", &[dest(), other.clone()]).await?;
    let r = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": mandate, "expires_in": 600, "max_amount": "100.01"}),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("code"), r.str("param")),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            "session_key_ceiling_exceeds_mandate",
            "max_amount"
        )
    );
    let allowed = dest();
    let k = key(&h, &mandate, json!({"allowed_destinations": [allowed]})).await?;
    let id = k["id"].as_str().unwrap();
    let r = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": id, "amount": "1", "destination": other}),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("code")),
        (StatusCode::UNPROCESSABLE_ENTITY, "destination_not_allowed")
    );
    let r = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": id, "amount": "1", "destination": allowed}),
        )
        .await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);

    let r = h
        .post(&format!("/v1/mandates/{mandate}/cancel"), json!({}))
        .await?;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::OK, "canceled"),
        "{}",
        r.body
    );
    let r = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": id, "amount": "1", "destination": allowed}),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("code")),
        (StatusCode::UNPROCESSABLE_ENTITY, "mandate_not_active")
    );
    let r = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": mandate, "expires_in": 600}),
        )
        .await?;
    assert_eq!(r.str("code"), "mandate_not_active");
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn payer_without_funds_is_declined() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    // A payer with no tokens and no approval (it signs the mandate all the same).
    let broke = alloy::signers::local::PrivateKeySigner::random();
    h.remember(&broke);
    let r = h.post_authorized("/v1/mandates", json!({"payer_account_id": broke.address().to_string(), "max_amount": "10", "currency": "EUR", "interval": "monthly", "payees": [dest()]})).await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let k = key(&h, r.str("id"), json!({})).await?;
    let r = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": k["id"], "amount": "1", "destination": dest()}),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("code")),
        (StatusCode::UNPROCESSABLE_ENTITY, "insufficient_funds"),
        "{}",
        r.body
    );
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn idempotency_auth_modes_and_bad_input() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer().address().to_string();
    let body = json!({"payer_account_id": payer, "max_amount": "10", "currency": "USD", "interval": "weekly"});

    // Idempotency: replay, reuse with another body.
    let hdr = [("idempotency-key", "mandate-1")];
    let a = h
        .call(Method::POST, "/v1/mandates", Some(&body), None, &hdr)
        .await?;
    let b = h
        .call(Method::POST, "/v1/mandates", Some(&body), None, &hdr)
        .await?;
    assert_eq!(a.status, StatusCode::CREATED);
    assert_eq!((b.status, b.str("id")), (StatusCode::CREATED, a.str("id")));
    assert_eq!(b.headers["idempotent-replayed"], "true");
    let mut other = body.clone();
    other["max_amount"] = json!("11");
    let c = h
        .call(Method::POST, "/v1/mandates", Some(&other), None, &hdr)
        .await?;
    assert_eq!(
        (c.status, c.str("code")),
        (StatusCode::UNPROCESSABLE_ENTITY, "idempotency_key_reused")
    );
    assert_eq!(
        h.get("/v1/mandates").await?.body["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // Every response has a Request-Id; problems carry it too.
    let r = h.get("/v1/mandates/man_nope").await?;
    assert_eq!(
        (r.status, r.str("code")),
        (StatusCode::NOT_FOUND, "resource_missing")
    );
    assert_eq!(r.headers["request-id"].to_str()?, r.str("request_id"));
    // An id of another kind names nothing here: a mandate's id where a key, a pull or a
    // payment is meant (typed ids: refused before any lookup), and a key's own path.
    let mandate = a.str("id");
    for path in [
        format!("/v1/session-keys/{mandate}"),
        format!("/v1/debit-pulls/{mandate}"),
        format!("/v1/payments/{mandate}"),
        format!("/v1/events/{mandate}"),
        format!("/v1/bank-accounts/{mandate}"),
        "/v1/mandates/sk_notamandate".to_string(),
    ] {
        let r = h.get(&path).await?;
        assert_eq!(
            (r.status, r.str("code")),
            (StatusCode::NOT_FOUND, "resource_missing"),
            "{path}: {}",
            r.body
        );
    }
    let r = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": mandate, "amount": "1.00"}),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("code")),
        (StatusCode::NOT_FOUND, "resource_missing"),
        "{}",
        r.body
    );

    // Authentication and modes.
    let r = h
        .call(
            Method::GET,
            "/v1/mandates",
            None,
            Some("sk_testnet_wrong"),
            &[],
        )
        .await?;
    assert_eq!(
        (r.status, r.str("code")),
        (StatusCode::UNAUTHORIZED, "unauthenticated")
    );
    let s = h.server();
    let (_, live) = s
        .store
        .api_keys()
        .create(&s.account_id, Mode::Mainnet, openrail_store::now_ms())
        .await?;
    let r = h
        .call(Method::GET, "/v1/mandates", None, Some(&live), &[])
        .await?;
    assert_eq!(
        (r.status, r.str("code")),
        (StatusCode::SERVICE_UNAVAILABLE, "mainnet_unavailable")
    );
    let other_account = s
        .store
        .accounts()
        .create("Other", openrail_store::now_ms())
        .await?;
    let (_, other_key) = s
        .store
        .api_keys()
        .create(&other_account.id, Mode::Testnet, openrail_store::now_ms())
        .await?;
    let r = h
        .call(
            Method::GET,
            &format!("/v1/mandates/{}", a.str("id")),
            None,
            Some(&other_key),
            &[],
        )
        .await?;
    assert_eq!(r.status, StatusCode::NOT_FOUND);

    // Bad input changes nothing.
    let cases: Vec<(Value, StatusCode, &str)> = vec![
        (
            json!({"max_amount": "10", "currency": "USD", "interval": "daily"}),
            StatusCode::BAD_REQUEST,
            "parameter_missing",
        ),
        (
            json!({"payer_account_id": payer, "max_amount": "10", "currency": "USD", "interval": "daily", "color": "red"}),
            StatusCode::BAD_REQUEST,
            "parameter_unknown",
        ),
        (
            json!({"payer_account_id": 7, "max_amount": "10", "currency": "USD", "interval": "daily"}),
            StatusCode::BAD_REQUEST,
            "parameter_invalid",
        ),
        (
            json!({"payer_account_id": "0x12", "max_amount": "10", "currency": "USD", "interval": "daily"}),
            StatusCode::BAD_REQUEST,
            "parameter_invalid",
        ),
        (
            json!({"payer_account_id": payer, "max_amount": "10", "currency": "GBP", "interval": "daily"}),
            StatusCode::BAD_REQUEST,
            "parameter_invalid",
        ),
        (
            json!({"payer_account_id": payer, "max_amount": "10", "currency": "USD", "interval": "hourly"}),
            StatusCode::BAD_REQUEST,
            "parameter_invalid",
        ),
        (
            json!({"payer_account_id": payer, "max_amount": "10.001", "currency": "USD", "interval": "daily"}),
            StatusCode::BAD_REQUEST,
            "amount_invalid",
        ),
        (
            json!({"payer_account_id": payer, "max_amount": 0, "currency": "USD", "interval": "daily"}),
            StatusCode::BAD_REQUEST,
            "amount_invalid",
        ),
        (
            json!({"payer_account_id": payer, "max_amount": -5, "currency": "USD", "interval": "daily"}),
            StatusCode::BAD_REQUEST,
            "amount_invalid",
        ),
        (
            json!({"payer_account_id": payer, "max_amount": "1e3", "currency": "USD", "interval": "daily"}),
            StatusCode::BAD_REQUEST,
            "amount_invalid",
        ),
        (
            json!({"payer_account_id": payer, "max_amount": "ten", "currency": "USD", "interval": "daily"}),
            StatusCode::BAD_REQUEST,
            "amount_invalid",
        ),
        (
            json!({"payer_account_id": payer, "max_amount": "99999999999999999999", "currency": "USD", "interval": "daily"}),
            StatusCode::BAD_REQUEST,
            "amount_invalid",
        ),
    ];
    for (body, status, code) in cases {
        let r = h.post("/v1/mandates", body.clone()).await?;
        assert_eq!(
            (r.status, r.body["code"].as_str()),
            (status, Some(code)),
            "{body}"
        );
    }
    let raw = |ct: &'static str, body: &'static str| {
        let h = &h;
        async move {
            let s = h.server();
            let res = reqwest::Client::new()
                .post(format!("{}/v1/mandates", s.base_url))
                .bearer_auth(&s.api_key)
                .header("content-type", ct)
                .body(body)
                .send()
                .await
                .unwrap();
            let status = res.status();
            let v: Value = res.json().await.unwrap();
            (status, v["code"].as_str().unwrap().to_string())
        }
    };
    assert_eq!(
        raw("application/json", "{\"payer_account_id\": ").await,
        (StatusCode::BAD_REQUEST, "invalid_json".into())
    );
    assert_eq!(
        raw("application/json", "[]").await,
        (StatusCode::BAD_REQUEST, "invalid_json".into())
    );
    assert_eq!(
        raw("text/plain", "{}").await,
        (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type".into()
        )
    );
    let big: &'static str =
        Box::leak(format!("{{\"purpose\": \"{}\"}}", "x".repeat(100_000)).into_boxed_str());
    assert_eq!(
        raw("application/json", big).await,
        (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large".into())
    );

    let mandate = a.str("id");
    for (body, code) in [
        (
            json!({"mandate_id": mandate, "expires_in": 59}),
            "parameter_invalid",
        ),
        (
            json!({"mandate_id": mandate, "expires_in": 31_536_001}),
            "parameter_invalid",
        ),
        (
            json!({"mandate_id": mandate, "expires_in": "3600"}),
            "parameter_invalid",
        ),
        (json!({"mandate_id": mandate}), "parameter_missing"),
        (
            json!({"mandate_id": "man_missing", "expires_in": 600}),
            "resource_missing",
        ),
    ] {
        let r = h.post("/v1/session-keys", body.clone()).await?;
        assert_eq!(r.body["code"].as_str(), Some(code), "{body}");
    }
    assert_eq!(
        h.get("/v1/session-keys").await?.body["data"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    let r = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": "sk_missing", "amount": "1"}),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("code")),
        (StatusCode::NOT_FOUND, "resource_missing")
    );
    let r = h.get("/v1/nothing-here").await?;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn concurrent_pulls_never_exceed_the_ceiling() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mandate = funded_mandate(&h, "100").await?;
    let k = key(&h, &mandate, json!({})).await?;
    let id = k["id"].as_str().unwrap().to_string();
    // 200 pulls of 1.00 race a ceiling of 100.00.
    let results = futures_join(&h, &id, 200).await?;
    let authorized = results
        .iter()
        .filter(|s| **s == StatusCode::CREATED)
        .count();
    let declined = results
        .iter()
        .filter(|s| **s == StatusCode::UNPROCESSABLE_ENTITY)
        .count();
    let mut seen = std::collections::BTreeMap::<u16, usize>::new();
    for s in &results {
        *seen.entry(s.as_u16()).or_default() += 1;
    }
    assert_eq!((authorized, declined), (100, 100), "statuses: {seen:?}");
    let m = h.get(&format!("/v1/mandates/{mandate}")).await?;
    assert_eq!(m.body["current_epoch"]["spent"], "100.00");
    let onchain_id: alloy::primitives::B256 = m.body["onchain"]["id"].as_str().unwrap().parse()?;
    let view = h
        .allowance_state_machine()
        .getMandate(onchain_id)
        .call()
        .await?;
    assert_eq!(
        alloy::primitives::U256::from(view.spentThisEpoch),
        units(100)
    );
    h.stop().await;
    Ok(())
}

async fn futures_join(h: &Harness, key: &str, n: usize) -> anyhow::Result<Vec<StatusCode>> {
    let mut set = tokio::task::JoinSet::new();
    let s = h.server();
    for _ in 0..n {
        let url = format!("{}/v1/debit-pulls", s.base_url);
        let api_key = s.api_key.clone();
        let body = json!({"session_key_id": key, "amount": "1", "destination": dest()}).to_string();
        set.spawn(async move {
            reqwest::Client::new()
                .post(url)
                .bearer_auth(api_key)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .map(|r| r.status())
        });
    }
    let mut out = Vec::new();
    while let Some(r) = set.join_next().await {
        out.push(r??);
    }
    Ok(out)
}

#[tokio::test]
async fn rate_limit_answers_429_with_retry_after() -> anyhow::Result<()> {
    let config = openrail_api::ApiConfig {
        rate_per_sec: 0.5,
        rate_burst: 2.0,
        ..Default::default()
    };
    let h = Harness::builder().config(config).start().await?;
    assert_eq!(h.get("/v1/mandates").await?.status, StatusCode::OK);
    assert_eq!(h.get("/v1/mandates").await?.status, StatusCode::OK);
    let r = h.get("/v1/mandates").await?;
    assert_eq!(
        (r.status, r.str("code")),
        (StatusCode::TOO_MANY_REQUESTS, "rate_limited")
    );
    let retry: u64 = r.headers["retry-after"].to_str()?.parse()?;
    assert!((1..=2).contains(&retry), "Retry-After {retry}");
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn slow_chain_gives_202_then_409_while_in_flight() -> anyhow::Result<()> {
    use alloy::providers::ext::AnvilApi;
    let h = Harness::start().await?;
    let mandate = funded_mandate(&h, "100").await?;
    let k = key(&h, &mandate, json!({})).await?;
    let body = json!({"session_key_id": k["id"], "amount": "3", "destination": dest()});

    // With mining paused the pull cannot finish: the POST answers 202 after its wait.
    h.settlement.anvil_set_auto_mine(false).await?;
    let r = h
        .call(
            Method::POST,
            "/v1/debit-pulls",
            Some(&body),
            None,
            &[("prefer", "wait=1")],
        )
        .await?;
    assert_eq!(
        (r.status, r.str("status")),
        (StatusCode::ACCEPTED, "pending"),
        "{}",
        r.body
    );
    let pull = r.str("id").to_string();

    // A request holding an idempotency key is in flight while the chain is stalled.
    let first = {
        let (url, key, body) = (
            format!("{}/v1/debit-pulls", h.server().base_url),
            h.server().api_key.clone(),
            body.to_string(),
        );
        tokio::spawn(async move {
            reqwest::Client::new()
                .post(url)
                .bearer_auth(key)
                .header("content-type", "application/json")
                .header("idempotency-key", "slow-1")
                .header("prefer", "wait=10")
                .body(body)
                .send()
                .await
                .map(|r| r.status())
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(1000)).await;
    let second = h
        .call(
            Method::POST,
            "/v1/debit-pulls",
            Some(&body),
            None,
            &[("idempotency-key", "slow-1")],
        )
        .await?;
    assert_eq!(
        (second.status, second.str("code")),
        (StatusCode::CONFLICT, "idempotency_in_progress")
    );

    // Mining resumes: every accepted pull reaches its final status.
    h.settlement.anvil_set_auto_mine(true).await?;
    h.settlement.anvil_mine(Some(1), None).await?;
    assert_eq!(first.await??, StatusCode::CREATED);
    let mut status = String::new();
    for _ in 0..100 {
        status = h
            .get(&format!("/v1/debit-pulls/{pull}"))
            .await?
            .str("status")
            .to_string();
        if status != "pending" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(status, "authorized");
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn expired_key_is_declined_on_chain() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mandate = funded_mandate(&h, "100").await?;
    let k = key(&h, &mandate, json!({"expires_in": 60})).await?;
    // The chain's clock passes the key's expiry (the harness warps anvil, not the server).
    h.warp_to(h.chain_time().await? + 120).await?;
    let r = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": k["id"], "amount": "1", "destination": dest()}),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("code")),
        (StatusCode::UNPROCESSABLE_ENTITY, "session_key_expired"),
        "{}",
        r.body
    );
    let pull = h
        .get(&format!("/v1/debit-pulls/{}", r.str("pull_id")))
        .await?;
    assert_eq!(pull.str("decline_code"), "session_key_expired");
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn modes_are_isolated() -> anyhow::Result<()> {
    let h = Harness::builder().mainnet().start().await?;
    let s = h.server();
    let (_, live) = s
        .store
        .api_keys()
        .create(&s.account_id, Mode::Mainnet, openrail_store::now_ms())
        .await?;
    let payer = dev_demo_payer().address().to_string();
    let body = json!({"payer_account_id": payer, "max_amount": "10", "currency": "USD", "interval": "daily"});

    let test_mandate = h.post("/v1/mandates", body.clone()).await?;
    assert_eq!(
        (test_mandate.status, test_mandate.body["livemode"].as_bool()),
        (StatusCode::CREATED, Some(false))
    );
    let live_mandate = h
        .call(Method::POST, "/v1/mandates", Some(&body), Some(&live), &[])
        .await?;
    assert_eq!(
        (live_mandate.status, live_mandate.body["livemode"].as_bool()),
        (StatusCode::CREATED, Some(true)),
        "{}",
        live_mandate.body
    );
    // The mainnet mandate lives on the mainnet network's chain.
    assert_eq!(
        live_mandate.body["onchain"]["chain_id"],
        openrail_chain::devnet::ATTESTATION_CHAIN_ID
    );

    // Another mode's id answers 404; lists show one mode only.
    let r = h
        .call(
            Method::GET,
            &format!("/v1/mandates/{}", test_mandate.str("id")),
            None,
            Some(&live),
            &[],
        )
        .await?;
    assert_eq!(
        (r.status, r.str("code")),
        (StatusCode::NOT_FOUND, "resource_missing")
    );
    let r = h
        .get(&format!("/v1/mandates/{}", live_mandate.str("id")))
        .await?;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": live_mandate.str("id"), "expires_in": 600}),
        )
        .await?;
    assert_eq!(
        (r.status, r.str("code")),
        (StatusCode::NOT_FOUND, "resource_missing")
    );
    let list = h
        .call(Method::GET, "/v1/mandates", None, Some(&live), &[])
        .await?;
    let ids: Vec<&str> = list.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![live_mandate.str("id")]);
    h.stop().await;
    Ok(())
}
