//! Hostile input never reaches the chain or hides a mistake: unreadable idempotency keys,
//! duplicated JSON keys, wrong address checksums, unknown cursors, bad paths and long URLs,
//! failed authentication at speed, and integral numbers written with a fraction.

use openrail_chain::devnet::dev_demo_payer;
use openrail_tests::{Harness, Reply};
use reqwest::{Method, StatusCode};
use serde_json::json;

/// Sends a raw JSON text body.
async fn post_raw(
    h: &Harness,
    path: &str,
    body: &str,
    headers: &[(&str, &str)],
) -> anyhow::Result<Reply> {
    let s = h.server();
    let mut req = reqwest::Client::new()
        .post(format!("{}{path}", s.base_url))
        .bearer_auth(&s.api_key)
        .header("content-type", "application/json")
        .body(body.to_string());
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res = req.send().await?;
    let status = res.status();
    let headers = res.headers().clone();
    let body = serde_json::from_str(&res.text().await?).unwrap_or_default();
    Ok(Reply {
        status,
        headers,
        body,
    })
}

#[tokio::test]
async fn unreadable_or_long_idempotency_keys_are_refused() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let body = r#"{"owner_name": "Ada", "currency": "USD", "balance": "1.00"}"#;
    // A non-ASCII key (UTF-8 bytes in the header) and one of 256 characters.
    let s = h.server();
    let res = reqwest::Client::new()
        .post(format!("{}/v1/bank-accounts", s.base_url))
        .bearer_auth(&s.api_key)
        .header("content-type", "application/json")
        .header(
            "idempotency-key",
            reqwest::header::HeaderValue::from_bytes("clé-1".as_bytes())?,
        )
        .body(body)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    assert!(res.headers().contains_key("request-id"));
    let v: serde_json::Value = res.json().await?;
    assert_eq!(v["code"], "idempotency_key_invalid");
    let long = "k".repeat(256);
    let r = post_raw(&h, "/v1/bank-accounts", body, &[("idempotency-key", &long)]).await?;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::BAD_REQUEST, "idempotency_key_invalid")
    );
    let ok = "k".repeat(255);
    let r = post_raw(&h, "/v1/bank-accounts", body, &[("idempotency-key", &ok)]).await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    // Nothing was created by the refused ones.
    let again = post_raw(&h, "/v1/bank-accounts", body, &[("idempotency-key", &ok)]).await?;
    assert_eq!(again.headers["idempotent-replayed"], "true");
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn duplicated_json_keys_are_refused() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer().address().to_string();
    for (path, body, param) in [
        (
            "/v1/mandates",
            format!(
                r#"{{"payer_account_id": "{payer}", "max_amount": "1", "max_amount": "1000000", "currency": "USD", "interval": "daily"}}"#
            ),
            "max_amount",
        ),
        (
            "/v1/debit-pulls",
            r#"{"session_key_id": "sk_x", "amount": "1", "amount": "900"}"#.to_string(),
            "amount",
        ),
        (
            "/v1/payments",
            format!(
                r#"{{"amount": "1", "currency": "USD", "source": {{"type": "wallet", "id": "{payer}", "id": "{payer}"}}, "destination": {{"type": "wallet", "address": "{payer}"}}}}"#
            ),
            "source.id",
        ),
    ] {
        let r = post_raw(&h, path, &body, &[]).await?;
        assert_eq!(
            (r.status, r.code(), r.body["param"].as_str()),
            (StatusCode::BAD_REQUEST, "parameter_duplicated", Some(param)),
            "{path}: {}",
            r.body
        );
    }
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn a_wrong_address_checksum_is_refused() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let good = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"; // EIP-55
    let typo = "0x3C44CdDdB6a900fa2b585dd299e03d12Fa4293BC"; // one letter's case changed
    let body = |p: &str| json!({"payer_account_id": p, "max_amount": "1", "currency": "USD", "interval": "daily"});
    let r = h.post("/v1/mandates", body(typo)).await?;
    assert_eq!(
        (r.status, r.code(), r.body["param"].as_str()),
        (
            StatusCode::BAD_REQUEST,
            "parameter_invalid",
            Some("payer_account_id")
        ),
        "{}",
        r.body
    );
    for ok in [
        good.to_string(),
        good.to_lowercase(),
        format!("0x{}", good[2..].to_uppercase()),
    ] {
        let r = h.post("/v1/mandates", body(&ok)).await?;
        assert_eq!(r.status, StatusCode::CREATED, "{ok}: {}", r.body);
    }
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn bad_paths_long_urls_and_unknown_cursors_answer_problems() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let s = h.server();
    // A path id that is not UTF-8 (%FF).
    let res = reqwest::Client::new()
        .get(format!("{}/v1/mandates/%FF%FE", s.base_url))
        .bearer_auth(&s.api_key)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    assert!(res.headers().contains_key("request-id"));
    assert_eq!(res.headers()["content-type"], "application/problem+json");
    let v: serde_json::Value = res.json().await?;
    assert_eq!(v["code"], "invalid_request");
    // An over-long URL.
    let res = reqwest::Client::new()
        .get(format!(
            "{}/v1/mandates?x={}",
            s.base_url,
            "a".repeat(10_000)
        ))
        .bearer_auth(&s.api_key)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::URI_TOO_LONG);
    assert!(res.headers().contains_key("request-id"));
    assert_eq!(res.headers()["content-type"], "application/problem+json");
    // An unknown cursor is not an empty page.
    for list in [
        "/v1/mandates",
        "/v1/session-keys",
        "/v1/debit-pulls",
        "/v1/payments",
    ] {
        let r = h
            .get(&format!("{list}?starting_after=man_doesnotexist"))
            .await?;
        assert_eq!(
            (r.status, r.code(), r.body["param"].as_str()),
            (
                StatusCode::BAD_REQUEST,
                "parameter_invalid",
                Some("starting_after")
            ),
            "{list}: {}",
            r.body
        );
    }
    // A known one still pages.
    let ba = h
        .post(
            "/v1/bank-accounts",
            json!({"owner_name": "A", "currency": "USD"}),
        )
        .await?;
    let m = h
        .post(
            "/v1/mandates",
            json!({"payer_account_id": ba.str("id"), "max_amount": "1", "currency": "USD", "interval": "daily"}),
        )
        .await?;
    let r = h
        .get(&format!("/v1/mandates?starting_after={}", m.str("id")))
        .await?;
    assert_eq!(
        (r.status, r.body["has_more"].as_bool()),
        (StatusCode::OK, Some(false))
    );
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn failed_authentication_is_rate_limited_per_address() -> anyhow::Result<()> {
    let h = Harness::builder()
        .config(openrail_api::ApiConfig {
            auth_failure_burst: 5.0,
            auth_failures_per_sec: 0.5,
            ..Default::default()
        })
        .start()
        .await?;
    let mut statuses = Vec::new();
    for i in 0..8 {
        let r = h
            .call(
                Method::GET,
                "/v1/mandates",
                None,
                Some(&format!("sk_testnet_wrong{i}")),
                &[],
            )
            .await?;
        statuses.push(r.status.as_u16());
        if r.status == StatusCode::TOO_MANY_REQUESTS {
            assert_eq!(r.code(), "rate_limited");
            assert!(r.headers.contains_key("retry-after"));
        }
    }
    assert_eq!(statuses, [401, 401, 401, 401, 401, 429, 429, 429]);
    // A valid key is neither counted nor slowed... once the address may try again.
    tokio::time::sleep(std::time::Duration::from_millis(2_100)).await;
    let r = h.get("/v1/mandates").await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn integral_numbers_with_a_fraction_are_integers() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let ba = h
        .post(
            "/v1/bank-accounts",
            json!({"owner_name": "A", "currency": "USD"}),
        )
        .await?;
    let m = h
        .post(
            "/v1/mandates",
            json!({"payer_account_id": ba.str("id"), "max_amount": "10", "currency": "USD", "interval": "daily"}),
        )
        .await?;
    for (expires_in, accepted) in [("3600.0", true), ("3.6e3", true), ("3600.5", false)] {
        let body = format!(
            r#"{{"mandate_id": "{}", "expires_in": {expires_in}}}"#,
            m.str("id")
        );
        let r = post_raw(&h, "/v1/session-keys", &body, &[]).await?;
        if accepted {
            assert_eq!(r.status, StatusCode::CREATED, "{expires_in}: {}", r.body);
        } else {
            assert_eq!(
                (r.status, r.body["param"].as_str()),
                (StatusCode::BAD_REQUEST, Some("expires_in")),
                "{expires_in}"
            );
        }
    }
    h.stop().await;
    Ok(())
}
