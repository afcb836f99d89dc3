//! An agent that pulls within its session key's ceiling: it reads the key, pulls `AMOUNT`
//! until the chain says the epoch's allowance is spent, and prints what remains and when
//! it resets.
//!
//! ```sh
//! OPENRAIL_URL=http://127.0.0.1:8080 OPENRAIL_KEY=sks_testnet_… SESSION_KEY=sk_… AMOUNT=10 \
//!   cargo run -p openrail-client --example agent
//! ```
//! `OPENRAIL_KEY` is the session key's `secret` (the agent never holds the account's API
//! key).

use openrail_client::Client;
use openrail_client::agentic::CreatePull;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let var = |name: &str| std::env::var(name).map_err(|_| anyhow::anyhow!("set {name}"));
    let client = Client::new(var("OPENRAIL_KEY")?)
        .base_url(std::env::var("OPENRAIL_URL").unwrap_or_else(|_| "http://127.0.0.1:8080".into()));
    let key_id = var("SESSION_KEY")?;
    let amount = std::env::var("AMOUNT").unwrap_or_else(|_| "10".into());
    run(&client, &key_id, &amount).await?;
    Ok(())
}

/// Pulls `amount` on the key `key_id` until the chain declines one (at most 100 pulls);
/// returns how many were authorized.
pub async fn run(client: &Client, key_id: &str, amount: &str) -> anyhow::Result<u32> {
    let key = client.agentic().session_key(key_id).await?;
    println!(
        "key {} ({}), ceiling {} {} per epoch, remaining {}",
        key.id,
        key.status,
        key.max_amount.as_deref().unwrap_or("the mandate's"),
        key.currency,
        key.current_epoch
            .as_ref()
            .map_or("?", |e| e.remaining.as_str())
    );
    let mut authorized = 0;
    for n in 1..=100 {
        let pull = CreatePull {
            session_key_id: key_id.to_string(),
            amount: amount.to_string(),
            description: Some(format!("agent pull {n}")),
            ..Default::default()
        };
        match client.agentic().create_pull(&pull).await {
            Ok(p) => {
                authorized += 1;
                println!(
                    "pull {n}: {} {} {} ({})",
                    p.id, p.amount, p.currency, p.status
                )
            }
            Err(e) if e.code() == Some("allowance_exceeded") => {
                let p = e.problem().expect("a problem");
                println!(
                    "pull {n}: declined, allowance_exceeded: {} left until {}",
                    p.remaining.as_deref().unwrap_or("?"),
                    p.resets_at.as_deref().unwrap_or("?")
                );
                return Ok(authorized);
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(authorized)
}
