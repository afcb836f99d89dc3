//! Checks shared by the tests that kill server processes: sending a burst of requests,
//! the usual fixtures, waiting until everything is final, and auditing the journal.

use std::collections::BTreeMap;
use std::time::Duration;

use alloy::primitives::{Address, U256};
use alloy::providers::Provider;
use openrail_chain::devnet::dev_operator;
use openrail_store::Store;
use openrail_store::agentic::{KeyStatus, MandateStatus, PullStatus, Scope};
use openrail_store::payments::PaymentStatus;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::{Harness, Reply, ServerProcess};

/// The operator's transactions are all in the journal and all settled: nothing without a
/// fate, nothing refused, and the operator's nonce moved since `nonce_at_start` by exactly
/// the journaled transactions (each mined once under its own nonce, none outside it).
pub async fn assert_journal_consistent(
    h: &Harness,
    store: &Store,
    nonce_at_start: u64,
) -> anyhow::Result<()> {
    let chain_id = h.settlement_deployment().chain_id;
    let journal = store.journal().summary(chain_id).await?;
    assert_eq!((journal.signed, journal.rejected), (0, 0), "{journal:?}");
    assert_eq!(journal.mined, journal.mined_nonces, "{journal:?}");
    let nonce = h
        .settlement
        .get_transaction_count(dev_operator().address())
        .await?;
    assert_eq!(nonce - nonce_at_start, journal.mined, "{journal:?}");
    Ok(())
}

/// Sends every request at once (`Prefer: wait=0`: the server answers as soon as it has
/// recorded the object), the i-th with `Idempotency-Key: request-<i>`.
pub async fn send_all(h: &Harness, requests: &[(&str, &str, Value)]) -> Vec<anyhow::Result<Reply>> {
    futures::future::join_all(
        requests
            .iter()
            .enumerate()
            .map(|(i, (_, path, body))| send_one(h, i, path, body)),
    )
    .await
}

/// Sends the i-th request of a burst (see [`send_all`]).
pub async fn send_one(h: &Harness, i: usize, path: &str, body: &Value) -> anyhow::Result<Reply> {
    let key = format!("request-{i}");
    h.call(
        Method::POST,
        path,
        Some(body),
        None,
        &[("prefer", "wait=0"), ("idempotency-key", &key)],
    )
    .await
}

