//! Webhooks end to end. Every delivery is verified by a receiver that uses the reference
//! Standard Webhooks library (`standardwebhooks` from PyPI, in the venv `make test`
//! creates: `tests/webhook-receiver/receiver.py`), not Openrail's own verifier.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use openrail_chain::devnet::{dev_demo_payer, dev_spare};
use openrail_store::{Mode, now_ms};
use openrail_tests::{Harness, Reply};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// The venv's python with `standardwebhooks`: `OPENRAIL_WEBHOOK_PYTHON` (set by `make
/// test`), else `.venv-webhooks/bin/python` in the repository. Missing: an error in CI,
/// elsewhere `None` after a visible message.
fn python() -> Option<PathBuf> {
    let path = std::env::var_os("OPENRAIL_WEBHOOK_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv-webhooks/bin/python")
        });
    if path.exists() {
        return Some(path);
    }
    assert_ne!(
        std::env::var("CI").as_deref(),
        Ok("true"),
        "no python with standardwebhooks at {} (run `make webhook-receiver`)",
        path.display()
    );
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: webhook e2e test: no python with standardwebhooks at {} (`make test` creates it: make webhook-receiver)",
        path.display()
    );
    None
}

/// The Python receiver as a child process (killed on drop).
struct Receiver {
    _child: tokio::process::Child,
    lines: tokio::sync::mpsc::UnboundedReceiver<String>,
    /// Every request it reported, in order.
    seen: Vec<Value>,
    port: u16,
}

/// A file of secrets the receiver reads at every request (one per line).
struct Secrets {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Secrets {
    fn new() -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("secrets");
        std::fs::write(&path, "")?;
        Ok(Self { _dir: dir, path })
    }

    fn set(&self, secrets: &[&str]) -> anyhow::Result<()> {
        std::fs::write(&self.path, secrets.join("\n"))?;
        Ok(())
    }
}

impl Receiver {
    async fn start(
        python: &PathBuf,
        secrets: &Secrets,
        port: u16,
        fail_first: u32,
    ) -> anyhow::Result<Self> {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("webhook-receiver/receiver.py");
        let mut child = tokio::process::Command::new(python)
            .arg(script)
            .arg("--secrets-file")
            .arg(&secrets.path)
            .arg("--port")
            .arg(port.to_string())
            .arg("--fail-first")
            .arg(fail_first.to_string())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .context("starting the python receiver")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let (tx, mut lines) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            use tokio::io::AsyncBufReadExt;
            let mut reader = tokio::io::BufReader::new(stdout).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let first = tokio::time::timeout(Duration::from_secs(20), lines.recv())
            .await
            .context("the receiver did not start")?
            .context("the receiver exited")?;
        let port = first
            .strip_prefix("listening ")
            .context("no listening line")?
            .parse()?;
        Ok(Self {
            _child: child,
            lines,
            seen: Vec::new(),
            port,
        })
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hook", self.port)
    }

    fn drain(&mut self) {
        while let Ok(line) = self.lines.try_recv() {
            self.seen
                .push(serde_json::from_str(&line).expect("the receiver prints JSON"));
        }
    }

