//! The session-key service: what a request for a key means, apart from HTTP. A handler
//! parses the request into a [`NewKey`], asks [`prepare`] (the mandate exists, is active
//! and bounds the key), links its idempotency key to the key's path, then [`accept`]s it
//! (the key, its event and its `issue_session_key` work in one transaction) and waits for
//! the engine to issue it on chain.

use alloy::primitives::Address;
use openrail_domain::journal::Intent;
use openrail_domain::{MandateId, SessionKeyId};
use openrail_store::agentic::{
    DeclineReason, KeyStatus, Mandate, MandateStatus, Scope, SessionKey,
};
use openrail_store::ids::{hash_secret, random_id};
use openrail_store::money::format_minor;
use openrail_store::{Amount, Store};

use alloy::primitives::{Bytes, U256};
use alloy::sol_types::SolCall;
use openrail_chain::bindings::AllowanceStateMachine;
use openrail_domain::SessionKeyWork;
use openrail_store::now_ms;
use openrail_store::outbox::Work;

use crate::network::Network;
use crate::service::ServiceError;
use crate::{Left, Next, Sent, Waiter, corrupt, logged, send, waiter};

/// Bounds of a key's lifetime, seconds.
pub const EXPIRES_IN: std::ops::RangeInclusive<u64> = 60..=31_536_000;
/// Most entries in a key's allow-list.
pub const MAX_ALLOWED_DESTINATIONS: usize = 20;

/// A key as a request asks for it, parsed (syntax checked) but not yet judged.
#[derive(Debug, Clone)]
pub struct NewKey {
    /// The mandate it draws on.
    pub mandate_id: MandateId,
    /// Its lifetime, seconds.
    pub expires_in: u64,
    /// Its own ceiling per epoch as written, in the mandate's currency.
    pub max_amount: Option<String>,
    /// Where its pulls may pay (empty: anywhere): each as written, and parsed.
    pub allowed_destinations: Vec<(String, Address)>,
    /// The agent whose EIP-712 signature every pull needs, parsed.
    pub signer: Option<Address>,
}

/// A key judged acceptable, not yet written: the row and its secret (shown once).
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The row to write.
    pub key: SessionKey,
    /// Its mandate.
    pub mandate: Mandate,
    /// The key's secret, shown once.
    pub secret: String,
}