/// Sends the i-th request of a burst again, as a client does after a lost answer, until it
/// gets one that is not 503 or 409 (a server taking over, the dead process's claim not
/// yet expired); at most for 30 s.
pub async fn retry(h: &Harness, i: usize, path: &str, body: &Value) -> anyhow::Result<Reply> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let r = send_one(h, i, path, body).await?;
        let busy = matches!(
            r.status,
            StatusCode::SERVICE_UNAVAILABLE | StatusCode::CONFLICT
        );
        if !busy || tokio::time::Instant::now() > deadline {
            return Ok(r);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A simulated USD bank account that settles after `delay_seconds`; returns its id.
pub async fn bank_account(
    h: &Harness,
    balance: &str,
    delay_seconds: u64,
) -> anyhow::Result<String> {
    let r = h
        .post(
            "/v1/bank-accounts",
            json!({"owner_name": "Ada", "currency": "USD", "balance": balance, "delay_seconds": delay_seconds}),
        )
        .await?;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    Ok(r.str("id").to_string())
}

/// A mandate (1,000 USD a day) paid by `payer` (a wallet the harness funded, or a bank
/// account) and a session key on it; returns both ids. A wallet payer names the payee the
/// audit tests pull to (`dev_spare`); a bank account's mandate names none (any
/// destination).
pub async fn mandate_and_key(h: &Harness, payer: &str) -> anyhow::Result<(String, String)> {
    // A wallet payer signs (the harness holds the keys of the wallets it funded); a bank
    // account's mandate needs no signature.
    let mut body = json!({"payer_account_id": payer, "max_amount": "1000", "currency": "USD", "interval": "daily"});
    if payer.starts_with("0x") {
        body["payees"] = json!([openrail_chain::devnet::dev_spare().address().to_string()]);
    }
    let m = h.post_authorized("/v1/mandates", body).await?;
    assert!(m.status.is_success(), "{}", m.body);
    assert_eq!(m.str("status"), "active", "{}", m.body);
    let k = h
        .post(
            "/v1/session-keys",
            json!({"mandate_id": m.str("id"), "expires_in": 86_400}),
        )
        .await?;
    assert_eq!(
        (k.status, k.str("status")),
        (StatusCode::CREATED, "active"),
        "{}",
        k.body
    );
    Ok((m.str("id").to_string(), k.str("id").to_string()))
}

/// Pulls and payments of the account once none is open any more.
pub struct Final {
    /// Pull id → (status, amount, session key).
    pub pulls: BTreeMap<String, (PullStatus, u64, String)>,
    /// Payment id → payment.
    pub payments: BTreeMap<String, openrail_store::payments::Payment>,
    /// Mandate id → status.
    pub mandates: BTreeMap<String, MandateStatus>,
    /// Session key id → status.
    pub keys: BTreeMap<String, KeyStatus>,
}

/// Waits (up to 60 s) until nothing of `scope` is open: mandates and keys not `pending`,
/// pulls neither `pending` nor, for pulls on one of `bank_keys` (bank-funded mandates),
/// `authorized`; payments neither `pending` nor `processing`.
pub async fn wait_all_final(
    store: &Store,
    scope: Scope<'_>,
    bank_keys: &[&str],
    survivor: &mut ServerProcess,
) -> anyhow::Result<Final> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let pulls = store.pulls().list(scope, None, 100, None).await?.data;
        let payments = store.payments().list(scope, 100, None).await?.data;
        let mandates = store.mandates().list(scope, 100, None).await?.data;
        let keys = store.keys().list(scope, None, 100, None).await?.data;
        let open_setup = mandates
            .iter()
            .filter(|m| m.status == MandateStatus::Pending)
            .map(|m| m.id.as_str())
            .chain(
                keys.iter()
                    .filter(|k| k.status == KeyStatus::Pending)
                    .map(|k| k.id.as_str()),
            )
            .next();
        let open_pull = pulls
            .iter()
            // A bank-funded pull is final once its bank leg ran (`settled` or `failed`).
            .find(|p| {
                p.status == PullStatus::Pending
                    || (p.status == PullStatus::Authorized
                        && bank_keys.contains(&p.session_key_id.as_str()))
            });
        let open_payment = payments
            .iter()
            .find(|p| matches!(p.status, PaymentStatus::Pending | PaymentStatus::Processing));
        if open_pull.is_none() && open_payment.is_none() && open_setup.is_none() {
            return Ok(Final {
                mandates: mandates
                    .into_iter()
                    .map(|m| (m.id.into(), m.status))
                    .collect(),
                keys: keys.into_iter().map(|k| (k.id.into(), k.status)).collect(),
                pulls: pulls
                    .into_iter()
                    .map(|p| (p.id.into(), (p.status, p.amount, p.session_key_id.into())))
                    .collect(),
                payments: payments
                    .into_iter()
                    .map(|p| (p.id.to_string(), p))
                    .collect(),
            });
        }
        if tokio::time::Instant::now() > deadline {
            anyhow::bail!(
                "still open after 60 s: {:?} {:?} {:?}\nserver log:\n{}",
                open_setup,
                open_pull.map(|p| (&p.id, p.status)),
                open_payment.map(|p| (&p.id, p.status)),
                survivor.log_tail()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Token balances of some wallets.
pub struct Balances(BTreeMap<Address, U256>);

impl Balances {
    /// USD balances of `who` on the settlement chain.
    pub async fn read(h: &Harness, who: &[Address]) -> anyhow::Result<Self> {
        let mut m = BTreeMap::new();
        for a in who {
            m.insert(*a, h.balance("USD", *a).await?);
        }
        Ok(Self(m))
    }

    /// The balance of `a`.
    pub fn of(&self, a: Address) -> U256 {
        self.0[&a]
    }
}

/// Asserts that the events of `id`, oldest first, are exactly `expected`: each state
/// change one event, none lost and none twice (across crashes too: an event is written in
/// the transaction that makes its change).
pub async fn assert_events(
    store: &Store,
    id: &str,
    expected: &[openrail_store::events::EventType],
) -> anyhow::Result<()> {
    let got = store.events().types_of(id).await?;
    assert_eq!(got, expected, "events of {id}");
    Ok(())
}
