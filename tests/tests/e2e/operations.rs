//! Operating a server: graceful shutdown of an `openrail serve` child process under a
//! burst of pulls, liveness and readiness, and the hardened web surface (headers, the
//! failed-authentication limit, trusted proxies, sign-up, the key-created page, webhook
//! URLs).

use std::time::{Duration, Instant};

use openrail_api::ApiConfig;
use openrail_api::hardening::TrustedProxies;
use openrail_chain::devnet::{dev_demo_payer, dev_spare};
use openrail_store::Mode;
use openrail_store::agentic::{PullStatus, Scope};
use openrail_tests::{Harness, audit, intent_of};
use reqwest::StatusCode;
use serde_json::{Value, json};

const SERVER: &str = env!("CARGO_BIN_EXE_openrail-under-test");

/// What one request of the burst got.
#[derive(Debug)]
enum Outcome {
    /// An HTTP answer: status and body.
    Answered(StatusCode, Value),
    /// No connection: the request was never received (a definite "not done").
    Refused,
}

/// `SIGTERM` while a burst of pulls is on its way: every request gets a definite answer
/// (an HTTP answer, or a refused connection once the listener is closed — never a
/// connection cut with the request in it), the process exits 0 within the bound, and
/// after a restart every accepted pull ends in one final state, one transaction each.
#[tokio::test]
async fn sigterm_during_a_burst_answers_every_request_and_loses_no_pull() -> anyhow::Result<()> {
    let mut h = Harness::start_processes(SERVER).await?;
    let payer = dev_demo_payer();
    h.fund(payer.clone(), 1_000).await?;
    let (store, account_id) = (h.server().store.clone(), h.server().account_id.clone());
    let api_key = h.server().api_key.clone();
    let nonce_at_start = h.operator_nonce().await?;
    let mut a = h.spawn_server(None).await?;
    a.leading(Duration::from_secs(30)).await?;
    let metrics_url = a
        .line("serving metrics on ", Duration::from_secs(5))
        .await?;
    let (_, key) = audit::mandate_and_key(&h, &payer.address().to_string()).await?;
    scrape_and_check(&metrics_url, h.settlement_deployment().chain_id).await?;

    // A connection per request: a pooled connection that the server closes while idle
    // could take a request in flight, which no server can answer.
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(60))
        .build()?;
    let base = a.base_url.clone();
    let destination = dev_spare().address().to_string();
    const BURST: usize = 60;
    let mut sends = Vec::new();
    for i in 0..BURST {
        let (http, base, api_key, key, destination) = (
            http.clone(),
            base.clone(),
            api_key.clone(),
            key.clone(),
            destination.clone(),
        );
        sends.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10 * i as u64)).await;
            let sent = http
                .post(format!("{base}/v1/debit-pulls"))
                .bearer_auth(&api_key)
                .header("idempotency-key", format!("burst-{i}"))
                .json(&json!({"session_key_id": key, "amount": "1.25", "destination": destination}))
                .send()
                .await;
            match sent {
                Ok(res) => {
                    let status = res.status();
                    let body = res.json::<Value>().await.unwrap_or(Value::Null);
                    Ok(Outcome::Answered(status, body))
                }
                Err(e) if e.is_connect() => Ok(Outcome::Refused),
                Err(e) => Err(anyhow::anyhow!("request {i}: no definite answer: {e:?}")),
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(250)).await;
    let (code, took) = a.terminate(Duration::from_secs(40)).await?;
    let stopped = a.line("stopped: ", Duration::from_secs(1)).await.ok();
    eprintln!("SIGTERM to exit: {} ms ({stopped:?})", took.as_millis());
    let log = a.log_tail();
    assert_eq!(code, Some(0), "a graceful stop exits 0; log:\n{log}");
    // The access log's lines (debug level, as the harness runs servers) carry the
    // request's id.
    let answered: Vec<&str> = log.lines().filter(|l| l.contains("answered")).collect();
    assert!(!answered.is_empty(), "{log}");
    for line in answered {
        assert!(line.contains("request_id=req_"), "{line}");
    }
    assert!(took < Duration::from_secs(30), "bounded stop: {took:?}");

    let mut accepted = Vec::new();
    let (mut drained, mut refused) = (0, 0);
    for s in sends {
        match s.await?? {
            Outcome::Answered(status, body) if status.is_success() => {
                accepted.push(body["id"].as_str().expect("a pull id").to_string());
            }
            // Arrived while draining: refused, nothing done.
            Outcome::Answered(StatusCode::SERVICE_UNAVAILABLE, body) => {
                assert_eq!(body["code"], "temporarily_unavailable", "{body}");
                drained += 1;
            }
            Outcome::Answered(status, body) => panic!("unexpected answer {status} {body}"),
            Outcome::Refused => refused += 1,
        }
    }
    eprintln!(
        "burst of {BURST}: {} accepted, {drained} answered 503 while draining, {refused} refused after the listener closed",
        accepted.len()
    );
    assert!(!accepted.is_empty(), "the burst started before the signal");
    assert!(drained + refused > 0, "the signal came during the burst");
    // A 503 took nothing: the database holds exactly the accepted pulls.
    let scope = Scope {
        account_id: &account_id,
        mode: Mode::Testnet,
    };
    let stored = store.pulls().list(scope, None, 100, None).await?.data;
    assert_eq!(stored.len(), accepted.len());

    // The chain's lease was released (not left to expire): the next process leads at once.
    // (`serve --manifest` serves the settlement chain only.)
    let chain_id = h.settlement_deployment().chain_id;
    let lease = store
        .leases()
        .get(&openrail_store::lease::chain_lease(chain_id))
        .await?
        .expect("the lease row");
    assert_eq!(
        (lease.holder.as_str(), lease.expires_at),
        (a.node_id.as_str(), 0)
    );
    let mut b = h.spawn_server(None).await?;
    b.leading(Duration::from_secs(30)).await?;
    let done = audit::wait_all_final(&store, scope, &[], &mut b).await?;
    for id in &accepted {
        let (status, _, _) = done.pulls.get(id).expect("every accepted pull is stored");
        // 60 pulls of 1.25 stay within the mandate's 1,000 a day: each one moved.
        assert_eq!(*status, PullStatus::Authorized, "{id}");
        assert_eq!(
            store.journal().count_for_intent(&intent_of(id)).await?,
            1,
            "{id}: one transaction"
        );
    }
    audit::assert_journal_consistent(&h, &store, nonce_at_start).await?;
    Ok(())
}

