//! `openrail bench webhooks`: deliveries per second from the events table to a receiver
//! on 127.0.0.1, through the deliverer the lease holder runs (fan-out, rendering,
//! signing, the HTTP POST, the outcome recorded). No chain is needed: the events are
//! `mandate.created` of bank-funded mandates written straight to the store.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use openrail_domain::MandateId;
use openrail_store::testing::active_mandate_row;
use openrail_store::webhooks::{WebhookEndpoint, new_secret};
use openrail_store::{Mode, Store, now_ms};
use openrail_webhooks::{Deliverer, DeliveryOptions, verify};

struct Receiver {
    secret: String,
    delivered: AtomicUsize,
    bad: AtomicUsize,
}

async fn receive(State(r): State<Arc<Receiver>>, h: HeaderMap, body: Bytes) -> StatusCode {
    let get = |k: &str| h.get(k).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let ok = verify(
        &r.secret,
        get("webhook-id"),
        get("webhook-timestamp"),
        get("webhook-signature"),
        &body,
        now_ms() / 1000,
        300,
    )
    .is_ok();
    if ok {
        r.delivered.fetch_add(1, Ordering::Relaxed);
        StatusCode::OK
    } else {
        r.bad.fetch_add(1, Ordering::Relaxed);
        StatusCode::BAD_REQUEST
    }
}

/// Runs the bench and prints its figures (one endpoint, so it may use every slot).
pub async fn run(n: usize, concurrency: usize, postgres: Option<String>) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let url = match &postgres {
        Some(server) => openrail_store::testing::fresh_database_on(server).await?,
        None => format!("sqlite://{}", dir.path().join("bench.db").display()),
    };
    let store = Store::connect(&url).await.context("opening the database")?;
    let account = store.accounts().create("bench", now_ms()).await?;
    let socket = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let port = socket.local_addr()?.port();
    let secret = new_secret();
    let receiver = Arc::new(Receiver {
        secret: secret.clone(),
        delivered: AtomicUsize::new(0),
        bad: AtomicUsize::new(0),
    });
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(receive))
        .with_state(receiver.clone());
    let server = tokio::spawn(async move { axum::serve(socket, app).await });
    let now = now_ms();
    store
        .webhooks()
        .create_endpoint(
            &WebhookEndpoint::new(
                &account.id,
                Mode::Testnet,
                format!("http://127.0.0.1:{port}/hook"),
                None,
                openrail_store::webhooks::EnabledEvents::All,
                now,
            ),
            &secret,
        )
        .await?;
    eprintln!("writing {n} events…");
    for i in 0..n {
        store
            .mandates()
            .insert(&active_mandate_row(
                &MandateId::new(),
                &account.id,
                Mode::Testnet,
                &format!("ba_bench{i}"),
                31337,
                now_ms(),
            ))
            .await?;
    }
    let options = DeliveryOptions {
        concurrency,
        per_endpoint: u32::try_from(concurrency).unwrap_or(u32::MAX),
        poll: Duration::from_millis(20),
        ..Default::default()
    };
    let render = openrail_api::webhook_renderer(store.clone(), None, None);
    let deliverer = Deliverer::new(store.clone(), render, Mode::Testnet, options);
    let started = Instant::now();
    let task = tokio::spawn(deliverer.run());
    let deadline = started + Duration::from_secs(600);
    while receiver.delivered.load(Ordering::Relaxed) < n {
        anyhow::ensure!(
            Instant::now() < deadline,
            "only {} of {n} delivered in 10 minutes",
            receiver.delivered.load(Ordering::Relaxed)
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let elapsed = started.elapsed();
    task.abort();
    server.abort();
    let bad = receiver.bad.load(Ordering::Relaxed);
    println!(
        "Webhooks: {n} events ({}), {concurrency} attempts in flight, receiver on 127.0.0.1 verifying every signature",
        if postgres.is_some() {
            "PostgreSQL"
        } else {
            "SQLite"
        }
    );
    println!(
        "delivered {n} in {:.2} s: {:.0} deliveries/s ({bad} refused signatures)",
        elapsed.as_secs_f64(),
        n as f64 / elapsed.as_secs_f64()
    );
    anyhow::ensure!(bad == 0, "{bad} deliveries did not verify");
    Ok(())
}
