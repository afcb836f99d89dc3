//! The mandate service: what a request for a mandate means, apart from HTTP. A handler
//! parses the request into a [`NewMandate`], asks [`prepare`] (the payer may pay in that
//! currency on this network), links its idempotency key to the mandate's path, then
//! [`accept`]s it: a wallet payer's mandate waits for the payer's signature (nothing is
//! sent until then); a bank account's is written with its `create_mandate` work, and the
//! engine creates it on chain.

use std::time::Duration;

use alloy::primitives::Address;
use openrail_domain::journal::Intent;
use openrail_domain::{BankAccountId, MandateId};
use openrail_store::agentic::{Mandate, MandateStatus, Scope};
use openrail_store::consent::Authorization;
use openrail_store::verification::VerificationType;
use openrail_store::{Amount, Interval, Store};

use alloy::primitives::{Bytes, keccak256};
use alloy::sol_types::SolCall;
use openrail_chain::bindings::AllowanceStateMachine;
use openrail_domain::MandateWork;
use openrail_store::now_ms;
use openrail_store::outbox::Work;

use crate::network::Network;
use crate::service::ServiceError;
use crate::{Left, Next, Sent, Waiter, corrupt, logged, send, waiter};

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
    /// Free text for the payer and the developer; a wallet payer signs it.
    pub purpose: Option<String>,
    /// Who may be paid, each as written and parsed (empty: the account's settlement
    /// wallet, [`Network::default_destination`], for a wallet payer; any destination for a
    /// bank account).
    pub payees: Vec<(String, Address)>,
    /// The only agent whose keys may pull (every key's signer), when named.
    pub agent: Option<Address>,
    /// The kind of credential the payer must hold, when any.
    pub payer_requirement: Option<VerificationType>,
    /// The kind of credential every key's signer must hold, when any.
    pub agent_requirement: Option<VerificationType>,
}

/// Most payees a mandate may name.
pub const MAX_PAYEES: usize = 20;

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
            let ba = store
                .bank()
                .account(scope, id)
                .await
                .map_err(ServiceError::missing("bank_account", id.as_str()))?;
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
    let wallet = matches!(req.payer, Payer::Wallet(..));
    let payees = payees_of(net, &req, payer_address)?;
    let agent = req
        .agent
        .map(|a| net.usable_wallet(a))
        .transpose()
        .map_err(|detail| ServiceError::Invalid {
            param: "agent",
            detail: detail.into(),
        })?;
    let requirements =
        crate::identity::requirements_for(net, req.payer_requirement, req.agent_requirement)?;
    if let Some(r) = &requirements {
        if r.payer.is_some() && !wallet {
            return Err(ServiceError::Invalid {
                param: "requirements.payer",
                detail: "cannot be asked of a bank account (its pulls are paid by the treasury                          on chain)"
                    .into(),
            });
        }
        use crate::identity::{Holder, check};
        crate::identity::check_attester(net, r).await?;
        let payer = payer_address.to_checksum(None);
        check(store, scope.mode, Holder::Payer, &payer, r.payer, now).await?;
        if let Some(agent) = agent {
            // The named agent is every key's signer: it must hold its credential now.
            let agent = agent.to_checksum(None);
            check(store, scope.mode, Holder::Signer, &agent, r.agent, now).await?;
        }
    }
    let id = MandateId::new();
    let salt = openrail_chain::consent::salt(id.as_str());
    let mandate = Mandate {
        onchain_id: openrail_chain::consent::mandate_id(payer_address, salt).to_string(),
        id,
        account_id: scope.account_id.clone(),
        mode: scope.mode,
        payer_account_id,
        payer_address: payer_address.to_checksum(None),
        currency,
        max_amount: req.max_amount.minor(),
        interval: req.interval,
        purpose: req.purpose,
        payees: payees.iter().map(|a| a.to_checksum(None)).collect(),
        agent: agent.map(|a| a.to_checksum(None)),
        requirements,
        status: if wallet {
            MandateStatus::RequiresAuthorization
        } else {
            MandateStatus::Pending
        },
        chain_id: net.chain_id,
        contract: net.state_machine()?.to_checksum(None),
        tx_hash: None,
        created_at: now,
    };
    let authorization = wallet.then(|| {
        crate::consent::ask(
            mandate.id.as_str(),
            &mandate.payer_address,
            authorization_ttl,
            now,
        )
    });
    Ok(Prepared {
        mandate,
        authorization,
    })
}