/// `/healthz` is alive whatever; `/readyz` wants the database and every chain's RPC, and
/// turns 503 with the reason when one fails or the process drains. Neither is in `/v1`.
#[tokio::test]
async fn readiness_names_what_is_not_ready() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let base = h.server().base_url.clone();
    let http = reqwest::Client::new();
    let live = http.get(format!("{base}/healthz")).send().await?;
    assert_eq!(live.status(), StatusCode::OK);
    let ready = http.get(format!("{base}/readyz")).send().await?;
    assert_eq!(ready.status(), StatusCode::OK, "{}", ready.text().await?);

    // A server whose chain's RPC is gone: alive, not ready, and says which chain.
    let dir = tempfile::tempdir()?;
    let store = openrail_tests::fresh_store(dir.path()).await?;
    let mut deployment = h.settlement_deployment().clone();
    let dead = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    deployment.rpc_url = format!("http://{dead}").parse()?;
    let endpoint = openrail_chain::rpc::Endpoint::of(&deployment)?;
    let net = std::sync::Arc::new(openrail_api::Network::on(&deployment, &endpoint)?);
    let config = ApiConfig {
        ready_timeout: Duration::from_millis(500),
        ..ApiConfig::default()
    };
    let running = openrail_api::server::serve(store, Some(net), None, 0, config).await?;
    let url = running.base_url.clone();
    let live = http.get(format!("{url}/healthz")).send().await?;
    assert_eq!(live.status(), StatusCode::OK);
    let started = Instant::now();
    let ready = http.get(format!("{url}/readyz")).send().await?;
    assert_eq!(ready.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = ready.json().await?;
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains(&format!("chain {}", deployment.chain_id)),
        "{body}"
    );
    assert!(!detail.contains("database"), "{body}");
    assert!(started.elapsed() < Duration::from_secs(5));
    running.task.abort();

    // Not in the API document.
    let doc = http.get(format!("{base}/v1/openapi.json")).send().await?;
    let doc: Value = doc.json().await?;
    assert!(doc["paths"].get("/readyz").is_none());
    assert!(doc["paths"].get("/healthz").is_none());
    Ok(())
}

