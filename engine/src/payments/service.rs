//! The payment service: what a request for a payment means, apart from HTTP. A handler
//! parses the request into a [`NewPayment`], asks [`prepare`] (its legs exist, hold its
//! currency and differ), links its idempotency key to the payment's path, then [`accept`]s
//! it: a wallet source's payment waits for the wallet's signature (nothing moves until
//! then); a bank source's is written with its `payment` work, and the engine drives it.

use std::time::Duration;

use alloy::primitives::Address;
use openrail_domain::journal::Intent;
use openrail_domain::{BankAccountId, PaymentId};
use openrail_store::agentic::Scope;
use openrail_store::consent::Authorization;
use openrail_store::payments::{PartyKind, Payment, PaymentStatus};
use openrail_store::{Amount, Store};

use crate::network::Network;
use crate::service::{Conflict, ServiceError};
use crate::{Waiter, waiter};

/// One side of a payment, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leg {
    /// A wallet on the settlement chain.
    Wallet(Address),
    /// A (simulated) bank account of the caller's account and mode.
    BankAccount(BankAccountId),
}

/// A payment as a request asks for it, parsed (syntax checked) but not yet judged.
#[derive(Debug, Clone)]
pub struct NewPayment {
    /// How much, in its currency.
    pub amount: Amount,
    /// Who pays.
    pub source: Leg,
    /// Who is paid.
    pub destination: Leg,
}

/// A payment judged acceptable, not yet written: the row, and what a wallet source is
/// asked to sign.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The row to write.
    pub payment: Payment,
    /// A wallet source's authorization to give (`None` for a bank account).
    pub authorization: Option<Authorization>,
}

/// Judges `req` for `scope` on `net` at `now`: each bank leg exists and holds the
/// payment's currency, each wallet may pay or be paid, the two legs differ, the currency
/// has a token here; a wallet source's signature is asked for, valid for
/// `authorization_ttl`.
pub async fn prepare(
    store: &Store,
    net: &Network,
    scope: Scope<'_>,
    req: NewPayment,
    authorization_ttl: Duration,
    now: i64,
) -> Result<Prepared, ServiceError> {
    let currency = req.amount.currency();
    let leg = |param: &'static str, leg: Leg| async move {
        Ok::<_, ServiceError>(match leg {
            Leg::Wallet(a) => (
                PartyKind::Wallet,
                net.usable_wallet(a)
                    .map_err(|detail| ServiceError::Invalid {
                        param,
                        detail: detail.into(),
                    })?
                    .to_checksum(None),
            ),
            Leg::BankAccount(id) => {
                let ba = store
                    .bank()
                    .account(scope, &id)
                    .await
                    .map_err(ServiceError::missing("bank_account", id.as_str()))?;
                if ba.currency != currency {
                    return Err(ServiceError::Invalid {
                        param,
                        detail: "is a bank account in another currency than the payment".into(),
                    });
                }
                (PartyKind::BankAccount, String::from(ba.id))
            }
        })
    };
    let (source_type, source_id) = leg("source.id", req.source).await?;
    let (destination_type, destination_address) =
        leg("destination.address", req.destination).await?;
    if source_id == destination_address {
        return Err(ServiceError::Invalid {
            param: "destination.address",
            detail: "must differ from the source".into(),
        });
    }
    if !net.tokens.contains_key(&currency) {
        return Err(ServiceError::Invalid {
            param: "currency",
            detail: "is not available on this network".into(),
        });
    }
    let from_bank = source_type == PartyKind::BankAccount;
    let payment = Payment {
        id: PaymentId::new(),
        account_id: scope.account_id.clone(),
        mode: scope.mode,
        amount: req.amount.minor(),
        currency,
        source_type,
        source_id,
        destination_type,
        destination_address,
        status: if from_bank {
            PaymentStatus::Pending
        } else {
            PaymentStatus::RequiresAuthorization
        },
        failure_reason: None,
        chain_id: net.chain_id,
        tx_hash: None,
        refund_status: None,
        created_at: now,
        updated_at: now,
    };
    let authorization = (!from_bank).then(|| {
        crate::consent::ask(
            payment.id.as_str(),
            &payment.source_id,
            authorization_ttl,
            now,
        )
    });
    Ok(Prepared {
        payment,
        authorization,
    })
}