/// The payees of mandate request `req` paid by `payer` on `net`: as named (usable wallets,
/// none twice, not the payer, at most [`MAX_PAYEES`]); when none is named, the account's
/// settlement wallet for a wallet payer, and none (any destination) for a bank account,
/// whose payer on chain is the treasury.
fn payees_of(
    net: &Network,
    req: &NewMandate,
    payer: Address,
) -> Result<Vec<Address>, ServiceError> {
    let invalid = |detail: String| ServiceError::Invalid {
        param: "payees",
        detail,
    };
    if req.payees.len() > MAX_PAYEES {
        return Err(invalid(format!("may name at most {MAX_PAYEES} payees")));
    }
    let mut payees: Vec<Address> = Vec::with_capacity(req.payees.len());
    for (text, a) in &req.payees {
        let a = net
            .usable_wallet(*a)
            .map_err(|detail| invalid(format!("{text} {detail}")))?;
        if a == payer {
            return Err(invalid(format!("{text} is the payer itself")));
        }
        if payees.contains(&a) {
            return Err(invalid(format!("{text} is named twice")));
        }
        payees.push(a);
    }
    if payees.is_empty() && matches!(req.payer, Payer::Wallet(..)) {
        payees.push(net.default_destination);
    }
    Ok(payees)
}

/// Writes a prepared mandate. A wallet payer's waits for its signature (with the
/// authorization to give, written first in the same transaction): `None`. A
/// bank account's is written with its work: a waiter for its creation on chain, listening
/// since before the write.
pub async fn accept<'a>(
    store: &Store,
    net: &'a Network,
    prepared: &Prepared,
) -> Result<Option<Waiter<'a>>, ServiceError> {
    crate::consent::write_asking(
        net,
        Intent::Mandate(prepared.mandate.id.clone()),
        prepared.authorization.is_some(),
        || {
            store
                .mandates()
                .insert_with(&prepared.mandate, prepared.authorization.as_ref())
        },
    )
    .await
}

/// What became of a request to authorize or cancel a mandate.
#[derive(Debug)]
pub enum Step<'a> {
    /// Nothing left to do (already done, or done now without the chain): answer the
    /// mandate as it stands.
    Done,
    /// Queued for the chain: wait for it.
    Queued(Waiter<'a>),
}

/// The mandate `id` of `scope`, or [`ServiceError::Missing`].
async fn find(store: &Store, scope: Scope<'_>, id: &MandateId) -> Result<Mandate, ServiceError> {
    store
        .mandates()
        .get(scope, id)
        .await
        .map_err(ServiceError::missing("mandate", id.as_str()))
}

/// The wallet payer of mandate `id` gives its `signature` at `now`: checked against the
/// terms it was asked to sign, then the mandate is authorized and its creation queued (one
/// transaction). A mandate already authorized (by this or another request) is [`Step::Done`];
/// a canceled or failed one is declined `mandate_not_active`.
pub async fn authorize<'a>(
    store: &Store,
    net: &'a Network,
    scope: Scope<'_>,
    id: &MandateId,
    signature: &str,
    now: i64,
) -> Result<Step<'a>, ServiceError> {
    let m = find(store, scope, id).await?;
    match m.status {
        MandateStatus::RequiresAuthorization => {}
        MandateStatus::Pending | MandateStatus::Active => return Ok(Step::Done),
        MandateStatus::Canceled | MandateStatus::Failed => {
            return Err(ServiceError::Declined {
                reason: openrail_store::agentic::DeclineReason::MandateNotActive,
                detail: format!("mandate {id} is {}", m.status.as_str()),
            });
        }
    }
    let auth = store
        .consent()
        .get(m.id.as_str())
        .await?
        .ok_or_else(|| ServiceError::Internal(format!("mandate {id} has no authorization")))?;
    let msg = crate::consent::mandate_message(&m, net, &auth)
        .ok_or_else(|| ServiceError::Internal(format!("mandate {id} has no usable terms")))?;
    use openrail_chain::consent::TypedMessage;
    let digest = msg.digest(net.chain_id, net.state_machine()?);
    let signature =
        crate::consent::check_given(net, &auth, msg.payer, digest, signature, now).await?;
    let waiter = waiter(net, Intent::Mandate(m.id.clone()));
    if store
        .consent()
        .authorize(
            openrail_store::consent::Authorizable::Mandate(m.id.clone()),
            &signature,
            now,
        )
        .await?
    {
        Ok(Step::Queued(waiter))
    } else {
        // Another request authorized (or canceled) it meanwhile.
        Ok(Step::Done)
    }
}