/// A drained server (the first step of a graceful stop) answers `/readyz` 503 "shutting
/// down" until it stops, in-process.
#[tokio::test]
async fn draining_turns_readiness_off() -> anyhow::Result<()> {
    use axum::extract::State;
    use openrail_api::health::{healthz, readyz};
    let dir = tempfile::tempdir()?;
    let store = openrail_tests::fresh_store(dir.path()).await?;
    let state = openrail_api::AppState::new(store, None, None, ApiConfig::default());
    assert_eq!(readyz(State(state.clone())).await.status(), StatusCode::OK);
    state.lifecycle.drain();
    let res = readyz(State(state.clone())).await;
    assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body = axum::body::to_bytes(res.into_body(), 1 << 16).await?;
    assert!(String::from_utf8_lossy(&body).contains("shutting down"));
    assert_eq!(
        healthz().await.status(),
        StatusCode::OK,
        "alive while draining"
    );
    Ok(())
}

// ------------------------------------------------------------------ hardening

/// Every API answer is `nosniff`, JSON ones `no-store`; a 401 says `WWW-Authenticate:
/// Bearer`; pages carry the policy with every required directive and `no-store`.
#[tokio::test]
async fn answers_carry_the_security_headers() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let base = h.server().base_url.clone();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;

    let ok = h.get("/v1/mandates").await?;
    assert_eq!(ok.status, StatusCode::OK);
    assert_eq!(ok.headers["x-content-type-options"], "nosniff");
    assert_eq!(ok.headers["cache-control"], "no-store");
    assert!(ok.headers.contains_key("referrer-policy"));

    let anonymous = http.get(format!("{base}/v1/mandates")).send().await?;
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        anonymous.headers()["www-authenticate"],
        "Bearer realm=\"openrail\""
    );
    assert_eq!(anonymous.headers()["x-content-type-options"], "nosniff");
    let stale = http
        .get(format!("{base}/v1/mandates"))
        .bearer_auth("sk_testnet_0000000000000000000000000000stale")
        .send()
        .await?;
    assert_eq!(stale.status(), StatusCode::UNAUTHORIZED);
    assert!(
        stale.headers()["www-authenticate"]
            .to_str()?
            .contains("error=\"invalid_token\"")
    );
    let missing = http.get(format!("{base}/nope")).send().await?;
    assert_eq!(missing.headers()["x-content-type-options"], "nosniff");

    for path in ["/login", "/signup", "/docs"] {
        let page = http.get(format!("{base}{path}")).send().await?;
        assert_eq!(page.status(), StatusCode::OK, "{path}");
        let csp = page.headers()["content-security-policy"]
            .to_str()?
            .to_string();
        for directive in [
            "frame-ancestors 'none'",
            "base-uri 'none'",
            "form-action 'self'",
        ] {
            assert!(csp.contains(directive), "{path}: {csp}");
        }
        assert!(
            csp.contains("default-src 'self'") || csp.contains("default-src 'none'"),
            "{path}: {csp}"
        );
        assert!(
            !csp.contains("script-src 'self' 'unsafe-inline'"),
            "{path}: {csp}"
        );
        assert!(page.headers().contains_key("referrer-policy"), "{path}");
        assert_eq!(
            page.headers()["x-content-type-options"],
            "nosniff",
            "{path}"
        );
        let text = page.text().await?;
        assert!(
            !text.contains("<script>"),
            "{path}: no inline script (the policy would block it)"
        );
    }
    let dashboard = h.dashboard_sign_up("headers@example.com", None).await?;
    let keys = dashboard.get("/dashboard").await?;
    assert_eq!(keys.header("cache-control"), "no-store");
    Ok(())
}