/// Judges `req` for `scope` on `net` at `now`: a lifetime in bounds, usable destinations
/// and signer, a ceiling within the mandate's, on an existing and active mandate.
pub async fn prepare(
    store: &Store,
    net: &Network,
    scope: Scope<'_>,
    req: NewKey,
    now: i64,
) -> Result<Prepared, ServiceError> {
    if !EXPIRES_IN.contains(&req.expires_in) {
        return Err(ServiceError::Invalid {
            param: "expires_in",
            detail: "must be between 60 and 31536000 seconds".into(),
        });
    }
    let mandate = store
        .mandates()
        .get(scope, &req.mandate_id)
        .await
        .map_err(ServiceError::missing("mandate", req.mandate_id.as_str()))?;
    let max_amount = req
        .max_amount
        .as_deref()
        .map(|text| Amount::parse(text, mandate.currency))
        .transpose()
        .map_err(|error| ServiceError::Amount {
            param: "max_amount",
            error,
        })?;
    let signer = req
        .signer
        .map(|a| net.usable_wallet(a))
        .transpose()
        .map_err(|detail| ServiceError::Invalid {
            param: "signer",
            detail: detail.into(),
        })?;
    if req.allowed_destinations.len() > MAX_ALLOWED_DESTINATIONS {
        return Err(ServiceError::Invalid {
            param: "allowed_destinations",
            detail: "may hold at most 20 destinations".into(),
        });
    }
    for (_, d) in &req.allowed_destinations {
        net.usable_wallet(*d)
            .map_err(|detail| ServiceError::Invalid {
                param: "allowed_destinations",
                detail: detail.into(),
            })?;
    }
    let (allowed_destinations, signer) =
        bound_by_payer(&mandate, req.allowed_destinations, signer)?;
    if let Some(max) = max_amount
        && max.minor() > mandate.max_amount
    {
        return Err(ServiceError::KeyCeilingExceedsMandate {
            key: max.to_string(),
            mandate: format_minor(mandate.max_amount, mandate.currency),
        });
    }
    if mandate.status != MandateStatus::Active {
        return Err(ServiceError::Declined {
            reason: DeclineReason::MandateNotActive,
            detail: format!("mandate {} is {}", mandate.id, mandate.status.as_str()),
        });
    }
    if let Some(r) = &mandate.requirements {
        // The chain refuses the key unless the payer and the key's signer hold what the
        // mandate requires; so does the API, before anything is written.
        if r.agent.is_some() && signer.is_none() {
            return Err(ServiceError::Invalid {
                param: "signer",
                detail: "is required: the mandate requires an agent credential of every key's                          signer"
                    .into(),
            });
        }
        let signer = signer.map(|a| a.to_checksum(None));
        crate::identity::check_all(
            store,
            scope.mode,
            r,
            &mandate.payer_address,
            signer.as_deref(),
            now,
        )
        .await?;
    }
    let expires_at_s = now / 1000 + i64::try_from(req.expires_in).unwrap_or(i64::MAX / 2);
    let id = SessionKeyId::new();
    let mandate_onchain = mandate.onchain_id.parse().map_err(|_| {
        ServiceError::Internal(format!("mandate {} has no on-chain id", mandate.id))
    })?;
    Ok(Prepared {
        key: SessionKey {
            onchain_id: openrail_chain::consent::key_id(
                mandate_onchain,
                openrail_chain::consent::salt(id.as_str()),
            )
            .to_string(),
            id,
            account_id: scope.account_id.clone(),
            mode: scope.mode,
            mandate_id: mandate.id.clone(),
            expires_at: expires_at_s * 1000,
            max_amount: max_amount.map(Amount::minor),
            allowed_destinations,
            status: KeyStatus::Pending,
            tx_hash: None,
            created_at: now,
            signer: signer.map(|a| a.to_checksum(None)),
        },
        mandate,
        secret: random_id(&format!("sks_{}_", scope.mode.as_str()), 32),
    })
}

/// What the mandate's payer signed bounds the key: its destinations are among the signed
/// payees (all of them when the request names none), and its signer is the named agent
/// (which the request may leave out). Returns the key's allow-list and signer.
fn bound_by_payer(
    mandate: &Mandate,
    requested: Vec<(String, Address)>,
    signer: Option<Address>,
) -> Result<(Vec<String>, Option<Address>), ServiceError> {
    let payees: Vec<Address> = mandate
        .payees
        .iter()
        .map(|p| p.parse())
        .collect::<Result<_, _>>()
        .map_err(|_| {
            ServiceError::Internal(format!("mandate {} has an unusable payee", mandate.id))
        })?;
    let allowed = if payees.is_empty() {
        requested.into_iter().map(|(text, _)| text).collect()
    } else if requested.is_empty() {
        mandate.payees.clone()
    } else {
        for (text, a) in &requested {
            if !payees.contains(a) {
                return Err(ServiceError::KeyOutsideMandate {
                    param: "allowed_destinations",
                    detail: format!(
                        "{text} is not one of the payees the mandate's payer signed ({})",
                        mandate.payees.join(", ")
                    ),
                });
            }
        }
        requested.into_iter().map(|(text, _)| text).collect()
    };
    let signer = match (&mandate.agent, signer) {
        (None, s) => s,
        (Some(agent), s) => {
            let agent: Address = agent.parse().map_err(|_| {
                ServiceError::Internal(format!("mandate {} has an unusable agent", mandate.id))
            })?;
            match s {
                None => Some(agent),
                Some(s) if s == agent => Some(s),
                Some(s) => {
                    return Err(ServiceError::KeyOutsideMandate {
                        param: "signer",
                        detail: format!(
                            "{s} is not the agent the mandate's payer named ({agent}); leave it out or name that agent"
                        ),
                    });
                }
            }
        }
    };
    Ok((allowed, signer))
}

