//! `openrail accounts …` and `openrail keys …`: developer accounts and API keys.

use anyhow::{Context, bail};
use openrail_domain::{AccountId, ApiKeyId};
use openrail_store::now_ms;
use openrail_store::{Mode, StoreError};

use crate::DbArgs;

/// Developer account commands.
#[derive(Debug, clap::Subcommand)]
pub enum AccountsCommand {
    /// Create a developer account and print its id.
    Create {
        /// Display name.
        #[arg(long)]
        name: String,
        #[command(flatten)]
        db: DbArgs,
    },
}

/// API key commands.
#[derive(Debug, clap::Subcommand)]
pub enum KeysCommand {
    /// Create an API key; the secret is printed once and stored only as a hash.
    Create {
        /// The account (`acct_…`).
        #[arg(long)]
        account: String,
        /// `testnet` or `mainnet`.
        #[arg(long, default_value = "testnet")]
        mode: String,
        #[command(flatten)]
        db: DbArgs,
    },
    /// List API keys (never their secrets).
    List {
        /// Only this account's keys.
        #[arg(long)]
        account: Option<String>,
        #[command(flatten)]
        db: DbArgs,
    },
    /// Revoke an API key (`key_…`); it stops working at once.
    Revoke {
        /// The key's id.
        id: String,
        #[command(flatten)]
        db: DbArgs,
    },
}

pub async fn accounts(cmd: AccountsCommand) -> anyhow::Result<()> {
    match cmd {
        AccountsCommand::Create { name, db } => {
            if name.trim().is_empty() {
                bail!("--name must not be empty");
            }
            let account = db
                .open()
                .await?
                .accounts()
                .create(name.trim(), now_ms())
                .await?;
            println!("{}", account.id);
        }
    }
    Ok(())
}

pub async fn keys(cmd: KeysCommand) -> anyhow::Result<()> {
    match cmd {
        KeysCommand::Create { account, mode, db } => {
            let mode = Mode::parse(&mode)
                .with_context(|| format!("--mode must be testnet or mainnet, not {mode:?}"))?;
            // What is not an account's id names no account.
            let Some(id) = AccountId::parse(&account) else {
                bail!("no account {account}");
            };
            let store = db.open().await?;
            let (key, secret) = match store.api_keys().create(&id, mode, now_ms()).await {
                Err(StoreError::NotFound) => bail!("no account {account}"),
                other => other?,
            };
            eprintln!(
                "created {} for {} ({}); the secret is shown only now:",
                key.id,
                key.account_id,
                mode.as_str()
            );
            println!("{secret}");
        }
        KeysCommand::List { account, db } => {
            let store = db.open().await?;
            let keys = match account.as_deref().map(AccountId::parse) {
                None => store.api_keys().list(None).await?,
                Some(Some(id)) => store.api_keys().list(Some(&id)).await?,
                // What is not an account's id names no account, which has no keys.
                Some(None) => Vec::new(),
            };
            println!(
                "{:<30} {:<30} {:<8} {:<10} status",
                "id", "account", "mode", "secret"
            );
            for k in keys {
                let status = if k.revoked_at.is_some() {
                    "revoked"
                } else {
                    "active"
                };
                println!(
                    "{:<30} {:<30} {:<8} {:<10} {status}",
                    // As text: the ids' `Display` does not pad.
                    k.id.as_str(),
                    k.account_id.as_str(),
                    k.mode.as_str(),
                    format!("…{}", k.last4)
                );
            }
        }
        KeysCommand::Revoke { id, db } => {
            // What is not a key's id names no key.
            let Some(key) = ApiKeyId::parse(&id) else {
                bail!("no API key {id}");
            };
            match db.open().await?.api_keys().revoke(&key, now_ms()).await {
                Err(StoreError::NotFound) => bail!("no API key {id}"),
                other => {
                    other?;
                    println!("revoked {id}");
                }
            }
        }
    }
    Ok(())
}
