//! `openrail listen`: receive an account's webhooks on this machine, like `stripe listen`.
//! It runs a small receiver on `127.0.0.1`, registers it as a temporary webhook endpoint
//! with the API key (testnet allows `http://127.0.0.1`), verifies each delivery's
//! signature, prints one line per event and forwards it — body and Standard Webhooks
//! headers as received, so the forward target verifies them with the printed secret — to
//! `--forward-to`. Ctrl-C or SIGTERM deletes the endpoint.

use std::sync::Arc;

use anyhow::Context;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};

/// Options of `openrail listen`.
#[derive(Debug, clap::Args)]
pub struct ListenArgs {
    /// Where to forward each verified delivery (e.g. http://localhost:3000/webhooks);
    /// without it, events are only printed.
    #[arg(long)]
    forward_to: Option<String>,
    /// The API key (a testnet key: `openrail dev` prints one).
    #[arg(long, env = "OPENRAIL_API_KEY", hide_env_values = true)]
    api_key: String,
    /// The API's base URL.
    #[arg(
        long,
        env = "OPENRAIL_API_URL",
        default_value = "http://127.0.0.1:8080"
    )]
    api_url: String,
    /// Event types to receive, comma-separated (default: every type).
    #[arg(long, default_value = "*")]
    events: String,
    /// Port of the local receiver (0: a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
}

struct Listener {
    secret: String,
    forward_to: Option<String>,
    http: reqwest::Client,
}

/// Runs `openrail listen` until Ctrl-C or SIGTERM.
pub async fn run(args: ListenArgs) -> anyhow::Result<()> {
    let api = args.api_url.trim_end_matches('/').to_string();
    let socket = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
        .await
        .context("binding the local receiver")?;
    let local = format!("http://127.0.0.1:{}/webhooks", socket.local_addr()?.port());
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()?;
    let events: Vec<&str> = args.events.split(',').map(str::trim).collect();
    let res = http
        .post(format!("{api}/v1/webhook-endpoints"))
        .bearer_auth(&args.api_key)
        .json(&json!({
            "url": local,
            "enabled_events": events,
            "description": "openrail listen (temporary; deleted when it stops)",
        }))
        .send()
        .await
        .with_context(|| format!("reaching the API at {api}"))?;
    let status = res.status();
    let created: Value = res.json().await.unwrap_or(Value::Null);
    if !status.is_success() {
        anyhow::bail!(
            "creating the temporary endpoint failed: {status} {}",
            created["detail"].as_str().unwrap_or_default()
        );
    }
    let id = created["id"]
        .as_str()
        .context("no endpoint id")?
        .to_string();
    let secret = created["secret"]
        .as_str()
        .context("no endpoint secret")?
        .to_string();
    println!("Ready. Receiving this account's events at {local} (endpoint {id}).");
    println!("Webhook signing secret for your handler: {secret}");
    match &args.forward_to {
        Some(to) => {
            println!("Forwarding each event to {to}, with its webhook-* headers as signed.")
        }
        None => println!("Printing events only (add --forward-to URL to forward them)."),
    }
    println!("Ctrl-C stops and deletes the endpoint.\n");
    let state = Arc::new(Listener {
        secret,
        forward_to: args.forward_to.clone(),
        http: http.clone(),
    });
    let app = axum::Router::new()
        .route("/webhooks", axum::routing::post(receive))
        .with_state(state);
    let server = tokio::spawn(async move { axum::serve(socket, app).await });
    let stopped = crate::stop_signal().await;
    server.abort();
    let deleted = http
        .delete(format!("{api}/v1/webhook-endpoints/{id}"))
        .bearer_auth(&args.api_key)
        .send()
        .await;
    match deleted {
        Ok(r) if r.status().is_success() => println!("\nDeleted the endpoint {id}."),
        Ok(r) => eprintln!("\ncould not delete the endpoint {id}: {}", r.status()),
        Err(e) => eprintln!("\ncould not delete the endpoint {id}: {e}"),
    }
    stopped.context("waiting for Ctrl-C")?;
    Ok(())
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> &'a str {
    h.get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// One delivery: verified, printed, forwarded; answers what the forward target answered
/// (so the API retries what it refused), or 200 when only printing.
async fn receive(State(l): State<Arc<Listener>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let id = header(&headers, "webhook-id");
    let ts = header(&headers, "webhook-timestamp");
    let sig = header(&headers, "webhook-signature");
    let now = openrail_store::now_ms() / 1000;
    let time = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    if let Err(e) = openrail_webhooks::verify(&l.secret, id, ts, sig, &body, now, 300) {
        println!("{time}  REJECTED {id}: {e}");
        return StatusCode::BAD_REQUEST;
    }
    let event: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    println!(
        "{time}  {:<32} {}  {}",
        event["type"].as_str().unwrap_or("?"),
        id,
        event["data"]["object"]["id"].as_str().unwrap_or("-"),
    );
    let Some(to) = &l.forward_to else {
        return StatusCode::OK;
    };
    let mut req = l
        .http
        .post(to)
        .header("content-type", "application/json")
        .body(body);
    for h in ["webhook-id", "webhook-timestamp", "webhook-signature"] {
        req = req.header(h, header(&headers, h));
    }
    match req.send().await {
        Ok(r) => {
            println!("    {id} → {to} {}", r.status().as_u16());
            if r.status().is_success() {
                StatusCode::OK
            } else {
                StatusCode::BAD_GATEWAY
            }
        }
        Err(e) => {
            println!("    {id} → {to} failed: {e}");
            StatusCode::BAD_GATEWAY
        }
    }
}