/// One client sending a stale key from an address shared with every other customer (a
/// load balancer's) exhausts the failed-attempt limit: its failures get 429, while a
/// valid key from the same address still works.
#[tokio::test]
async fn failed_attempts_never_lock_out_a_valid_key() -> anyhow::Result<()> {
    let h = Harness::builder()
        .config(ApiConfig {
            auth_failure_burst: 3.0,
            auth_failures_per_sec: 0.01,
            ..ApiConfig::default()
        })
        .start()
        .await?;
    let stale = "sk_testnet_0000000000000000000000000000stale";
    let mut statuses = Vec::new();
    for _ in 0..5 {
        let r = h
            .call(reqwest::Method::GET, "/v1/mandates", None, Some(stale), &[])
            .await?;
        statuses.push(r.status.as_u16());
    }
    assert_eq!(statuses, [401, 401, 401, 429, 429]);
    let good = h.get("/v1/mandates").await?;
    assert_eq!(good.status, StatusCode::OK, "{}", good.body);
    Ok(())
}

/// `X-Forwarded-For` from a client that is no trusted proxy names nothing: a client
/// cannot dodge the failed-attempt limit by sending a new address each time. From a
/// trusted proxy it names the client, whose limit is its own.
#[tokio::test]
async fn forwarded_addresses_count_only_from_trusted_proxies() -> anyhow::Result<()> {
    let stale = "sk_testnet_0000000000000000000000000000stale";
    let limited = ApiConfig {
        auth_failure_burst: 2.0,
        auth_failures_per_sec: 0.01,
        ..ApiConfig::default()
    };
    let h = Harness::builder().config(limited.clone()).start().await?;
    let mut statuses = Vec::new();
    for i in 0..4 {
        let spoof = format!("203.0.113.{i}");
        let r = h
            .call(
                reqwest::Method::GET,
                "/v1/mandates",
                None,
                Some(stale),
                &[("x-forwarded-for", &spoof)],
            )
            .await?;
        statuses.push(r.status.as_u16());
    }
    assert_eq!(
        statuses,
        [401, 401, 429, 429],
        "the peer's limit, whatever the header"
    );
    h.stop().await;

    let h = Harness::builder()
        .config(ApiConfig {
            trusted_proxies: TrustedProxies::parse("127.0.0.1").map_err(anyhow::Error::msg)?,
            ..limited
        })
        .start()
        .await?;
    let mut statuses = Vec::new();
    for client in ["203.0.113.1", "203.0.113.1", "203.0.113.1", "203.0.113.2"] {
        let r = h
            .call(
                reqwest::Method::GET,
                "/v1/mandates",
                None,
                Some(stale),
                &[("x-forwarded-for", client)],
            )
            .await?;
        statuses.push(r.status.as_u16());
    }
    assert_eq!(
        statuses,
        [401, 401, 429, 401],
        "each client behind the proxy its own"
    );
    Ok(())
}

