//! The mandate service: what a request for a mandate means, apart from HTTP. A handler
//! parses the request into a [`NewMandate`], asks [`prepare`] (the payer may pay in that
//! currency on this network), links its idempotency key to the mandate's path, then
//! [`accept`]s it: a wallet payer's mandate waits for the payer's signature (nothing is
//! sent until then); a bank account's is written with its `create_mandate` work, and the
//! engine creates it on chain.

use std::time::Duration;

use alloy::primitives::{Address, keccak256};
use openrail_store::agentic::{Mandate, MandateStatus, Scope};
use openrail_store::consent::Authorization;
use openrail_store::{Amount, BankAccountId, Interval, MandateId, Store, StoreError};

use crate::network::Network;
use crate::service::ServiceError;
use crate::{Waiter, waiter};

/// Who funds a mandate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payer {
    /// A wallet, as written and parsed: the chain pulls from it, once it signed the
    /// mandate's terms.
    Wallet(String, Address),
    /// A bank account: the chain pulls from the treasury, and the bank account is debited
    /// once per authorized pull; its bank mandate is the consent.
    BankAccount(BankAccountId),
}

/// A mandate as a request asks for it, parsed (syntax checked) but not yet judged.
#[derive(Debug, Clone)]
pub struct NewMandate {
    /// Who pays.
    pub payer: Payer,
    /// The ceiling per epoch (its currency is the mandate's).
    pub max_amount: Amount,
    /// The epoch.
    pub interval: Interval,
    /// Free text for the payer and the developer.
    pub purpose: Option<String>,
}

/// A mandate judged acceptable, not yet written: the row, and what a wallet payer is
/// asked to sign.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The row to write.
    pub mandate: Mandate,
    /// A wallet payer's authorization to give (`None` for a bank account).
    pub authorization: Option<Authorization>,
}

/// Judges `req` for `scope` on `net` at `now`: the currency has a token here, a bank
/// account exists and holds the mandate's currency, a wallet may pay; a wallet payer's
/// signature is asked for, valid for `authorization_ttl`.
pub async fn prepare(
    store: &Store,
    net: &Network,
    scope: Scope<'_>,
    req: NewMandate,
    authorization_ttl: Duration,
    now: i64,
) -> Result<Prepared, ServiceError> {
    let currency = req.max_amount.currency();
    let (payer_account_id, payer_address) = match &req.payer {
        Payer::BankAccount(id) => {
            let ba = store.bank_account(scope, id).await.map_err(|e| match e {
                StoreError::NotFound => ServiceError::Missing {
                    kind: "bank_account",
                    id: id.to_string(),
                },
                other => ServiceError::Store(other),
            })?;
            if ba.currency != currency {
                return Err(ServiceError::Invalid {
                    param: "payer_account_id",
                    detail: "is a bank account in another currency than the mandate".into(),
                });
            }
            (id.to_string(), net.treasury)
        }
        Payer::Wallet(text, a) => {
            let a = net
                .usable_wallet(*a)
                .map_err(|detail| ServiceError::Invalid {
                    param: "payer_account_id",
                    detail: detail.into(),
                })?;
            (text.clone(), a)
        }
    };
    if !net.tokens.contains_key(&currency) {
        return Err(ServiceError::Invalid {
            param: "currency",
            detail: "is not available on this network".into(),
        });
    }
    let id = MandateId::new();
    let wallet = matches!(req.payer, Payer::Wallet(..));
    let mandate = Mandate {
        onchain_id: keccak256(id.as_bytes()).to_string(),
        id,
        account_id: scope.account_id.to_string(),
        mode: scope.mode,
        payer_account_id,
        payer_address: payer_address.to_checksum(None),
        currency,
        max_amount: req.max_amount.minor(),
        interval: req.interval,
        purpose: req.purpose,
        status: if wallet {
            MandateStatus::RequiresAuthorization
        } else {
            MandateStatus::Pending
        },
        chain_id: net.chain_id,
        contract: net.allowance_state_machine.to_checksum(None),
        tx_hash: None,
        created_at: now,
    };
    let authorization = wallet
        .then(|| crate::consent::ask(&mandate.id, &mandate.payer_address, authorization_ttl, now));
    Ok(Prepared {
        mandate,
        authorization,
    })
}

/// Writes a prepared mandate. A wallet payer's waits for its signature (with the
/// authorization to give, written first so the mandate's first event shows it): `None`. A
/// bank account's is written with its work: a waiter for its creation on chain, listening
/// since before the write.
pub async fn accept<'a>(
    store: &Store,
    net: &'a Network,
    prepared: &Prepared,
) -> Result<Option<Waiter<'a>>, ServiceError> {
    match &prepared.authorization {
        Some(auth) => {
            store.insert_authorization(auth).await?;
            store.insert_mandate(&prepared.mandate).await?;
            Ok(None)
        }
        None => {
            let waiter = waiter(net, &prepared.mandate.id);
            store.insert_mandate(&prepared.mandate).await?;
            Ok(Some(waiter))
        }
    }
}
