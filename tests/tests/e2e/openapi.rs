//! The OpenAPI document: the server serves the committed `docs/openapi.json`, every route
//! the router serves is documented, every documented operation is served, and real
//! responses match the documented schemas (so a handler whose shape drifts from the
//! document fails here).

use openrail_api::openapi::ROUTES;
use openrail_chain::devnet::{dev_demo_payer, dev_spare};
use openrail_tests::{Harness, Reply};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Keywords [`check`] understands; anything else fails loudly rather than pass silently.
const KEYWORDS: &[&str] = &[
    "$ref",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "const",
    "enum",
    "type",
    "pattern",
    "required",
    "properties",
    "additionalProperties",
    "items",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "multipleOf",
    // Annotations, no constraint.
    "description",
    "examples",
    "example",
    "default",
    "title",
    "format",
    "discriminator",
];

/// A small JSON Schema checker for the keywords the document uses.
fn check(doc: &Value, schema: &Value, v: &Value, at: &str) -> Result<(), String> {
    if let Some(unknown) = schema
        .as_object()
        .and_then(|o| o.keys().find(|k| !KEYWORDS.contains(&k.as_str())))
    {
        return Err(format!(
            "{at}: the checker does not know the keyword {unknown}"
        ));
    }
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/components/schemas/");
        return check(doc, &doc["components"]["schemas"][name], v, at);
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        for s in all {
            check(doc, s, v, at)?;
        }
    }
    if let Some(not) = schema.get("not")
        && check(doc, not, v, at).is_ok()
    {
        return Err(format!("{at}: {v} matches what `not` excludes"));
    }
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array)
        && !any.iter().any(|s| check(doc, s, v, at).is_ok())
    {
        return Err(format!("{at}: no anyOf matches {v}"));
    }
    if let (Some(min), Some(n)) = (schema.get("minimum").and_then(Value::as_f64), v.as_f64())
        && n < min
    {
        return Err(format!("{at}: {n} < {min}"));
    }
    if let (Some(max), Some(n)) = (schema.get("maximum").and_then(Value::as_f64), v.as_f64())
        && n > max
    {
        return Err(format!("{at}: {n} > {max}"));
    }
    if let (Some(max), Some(s)) = (schema.get("maxLength").and_then(Value::as_u64), v.as_str())
        && s.chars().count() as u64 > max
    {
        return Err(format!("{at}: longer than {max}"));
    }
    if let Some(options) = schema.get("oneOf").and_then(Value::as_array) {
        let results: Vec<Result<(), String>> =
            options.iter().map(|s| check(doc, s, v, at)).collect();
        let n = results.iter().filter(|r| r.is_ok()).count();
        return if n == 1 {
            Ok(())
        } else {
            let why: Vec<String> = results.into_iter().filter_map(Result::err).collect();
            Err(format!("{at}: {n} of oneOf match {v} ({})", why.join("; ")))
        };
    }
    if let Some(c) = schema.get("const")
        && c != v
    {
        return Err(format!("{at}: {v} is not {c}"));
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array)
        && !e.contains(v)
    {
        return Err(format!("{at}: {v} not in {e:?}"));
    }
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => return Err(format!("{at}: bad type {t}")),
        };
        let ok = types.iter().any(|t| match *t {
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            "object" => v.is_object(),
            "array" => v.is_array(),
            _ => false,
        });
        if !ok {
            return Err(format!("{at}: {v} is not {t}"));
        }
    }
    if let (Some(p), Some(s)) = (schema.get("pattern").and_then(Value::as_str), v.as_str())
        && !regex::Regex::new(p).expect("pattern compiles").is_match(s)
    {
        return Err(format!("{at}: {s:?} does not match {p}"));
    }
    if let Some(obj) = v.as_object() {
        for req in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = req.as_str().unwrap();
            if !obj.contains_key(key) {
                return Err(format!("{at}: missing {key}"));
            }
        }
        let props = schema.get("properties").and_then(Value::as_object);
        for (k, val) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(s) => check(doc, s, val, &format!("{at}.{k}"))?,
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    return Err(format!("{at}: undocumented member {k}"));
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), v.as_array()) {
        for (i, x) in arr.iter().enumerate() {
            check(doc, items, x, &format!("{at}[{i}]"))?;
        }
    }
    Ok(())
}

pub(crate) fn assert_documented(doc: &Value, method: &str, path: &str, r: &Reply) {
    let status = r.status.as_u16().to_string();
    let content = &doc["paths"][path][method]["responses"][&status]["content"];
    let media = if r.status.is_success() {
        "application/json"
    } else {
        "application/problem+json"
    };
    let schema = &content[media]["schema"];
    assert!(
        !schema.is_null(),
        "{method} {path} {status} is not documented"
    );
    if let Err(e) = check(doc, schema, &r.body, "$") {
        panic!("{method} {path} {status}: {e}");
    }
}