/// The sign-up form: the same answer whether the email has an account or not, common
/// passwords refused, a limit per address.
#[tokio::test]
async fn sign_up_reveals_no_email_and_is_limited() -> anyhow::Result<()> {
    let h = Harness::builder()
        .config(ApiConfig {
            max_signups_per_address: 3,
            ..ApiConfig::default()
        })
        .start()
        .await?;
    let base = h.server().base_url.clone();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let sign_up = |email: &'static str, password: &'static str| {
        let (http, base) = (http.clone(), base.clone());
        async move {
            let form = http.get(format!("{base}/signup")).send().await?;
            let csrf = form
                .headers()
                .get_all("set-cookie")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .find_map(|c| c.strip_prefix("openrail_csrf="))
                .and_then(|c| c.split(';').next())
                .map(str::to_string)
                .ok_or_else(|| anyhow::anyhow!("no CSRF cookie"))?;
            let res = http
                .post(format!("{base}/signup"))
                .header("cookie", format!("openrail_csrf={csrf}"))
                .form(&[
                    ("csrf", csrf.as_str()),
                    ("email", email),
                    ("password", password),
                ])
                .send()
                .await?;
            let status = res.status();
            let location = res
                .headers()
                .get("location")
                .and_then(|l| l.to_str().ok())
                .unwrap_or_default()
                .to_string();
            let cookies = res.headers().get_all("set-cookie").iter().count();
            let text = res.text().await?;
            anyhow::Ok((status, location, cookies, text))
        }
    };
    let first = sign_up("taken@example.com", "violet tractor ninety").await?;
    let again = sign_up("taken@example.com", "another long phrase").await?;
    assert_eq!(first.0, StatusCode::SEE_OTHER);
    assert_eq!(
        (first.0, &first.1, first.2),
        (again.0, &again.1, again.2),
        "the same answer for a new and a taken email"
    );
    assert_eq!(first.1, "/login?signed_up");
    let common = sign_up("new@example.com", "qwertyuiop").await?;
    assert_eq!(common.0, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(common.3.contains("most common passwords"), "{}", common.3);
    // Two attempts counted (the refused one never reached the count); the third is the
    // last allowed, the fourth is refused.
    let third = sign_up("third@example.com", "violet tractor ninety").await?;
    assert_eq!(third.0, StatusCode::SEE_OTHER);
    let fourth = sign_up("fourth@example.com", "violet tractor ninety").await?;
    assert_eq!(fourth.0, StatusCode::TOO_MANY_REQUESTS);
    // The owner signs in with the first password; the second never became a password.
    assert!(
        h.server()
            .store
            .dashboard()
            .user("taken@example.com")
            .await?
            .is_some()
    );
    Ok(())
}

/// Creating a key answers a redirect; the page it leads to shows the secret once and
/// reloading it shows none and creates none.
#[tokio::test]
async fn the_key_created_page_is_post_redirect_get() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let d = h.dashboard_sign_up("prg@example.com", None).await?;
    let before = h
        .server()
        .store
        .api_keys()
        .list(Some(&d.account_id))
        .await?
        .len();
    let created = d
        .post_form("/dashboard/keys", &[("mode", "testnet")])
        .await?;
    assert_eq!(created.status, StatusCode::SEE_OTHER, "{}", created.text);
    assert_eq!(created.header("location"), "/dashboard");
    let sealed = created
        .set_cookie("openrail_new_key")
        .expect("the new key's sealed secret");
    assert!(
        !sealed.contains("sk_testnet_"),
        "the cookie holds no readable secret"
    );
    let shown = d
        .get_with_cookie("/dashboard", &format!("openrail_new_key={sealed}"))
        .await?;
    let secret = regex::Regex::new(r"sk_testnet_[A-Za-z0-9]{32}")?
        .find(&shown.text)
        .expect("the secret, shown once")
        .as_str()
        .to_string();
    assert_eq!(shown.header("cache-control"), "no-store");
    // A reload (the browser no longer has the cookie, which that answer cleared).
    assert!(shown.set_cookie("openrail_new_key") == Some(String::new()));
    let reloaded = d.get("/dashboard").await?;
    assert!(!reloaded.text.contains(&secret));
    let after = h
        .server()
        .store
        .api_keys()
        .list(Some(&d.account_id))
        .await?
        .len();
    assert_eq!(after, before + 1, "one key for one POST");
    // The secret works.
    let r = h
        .call(
            reqwest::Method::GET,
            "/v1/mandates",
            None,
            Some(&secret),
            &[],
        )
        .await?;
    assert_eq!(r.status, StatusCode::OK);
    // Another session cannot open the cookie.
    let other = h.dashboard_sign_up("other@example.com", None).await?;
    let stolen = other
        .get_with_cookie("/dashboard", &format!("openrail_new_key={sealed}"))
        .await?;
    assert!(!stolen.text.contains(&secret));
    Ok(())
}

