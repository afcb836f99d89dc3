//! The conservation property, end to end: seeded random sequences of payments of every pair
//! (wallet and bank account, both ways), wallet-funded and bank-funded pulls, on simulated
//! bank accounts of every behaviour (`fails_late` included), sent in concurrent groups.
//! When everything is final:
//!
//! - per currency, the simulated bank balances + the on-chain balances of every wallet
//!   involved + the treasury + Openrail's own position at the bank (what the bank rail
//!   moved to Openrail: settled debits minus settled credits) equal the starting total —
//!   the sum, with the bank rail's counterparty made explicit, since a bank → wallet
//!   payment takes money out of the customer's bank account and the treasury's tokens at
//!   once;
//! - the customers alone (bank balances + their wallets) hold what they started with, so
//!   nothing was paid that was not collected and nothing collected that was not paid;
//! - no bank balance (nor available balance) is negative;
//! - every payment and pull is final, no refund is pending;
//! - the database's view equals the chain's: each mandate's and key's spend this epoch.
//!
//! `OPENRAIL_CONSERVATION_SEED=<n>` replays a run; the seed is printed at the start and in
//! the failure message.

use std::collections::BTreeMap;

use alloy::primitives::{Address, U256, keccak256};
use alloy::signers::local::PrivateKeySigner;
use anyhow::Context;
use openrail_chain::devnet::{dev_demo_payer, dev_spare};
use openrail_tests::Harness;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// SplitMix64: a small deterministic generator, so a seed replays a run exactly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

/// Minor units of a "12.34" amount.
fn minor(s: &str) -> i64 {
    let (w, f) = s.split_once('.').unwrap_or((s, "0"));
    w.parse::<i64>().unwrap() * 100 + format!("{f:0<2}")[..2].parse::<i64>().unwrap()
}

/// Token units (6 decimals) as minor units (2).
fn units_to_minor(u: U256) -> i64 {
    i64::try_from(u / U256::from(10_000u64)).unwrap()
}

const OPS: usize = 36;
const GROUP: usize = 6;

