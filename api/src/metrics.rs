//! Prometheus metrics through the `metrics` facade and `metrics-exporter-prometheus`
//! (its recorder only; the text is served by [`router`] on the process's own metrics
//! address, never on the API's).
//!
//! Recorded as they happen ([`http`], the outermost layer): `openrail_http_requests_total`
//! (`method`, `route` — the route template, `unmatched` for the fallback — and `status`)
//! and `openrail_http_request_duration_seconds` (a histogram, `method` and `route`).
//!
//! Read at each scrape ([`collect`]) from the database and the process's networks, as
//! gauges: the journal's transactions by chain, kind and status; pending transactions;
//! the operator's balance; whether this process holds each chain's lease; the outbox's
//! open rows and the age of its oldest (the outbox lag); webhook deliveries and bank
//! transfers (the bank legs) by status; whether the process drains. The full list with
//! meanings is in docs/operations.md.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use openrail_engine::network::Network;
use openrail_store::Store;

use crate::health::Lifecycle;

/// Buckets of the duration histograms, seconds.
const SECONDS_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// The process's recorder, installed on first use (once per process: the `metrics`
/// facade has one global recorder).
pub fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let builder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS_BUCKETS)
            .expect("the buckets are not empty");
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        // Another recorder already installed (only in tests that install their own):
        // this handle then renders what little it records.
        let _ = metrics::set_global_recorder(recorder);
        handle
    })
}

/// Counts and times every request (the outermost layer of the API's router).
pub async fn http(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().as_str().to_string();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let res = next.run(req).await;
    let status = res.status().as_u16().to_string();
    metrics::counter!(
        "openrail_http_requests_total",
        "method" => method.clone(),
        "route" => route.clone(),
        "status" => status
    )
    .increment(1);
    metrics::histogram!(
        "openrail_http_request_duration_seconds",
        "method" => method,
        "route" => route
    )
    .record(started.elapsed().as_secs_f64());
    res
}

/// What the metrics endpoint reads at each scrape.
#[derive(Debug, Clone)]
pub struct Sources {
    /// The database.
    pub store: Store,
    /// The process's settlement networks (each with its attestation chain).
    pub networks: Vec<Arc<Network>>,
    /// Whether the process drains.
    pub lifecycle: Arc<Lifecycle>,
}

/// Sets the scrape-time gauges (see the module docs).
pub async fn collect(sources: &Sources) {
    metrics::gauge!("openrail_draining").set(if sources.lifecycle.is_draining() {
        1.0
    } else {
        0.0
    });
    for net in &sources.networks {
        for chain in net.chains() {
            let id = chain.chain_id.to_string();
            metrics::gauge!("openrail_lease_held", "chain_id" => id.clone())
                .set(if chain.is_leader() { 1.0 } else { 0.0 });
            if let Some(wei) = chain.submitter().and_then(|s| s.operator_balance()) {
                metrics::gauge!("openrail_operator_balance_wei", "chain_id" => id)
                    .set(wei.to_string().parse::<f64>().unwrap_or(f64::NAN));
            }
        }
    }
    let snapshot = match sources.store.ops_snapshot(openrail_store::now_ms()).await {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "reading the metrics' counts failed");
            metrics::counter!("openrail_metrics_collect_errors_total").increment(1);
            return;
        }
    };
    let mut pending: std::collections::BTreeMap<u64, f64> = Default::default();
    for (chain, kind, status, n) in snapshot.transactions {
        if status == "signed" {
            *pending.entry(chain).or_default() += n as f64;
        }
        metrics::gauge!(
            "openrail_chain_transactions",
            "chain_id" => chain.to_string(),
            "kind" => kind,
            "status" => status
        )
        .set(n as f64);
    }
    for net in &sources.networks {
        for chain in net.chains() {
            metrics::gauge!("openrail_chain_pending_transactions", "chain_id" => chain.chain_id.to_string())
                .set(pending.get(&chain.chain_id).copied().unwrap_or(0.0));
        }
    }
    let mut open: std::collections::BTreeMap<u64, (f64, f64)> = Default::default();
    for net in &sources.networks {
        for chain in net.chains() {
            open.insert(chain.chain_id, (0.0, 0.0));
        }
    }
    for (chain, n, age_ms) in snapshot.outbox {
        open.insert(chain, (n as f64, age_ms as f64 / 1000.0));
    }
    for (chain, (n, age)) in open {
        let id = chain.to_string();
        metrics::gauge!("openrail_outbox_open", "chain_id" => id.clone()).set(n);
        metrics::gauge!("openrail_outbox_oldest_age_seconds", "chain_id" => id).set(age);
    }
    for (mode, status, n) in snapshot.webhook_deliveries {
        metrics::gauge!("openrail_webhook_deliveries", "mode" => mode, "status" => status)
            .set(n as f64);
    }
    for (chain, n, p50, p90, p99) in snapshot.inclusion {
        let id = chain.to_string();
        for (q, ms) in [("0.5", p50), ("0.9", p90), ("0.99", p99)] {
            metrics::gauge!("openrail_tx_inclusion_seconds", "chain_id" => id.clone(), "quantile" => q)
                .set(ms as f64 / 1000.0);
        }
        metrics::gauge!("openrail_tx_inclusion_sample", "chain_id" => id).set(n as f64);
    }
    for (direction, status, n) in snapshot.bank_transfers {
        metrics::gauge!("openrail_bank_transfers", "direction" => direction, "status" => status)
            .set(n as f64);
    }
}

/// The metrics endpoint's router: `GET /metrics`, Prometheus text format 0.0.4.
pub fn router(sources: Sources) -> axum::Router {
    axum::Router::new()
        .route("/metrics", axum::routing::get(scrape))
        .with_state(sources)
}

async fn scrape(State(sources): State<Sources>) -> Response {
    collect(&sources).await;
    let handle = handle();
    handle.run_upkeep();
    let mut res = handle.render().into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    res
}

/// Serves [`router`] on `listener` until the process ends.
pub fn serve(listener: tokio::net::TcpListener, sources: Sources) -> tokio::task::JoinHandle<()> {
    let _ = handle();
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router(sources)).await {
            tracing::error!(error = %e, "the metrics server stopped");
        }
    })
}