/// Writes a prepared key (with its event and its work) and returns a waiter for its
/// issuance on chain, listening since before the write.
pub async fn accept<'a>(
    store: &Store,
    net: &'a Network,
    prepared: &Prepared,
) -> Result<Waiter<'a>, ServiceError> {
    let waiter = waiter(net, Intent::SessionKey(prepared.key.id.clone()));
    store
        .keys()
        .insert(&prepared.key, &hash_secret(&prepared.secret))
        .await?;
    Ok(waiter)
}

/// Revokes session key `id` of `scope` at `now` (queued for the chain; its secret stops
/// authenticating at once). Returns a waiter, or `None` when it is revoked already.
pub async fn revoke<'a>(
    store: &Store,
    net: &'a Network,
    scope: Scope<'_>,
    id: &SessionKeyId,
    now: i64,
) -> Result<Option<Waiter<'a>>, ServiceError> {
    let k = store
        .keys()
        .get(scope, id)
        .await
        .map_err(ServiceError::missing("session_key", id.as_str()))?;
    if k.status == KeyStatus::Revoked {
        return Ok(None);
    }
    let waiter = waiter(net, Intent::SessionKey(k.id.clone()));
    store.outbox().request_revoke(&k.id, now).await?;
    Ok(Some(waiter))
}

// ------------------------------------------------------------------ its work

/// Runs a session key's work: sends its `issueSessionKey` (a pending key's, from its rows
/// and its mandate's) or its `revokeSessionKey`. The fate, applied as the journal records
/// it, moves the key; an issue that could not be sent fails it here.
pub(crate) async fn run(
    store: &Store,
    net: &Network,
    kind: SessionKeyWork,
    w: &Work,
) -> Result<Next, Left> {
    let Intent::SessionKey(id) = &w.intent else {
        return Ok(corrupt(w));
    };
    let k = store.keys().get_unscoped(id).await.map_err(logged(w))?;
    match kind {
        SessionKeyWork::IssueSessionKey => {
            if k.status != KeyStatus::Pending {
                return Ok(Next::Close);
            }
            let m = store
                .mandates()
                .get_unscoped(&k.mandate_id)
                .await
                .map_err(logged(w))?;
            let call = issue_key_call(&k, &m);
            if send(store, net, net.state_machine(), call, w).await? == Sent::Unsent {
                store
                    .keys()
                    .fail_unsent(&k.id, now_ms())
                    .await
                    .map_err(logged(w))?;
            }
        }
        SessionKeyWork::RevokeSessionKey => {
            let call = k.onchain_id.parse().ok().map(|key_id| {
                AllowanceStateMachine::revokeSessionKeyCall { keyId: key_id }
                    .abi_encode()
                    .into()
            });
            // Its fate revokes the key; one never sent changes nothing.
            send(store, net, net.state_machine(), call, w).await?;
        }
    }
    Ok(Next::Close)
}