#[tokio::test]
async fn money_is_conserved_across_rails() -> anyhow::Result<()> {
    let seed = std::env::var("OPENRAIL_CONSERVATION_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("conservation property: seed {seed} (OPENRAIL_CONSERVATION_SEED={seed} replays it)");
    run(seed)
        .await
        .with_context(|| format!("conservation property failed with seed {seed}"))
}

async fn run(seed: u64) -> anyhow::Result<()> {
    let mut rng = Rng(seed);
    let h = Harness::start().await?;
    let d = h.settlement_deployment().clone();

    // Parties: two wallet payers (they sign), a pool of destination wallets, and one
    // simulated bank account per behaviour.
    let payers = [dev_demo_payer(), dev_spare()];
    for p in &payers {
        h.fund(p.clone(), 500).await?;
    }
    let payees: Vec<Address> = (0..3)
        .map(|i| Address::from_slice(&keccak256(format!("payee-{seed}-{i}"))[12..]))
        .collect();
    let behaviors = [
        "settles",
        "insufficient_funds",
        "closed",
        "delayed",
        "fails_late",
    ];
    let mut banks: Vec<(String, &str)> = Vec::new();
    let mut bank_start: BTreeMap<String, i64> = BTreeMap::new();
    for b in behaviors {
        for _ in 0..2 {
            let balance = format!("{}.00", 20 + rng.below(120));
            let r = h
                .post(
                    "/v1/bank-accounts",
                    json!({"owner_name": b, "currency": "USD", "balance": balance, "behavior": b,
                           "delay_seconds": 1 + rng.below(2)}),
                )
                .await?;
            anyhow::ensure!(r.status == StatusCode::CREATED, "bank account: {}", r.body);
            bank_start.insert(r.str("id").to_string(), minor(&balance));
            banks.push((r.str("id").to_string(), b));
        }
    }
    let wallets: Vec<Address> = payers
        .iter()
        .map(|p| p.address())
        .chain(payees.iter().copied())
        .collect();

    // Mandates and keys: one per wallet payer, one per bank account (bank-funded).
    let mut keys: Vec<(String, Option<String>)> = Vec::new(); // (key id, bank account)
    let mut mandates = Vec::new();
    for p in &payers {
        let m = h
            .post_authorized(
                "/v1/mandates",
                json!({"payer_account_id": p.address().to_string(), "max_amount": "150", "currency": "USD", "interval": "monthly",
                       "payees": payees.iter().map(|a| a.to_string()).collect::<Vec<_>>()}),
            )
            .await?;
        anyhow::ensure!(m.body["status"] == "active", "mandate: {}", m.body);
        mandates.push(m.body.clone());
    }
    for (ba, _) in &banks {
        let m = h
            .post(
                "/v1/mandates",
                json!({"payer_account_id": ba, "max_amount": "60", "currency": "USD", "interval": "monthly"}),
            )
            .await?;
        anyhow::ensure!(m.body["status"] == "active", "mandate: {}", m.body);
        mandates.push(m.body.clone());
    }
    for m in &mandates {
        let k = h
            .post(
                "/v1/session-keys",
                json!({"mandate_id": m["id"], "expires_in": 3600}),
            )
            .await?;
        anyhow::ensure!(k.status == StatusCode::CREATED, "key: {}", k.body);
        let bank = m["payer_account_id"]
            .as_str()
            .filter(|p| p.starts_with("ba_"))
            .map(str::to_string);
        keys.push((k.str("id").to_string(), bank));
    }

    let (wallets_start, treasury_start) = token_total(&h, &wallets, d.treasury).await?;

    // Random operations, in concurrent groups.
    let mut payments: Vec<String> = Vec::new();
    let mut pulls: Vec<String> = Vec::new();
    let mut ops = Vec::new();
    for _ in 0..OPS {
        let amount = format!("{}.{:02}", 1 + rng.below(25), rng.below(100));
        let op = match rng.below(6) {
            // Payments: source × destination kinds.
            0..=3 => {
                let from_bank = rng.below(2) == 0;
                let to_bank = rng.below(2) == 0;
                let payer_i = rng.below(2) as usize;
                let n = banks.len() as u64;
                let src = rng.below(n);
                let source = if from_bank {
                    json!({"type": "bank_account", "id": banks[src as usize].0})
                } else {
                    json!({"type": "wallet", "id": payers[payer_i].address().to_string()})
                };
                let destination = if to_bank {
                    // Another account than the source.
                    let dst = (src + 1 + rng.below(n - 1)) % n;
                    json!({"type": "bank_account", "address": banks[dst as usize].0})
                } else {
                    json!({"type": "wallet", "address": rng.pick(&payees).to_string()})
                };
                let signer = (!from_bank).then(|| payers[payer_i].clone());
                Op::Payment(
                    json!({"amount": amount, "currency": "USD", "source": source, "destination": destination}),
                    signer,
                )
            }
            // Pulls: on a wallet or a bank-funded key.
            _ => {
                let (key, _) = rng.pick(&keys).clone();
                Op::Pull(
                    json!({"session_key_id": key, "amount": amount, "destination": rng.pick(&payees).to_string()}),
                )
            }
        };
        ops.push(op);
    }
    for group in ops.chunks(GROUP) {
        let replies = futures::future::join_all(group.iter().map(|op| op.send(&h))).await;
        for (op, r) in group.iter().zip(replies) {
            let (id, body) = r?;
            match op {
                Op::Payment(..) => {
                    payments.push(id.with_context(|| format!("payment refused: {body}"))?)
                }
                Op::Pull(_) => {
                    if let Some(id) = id {
                        pulls.push(id);
                    }
                }
            }
        }
    }

    // Everything final.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let mut open = Vec::new();
        for p in &payments {
            let b = h.get(&format!("/v1/payments/{p}")).await?.body;
            let done = matches!(b["status"].as_str(), Some("succeeded" | "failed"))
                && b["refund_status"] != "pending";
            if !done {
                open.push(b);
            }
        }
        for p in &pulls {
            let b = h.get(&format!("/v1/debit-pulls/{p}")).await?.body;
            let bank_funded = keys
                .iter()
                .any(|(k, bank)| *k == b["session_key_id"] && bank.is_some());
            let done = match b["status"].as_str() {
                Some("settled" | "failed" | "declined") => true,
                Some("authorized") => !bank_funded,
                _ => false,
            };
            if !done {
                open.push(b);
            }
        }
        if open.is_empty() {
            break;
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "not final after 60 s: {}",
            Value::Array(open)
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }

    // Balances.
    let (wallets_end, treasury_end) = token_total(&h, &wallets, d.treasury).await?;
    let mut bank_end: BTreeMap<String, i64> = BTreeMap::new();
    let mut float = 0i64; // Openrail's position at the bank rail
    for (ba, _) in &banks {
        let b = h.get(&format!("/v1/bank-accounts/{ba}")).await?.body;
        let balance = minor(b["balance"].as_str().unwrap());
        let available = minor(b["available_balance"].as_str().unwrap());
        anyhow::ensure!(balance >= 0 && available >= 0, "negative balance: {b}");
        anyhow::ensure!(available == balance, "a hold outlived its debit: {b}");
        for t in b["transfers"].as_array().unwrap() {
            let amount = minor(t["amount"].as_str().unwrap());
            match (t["direction"].as_str(), t["status"].as_str()) {
                (Some("debit"), Some("settled")) => float += amount,
                (Some("credit"), Some("settled")) => float -= amount,
                (_, Some("failed")) => {}
                other => anyhow::bail!("bank transfer not final: {other:?} {t}"),
            }
        }
        bank_end.insert(ba.clone(), balance);
    }
    let sum = |m: &BTreeMap<Address, i64>| m.values().sum::<i64>();
    let banks_start: i64 = bank_start.values().sum();
    let banks_end: i64 = bank_end.values().sum();
    eprintln!(
        "seed {seed}: {} payments, {} pulls; banks {banks_start} → {banks_end}, wallets {} → {}, treasury {treasury_start} → {treasury_end}, float {float} (minor units)",
        payments.len(),
        pulls.len(),
        sum(&wallets_start),
        sum(&wallets_end)
    );
    anyhow::ensure!(
        banks_end + sum(&wallets_end) == banks_start + sum(&wallets_start),
        "customers' money not conserved: banks {banks_start} → {banks_end}, wallets {} → {}",
        sum(&wallets_start),
        sum(&wallets_end)
    );
    anyhow::ensure!(
        banks_end + sum(&wallets_end) + treasury_end + float
            == banks_start + sum(&wallets_start) + treasury_start,
        "total not conserved (treasury {treasury_start} → {treasury_end}, float {float})"
    );

    // The database's view is the chain's: spend this epoch of every mandate and key.
    let asm = h.allowance_state_machine();
    for m in &mandates {
        let api = h
            .get(&format!("/v1/mandates/{}", m["id"].as_str().unwrap()))
            .await?
            .body;
        let onchain: alloy::primitives::B256 = m["onchain"]["id"].as_str().unwrap().parse()?;
        let chain = asm.getMandate(onchain).call().await?;
        anyhow::ensure!(
            minor(api["current_epoch"]["spent"].as_str().unwrap())
                == units_to_minor(U256::from(chain.spentThisEpoch)),
            "mandate {} spend: api {} chain {}",
            m["id"],
            api["current_epoch"]["spent"],
            chain.spentThisEpoch
        );
    }
    h.stop().await;
    Ok(())
}

/// Token balances (minor units) of `wallets`, and of the treasury.
async fn token_total(
    h: &Harness,
    wallets: &[Address],
    treasury: Address,
) -> anyhow::Result<(BTreeMap<Address, i64>, i64)> {
    let mut per = BTreeMap::new();
    for w in wallets {
        per.insert(*w, units_to_minor(h.balance("USD", *w).await?));
    }
    Ok((per, units_to_minor(h.balance("USD", treasury).await?)))
}

/// One request of the random sequence.
enum Op {
    /// A payment body, and the wallet that signs it when the source is a wallet.
    Payment(Value, Option<PrivateKeySigner>),
    /// A pull body.
    Pull(Value),
}

impl Op {
    /// Sends it (signing a wallet payment as its payer); the created object's id, if any.
    async fn send(&self, h: &Harness) -> anyhow::Result<(Option<String>, Value)> {
        let hdr = [("Prefer", "wait=0")];
        match self {
            Op::Payment(body, signer) => {
                let r = h
                    .call(Method::POST, "/v1/payments", Some(body), None, &hdr)
                    .await?;
                let id = r.body["id"].as_str().map(str::to_string);
                if let (Some(signer), Some(_)) = (signer, &id) {
                    let sig = Harness::sign_authorization(&r.body, signer)?;
                    let a = h
                        .call(
                            Method::POST,
                            &format!("/v1/payments/{}/authorize", id.as_deref().unwrap()),
                            Some(&json!({ "signature": sig })),
                            None,
                            &hdr,
                        )
                        .await?;
                    anyhow::ensure!(a.status.is_success(), "authorize: {}", a.body);
                }
                Ok((id, r.body))
            }
            Op::Pull(body) => {
                let r = h
                    .call(Method::POST, "/v1/debit-pulls", Some(body), None, &hdr)
                    .await?;
                // A decline (422) is a recorded pull too; anything else must be accepted.
                let id = r.body["id"]
                    .as_str()
                    .or(r.body["pull_id"].as_str())
                    .map(str::to_string);
                anyhow::ensure!(id.is_some(), "pull refused: {}", r.body);
                Ok((id, r.body))
            }
        }
    }
}