    /// Waits until `done` holds of what it saw.
    async fn wait_for(
        &mut self,
        within: Duration,
        what: &str,
        done: impl Fn(&[Value]) -> bool,
    ) -> anyhow::Result<()> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            self.drain();
            if done(&self.seen) {
                return Ok(());
            }
            anyhow::ensure!(
                tokio::time::Instant::now() < deadline,
                "the receiver did not see {what} within {within:?}; it saw:\n{}",
                self.seen
                    .iter()
                    .map(|v| format!(
                        "{} {} {} verified={} attempt={}",
                        v["webhook_id"], v["type"], v["status"], v["verified"], v["attempt"]
                    ))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// webhook-id → the statuses the receiver answered it, in order.
fn statuses(seen: &[Value]) -> BTreeMap<String, Vec<u64>> {
    let mut out: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for v in seen {
        out.entry(v["webhook_id"].as_str().unwrap_or_default().to_string())
            .or_default()
            .push(v["status"].as_u64().unwrap_or_default());
    }
    out
}

/// Whether every id in `ids` got a 200 (so verified with a known secret).
fn all_delivered(seen: &[Value], ids: &BTreeSet<String>) -> bool {
    let s = statuses(seen);
    ids.iter()
        .all(|id| s.get(id).is_some_and(|st| st.contains(&200)))
}

/// How many distinct webhook-ids about `object` got a 200 (a delivery may come twice).
fn delivered_ids(seen: &[Value], object: &str) -> usize {
    seen.iter()
        .filter(|v| v["object_id"] == object && v["status"] == 200)
        .map(|v| v["webhook_id"].as_str().unwrap_or_default())
        .collect::<BTreeSet<_>>()
        .len()
}

/// The ids of the account's events, all of them (newest first pages).
async fn event_ids(h: &Harness) -> anyhow::Result<BTreeSet<String>> {
    let r = h.get("/v1/events?limit=100").await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["has_more"], false);
    Ok(r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect())
}

async fn create_endpoint(h: &Harness, url: &str, bearer: Option<&str>) -> anyhow::Result<Reply> {
    h.call(
        Method::POST,
        "/v1/webhook-endpoints",
        Some(&json!({"url": url, "enabled_events": ["*"], "description": "e2e"})),
        bearer,
        &[],
    )
    .await
}

/// A wallet mandate waiting for its payer's signature: two events, no transaction.
async fn mandate_events(h: &Harness) -> anyhow::Result<String> {
    let r = h
        .post(
            "/v1/mandates",
            json!({"payer_account_id": dev_demo_payer().address().to_string(), "max_amount": "10", "currency": "USD", "interval": "daily"}),
        )
        .await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    Ok(r.str("id").to_string())
}

/// A port nothing listens on now (bound, then let go).
async fn free_port() -> anyhow::Result<u16> {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    Ok(l.local_addr()?.port())
}

#[tokio::test]
async fn a_debit_pull_and_a_bank_payment_arrive_signed() -> anyhow::Result<()> {
    let Some(python) = python() else {
        return Ok(());
    };
    let h = Harness::start().await?;
    let secrets = Secrets::new()?;
    let mut rx = Receiver::start(&python, &secrets, 0, 0).await?;

    let created = create_endpoint(&h, &rx.url(), None).await?;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let endpoint = created.str("id").to_string();
    let secret = created.str("secret").to_string();
    assert!(secret.starts_with("whsec_"));
    {
        use base64::Engine;
        let raw = base64::engine::general_purpose::STANDARD.decode(&secret["whsec_".len()..])?;
        assert!(raw.len() >= 24, "{} random bytes", raw.len());
    }
    secrets.set(&[&secret])?;
    let shown = h.get(&format!("/v1/webhook-endpoints/{endpoint}")).await?;
    assert_eq!(shown.status, StatusCode::OK);
    assert!(shown.body.get("secret").is_none(), "{}", shown.body);

    // A debit pull …
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let mandate = h
        .post_authorized(
            "/v1/mandates",
            json!({"payer_account_id": payer.address().to_string(), "max_amount": "10", "currency": "USD", "interval": "daily",
                   "payees": [dev_spare().address().to_string()]}),
        )
        .await?;
    assert_eq!(mandate.str("status"), "active", "{}", mandate.body);
    let key = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": mandate.str("id"), "expires_in": 3600}),
        )
        .await?;
    assert_eq!(key.status, StatusCode::CREATED, "{}", key.body);
    let pull = h
        .post(
            "/v1/debit-pulls",
            json!({"session_key_id": key.str("id"), "amount": "6.00", "destination": dev_spare().address().to_string()}),
        )
        .await?;
    assert_eq!(pull.str("status"), "authorized", "{}", pull.body);
    // … and a bank → wallet payment.
    let ba = h
        .post(
            "/v1/bank-accounts",
            json!({"owner_name": "Ada", "currency": "USD", "balance": "100.00", "behavior": "settles", "delay_seconds": 0}),
        )
        .await?;
    let payment = h
        .post(
            "/v1/payments",
            json!({"amount": "40.00", "currency": "USD", "source": {"type": "bank_account", "id": ba.str("id")},
                   "destination": {"type": "wallet", "address": dev_spare().address().to_string()}}),
        )
        .await?;
    assert_eq!(payment.str("status"), "succeeded", "{}", payment.body);

