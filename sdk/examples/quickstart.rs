//! The README's Rust quickstart, as a program: a mandate the payer signs, a session key,
//! pulls until the key's ceiling declines one, the key revoked, then a wallet payment.
//!
//! ```sh
//! KEY=sk_testnet_… PAYER_KEY=0x… cargo run -p openrail-client --example quickstart
//! ```
//! (`KEY` and `PAYER_KEY` as `make dev` printed them; `API` when not on port 8080.)

use openrail_client::Client;
use openrail_client::agentic::{CreateMandate, CreatePull, CreateSessionKey};
use openrail_client::payments::{CreatePayment, Destination, Source};
use openrail_client::signing::{PrivateKeySigner, sign_typed_data};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let var = |name: &str| std::env::var(name).map_err(|_| anyhow::anyhow!("set {name}"));
    let api = std::env::var("API").unwrap_or_else(|_| "http://127.0.0.1:8080".into());
    let payer: PrivateKeySigner = var("PAYER_KEY")?.parse()?;
    run(&api, &var("KEY")?, &payer).await
}

/// The quickstart against `api` with the account's key and the payer's wallet.
pub async fn run(api: &str, key: &str, payer: &PrivateKeySigner) -> anyhow::Result<()> {
    // readme-start
    let client = Client::new(key).base_url(api);

    // A mandate on the payer's wallet: up to 100 USD a day to the one payee it names (no
    // key may pay anyone else), active once the payer signs.
    let merchant = "0x000000000000000000000000000000000000bEEF";
    let mandate = client
        .agentic()
        .create_mandate(&CreateMandate {
            payer_account_id: payer.address().to_string(),
            max_amount: "100.00".into(),
            currency: "USD".into(),
            interval: "daily".into(),
            purpose: Some("quickstart".into()),
            payees: Some(vec![merchant.into()]),
            agent: None,
            requirements: None,
        })
        .await?;
    let typed_data = mandate
        .authorization
        .and_then(|a| a.typed_data)
        .expect("a wallet signs");
    let signature = sign_typed_data(payer, &typed_data)?; // what eth_signTypedData_v4 returns
    let mandate = client
        .agentic()
        .authorize_mandate(&mandate.id, &signature)
        .await?;
    println!("mandate {} {}", mandate.id, mandate.status);

    // A session key with a tighter ceiling; its secret is all the agent holds.
    let key = client
        .agentic()
        .create_session_key(&CreateSessionKey {
            mandate_id: mandate.id.clone(),
            expires_in: 3600,
            max_amount: Some("30".into()),
            ..Default::default()
        })
        .await?;
    let agent = Client::new(key.secret.clone().expect("shown once")).base_url(api);

    // The agent pulls 12.50 until the chain says the key's ceiling is spent.
    let pull = CreatePull {
        session_key_id: key.id.clone(),
        amount: "12.50".into(),
        destination: Some(merchant.into()),
        ..Default::default()
    };
    loop {
        match agent.agentic().create_pull(&pull).await {
            Ok(p) => println!("pull {} {} {}", p.id, p.amount, p.status),
            Err(e) if e.code() == Some("allowance_exceeded") => {
                let left = e.problem().and_then(|p| p.remaining.clone());
                println!(
                    "declined: allowance_exceeded, {} left",
                    left.unwrap_or_default()
                );
                break;
            }
            Err(e) => return Err(e.into()),
        }
    }
    let key = client.agentic().revoke_session_key(&key.id).await?;
    println!("key {} {}", key.id, key.status);

    // A one-time payment from the payer's wallet, moved as the payer signed it.
    let payment = client
        .payments()
        .create(&CreatePayment {
            amount: "5.00".into(),
            currency: "USD".into(),
            source: Source::Wallet {
                id: payer.address().to_string(),
            },
            destination: Destination::Wallet {
                address: "0x000000000000000000000000000000000000dEaD".into(),
            },
        })
        .await?;
    let typed_data = payment
        .authorization
        .and_then(|a| a.typed_data)
        .expect("a wallet signs");
    let payment = client
        .payments()
        .authorize(&payment.id, &sign_typed_data(payer, &typed_data)?)
        .await?;
    println!("payment {} {}", payment.id, payment.status);
    // readme-end
    Ok(())
}