/// The transaction issuing session key `k` of mandate `m`, from their rows, the allow-list
/// without repeats (with the mandate's signed payees for the contract to check it against);
/// `None` when a row is unusable.
fn issue_key_call(k: &SessionKey, m: &Mandate) -> Option<Bytes> {
    let mut addresses: Vec<Address> = Vec::with_capacity(k.allowed_destinations.len());
    for d in &k.allowed_destinations {
        let a = d.parse().ok()?;
        if !addresses.contains(&a) {
            addresses.push(a);
        }
    }
    let payees = m
        .payees
        .iter()
        .map(|p| p.parse().ok())
        .collect::<Option<Vec<Address>>>()?;
    let max = match k.max_amount {
        Some(minor) => crate::token_units(Amount::from_minor(minor, m.currency)?),
        None => U256::ZERO,
    };
    let signer = match &k.signer {
        Some(a) => a.parse().ok()?,
        None => Address::ZERO,
    };
    Some(
        AllowanceStateMachine::issueSessionKeyCall {
            terms: openrail_chain::bindings::IAllowanceStateMachine::KeyTerms {
                salt: openrail_chain::consent::salt(k.id.as_str()),
                mandateId: m.onchain_id.parse().ok()?,
                expiresAt: u64::try_from(k.expires_at / 1000).ok()?,
                maxAmount: max,
                allowedDestinations: addresses,
                signer,
            },
            payees,
        }
        .abi_encode()
        .into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::{B256, U256};
    use openrail_domain::{AccountId, MandateId};
    use openrail_store::Mode;

    const PAYEE_A: &str = "0x1111111111111111111111111111111111111111";
    const PAYEE_B: &str = "0x2222222222222222222222222222222222222222";

    fn mandate() -> Mandate {
        let mut m = openrail_store::testing::active_mandate_row(
            &MandateId::parse("man_test").expect("an id"),
            &AccountId::parse("acct_test").expect("an id"),
            Mode::Testnet,
            "0x3333333333333333333333333333333333333333",
            31337,
            0,
        );
        m.payees = vec![PAYEE_A.into(), PAYEE_B.into()];
        m.onchain_id = openrail_chain::consent::mandate_id(
            m.payer_address.parse().unwrap(),
            openrail_chain::consent::salt(m.id.as_str()),
        )
        .to_string();
        m
    }

    fn key(destinations: &[&str], max_amount: Option<u64>) -> SessionKey {
        SessionKey {
            id: SessionKeyId::parse("sk_test").expect("an id"),
            account_id: openrail_domain::AccountId::parse("acct_test").expect("an id"),
            mode: Mode::Testnet,
            mandate_id: MandateId::parse("man_test").expect("an id"),
            expires_at: 1_800_000_000_000,
            max_amount,
            allowed_destinations: destinations.iter().map(|d| d.to_string()).collect(),
            status: KeyStatus::Pending,
            onchain_id: B256::ZERO.to_string(),
            tx_hash: None,
            created_at: 0,
            signer: None,
        }
    }

    #[test]
    fn a_key_is_issued_with_its_allow_list_once_each_and_its_ceiling_in_token_units() {
        let (a, b) = (PAYEE_A, PAYEE_B);
        let m = mandate();
        let input = issue_key_call(&key(&[a, b, a], Some(250)), &m).expect("a call");
        let call = AllowanceStateMachine::issueSessionKeyCall::abi_decode(&input).expect("abi");
        let t = &call.terms;
        assert_eq!(
            t.allowedDestinations,
            vec![a.parse::<Address>().unwrap(), b.parse().unwrap()]
        );
        // The mandate's signed payees go with it, for the contract to check the list against.
        assert_eq!(call.payees, t.allowedDestinations);
        // 2.50 USD: 250 minor units, 2,500,000 token units (6 decimals).
        assert_eq!(t.maxAmount, U256::from(2_500_000u64));
        // The chain derives the key's id from its mandate's and the key's salt.
        assert_eq!(t.salt, openrail_chain::consent::salt("sk_test"));
        assert_eq!(t.mandateId.to_string(), m.onchain_id);
        assert_eq!(t.expiresAt, 1_800_000_000);
        assert_eq!(t.signer, Address::ZERO);
        // No ceiling of its own: zero, which the contract reads as "the mandate's".
        let input = issue_key_call(&key(&[], None), &m).expect("a call");
        let call = AllowanceStateMachine::issueSessionKeyCall::abi_decode(&input).expect("abi");
        assert_eq!(call.terms.maxAmount, U256::ZERO);
    }

    #[test]
    fn rows_that_make_no_usable_call_make_none() {
        assert!(issue_key_call(&key(&["not an address"], None), &mandate()).is_none());
        let mut m = mandate();
        m.payees.push("not an address".into());
        assert!(issue_key_call(&key(&[], None), &m).is_none());
    }
}
