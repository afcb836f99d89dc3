//! `openrail bench verify`: latency of `POST /v1/identity/credentials/verify` on the W3C
//! `eddsa-rdfc-2022` vector from concurrent HTTP clients (the API in this process, SQLite,
//! no chain: verification needs none), and in the same run the baseline of the same
//! verifications called on the library from as many threads, without HTTP.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use openrail_identity::{VerifyOptions, verify_credential};
use openrail_store::now_ms;
use serde_json::{Value, json};
use time::OffsetDateTime;

/// The W3C vc-di-eddsa test vector: a VC 2.0 credential with one `eddsa-rdfc-2022` proof.
const VECTOR: &str =
    include_str!("../../identity/tests/vectors/vc-di-eddsa/eddsa-rdfc-2022/signedDataInt.json");

/// The acceptance target (issue 27): p99 at 16 clients.
const P99_TARGET: Duration = Duration::from_millis(20);

/// Unmeasured verifications per client before each measurement (first-use work: the
/// static contexts, connections, the runtime's blocking threads).
const WARM_UP_PER_CLIENT: usize = 10;

/// The figures of one measurement.
struct Figures {
    elapsed: Duration,
    latencies: Vec<Duration>,
    cpu: Option<f64>,
    load: (String, String),
}

impl Figures {
    fn new(
        elapsed: Duration,
        mut latencies: Vec<Duration>,
        cpu: Option<f64>,
        load: (String, String),
    ) -> Self {
        latencies.sort();
        Self {
            elapsed,
            latencies,
            cpu,
            load,
        }
    }

    /// The `p` quantile (nearest rank).
    fn pct(&self, p: f64) -> Duration {
        let n = self.latencies.len();
        self.latencies[((n as f64 * p).ceil() as usize).clamp(1, n) - 1]
    }

    fn per_sec(&self) -> f64 {
        self.latencies.len() as f64 / self.elapsed.as_secs_f64()
    }

    /// CPU of this process per verification, µs.
    fn cpu_us(&self) -> String {
        self.cpu.map_or("—".into(), |s| {
            format!("{:.0} µs", s / self.latencies.len() as f64 * 1e6)
        })
    }

    fn row(&self, label: &str) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        format!(
            "| {label} | {:.0} | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms | {} |",
            self.per_sec(),
            ms(self.pct(0.5)),
            ms(self.pct(0.9)),
            ms(self.pct(0.99)),
            ms(self.pct(1.0)),
            self.cpu_us()
        )
    }
}

/// The 1, 5 and 15 minute load averages (`/proc/loadavg`), or `?`.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or("?".into(), |l| {
        l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    })
}

/// The bench: `n` verifications from `concurrency` clients, library then HTTP.
pub async fn run(n: usize, concurrency: usize) -> anyhow::Result<()> {
    if n == 0 || concurrency == 0 {
        bail!("--n and --concurrency must be positive");
    }
    let doc: Value = serde_json::from_str(VECTOR).context("the embedded vector")?;
    let check = verify_credential(&doc, &VerifyOptions::new(OffsetDateTime::now_utc()));
    anyhow::ensure!(
        check.verified,
        "the vector does not verify on the library: {:?}",
        check.problem_details
    );

    let doc_for_threads = doc.clone();
    let library = tokio::task::spawn_blocking(move || library(&doc_for_threads, n, concurrency))
        .await
        .context("the library phase")??;
    let http = http(&doc, n, concurrency).await?;

    println!(
        "Credential verification: W3C eddsa-rdfc-2022 vector (VC 2.0, one proof), {n} \
         verifications, {concurrency} concurrent clients, {} CPUs\n",
        std::thread::available_parallelism().map_or(0, |p| p.get())
    );
    println!("| measurement | verifications/s | p50 | p90 | p99 | max | CPU per verification |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    println!(
        "{}",
        library.row(&format!(
            "library: `verify_credential` from {concurrency} threads, no HTTP"
        ))
    );
    println!(
        "{}",
        http.row("HTTP: `POST /v1/identity/credentials/verify`, 200 verified")
    );
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let cpu_us = |f: &Figures| f.cpu.map(|s| s / f.latencies.len() as f64 * 1e6);
    // The library's tail at many threads is the OS scheduler's (CPU-bound threads beyond the
    // cores wait out time slices), the HTTP path's is the runtime's: only the medians and
    // the CPU compare.
    println!(
        "\nHTTP cost over the library: p50 {:+.2} ms, CPU {} per verification (the request, \
         its JSON, authentication, the answer, and the client)",
        ms(http.pct(0.5)) - ms(library.pct(0.5)),
        cpu_us(&http)
            .zip(cpu_us(&library))
            .map_or("—".into(), |(h, l)| format!("{:+.0} µs", h - l)),
    );
    println!(
        "p99 target ≤ {} ms at 16 clients: {}",
        P99_TARGET.as_millis(),
        match (concurrency, http.pct(0.99) <= P99_TARGET) {
            (16, true) => "met",
            (16, false) => "NOT met",
            _ => "(run with --concurrency 16 to judge)",
        }
    );
    println!(
        "load average (1, 5, 15 min) before → after: library {} → {}; HTTP {} → {}",
        library.load.0, library.load.1, http.load.0, http.load.1
    );
    Ok(())
}