    let first = event_ids(&h).await?;
    rx.wait_for(Duration::from_secs(30), "every event", |seen| {
        all_delivered(seen, &first)
    })
    .await?;
    // Anything that happened meanwhile arrives too.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let ids = event_ids(&h).await?;
    rx.wait_for(Duration::from_secs(30), "every event", |seen| {
        all_delivered(seen, &ids)
    })
    .await?;
    let mut types = BTreeSet::new();
    for v in &rx.seen {
        assert_eq!(v["verified"], json!([0]), "{v}");
        assert_eq!(v["signatures"], 1);
        assert_eq!(v["content_type"], "application/json");
        let id = v["webhook_id"].as_str().unwrap();
        assert!(ids.contains(id), "{id} is not an event of the account");
        // The body is the event exactly as GET /v1/events/{id} renders it.
        let event = h.get(&format!("/v1/events/{id}")).await?;
        assert_eq!(v["body"], event.body, "{id}");
        types.insert(v["type"].as_str().unwrap().to_string());
    }
    for t in [
        "debit_pull.created",
        "debit_pull.authorized",
        "payment.created",
        "payment.succeeded",
        "bank_account.transfer.settled",
    ] {
        assert!(types.contains(t), "no {t} in {types:?}");
    }

    // What the developer sees of it.
    let deliveries = h
        .get(&format!(
            "/v1/webhook-endpoints/{endpoint}/deliveries?limit=100"
        ))
        .await?;
    assert_eq!(deliveries.status, StatusCode::OK, "{}", deliveries.body);
    let data = deliveries.body["data"].as_array().unwrap();
    let listed: BTreeSet<String> = data
        .iter()
        .map(|d| d["event_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, ids);
    // A delivery is recorded just after the receiver answered it: poll until all are.
    for _ in 0..50 {
        let d = h
            .get(&format!(
                "/v1/webhook-endpoints/{endpoint}/deliveries?limit=100"
            ))
            .await?;
        if d.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["status"] == "succeeded")
        {
            for d in d.body["data"].as_array().unwrap() {
                assert_eq!(d["attempts"], 1, "{d}");
                assert_eq!(d["last_status_code"], 200, "{d}");
                assert!(d["latency_ms"].is_i64(), "{d}");
                assert!(d["next_attempt_at"].is_null(), "{d}");
            }
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Redelivery: the same webhook-id again.
    let again = ids.iter().next().unwrap().clone();
    let r = h
        .post(&format!("/v1/events/{again}/redeliver"), json!({}))
        .await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["data"].as_array().unwrap().len(), 1, "{}", r.body);
    assert_eq!(r.body["data"][0]["redelivery"], true);
    rx.wait_for(Duration::from_secs(10), "the redelivery", |seen| {
        statuses(seen).get(&again).is_some_and(|s| s.len() >= 2)
    })
    .await?;

    // Deleted: nothing more, and it is gone.
    let gone = h
        .delete(&format!("/v1/webhook-endpoints/{endpoint}"))
        .await?;
    assert_eq!(gone.body["deleted"], true, "{}", gone.body);
    let r = h.get(&format!("/v1/webhook-endpoints/{endpoint}")).await?;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn failures_and_downtime_lose_no_event() -> anyhow::Result<()> {
    let Some(python) = python() else {
        return Ok(());
    };
    let h = Harness::start().await?;
    let secrets = Secrets::new()?;
    // Down first: the endpoint's port refuses connections.
    let port = free_port().await?;
    let created = create_endpoint(&h, &format!("http://127.0.0.1:{port}/hook"), None).await?;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let endpoint = created.str("id").to_string();
    secrets.set(&[created.str("secret")])?;
    for _ in 0..3 {
        mandate_events(&h).await?;
    }
    let ids = event_ids(&h).await?;
    assert_eq!(ids.len(), 6);
    // Wait until every delivery failed at least twice against the closed port.
    let mut refused = false;
    for _ in 0..100 {
        let d = h
            .get(&format!(
                "/v1/webhook-endpoints/{endpoint}/deliveries?limit=100"
            ))
            .await?;
        let data = d.body["data"].as_array().unwrap().clone();
        if data.len() == 6
            && data.iter().all(|d| {
                d["attempts"].as_i64().unwrap() >= 2
                    && d["status"] == "pending"
                    && d["last_status_code"].is_null()
                    && d["last_error"].is_string()
                    && d["next_attempt_at"].is_string()
            })
        {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        refused,
        "deliveries did not fail while the receiver was down"
    );

    // Up, answering 500 to the first two attempts of each event: every event arrives.
    let mut rx = Receiver::start(&python, &secrets, port, 2).await?;
    rx.wait_for(
        Duration::from_secs(60),
        "every event after two 500s",
        |seen| all_delivered(seen, &ids),
    )
    .await?;
    for (id, st) in statuses(&rx.seen) {
        assert!(ids.contains(&id), "{id}");
        assert_eq!(&st[..3], &[500, 500, 200], "{id}: {st:?}");
    }
    for v in &rx.seen {
        assert_eq!(v["verified"], json!([0]), "{v}");
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let d = h
            .get(&format!(
                "/v1/webhook-endpoints/{endpoint}/deliveries?limit=100"
            ))
            .await?;
        let data = d.body["data"].as_array().unwrap().clone();
        if data.iter().all(|d| d["status"] == "succeeded") {
            for d in &data {
                assert!(d["attempts"].as_i64().unwrap() >= 5, "{d}");
            }
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{}", d.body);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let e = h.get(&format!("/v1/webhook-endpoints/{endpoint}")).await?;
    assert_eq!(e.str("status"), "enabled");
    assert!(e.body["failing_since"].is_null(), "a success clears it");
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn a_killed_server_resumes_pending_deliveries() -> anyhow::Result<()> {
    let Some(python) = python() else {
        return Ok(());
    };
    let mut h = Harness::start_processes(env!("CARGO_BIN_EXE_openrail-under-test")).await?;
    let mut server = h.spawn_server(None).await?;
    server.leading(Duration::from_secs(30)).await?;
    let secrets = Secrets::new()?;
    let port = free_port().await?;
    let created = create_endpoint(&h, &format!("http://127.0.0.1:{port}/hook"), None).await?;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let endpoint = created.str("id").to_string();
    secrets.set(&[created.str("secret")])?;
    mandate_events(&h).await?;
    mandate_events(&h).await?;
    let ids = event_ids(&h).await?;
    assert_eq!(ids.len(), 4);
    // Pending: tried against the closed port, not delivered.
    let mut pending = false;
    for _ in 0..100 {
        let d = h
            .get(&format!(
                "/v1/webhook-endpoints/{endpoint}/deliveries?limit=100"
            ))
            .await?;
        let data = d.body["data"].as_array().unwrap().clone();
        if data.len() == 4
            && data
                .iter()
                .all(|d| d["status"] == "pending" && d["attempts"].as_i64().unwrap() >= 1)
        {
            pending = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(pending, "the deliveries were not tried before the kill");
    assert_eq!(server.kill().await?, Some(9), "killed by SIGKILL");

    // The receiver is up, but no server runs: nothing arrives …
    let mut rx = Receiver::start(&python, &secrets, port, 0).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    rx.drain();
    assert!(rx.seen.is_empty(), "{:?}", rx.seen);
    // … until a server starts again on the database: it resumes every delivery.
    let mut again = h.spawn_server(None).await?;
    again.leading(Duration::from_secs(30)).await?;
    rx.wait_for(
        Duration::from_secs(60),
        "every event after the restart",
        |seen| all_delivered(seen, &ids),
    )
    .await?;
    for v in &rx.seen {
        assert!(ids.contains(v["webhook_id"].as_str().unwrap()), "{v}");
        assert_eq!(v["verified"], json!([0]), "{v}");
    }
    drop(again);
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn during_a_rotation_deliveries_verify_with_either_secret() -> anyhow::Result<()> {
    let Some(python) = python() else {
        return Ok(());
    };
    let h = Harness::start().await?;
    let secrets = Secrets::new()?;
    let mut rx = Receiver::start(&python, &secrets, 0, 0).await?;
    let created = create_endpoint(&h, &rx.url(), None).await?;
    let endpoint = created.str("id").to_string();
    let old = created.str("secret").to_string();
    secrets.set(&[&old])?;
    let m1 = mandate_events(&h).await?;
    rx.wait_for(
        Duration::from_secs(20),
        "the first mandate's events",
        |seen| delivered_ids(seen, &m1) == 2,
    )
    .await?;

    let rotated = h
        .post(
            &format!("/v1/webhook-endpoints/{endpoint}/rotate-secret"),
            json!({}),
        )
        .await?;
    assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.body);
    let new = rotated.str("secret").to_string();
    assert!(new.starts_with("whsec_") && new != old);
    let until = rotated.str("previous_secret_expires_at").to_string();
    let until =
        time::OffsetDateTime::parse(&until, &time::format_description::well_known::Rfc3339)?;
    let hours = (until.unix_timestamp() - now_ms() / 1000) as f64 / 3600.0;
    assert!((23.9..=24.0).contains(&hours), "{hours} h of overlap");
    let shown = h.get(&format!("/v1/webhook-endpoints/{endpoint}")).await?;
    assert!(shown.body.get("secret").is_none());

    // The receiver knows the old secret (0) and the new one (1): both verify.
    secrets.set(&[&old, &new])?;
    let m2 = mandate_events(&h).await?;
    rx.wait_for(
        Duration::from_secs(20),
        "the second mandate's events",
        |seen| delivered_ids(seen, &m2) == 2,
    )
    .await?;
    for v in &rx.seen {
        if v["object_id"] == m2.as_str() {
            assert_eq!(v["signatures"], 2, "{v}");
            assert_eq!(v["verified"], json!([0, 1]), "{v}");
        } else {
            assert_eq!(v["signatures"], 1, "{v}");
            assert_eq!(v["verified"], json!([0]), "{v}");
        }
    }
    // A receiver that knows only the new secret verifies too (and one that knows neither
    // refuses: the library is really checking).
    secrets.set(&[&new])?;
    let m3 = mandate_events(&h).await?;
    rx.wait_for(
        Duration::from_secs(20),
        "the third mandate's events",
        |seen| delivered_ids(seen, &m3) == 2,
    )
    .await?;
    secrets.set(&["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])?;
    let m4 = mandate_events(&h).await?;
    rx.wait_for(
        Duration::from_secs(20),
        "refusals with a wrong secret",
        |seen| {
            seen.iter()
                .filter(|v| v["object_id"] == m4.as_str() && v["status"] == 400)
                .count()
                >= 2
        },
    )
    .await?;
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn endpoints_are_checked_and_scoped() -> anyhow::Result<()> {
    let h = Harness::builder().mainnet().start().await?;
    let s = h.server();
    let (_, mainnet_key) = s
        .store
        .api_keys()
        .create(&s.account_id, Mode::Mainnet, now_ms())
        .await?;
    let main = Some(mainnet_key.as_str());

    // Mainnet: https only, and only to public addresses (written or resolved).
    for url in [
        "https://127.0.0.1/hook",
        "https://169.254.169.254/latest/meta-data",
        "http://169.254.169.254/latest/meta-data",
        "https://localhost/hook",
        "https://[::1]/hook",
        "https://10.1.2.3/hook",
        "https://[::ffff:192.168.0.1]/hook",
        "http://93.184.215.14/hook",
    ] {
        let r = create_endpoint(&h, url, main).await?;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{url}: {}", r.body);
        assert_eq!(r.code(), "url_not_allowed", "{url}: {}", r.body);
        assert_eq!(r.body["param"], "url");
    }
    let ok = create_endpoint(&h, "https://93.184.215.14/hook", main).await?;
    assert_eq!(ok.status, StatusCode::CREATED, "{}", ok.body);
    assert_eq!(ok.body["livemode"], true);
    let mainnet_endpoint = ok.str("id").to_string();

    // Testnet: also http to loopback, never to private or metadata addresses.
    for url in [
        "http://10.0.0.5/hook",
        "https://169.254.169.254/",
        "http://example.com/hook",
        "ftp://127.0.0.1/",
    ] {
        let r = create_endpoint(&h, url, None).await?;
        assert_eq!(r.code(), "url_not_allowed", "{url}: {}", r.body);
    }
    let a = create_endpoint(&h, "http://127.0.0.1:9/a", None).await?;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    // Lists are newest first by creation time (milliseconds), ties by id: b must be
    // created in a later millisecond for "newest first" to name it (created in the same
    // one, the order between the two is their ids').
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let b = create_endpoint(&h, "http://localhost:9/b", None).await?;
    assert_eq!(b.status, StatusCode::CREATED, "{}", b.body);
    let (a, b) = (a.str("id").to_string(), b.str("id").to_string());

    // Event types are checked.
    let r = h
        .post(
            "/v1/webhook-endpoints",
            json!({"url": "http://127.0.0.1:9/", "enabled_events": ["debit_pull.created", "debit_pull.exploded"]}),
        )
        .await?;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::BAD_REQUEST, "parameter_invalid"),
        "{}",
        r.body
    );
    let r = h
        .post(
            "/v1/webhook-endpoints",
            json!({"url": "http://127.0.0.1:9/", "enabled_events": []}),
        )
        .await?;
    assert_eq!(r.code(), "parameter_invalid", "{}", r.body);

    // Modes and accounts do not see each other's endpoints.
    let r = h
        .call(
            Method::GET,
            &format!("/v1/webhook-endpoints/{a}"),
            None,
            main,
            &[],
        )
        .await?;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = h
        .get(&format!("/v1/webhook-endpoints/{mainnet_endpoint}"))
        .await?;
    assert_eq!(r.status, StatusCode::NOT_FOUND);

    // List with a cursor, newest first.
    let page = h.get("/v1/webhook-endpoints?limit=1").await?;
    assert_eq!(page.body["data"][0]["id"], b.as_str());
    assert_eq!(page.body["has_more"], true);
    let next = h
        .get(&format!("/v1/webhook-endpoints?limit=1&starting_after={b}"))
        .await?;
    assert_eq!(next.body["data"][0]["id"], a.as_str());
    assert_eq!(next.body["has_more"], false);
    assert!(page.body["data"][0].get("secret").is_none());

    // Update: events, description, status; a bad URL is refused.
    let r = h
        .post(
            &format!("/v1/webhook-endpoints/{a}"),
            json!({"enabled_events": ["payment.succeeded"], "description": null, "status": "disabled"}),
        )
        .await?;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["enabled_events"], json!(["payment.succeeded"]));
    assert_eq!(r.body["status"], "disabled");
    assert!(r.body["description"].is_null());
    let r = h
        .post(
            &format!("/v1/webhook-endpoints/{a}"),
            json!({"url": "http://192.168.1.1/x"}),
        )
        .await?;
    assert_eq!(r.code(), "url_not_allowed", "{}", r.body);
    let r = h
        .post(
            &format!("/v1/webhook-endpoints/{a}"),
            json!({"status": "enabled", "url": "http://127.0.0.1:10/x"}),
        )
        .await?;
    assert_eq!(
        (r.str("status"), r.str("url")),
        ("enabled", "http://127.0.0.1:10/x")
    );
    h.stop().await;
    Ok(())
}

#[tokio::test]
async fn an_endpoint_failing_for_too_long_is_disabled_with_an_event() -> anyhow::Result<()> {
    let Some(python) = python() else {
        return Ok(());
    };
    let mut options = openrail_tests::test_webhook_options();
    options.disable_after = Duration::from_secs(1);
    let h = Harness::builder().webhooks(options).start().await?;
    let secrets = Secrets::new()?;
    let mut rx = Receiver::start(&python, &secrets, 0, 0).await?;
    // One endpoint that works, one whose port refuses every connection.
    let good = create_endpoint(&h, &rx.url(), None).await?;
    secrets.set(&[good.str("secret")])?;
    let port = free_port().await?;
    let bad = create_endpoint(&h, &format!("http://127.0.0.1:{port}/hook"), None).await?;
    let bad_id = bad.str("id").to_string();
    mandate_events(&h).await?;
    rx.wait_for(
        Duration::from_secs(30),
        "webhook_endpoint.disabled",
        |seen| {
            seen.iter()
                .any(|v| v["type"] == "webhook_endpoint.disabled" && v["status"] == 200)
        },
    )
    .await?;
    let v = rx
        .seen
        .iter()
        .find(|v| v["type"] == "webhook_endpoint.disabled")
        .unwrap();
    assert_eq!(v["verified"], json!([0]), "{v}");
    let object = &v["body"]["data"]["object"];
    assert_eq!(object["id"], bad_id.as_str(), "{v}");
    assert_eq!(object["status"], "disabled");
    assert_eq!(object["disabled_reason"], "failing");
    assert!(object.get("secret").is_none(), "{object}");
    assert!(!v["body"].to_string().contains("whsec_"), "{v}");
    let e = h.get(&format!("/v1/webhook-endpoints/{bad_id}")).await?;
    assert_eq!(
        (e.str("status"), e.str("disabled_reason")),
        ("disabled", "failing")
    );
    // Disabled, it gets nothing: its deliveries stay pending, not attempted.
    let before = h
        .get(&format!(
            "/v1/webhook-endpoints/{bad_id}/deliveries?limit=100"
        ))
        .await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = h
        .get(&format!(
            "/v1/webhook-endpoints/{bad_id}/deliveries?limit=100"
        ))
        .await?;
    assert_eq!(before.body["data"], after.body["data"]);
    h.stop().await;
    Ok(())
}
