//! The debit-pull service: what a request for a pull means, apart from HTTP. A handler
//! parses the request into a [`NewPull`], asks [`prepare`] (every check the database and
//! the agent's signature can answer before anything is sent), links its idempotency key to
//! the pull's path, then [`accept`]s it (the pull, its event and its work in one group
//! commit) and waits for the engine. [`ServiceError`] says what went wrong in the domain's
//! words; the API maps each to one HTTP problem.

use alloy::primitives::{Address, U256};
use openrail_chain::consent::{DebitPull as SignedPull, TypedMessage};
use openrail_domain::journal::Intent;
use openrail_domain::{PullId, SessionKeyId};
use openrail_store::agentic::{
    AgentAuthorization, DebitPull, DeclineReason, KeyStatus, Mandate, MandateStatus, PullStatus,
    Scope, SessionKey,
};
use openrail_store::{Amount, Store, stages};

use crate::network::Network;
use crate::service::ServiceError;
use crate::{Waiter, waiter};

/// A pull as a request asks for it, parsed (syntax checked) but not yet judged.
#[derive(Debug, Clone)]
pub struct NewPull {
    /// The id the pull will have (chosen when the request arrived).
    pub id: PullId,
    /// The session key pulled against.
    pub session_key_id: SessionKeyId,
    /// The amount as written, in the currency of the key's mandate.
    pub amount: String,
    /// Where the money goes, as written and parsed; `None`: the network's default.
    pub destination: Option<(String, Address)>,
    /// Free text for the developer.
    pub description: Option<String>,
    /// The agent's EIP-712 authorization, when the request carries any of it.
    pub agent: AgentFields,
}

/// What a request says of the agent's signature (all or nothing, see [`prepare`]).
#[derive(Debug, Clone, Default)]
pub struct AgentFields {
    /// The signature, 0x hex.
    pub signature: Option<String>,
    /// The nonce, canonical decimal text.
    pub nonce: Option<String>,
    /// The deadline, unix seconds.
    pub deadline: Option<u64>,
}

/// A pull judged acceptable (or declined off chain, see [`DebitPull::decline_code`]),
/// not yet written.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The row to write.
    pub pull: DebitPull,
}

impl Prepared {
    /// Whether it is declined off chain (written as such, never sent).
    pub fn is_declined(&self) -> bool {
        self.pull.status == PullStatus::Declined
    }
}

/// Judges `req` for `scope` on `net` at `now`: the key exists (else [`ServiceError::KeyMissing`])
/// and is on chain, the amount fits its mandate's currency, the destination may receive
/// money and is not the payer, and the agent's authorization is what the key demands. A
/// pull the database already knows is dead — key revoked or expired, mandate not active —
/// is prepared `declined` (recorded like one the chain declined, without a transaction).
pub async fn prepare(
    store: &Store,
    net: &Network,
    scope: Scope<'_>,
    req: NewPull,
    now: i64,
) -> Result<Prepared, ServiceError> {
    let (key, mandate) = store
        .keys()
        .get_with_mandate(scope, &req.session_key_id)
        .await
        .map_err(ServiceError::missing(
            "session_key",
            req.session_key_id.as_str(),
        ))?;
    let amount =
        Amount::parse(&req.amount, mandate.currency).map_err(|e| ServiceError::Amount {
            param: "amount",
            error: e,
        })?;
    let (destination, address) = match req.destination {
        Some((text, a)) => {
            let a = net
                .usable_wallet(a)
                .map_err(|detail| ServiceError::Invalid {
                    param: "destination",
                    detail: detail.into(),
                })?;
            (text, a)
        }
        // None named: the key's only destination when it has one (a mandate with one payee),
        // else the account's settlement wallet.
        None => match key.allowed_destinations.as_slice() {
            [only] => {
                let a: Address = only.parse().map_err(|_| {
                    ServiceError::Internal(format!("key {} has an unusable destination", key.id))
                })?;
                (a.to_checksum(None), a)
            }
            _ => (
                net.default_destination.to_checksum(None),
                net.default_destination,
            ),
        },
    };
    if mandate.payer_address.parse::<Address>().ok() == Some(address) {
        return Err(ServiceError::Invalid {
            param: "destination",
            detail: "is the mandate's payer (for a bank-account payer, the treasury): a pull \
                     may not pay its payer; name a destination"
                .into(),
        });
    }
    if matches!(key.status, KeyStatus::Pending | KeyStatus::Failed) {
        return Err(ServiceError::Declined {
            reason: DeclineReason::SessionKeyNotActive,
            detail: format!("session key {} is {} on chain", key.id, key.status.as_str()),
        });
    }
    let dead = dead_reason(&key, &mandate, now);
    if let (None, Some(r)) = (&dead, &mandate.requirements) {
        // Refused before any transaction when a required attestation no longer holds
        // (revoked, expired): the chain would decline it for the same reason.
        crate::identity::check_all(
            store,
            scope.mode,
            r,
            &mandate.payer_address,
            key.signer.as_deref(),
            now,
        )
        .await?;
    }
    let agent = if dead.is_some() {
        None
    } else {
        agent_authorization(store, net, &key, address, amount, req.agent, now).await?
    };
    Ok(Prepared {
        pull: DebitPull {
            id: req.id,
            account_id: scope.account_id.clone(),
            mode: scope.mode,
            session_key_id: key.id.clone(),
            mandate_id: mandate.id.clone(),
            amount: amount.minor(),
            currency: mandate.currency,
            destination,
            destination_address: address.to_checksum(None),
            description: req.description,
            status: if dead.is_some() {
                PullStatus::Declined
            } else {
                PullStatus::Pending
            },
            decline_code: dead,
            remaining: None,
            resets_at: None,
            tx_hash: None,
            authorized_at: None,
            created_at: now,
            updated_at: now,
            failure_reason: None,
            agent,
        },
    })
}