/// Writes a prepared payment. A wallet source's waits for its signature (with the
/// authorization to give, written first in the same transaction): `None`. A
/// bank source's is written with its work: a waiter for the engine's steps, listening
/// since before the write.
pub async fn accept<'a>(
    store: &Store,
    net: &'a Network,
    prepared: &Prepared,
) -> Result<Option<Waiter<'a>>, ServiceError> {
    crate::consent::write_asking(
        net,
        Intent::Payment(prepared.payment.id.clone()),
        prepared.authorization.is_some(),
        || {
            store
                .payments()
                .insert_with(&prepared.payment, prepared.authorization.as_ref())
        },
    )
    .await
}

/// The wallet source of payment `id` gives its `signature` at `now`: checked against the
/// terms it was asked to sign, then the payment is authorized and queued for the engine
/// (one transaction). Returns a waiter, or `None` when there is nothing to authorize (not
/// waiting for a signature, or authorized by another request meanwhile). A canceled
/// payment is [`Conflict::PaymentCanceled`]: its link was withdrawn.
pub async fn authorize<'a>(
    store: &Store,
    net: &'a Network,
    scope: Scope<'_>,
    id: &PaymentId,
    signature: &str,
    now: i64,
) -> Result<Option<Waiter<'a>>, ServiceError> {
    let payment = store
        .payments()
        .get(scope, id)
        .await
        .map_err(ServiceError::missing("payment", id.as_str()))?;
    match payment.status {
        PaymentStatus::RequiresAuthorization => {}
        PaymentStatus::Canceled => return Err(canceled(id)),
        PaymentStatus::Pending
        | PaymentStatus::Processing
        | PaymentStatus::Succeeded
        | PaymentStatus::Failed => return Ok(None),
    }
    // The chain the payment was created on, whatever the account chooses since.
    let net = net.on_chain(payment.chain_id).ok_or_else(|| {
        ServiceError::Internal(format!(
            "payment {id} is on chain {}, which this mode does not serve",
            payment.chain_id
        ))
    })?;
    let auth = store
        .consent()
        .get(payment.id.as_str())
        .await?
        .ok_or_else(|| ServiceError::Internal(format!("payment {id} has no authorization")))?;
    let msg = crate::consent::payment_message(&payment, net, &auth)
        .ok_or_else(|| ServiceError::Internal(format!("payment {id} has no usable terms")))?;
    use openrail_chain::consent::TypedMessage;
    let digest = msg.digest(net.chain_id, net.router);
    let signature =
        crate::consent::check_given(net, &auth, msg.from, digest, signature, now).await?;
    let waiter = waiter(net, Intent::Payment(payment.id.clone()));
    if store
        .consent()
        .authorize(
            openrail_store::consent::Authorizable::Payment(payment.id.clone()),
            &signature,
            now,
        )
        .await?
    {
        return Ok(Some(waiter));
    }
    // Another request moved it meanwhile: authorized it (answered as it is), or canceled it.
    match store.payments().get(scope, id).await?.status {
        PaymentStatus::Canceled => Err(canceled(id)),
        _ => Ok(None),
    }
}

fn canceled(id: &PaymentId) -> ServiceError {
    ServiceError::Conflict {
        code: Conflict::PaymentCanceled,
        detail: format!(
            "payment {id} was canceled before its payer signed; it can no longer be authorized"
        ),
    }
}

/// The developer withdraws payment `id` at `now` while it waits for its payer's
/// signature: `requires_authorization` → `canceled` (with its event, one transaction;
/// nothing was sent), and its consent link offers nothing to sign any more. Canceling a
/// canceled payment is a no-op; a payment past that stage (`pending`, `processing`,
/// `succeeded`, `failed`) is [`Conflict::PaymentNotCancelable`].
pub async fn cancel(
    store: &Store,
    scope: Scope<'_>,
    id: &PaymentId,
    now: i64,
) -> Result<(), ServiceError> {
    let payment = store
        .payments()
        .get(scope, id)
        .await
        .map_err(ServiceError::missing("payment", id.as_str()))?;
    let status = match payment.status {
        PaymentStatus::Canceled => return Ok(()),
        PaymentStatus::RequiresAuthorization => {
            if store.payments().cancel_unauthorized(id, now).await? {
                return Ok(());
            }
            // Its payer signed (or another request canceled it) meanwhile.
            let now_status = store.payments().get(scope, id).await?.status;
            if now_status == PaymentStatus::Canceled {
                return Ok(());
            }
            now_status
        }
        other => other,
    };
    Err(ServiceError::Conflict {
        code: Conflict::PaymentNotCancelable,
        detail: format!(
            "payment {id} is {}; only a payment waiting for its payer's signature \
             (requires_authorization) can be canceled",
            status.as_str()
        ),
    })
}
