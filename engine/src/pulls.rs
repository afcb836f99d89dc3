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

use std::collections::{HashMap, HashSet};

use alloy::primitives::B256;
use openrail_chain::ChainError;
use openrail_chain::submitter::{AgentSignature, PullRequest};
use openrail_domain::PullWork;
use openrail_domain::journal::{TxKind, TxStatus};
use openrail_store::agentic::PullResolution;
use openrail_store::now_ms;
use openrail_store::outbox::{Work, WorkKind};

use crate::network::Network;
use crate::payments::PaymentDriver;
use crate::service::ServiceError;
use crate::{Left, Next, Waiter, corrupt, drive, logged, waiter};

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

// ------------------------------------------------------------------ its work

/// Runs a pull's work: its `pull_batch` work sends it (batched with the others in flight)
/// and records its outcome, returning the pull as recorded; its `payout` work takes one
/// step of a bank-funded pull's bank leg and payout (`driver`: none until the engine
/// leads, when it is tried later). A pull's row, and whether a journaled transaction
/// carries it, may come read already (`prefetched`).
pub(crate) async fn run(
    store: &Store,
    net: &Network,
    driver: Option<&PaymentDriver>,
    kind: PullWork,
    w: &Work,
    prefetched: (Option<DebitPull>, Option<bool>),
) -> Result<(Next, Option<DebitPull>), Left> {
    let Intent::Pull(id) = &w.intent else {
        return Ok((corrupt(w), None));
    };
    match (kind, driver) {
        (PullWork::Payout, Some(d)) => drive(d.drive_payout(id).await, w).map(|n| (n, None)),
        (PullWork::Payout, None) => Ok((Next::Later, None)),
        // A resolved pull's work is closed with its status, in one transaction.
        (PullWork::PullBatch, _) => {
            Ok((Next::Kept, send_pull(store, net, id, w, prefetched).await?))
        }
    }
}

/// Sends pull `id` unless a journaled transaction carries it already or it was resolved
/// meanwhile, and records its outcome; returns the pull as recorded.
async fn send_pull(
    store: &Store,
    net: &Network,
    id: &PullId,
    w: &Work,
    (prefetched, journaled): (Option<DebitPull>, Option<bool>),
) -> Result<Option<DebitPull>, Left> {
    let journaled = match journaled {
        Some(j) => j,
        None => store
            .outbox()
            .journaled_status(&w.intent, TxKind::PullBatch)
            .await
            .map_err(logged(w))?
            .is_some(),
    };
    if journaled {
        // Sent already (by an earlier pass, or before a restart): its outcome comes from
        // that transaction, never from a second one.
        return Err(Left);
    }
    stages::mark("claimed", [id.as_str()]);
    let p = match prefetched {
        Some(p) => p,
        None => store.pulls().get_unscoped(id).await.map_err(logged(w))?,
    };
    if p.status != PullStatus::Pending {
        // Resolved by another path meanwhile; its work need not stay open.
        store
            .outbox()
            .close(&w.intent, w.kind, now_ms())
            .await
            .map_err(logged(w))?;
        return Ok(None);
    }
    let key_id = net
        .key_onchain_id(store, &p.session_key_id)
        .await
        .map_err(logged(w))?;
    let Some(request) = pull_request(&p, key_id) else {
        tracing::error!(pull = %p.id, "pull has an unusable destination or amount");
        store
            .pulls()
            .resolve(&p.id, &PullResolution::failed(), now_ms())
            .await
            .map_err(logged(w))?;
        return Ok(None);
    };
    submit_and_record(store, net, &p.id, request).await
}

/// What the engine read of the pulls it claimed together, in two queries (not two each).
#[derive(Debug, Default)]
pub(crate) struct Prefetched {
    /// The rows, by id (a pull missing here is read alone).
    pub(crate) pulls: HashMap<PullId, DebitPull>,
    /// Those a journaled `pull_batch` transaction already carries; `None` when that read
    /// failed (each pull is then checked alone).
    pub(crate) journaled: Option<HashSet<Intent>>,
}