/// What the database already knows makes a pull on `key` fail at `now`.
fn dead_reason(key: &SessionKey, mandate: &Mandate, now: i64) -> Option<DeclineReason> {
    if key.status == KeyStatus::Revoked {
        Some(DeclineReason::SessionKeyRevoked)
    } else if now >= key.expires_at {
        Some(DeclineReason::SessionKeyExpired)
    } else if mandate.status != MandateStatus::Active {
        Some(DeclineReason::MandateNotActive)
    } else {
        None
    }
}

/// Writes a prepared pull (with its event and, when pending, its work) and returns a
/// waiter for its outcome, listening since before the write (the engine's wake cannot
/// come first).
pub async fn accept<'a>(
    store: &Store,
    net: &'a Network,
    prepared: Prepared,
) -> Result<(DebitPull, Waiter<'a>), ServiceError> {
    let pull = prepared.pull;
    let mut waiter = waiter(net, Intent::Pull(pull.id.clone()));
    stages::mark("accepted", [pull.id.as_str()]);
    // A pull to send, in the process that sends: taken for this process's engine before
    // it is visible, handed to it once committed.
    let claimed = pull.status == PullStatus::Pending && net.outcomes.claim(&pull.id);
    // Committed with the other pulls, outcomes and fates that arrive meanwhile.
    if let Err(e) = store.pulls().accept(pull.clone()).await {
        if claimed {
            net.outcomes.release(&pull.id);
        }
        return Err(e.into());
    }
    stages::mark("written", [pull.id.as_str()]);
    if claimed {
        waiter.handed_off = net.outcomes.hand_off(pull.clone());
    }
    Ok((pull, waiter))
}

/// The agent's authorization of a pull on `key`, checked before anything is sent: a key
/// with a signer needs `signature`, `nonce` and `deadline` (`signature_required` without
/// them), a deadline not passed (`authorization_expired`), a nonce not in use on the key
/// (`nonce_used`) and the signer's EIP-712 `DebitPull` signature (`signature_invalid`). A
/// key without a signer takes none of them.
async fn agent_authorization(
    store: &Store,
    net: &Network,
    key: &SessionKey,
    destination: Address,
    amount: Amount,
    fields: AgentFields,
    now: i64,
) -> Result<Option<AgentAuthorization>, ServiceError> {
    let AgentFields {
        signature,
        nonce,
        deadline,
    } = fields;
    let Some(signer) = &key.signer else {
        let given = if signature.is_some() {
            Some("signature")
        } else if nonce.is_some() {
            Some("nonce")
        } else if deadline.is_some() {
            Some("deadline")
        } else {
            None
        };
        return match given {
            Some(param) => Err(ServiceError::Invalid {
                param,
                detail: "is only for pulls on a session key with a signer; this key has none"
                    .into(),
            }),
            None => Ok(None),
        };
    };
    let (Some(signature), Some(nonce), Some(deadline)) = (signature, nonce, deadline) else {
        return Err(ServiceError::Declined {
            reason: DeclineReason::SignatureRequired,
            detail: format!(
                "session key {} names the signer {signer}: a pull needs its EIP-712 DebitPull \
                 signature, nonce and deadline",
                key.id
            ),
        });
    };
    let deadline = i64::try_from(deadline).map_err(|_| ServiceError::Invalid {
        param: "deadline",
        detail: "is too large".into(),
    })?;
    crate::consent::not_expired(deadline, now)?;
    if store.pulls().agent_nonce_taken(&key.id, &nonce).await? {
        return Err(ServiceError::Declined {
            reason: DeclineReason::NonceUsed,
            detail: format!("nonce {nonce} was used on session key {} already", key.id),
        });
    }
    let message = SignedPull {
        keyId: key
            .onchain_id
            .parse()
            .map_err(|_| ServiceError::Internal(format!("key {} has no on-chain id", key.id)))?,
        destination,
        amount: openrail_chain::token_units(amount.minor(), amount.currency()),
        nonce: U256::from_str_radix(&nonce, 10).map_err(|_| ServiceError::Invalid {
            param: "nonce",
            detail: "is not a number".into(),
        })?,
        deadline: U256::from(deadline as u64),
    };
    let signer: Address = signer
        .parse()
        .map_err(|_| ServiceError::Internal(format!("key {} has an unusable signer", key.id)))?;
    let digest = message.digest(net.chain_id, net.state_machine()?);
    let signature = crate::consent::signed_by(net, signer, digest, &signature).await?;
    Ok(Some(AgentAuthorization {
        nonce,
        deadline,
        signature,
    }))
}
