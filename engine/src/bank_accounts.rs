//! The bank-account service: a simulated bank account as a request asks for it (testnet
//! only; the handler checks the mode). [`prepare`] applies the rules, [`accept`] writes it.

use openrail_domain::BankAccountId;
use openrail_store::agentic::Scope;
use openrail_store::bank::{BankAccount, Behavior};
use openrail_store::{Currency, Store};

use crate::service::ServiceError;

/// Longest delay a simulated account may be given, seconds.
pub const MAX_DELAY_SECONDS: u64 = 3_600;
/// Longest owner name, characters.
const MAX_OWNER_NAME: usize = 200;

/// A simulated bank account as a request asks for it, parsed.
#[derive(Debug, Clone)]
pub struct NewBankAccount {
    /// Whose it is.
    pub owner_name: String,
    /// Its currency.
    pub currency: Currency,
    /// Its starting balance, minor units.
    pub balance: u64,
    /// How its transfers behave (default: they settle).
    pub behavior: Option<Behavior>,
    /// How long its transfers take, seconds (default: the behaviour's).
    pub delay_seconds: Option<u64>,
}

/// Judges `req` for `scope` at `now`: an owner name of 1 to 200 characters (trimmed), a
/// delay of at most an hour.
pub fn prepare(
    scope: Scope<'_>,
    req: NewBankAccount,
    now: i64,
) -> Result<BankAccount, ServiceError> {
    let owner_name = req.owner_name.trim();
    if owner_name.is_empty() || req.owner_name.chars().count() > MAX_OWNER_NAME {
        return Err(ServiceError::Invalid {
            param: "owner_name",
            detail: "must be 1 to 200 characters".into(),
        });
    }
    let behavior = req.behavior.unwrap_or(Behavior::Settles);
    let delay_ms = match req.delay_seconds {
        None => behavior.default_delay_ms(),
        Some(s) if s <= MAX_DELAY_SECONDS => s as i64 * 1000,
        Some(_) => {
            return Err(ServiceError::Invalid {
                param: "delay_seconds",
                detail: "must be between 0 and 3600".into(),
            });
        }
    };
    Ok(BankAccount {
        id: BankAccountId::new(),
        account_id: scope.account_id.clone(),
        mode: scope.mode,
        owner_name: owner_name.to_string(),
        currency: req.currency,
        balance: i64::try_from(req.balance).unwrap_or(i64::MAX),
        behavior,
        delay_ms,
        created_at: now,
        held: 0,
    })
}

/// Writes a prepared account.
pub async fn accept(store: &Store, account: &BankAccount) -> Result<(), ServiceError> {
    store.bank().create_account(account).await?;
    Ok(())
}