/// The pulls of the `pull_batch` work in `work`, read after the work was marked in flight:
/// a pull an earlier pass resolved shows its new status, and one it journaled shows its
/// transaction, however stale the read of queued work was.
pub(crate) async fn prefetch(store: &Store, work: &[Work]) -> Prefetched {
    let ids: Vec<PullId> = work
        .iter()
        .filter(|w| w.kind == WorkKind::PullBatch)
        .filter_map(|w| {
            if let Intent::Pull(id) = &w.intent {
                Some(id.clone())
            } else {
                None
            }
        })
        .collect();
    let mut out = Prefetched {
        pulls: HashMap::with_capacity(ids.len()),
        journaled: Some(HashSet::new()),
    };
    if ids.is_empty() {
        return out;
    }
    let intents: Vec<Intent> = ids.iter().cloned().map(Intent::Pull).collect();
    out.journaled = match store
        .outbox()
        .journaled_intents(&intents, TxKind::PullBatch)
        .await
    {
        Ok(j) => Some(j),
        Err(e) => {
            tracing::warn!(error = %e, "reading the journal of claimed pulls failed");
            None
        }
    };
    for chunk in ids.chunks(500) {
        match store.pulls().get_many_unscoped(chunk).await {
            Ok(pulls) => out
                .pulls
                .extend(pulls.into_iter().map(|p| (p.id.clone(), p))),
            Err(e) => tracing::warn!(error = %e, "reading claimed pulls together failed"),
        }
    }
    out
}

/// The pull request of pull `p` on key `key_id` (on chain), from its row; `None` when the
/// row is unusable.
fn pull_request(p: &DebitPull, key_id: B256) -> Option<PullRequest> {
    Some(PullRequest {
        pull: p.id.clone(),
        key_id,
        destination: p.destination_address.parse().ok()?,
        amount: crate::token_units(Amount::from_minor(p.amount, p.currency)?),
        agent: match &p.agent {
            None => None,
            Some(a) => Some(AgentSignature {
                nonce: U256::from_str_radix(&a.nonce, 10).ok()?,
                deadline: U256::from(u64::try_from(a.deadline).ok()?),
                signature: a.signature.parse().ok()?,
            }),
        },
    })
}

/// Sends one pull through the submitter (batched with the others in flight) and records
/// its outcome; returns the pull as recorded (`None`: it was resolved by another path).
async fn submit_and_record(
    store: &Store,
    net: &Network,
    id: &PullId,
    request: PullRequest,
) -> Result<Option<DebitPull>, Left> {
    let sent = match (net.submitter(), net.state_machine()) {
        (Some(s), Ok(_)) => s.pull(request.clone()).await,
        (None, _) => Err(ChainError::LeaseLost),
        (_, Err(e)) => Err(e),
    };
    let resolution = match sent {
        Ok(outcome) => {
            stages::mark("mined", [id.as_str()]);
            let mut r = outcome.resolution(now_ms());
            if let (
                openrail_chain::submitter::PullOutcome::Declined {
                    reason: openrail_chain::submitter::Decline::TransferFailed,
                    ..
                },
                Some(asm),
            ) = (&outcome, net.allowance_state_machine)
            {
                let transfer = store.pulls().transfer(id).await.ok();
                r.decline_code = Some(
                    openrail_chain::diagnose::pull_transfer_failure(
                        &net.reader,
                        &net.tokens,
                        asm,
                        id,
                        transfer,
                    )
                    .await,
                );
            }
            r
        }
        Err(ChainError::LeaseLost) => {
            // Nothing was journaled or sent: the pull stays queued for the chain's new
            // lease holder.
            tracing::warn!(pull = %id, "pull left queued for the chain's new lease holder");
            return Err(Left);
        }
        Err(e) => {
            // A transaction journaled for the pull and not refused by the node may still be
            // mined (or is mined and its receipt was missed): the pull stays `pending` for
            // the watcher, and a restart rebroadcasts it. Only a pull with no live
            // transaction has failed.
            let intent = Intent::Pull(id.clone());
            match store.payments().tx_status_for_intent(&intent).await {
                Ok(Some(tx)) if matches!(tx.status, TxStatus::Signed | TxStatus::Succeeded) => {
                    tracing::warn!(pull = %id, error = %e, "pull outcome unknown; left pending for the watcher");
                    return Err(Left);
                }
                Ok(_) => tracing::error!(pull = %id, error = %e, "pull submission failed"),
                Err(se) => {
                    tracing::error!(pull = %id, error = %e, store_error = %se, "pull outcome unknown; left pending");
                    return Err(Left);
                }
            }
            PullResolution::failed()
        }
    };
    // Committed with the other outcomes, new pulls and fates that arrive meanwhile.
    let recorded = match store.pulls().record_outcome(id, resolution, now_ms()).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(pull = %id, error = %e, "recording pull outcome failed");
            return Err(Left);
        }
    };
    stages::mark("recorded", [id.as_str()]);
    Ok(recorded)
}