/// Cancels mandate `id` at `now`: an active one on chain (queued), one still waiting for
/// its payer's signature at once (nothing is on chain); a canceled one is [`Step::Done`]; a
/// pending or failed one is declined `mandate_not_active`.
pub async fn cancel<'a>(
    store: &Store,
    net: &'a Network,
    scope: Scope<'_>,
    id: &MandateId,
    now: i64,
) -> Result<Step<'a>, ServiceError> {
    let m = find(store, scope, id).await?;
    match m.status {
        MandateStatus::Canceled => Ok(Step::Done),
        MandateStatus::RequiresAuthorization => {
            // Nothing is on chain: the request to sign is withdrawn.
            store.mandates().cancel_unauthorized(&m.id, now).await?;
            Ok(Step::Done)
        }
        MandateStatus::Pending | MandateStatus::Failed => Err(ServiceError::Declined {
            reason: openrail_store::agentic::DeclineReason::MandateNotActive,
            detail: format!(
                "mandate {id} is {}; only an active mandate can be canceled",
                m.status.as_str()
            ),
        }),
        MandateStatus::Active => {
            let waiter = waiter(net, Intent::Mandate(m.id.clone()));
            store.outbox().request_cancel(&m.id, now).await?;
            Ok(Step::Queued(waiter))
        }
    }
}

// ------------------------------------------------------------------ its work

/// Runs a mandate's work: sends its `createMandate` (a pending mandate's, from its rows)
/// or its `cancelMandate`. The fate, applied as the journal records it, moves the mandate
/// (`openrail_store::journal::apply_fates_in`); a create that could not be sent fails it
/// here.
pub(crate) async fn run(
    store: &Store,
    net: &Network,
    kind: MandateWork,
    w: &Work,
) -> Result<Next, Left> {
    let Intent::Mandate(id) = &w.intent else {
        return Ok(corrupt(w));
    };
    let m = store.mandates().get_unscoped(id).await.map_err(logged(w))?;
    match kind {
        MandateWork::CreateMandate => {
            if m.status != MandateStatus::Pending {
                return Ok(Next::Close);
            }
            let auth = store
                .consent()
                .get(m.id.as_str())
                .await
                .map_err(logged(w))?;
            let call = create_mandate_call(&m, net, auth.as_ref());
            if send(store, net, net.state_machine(), call, w).await? == Sent::Unsent {
                store
                    .mandates()
                    .fail_unsent(&m.id, now_ms())
                    .await
                    .map_err(logged(w))?;
            }
        }
        MandateWork::CancelMandate => {
            let call = m.onchain_id.parse().ok().map(|mandate_id| {
                AllowanceStateMachine::cancelMandateCall {
                    mandateId: mandate_id,
                }
                .abi_encode()
                .into()
            });
            // Its fate cancels the mandate; one never sent changes nothing.
            send(store, net, net.state_machine(), call, w).await?;
        }
    }
    Ok(Next::Close)
}

/// The transaction creating mandate `m` on `net`, from its rows (so a request and a resume
/// after a crash send the same): the operator's `createMandate` for a bank-funded mandate
/// (its payer is the treasury), else `createMandateWithSignature` with the payer's
/// signature. `None` when the rows are unusable or the payer has not signed.
pub(crate) fn create_mandate_call(
    m: &Mandate,
    net: &Network,
    auth: Option<&Authorization>,
) -> Option<Bytes> {
    let payees = m
        .payees
        .iter()
        .map(|p| p.parse().ok())
        .collect::<Option<Vec<Address>>>()?;
    let agent = match &m.agent {
        Some(a) => a.parse().ok()?,
        None => Address::ZERO,
    };
    let terms = openrail_chain::bindings::IAllowanceStateMachine::MandateTerms {
        salt: openrail_chain::consent::salt(m.id.as_str()),
        payer: m.payer_address.parse().ok()?,
        token: *net.tokens.get(&m.currency)?,
        maxAmount: crate::token_units(Amount::from_minor(m.max_amount, m.currency)?),
        interval: m.interval.onchain(),
        payees,
        agent,
        purposeHash: keccak256(m.purpose.as_deref().unwrap_or_default().as_bytes()),
        requirements: crate::identity::onchain(m.requirements.as_ref())?,
    };
    if m.is_bank_funded() {
        return Some(
            AllowanceStateMachine::createMandateCall { terms }
                .abi_encode()
                .into(),
        );
    }
    let a = auth?;
    let msg = crate::consent::mandate_message(m, net, a)?;
    let signature: Bytes = a.signature.as_deref()?.parse().ok()?;
    Some(
        AllowanceStateMachine::createMandateWithSignatureCall {
            terms,
            nonce: msg.nonce,
            deadline: msg.deadline,
            signature,
        }
        .abi_encode()
        .into(),
    )
}