#[tokio::test]
async fn document_matches_router_and_responses() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let doc = h.get("/v1/openapi.json").await?;
    assert_eq!(doc.status, StatusCode::OK);
    let doc = doc.body;
    assert_eq!(doc["openapi"], "3.1.0");
    let committed: Value = serde_json::from_str(include_str!("../../../docs/openapi.json"))?;
    assert!(
        doc == committed,
        "the served document differs from docs/openapi.json: run `make openapi`"
    );
    // No authentication for the document and the reference page.
    let base = h.server.as_ref().expect("a server").base_url.clone();
    let anonymous = reqwest::get(format!("{}/v1/openapi.json", base)).await?;
    assert_eq!(anonymous.status(), StatusCode::OK);
    assert!(doc["paths"]["/v1/openapi.json"]["get"]["security"] == json!([]));
    let page = reqwest::get(format!("{}/docs", base)).await?;
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.text().await?.contains("/docs/redoc.standalone.js"));
    let js = reqwest::get(format!("{}/docs/redoc.standalone.js", base)).await?;
    assert_eq!(js.status(), StatusCode::OK);
    assert!(js.bytes().await?.len() > 100_000);

    // Every example of a response matches its schema.
    let mut examples = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for (status, response) in op["responses"].as_object().unwrap() {
                for (media, content) in response["content"].as_object().into_iter().flatten() {
                    for (name, example) in content["examples"].as_object().into_iter().flatten() {
                        examples += 1;
                        if let Err(e) = check(&doc, &content["schema"], &example["value"], "$") {
                            panic!("{method} {path} {status} {media} example {name}: {e}");
                        }
                    }
                }
            }
        }
    }
    assert!(examples > 10, "{examples} examples");

    // Every route of the table is documented, and every documented operation is served
    // (a served route never answers the router's own `not_found` / 405).
    let mut documented = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            documented += 1;
            assert!(
                ROUTES.iter().any(|r| r.path == path && r.method == method),
                "{method} {path} not in the route table"
            );
            let url = path.replace("{id}", "x");
            let m = Method::from_bytes(method.to_uppercase().as_bytes())?;
            let body = (m == Method::POST).then(|| json!({}));
            let r = h.call(m, &url, body.as_ref(), None, &[]).await?;
            assert_ne!(r.status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
            assert_ne!(
                r.body["code"], "not_found",
                "{method} {path} is documented but not served"
            );
        }
    }
    assert_eq!(documented, ROUTES.len());

    // Real responses against the documented schemas.
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let dest = dev_spare().address().to_string();
    let m = h.post("/v1/mandates", json!({"payer_account_id": payer.address().to_string(), "max_amount": 10, "currency": "USD", "interval": "monthly", "purpose": "docs", "payees": [dest]})).await?;
    assert_documented(&doc, "post", "/v1/mandates", &m);
    let mid = m.str("id").to_string();
    // A wrong signature's problem, then the payer's: both as documented.
    let wrong = h
        .post(
            &format!("/v1/mandates/{mid}/authorize"),
            json!({"signature": format!("0x{}", "11".repeat(65))}),
        )
        .await?;
    assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_documented(&doc, "post", "/v1/mandates/{id}/authorize", &wrong);
    let authorized = h.authorize("/v1/mandates", &m.body, &payer).await?;
    assert_documented(&doc, "post", "/v1/mandates/{id}/authorize", &authorized);
    assert_documented(
        &doc,
        "get",
        "/v1/mandates/{id}",
        &h.get(&format!("/v1/mandates/{mid}")).await?,
    );
    assert_documented(&doc, "get", "/v1/mandates", &h.get("/v1/mandates").await?);
    let k = h.post("/v1/session-keys", json!({"mandate_id": mid, "expires_in": 600, "max_amount": "5", "allowed_destinations": [dest]})).await?;
    assert_documented(&doc, "post", "/v1/session-keys", &k);
    let kid = k.str("id").to_string();
    assert_documented(
        &doc,
        "get",
        "/v1/session-keys/{id}",
        &h.get(&format!("/v1/session-keys/{kid}")).await?,
    );
    assert_documented(
        &doc,
        "get",
        "/v1/session-keys",
        &h.get("/v1/session-keys").await?,
    );
    let p = h.post("/v1/debit-pulls", json!({"session_key_id": kid, "amount": "2.50", "destination": dest, "description": "coffee"})).await?;
    assert_documented(&doc, "post", "/v1/debit-pulls", &p);
    let declined = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": kid, "amount": "3", "destination": dest}),
        )
        .await?;
    assert_eq!(declined.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_documented(&doc, "post", "/v1/debit-pulls", &declined);
    assert_documented(
        &doc,
        "get",
        "/v1/debit-pulls/{id}",
        &h.get(&format!("/v1/debit-pulls/{}", p.str("id"))).await?,
    );
    assert_documented(
        &doc,
        "get",
        "/v1/debit-pulls",
        &h.get("/v1/debit-pulls").await?,
    );
    assert_documented(
        &doc,
        "post",
        "/v1/mandates",
        &h.post("/v1/mandates", json!({"max_amount": 1})).await?,
    );
    assert_documented(
        &doc,
        "delete",
        "/v1/session-keys/{id}",
        &h.delete(&format!("/v1/session-keys/{kid}")).await?,
    );
    assert_documented(
        &doc,
        "post",
        "/v1/mandates/{id}/cancel",
        &h.post(&format!("/v1/mandates/{mid}/cancel"), json!({}))
            .await?,
    );
    let pay = h
        .post(
            "/v1/payments",
            json!({"amount": "1.25", "currency": "USD", "source": {"type": "wallet", "id": payer.address().to_string()},
                   "destination": {"type": "wallet", "address": dest}}),
        )
        .await?;
    assert_documented(&doc, "post", "/v1/payments", &pay);
    let pay = h.authorize("/v1/payments", &pay.body, &payer).await?;
    assert_documented(&doc, "post", "/v1/payments/{id}/authorize", &pay);
    assert_documented(
        &doc,
        "get",
        "/v1/payments/{id}",
        &h.get(&format!("/v1/payments/{}", pay.str("id"))).await?,
    );
    assert_documented(&doc, "get", "/v1/payments", &h.get("/v1/payments").await?);
    let ba = h
        .post(
            "/v1/bank-accounts",
            json!({"owner_name": "Ada", "currency": "USD", "balance": "10", "behavior": "delayed"}),
        )
        .await?;
    assert_documented(&doc, "post", "/v1/bank-accounts", &ba);
    assert_documented(
        &doc,
        "get",
        "/v1/bank-accounts/{id}",
        &h.get(&format!("/v1/bank-accounts/{}", ba.str("id")))
            .await?,
    );
    // Every event so far (mandates, keys, pulls, a payment), each object as it was.
    let events = h.get("/v1/events?limit=100").await?;
    assert_documented(&doc, "get", "/v1/events", &events);
    assert!(events.body["data"].as_array().unwrap().len() > 10);
    let first = events.body["data"][0]["id"].as_str().unwrap().to_string();
    assert_documented(
        &doc,
        "get",
        "/v1/events/{id}",
        &h.get(&format!("/v1/events/{first}")).await?,
    );
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn webhook_responses_match_the_document() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let doc = h.get("/v1/openapi.json").await?.body;
    let (c, p) = ("/v1/webhook-endpoints", "/v1/webhook-endpoints/{id}");
    let created = h
        .post(
            c,
            json!({"url": "http://127.0.0.1:9/hook", "enabled_events": ["*"], "description": "docs"}),
        )
        .await?;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_documented(&doc, "post", c, &created);
    let refused = h
        .post(
            c,
            json!({"url": "http://10.0.0.1/hook", "enabled_events": ["*"]}),
        )
        .await?;
    assert_eq!(refused.code(), "url_not_allowed");
    assert_documented(&doc, "post", c, &refused);
    let id = created.str("id").to_string();
    let one = format!("{c}/{id}");
    assert_documented(&doc, "get", p, &h.get(&one).await?);
    assert_documented(&doc, "get", c, &h.get(c).await?);
    let updated = h
        .post(
            &one,
            json!({"enabled_events": ["mandate.created"], "description": null}),
        )
        .await?;
    assert_documented(&doc, "post", p, &updated);
    let rotated = h.post(&format!("{one}/rotate-secret"), json!({})).await?;
    assert_documented(&doc, "post", &format!("{p}/rotate-secret"), &rotated);
    let m = h.post("/v1/mandates", json!({"payer_account_id": dev_demo_payer().address().to_string(), "max_amount": 10, "currency": "USD", "interval": "monthly"})).await?;
    let events = h
        .get(&format!("/v1/events?object_id={}", m.str("id")))
        .await?;
    let created_event = events.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "mandate.created")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let again = h
        .post(
            &format!("/v1/events/{created_event}/redeliver"),
            json!({"endpoint": id}),
        )
        .await?;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_documented(&doc, "post", "/v1/events/{id}/redeliver", &again);
    let deliveries = h.get(&format!("{one}/deliveries")).await?;
    assert!(
        !deliveries.body["data"].as_array().unwrap().is_empty(),
        "{}",
        deliveries.body
    );
    assert_documented(&doc, "get", &format!("{p}/deliveries"), &deliveries);
    let deleted = h.delete(&one).await?;
    assert_documented(&doc, "delete", p, &deleted);
    h.stop().await;
    Ok(())
}
