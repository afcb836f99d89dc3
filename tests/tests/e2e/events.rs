//! Events: every state change writes one `evt_` event with the object as it was then;
//! `GET /v1/events` lists them newest first with filters and a cursor, `GET
//! /v1/events/{id}` retrieves one.

use std::time::Duration;

use openrail_chain::devnet::{dev_demo_payer, dev_spare};
use openrail_tests::{Harness, Reply, audit};
use reqwest::StatusCode;
use serde_json::json;

/// The events of `object_id`, oldest first, as (type, the object's status then).
async fn trail(h: &Harness, object_id: &str) -> anyhow::Result<Vec<(String, String)>> {
    let r = h
        .get(&format!("/v1/events?object_id={object_id}&limit=100"))
        .await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["has_more"], false);
    let mut out: Vec<(String, String)> = r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            assert_eq!(e["object"], "event");
            assert!(e["id"].as_str().unwrap().starts_with("evt_"));
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

/// Polls `object_id`'s trail until it has `n` events (state changes finish after the
/// request in the background).
async fn trail_of_len(
    h: &Harness,
    object_id: &str,
    n: usize,
) -> anyhow::Result<Vec<(String, String)>> {
    for _ in 0..150 {
        let t = trail(h, object_id).await?;
        if t.len() >= n {
            return Ok(t);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    trail(h, object_id).await
}

#[tokio::test]
async fn every_state_change_of_the_agentic_flow_is_one_event() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let created = h
        .post(
            "/v1/mandates",
            json!({"payer_account_id": payer.address().to_string(), "max_amount": "10", "currency": "USD", "interval": "daily",
                   "payees": [dev_spare().address().to_string()]}),
        )
        .await?;
    let mandate = created.str("id").to_string();
    let r = h.authorize("/v1/mandates", &created.body, &payer).await?;
    assert_eq!(r.str("status"), "active", "{}", r.body);
    assert_eq!(
        trail(&h, &mandate).await?,
        pairs(&[
            ("mandate.created", "requires_authorization"),
            ("mandate.requires_authorization", "requires_authorization"),
            ("mandate.authorized", "pending"),
            ("mandate.activated", "active"),
        ])
    );
    // The event shows the object as it was: the signature only from `authorized` on.
    let events = h
        .get(&format!("/v1/events?object_id={mandate}&limit=100"))
        .await?;
    let data = events.body["data"].as_array().unwrap();
    assert!(data[3]["data"]["object"]["authorization"]["signature"].is_null());
    assert!(data[0]["data"]["object"]["authorization"]["signature"].is_string());

    let key = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": mandate, "expires_in": 3600}),
        )
        .await?;
    assert_eq!(key.status, StatusCode::CREATED, "{}", key.body);
    let key = key.str("id").to_string();
    let dest = dev_spare().address().to_string();
    let pull = |amount: &str| json!({"session_key_id": key, "amount": amount, "destination": dest});
    let ok = h.post("/v1/debit-pulls", pull("6.00")).await?;
    assert_eq!(ok.status, StatusCode::CREATED, "{}", ok.body);
    let over = h.post("/v1/debit-pulls", pull("6.00")).await?;
    assert_eq!(over.code(), "allowance_exceeded", "{}", over.body);
    let declined = over.body["pull_id"].as_str().unwrap().to_string();
    assert_eq!(
        trail(&h, ok.str("id")).await?,
        pairs(&[
            ("debit_pull.created", "pending"),
            ("debit_pull.authorized", "authorized")
        ])
    );
    assert_eq!(
        trail(&h, &declined).await?,
        pairs(&[
            ("debit_pull.created", "pending"),
            ("debit_pull.declined", "declined")
        ])
    );
    // The mandate's epoch use at the moment of the event, not now.
    let authorized = h
        .get(&format!(
            "/v1/events?object_id={}&type=debit_pull.authorized",
            ok.str("id")
        ))
        .await?;
    assert_eq!(authorized.body["data"].as_array().unwrap().len(), 1);

    let revoked = h.delete(&format!("/v1/session-keys/{key}")).await?;
    assert_eq!(revoked.str("status"), "revoked", "{}", revoked.body);
    assert_eq!(
        trail(&h, &key).await?,
        pairs(&[
            ("session_key.created", "pending"),
            ("session_key.activated", "active"),
            ("session_key.revoked", "revoked"),
        ])
    );
    let canceled = h
        .post(&format!("/v1/mandates/{mandate}/cancel"), json!({}))
        .await?;
    assert_eq!(canceled.str("status"), "canceled", "{}", canceled.body);
    let t = trail(&h, &mandate).await?;
    assert_eq!(
        t.last().unwrap(),
        &("mandate.canceled".to_string(), "canceled".to_string())
    );
    assert_eq!(t.len(), 5, "{t:?}");

    // Filters: a type, a kind of object, a time.
    let only_pulls = h.get("/v1/events?type=debit_pull.*&limit=100").await?;
    let types: Vec<&str> = only_pulls.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(types.len(), 4, "{types:?}");
    assert!(types.iter().all(|t| t.starts_with("debit_pull.")));
    let later = h.get("/v1/events?created[gte]=4102444800").await?;
    assert_eq!(later.body["data"], json!([]));
    let all = h
        .get("/v1/events?created[gte]=2020-01-01T00:00:00Z&limit=100")
        .await?;
    let n = all.body["data"].as_array().unwrap().len();
    assert_eq!(n, 5 + 3 + 4, "{}", all.body);
    for bad in [
        "/v1/events?type=debit_pull.teleported",
        "/v1/events?type=*",
        "/v1/events?created[gte]=yesterday",
        "/v1/events?limit=0",
        "/v1/events?starting_after=evt_unknown",
        "/v1/events?colour=red",
    ] {
        let r = h.get(bad).await?;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{bad}: {}", r.body);
    }

    // Newest first; the cursor walks back through all of them, each once.
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let path = match &after {
            None => "/v1/events?limit=5".to_string(),
            Some(a) => format!("/v1/events?limit=5&starting_after={a}"),
        };
        let page = h.get(&path).await?;
        let data = page.body["data"].as_array().unwrap().clone();
        for e in &data {
            seen.push(e["id"].as_str().unwrap().to_string());
        }
        after = data.last().map(|e| e["id"].as_str().unwrap().to_string());
        if page.body["has_more"] == false {
            break;
        }
    }
    assert_eq!(seen.len(), n);
    let ids: Vec<&str> = all.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(seen, ids);

    // One event by id; unknown ids are 404.
    let first = &all.body["data"][0];
    let one = h
        .get(&format!("/v1/events/{}", first["id"].as_str().unwrap()))
        .await?;
    assert_eq!(one.status, StatusCode::OK);
    assert_eq!(&one.body, first);
    let missing = h.get("/v1/events/evt_nope").await?;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.body);
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn payments_bank_transfers_and_key_expiry_have_events() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let payer_bank = audit::bank_account(&h, "100.00", 0).await?;
    let dest = dev_spare().address().to_string();
    let p = h
        .post(
            "/v1/payments",
            json!({"amount": "12.50", "currency": "USD",
                   "source": {"type": "bank_account", "id": payer_bank},
                   "destination": {"type": "wallet", "address": dest}}),
        )
        .await?;
    assert!(p.status.is_success(), "{}", p.body);
    let id = p.str("id").to_string();
    let t = trail_of_len(&h, &id, 3).await?;
    assert_eq!(
        t,
        pairs(&[
            ("payment.created", "pending"),
            ("payment.processing", "processing"),
            ("payment.succeeded", "succeeded"),
        ])
    );
    // The bank debit behind it: created, then settled.
    let transfers = h.get("/v1/events?type=bank_account.transfer.*").await?;
    let types: Vec<(&str, &str)> = transfers.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            assert_eq!(e["data"]["object"]["bank_account_id"], payer_bank.as_str());
            (
                e["type"].as_str().unwrap(),
                e["data"]["object"]["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        types,
        [
            ("bank_account.transfer.settled", "settled"),
            ("bank_account.transfer.created", "pending")
        ]
    );

    // A key whose time passes is announced once as expired.
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 100).await?;
    let (_, key) = audit::mandate_and_key(&h, &payer.address().to_string()).await?;
    let short: Reply = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": h.get(&format!("/v1/session-keys/{key}")).await?.str("mandate_id"), "expires_in": 60}),
        )
        .await?;
    assert_eq!(short.status, StatusCode::CREATED, "{}", short.body);
    let short = short.str("id").to_string();
    // Nothing is announced before the key's time passes; then exactly once. (The clock is
    // passed in: the sweep the lease holder runs is called here an hour ahead.)
    let t = trail(&h, &short).await?;
    assert_eq!(t.len(), 2, "{t:?}");
    let store = &h.server().store;
    let later = openrail_store::now_ms() + 3_600_000;
    assert_eq!(store.keys().announce_expired(later, 100).await?, 1);
    assert_eq!(store.keys().announce_expired(later, 100).await?, 0);
    assert_eq!(
        trail(&h, &short).await?,
        pairs(&[
            ("session_key.created", "pending"),
            ("session_key.activated", "active"),
            ("session_key.expired", "expired"),
        ])
    );
    h.stop().await;
    Ok(())
}