/// `n` verifications on `concurrency` OS threads, each timed.
fn library(doc: &Value, n: usize, concurrency: usize) -> anyhow::Result<Figures> {
    let verify = |count: usize| -> anyhow::Result<Vec<Duration>> {
        let mut out = Vec::with_capacity(count);
        for _ in 0..count {
            let t = Instant::now();
            // As the API does: judged now, no status lists, no did:web.
            let v = verify_credential(doc, &VerifyOptions::new(OffsetDateTime::now_utc()));
            out.push(t.elapsed());
            anyhow::ensure!(v.verified, "not verified: {:?}", v.problem_details);
        }
        Ok(out)
    };
    let in_threads = |share: &dyn Fn(usize) -> usize| -> anyhow::Result<Vec<Duration>> {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..concurrency)
                .map(|c| {
                    let count = share(c);
                    s.spawn(move || verify(count))
                })
                .collect();
            let mut all = Vec::with_capacity(n);
            for h in handles {
                all.extend(
                    h.join()
                        .map_err(|_| anyhow::anyhow!("a thread panicked"))??,
                );
            }
            Ok(all)
        })
    };
    in_threads(&|_| WARM_UP_PER_CLIENT)?;
    let load = load_average();
    let cpu = crate::bench_pulls::cpu_seconds("self");
    let start = Instant::now();
    let latencies = in_threads(&|c| n / concurrency + usize::from(c < n % concurrency))?;
    let elapsed = start.elapsed();
    let cpu = cpu.zip(crate::bench_pulls::cpu_seconds("self"));
    Ok(Figures::new(
        elapsed,
        latencies,
        cpu.map(|(a, b)| b - a),
        (load, load_average()),
    ))
}

/// `n` requests from `concurrency` clients to a server in this process (SQLite, an API
/// key, rate limits out of the way), each answer checked: 200 and `verified: true`.
async fn http(doc: &Value, n: usize, concurrency: usize) -> anyhow::Result<Figures> {
    let dir = tempfile::tempdir()?;
    let store = openrail_store::testing::fresh_sqlite(dir.path()).await?;
    let account = store.accounts().create("Bench", now_ms()).await?;
    let (_, api_key) = store
        .api_keys()
        .create(&account.id, openrail_store::Mode::Testnet, now_ms())
        .await?;
    let config = openrail_api::ApiConfig {
        rate_per_sec: 1e9,
        rate_burst: 1e9,
        ..Default::default()
    };
    let server = openrail_api::server::serve(store, None, None, 0, config).await?;
    let url = format!("{}/v1/identity/credentials/verify", server.base_url);
    let body = serde_json::to_vec(&json!({ "verifiableCredential": doc }))?;
    let client = reqwest::Client::new();
    let phase = |share: Vec<usize>| {
        let mut set = tokio::task::JoinSet::new();
        for count in share {
            let (client, url, api_key, body) =
                (client.clone(), url.clone(), api_key.clone(), body.clone());
            set.spawn(async move {
                let mut out = Vec::with_capacity(count);
                for _ in 0..count {
                    let t = Instant::now();
                    let res = client
                        .post(&url)
                        .bearer_auth(&api_key)
                        .header("content-type", "application/json")
                        .body(body.clone())
                        .send()
                        .await?;
                    let status = res.status();
                    let answer = res.bytes().await?;
                    out.push(t.elapsed());
                    let verified = serde_json::from_slice::<Value>(&answer)
                        .ok()
                        .and_then(|v| v["verified"].as_bool());
                    anyhow::ensure!(
                        status.as_u16() == 200 && verified == Some(true),
                        "answer {status}: {}",
                        String::from_utf8_lossy(&answer)
                    );
                }
                anyhow::Ok(out)
            });
        }
        async move {
            let mut all = Vec::new();
            while let Some(r) = set.join_next().await {
                all.extend(r??);
            }
            anyhow::Ok(all)
        }
    };
    let outcome = async {
        phase(vec![WARM_UP_PER_CLIENT; concurrency]).await?;
        let load = load_average();
        let cpu = crate::bench_pulls::cpu_seconds("self");
        let start = Instant::now();
        let latencies = phase(
            (0..concurrency)
                .map(|c| n / concurrency + usize::from(c < n % concurrency))
                .collect(),
        )
        .await?;
        let elapsed = start.elapsed();
        let cpu = cpu.zip(crate::bench_pulls::cpu_seconds("self"));
        anyhow::Ok(Figures::new(
            elapsed,
            latencies,
            cpu.map(|(a, b)| b - a),
            (load, load_average()),
        ))
    }
    .await;
    server.stopper.close();
    server.task.abort();
    outcome
}