/// Endpoints are stored as their normalized URL.
#[tokio::test]
async fn webhook_urls_are_stored_normalized() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let r = h
        .post(
            "/v1/webhook-endpoints",
            json!({"url": "HTTP://LocalHost:4000", "enabled_events": ["*"]}),
        )
        .await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.str("url"), "http://localhost:4000/");
    Ok(())
}

/// Scrapes `/metrics`, parses it with a Prometheus text-format parser and checks the
/// families a dashboard needs: requests by method, route template and status, the
/// duration histogram, the lease, the journal's transactions, the outbox.
async fn scrape_and_check(url: &str, chain_id: u64) -> anyhow::Result<()> {
    use prometheus_parse::{Scrape, Value as Sample};
    let res = reqwest::get(url).await?;
    assert_eq!(res.status(), StatusCode::OK);
    assert!(
        res.headers()["content-type"]
            .to_str()?
            .starts_with("text/plain; version=0.0.4")
    );
    let text = res.text().await?;
    eprintln!(
        "metrics scrape: {} bytes, {} lines",
        text.len(),
        text.lines().count()
    );
    let scrape = Scrape::parse(text.lines().map(|l| Ok(l.to_string())))?;
    let find = |name: &str, labels: &[(&str, &str)]| {
        scrape
            .samples
            .iter()
            .find(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
            .map(|s| s.value.clone())
    };
    let chain = chain_id.to_string();
    match find(
        "openrail_http_requests_total",
        &[
            ("method", "POST"),
            ("route", "/v1/session-keys"),
            ("status", "201"),
        ],
    ) {
        Some(Sample::Counter(n)) => assert!(n >= 1.0, "{n}"),
        other => panic!("no request counter: {other:?}\n{text}"),
    }
    match find(
        "openrail_http_request_duration_seconds",
        &[("method", "POST"), ("route", "/v1/mandates")],
    ) {
        Some(Sample::Histogram(buckets)) => {
            assert!(buckets.iter().any(|b| b.count >= 1.0), "{buckets:?}")
        }
        other => panic!("no duration histogram: {other:?}\n{text}"),
    }
    assert!(
        matches!(find("openrail_lease_held", &[("chain_id", &chain)]), Some(Sample::Gauge(v)) if v == 1.0),
        "{text}"
    );
    assert!(
        find(
            "openrail_chain_transactions",
            &[("chain_id", &chain), ("kind", "create_mandate")]
        )
        .is_some(),
        "{text}"
    );
    assert!(
        find(
            "openrail_outbox_oldest_age_seconds",
            &[("chain_id", &chain)]
        )
        .is_some()
    );
    assert!(find("openrail_draining", &[]).is_some());
    // The mandate's and the key's transactions were mined: their time to inclusion.
    match find("openrail_tx_inclusion_sample", &[("chain_id", &chain)]) {
        Some(Sample::Gauge(n)) => assert!(n >= 2.0, "{n}\n{text}"),
        other => panic!("no inclusion sample: {other:?}\n{text}"),
    }
    match find(
        "openrail_tx_inclusion_seconds",
        &[("chain_id", &chain), ("quantile", "0.99")],
    ) {
        Some(Sample::Gauge(s)) => assert!((0.0..60.0).contains(&s), "{s}"),
        other => panic!("no time to inclusion: {other:?}\n{text}"),
    }
    Ok(())
}
