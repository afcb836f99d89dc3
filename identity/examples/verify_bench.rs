//! Micro-benchmark: p50/p99 of `verify_credential` on the W3C `eddsa-rdfc-2022` vector (and
//! the `ecdsa-rdfc-2019` P-256 and `eddsa-jcs-2022` ones), one thread.
//!
//! `cargo run --release -p openrail-identity --example verify_bench -- [N]` (default 2000).

use std::time::Instant;

use openrail_identity::{VerifyOptions, verify_credential};
use time::macros::datetime;

fn main() -> anyhow::Result<()> {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(2000);
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/");
    let options = VerifyOptions::new(datetime!(2026-01-01 00:00 UTC));
    for (name, file) in [
        (
            "eddsa-rdfc-2022",
            "vc-di-eddsa/eddsa-rdfc-2022/signedDataInt.json",
        ),
        (
            "ecdsa-rdfc-2019 P-256",
            "vc-di-ecdsa/ecdsa-rdfc-2019-p256/signedECDSAP256.json",
        ),
        (
            "eddsa-jcs-2022",
            "vc-di-eddsa/eddsa-jcs-2022/signedJCS.json",
        ),
    ] {
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(format!("{dir}{file}"))?)?;
        anyhow::ensure!(
            verify_credential(&doc, &options).verified,
            "{name} does not verify"
        );
        let mut micros = Vec::with_capacity(n);
        for _ in 0..n {
            let start = Instant::now();
            let r = verify_credential(&doc, &options);
            micros.push(start.elapsed().as_secs_f64() * 1e6);
            anyhow::ensure!(r.verified);
        }
        micros.sort_by(f64::total_cmp);
        let at = |q: f64| micros[((n as f64 * q) as usize).min(n - 1)];
        println!(
            "{name}: n={n} p50={:.0} µs p99={:.0} µs max={:.0} µs",
            at(0.5),
            at(0.99),
            micros[n - 1]
        );
    }
    Ok(())
}
