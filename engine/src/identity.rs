//! Identity a mandate requires: what the API checks before it writes a mandate, a key or a
//! pull, as the allowance state machine checks it on chain against the attestation mirror.
//! A requirement holds for a wallet when it has an active, unexpired attestation of the
//! kind's schema on the mode's attestation chain whose receipt the settlement chain's mirror
//! recorded — the same facts the chain reads, so the API refuses (403
//! `identity_requirement_unmet`) what the chain would decline, before any transaction.

use alloy::primitives::Address;
use openrail_store::Store;
use openrail_store::agentic::IdentityRequirements;
use openrail_store::ids::Mode;
use openrail_store::verification::VerificationType;

use crate::network::Network;
use crate::service::ServiceError;

/// Who must hold a required credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// The mandate's payer.
    Payer,
    /// A session key's signer (the agent).
    Signer,
}

impl Holder {
    /// As the API names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Holder::Payer => "payer",
            Holder::Signer => "signer",
        }
    }
}

/// The registry schema uid (0x bytes32) of credentials of `kind`.
pub fn schema_of(kind: VerificationType) -> alloy::primitives::B256 {
    openrail_chain::attestations::typed_schema_uid(kind.credential_type())
        .expect("every verification type has a typed schema")
}

/// The requirements of a new mandate on `net` asking `payer` and `agent` kinds: attested by
/// the mode's attestation chain operator, checked against the settlement chain's mirror.
/// `None` when it asks nothing; refused when the network cannot enforce them.
pub fn requirements_for(
    net: &Network,
    payer: Option<VerificationType>,
    agent: Option<VerificationType>,
) -> Result<Option<IdentityRequirements>, ServiceError> {
    if payer.is_none() && agent.is_none() {
        return Ok(None);
    }
    let (Some(attestation), Some(_)) = (net.attestation.as_deref(), net.attestation_mirror) else {
        return Err(ServiceError::Invalid {
            param: "requirements",
            detail: "cannot be enforced here: this mode has no attestation chain, or its \
                     settlement chain no attestation mirror"
                .into(),
        });
    };
    Ok(Some(IdentityRequirements {
        attester: attestation.operator.to_checksum(None),
        payer,
        agent,
    }))
}

/// The on-chain requirements of mandate row `r` (all zero for none); `None` when the row is
/// unusable.
pub fn onchain(
    r: Option<&IdentityRequirements>,
) -> Option<openrail_chain::bindings::IAllowanceStateMachine::Requirements> {
    let Some(r) = r else {
        return Some(openrail_chain::consent::no_requirements());
    };
    Some(
        openrail_chain::bindings::IAllowanceStateMachine::Requirements {
            attester: r.attester.parse().ok()?,
            payerSchema: r.payer.map(schema_of).unwrap_or_default(),
            agentSchema: r.agent.map(schema_of).unwrap_or_default(),
        },
    )
}

/// Refuses requirements the settlement chain's mirror cannot vouch for: its attester (the
/// attestation chain's operator, which may be another key than the settlement chain's) must
/// be one the mirror trusts (`addAttester` by the owner), else every pull would be declined.
pub async fn check_attester(net: &Network, r: &IdentityRequirements) -> Result<(), ServiceError> {
    let (Ok(mirror), Ok(attester)) = (net.mirror(), r.attester.parse::<Address>()) else {
        return Err(ServiceError::Internal(
            "identity requirements without a mirror".into(),
        ));
    };
    let trusted = openrail_chain::bindings::AttestationMirror::new(mirror, &net.reader)
        .isTrusted(attester)
        .call()
        .await
        .map_err(|e| ServiceError::Chain(openrail_chain::ChainError::from(e)))?;
    if trusted {
        return Ok(());
    }
    Err(ServiceError::Invalid {
        param: "requirements",
        detail: format!(
            "cannot be enforced here: the settlement chain's attestation mirror does not trust \
             the attester {attester} (its owner must `addAttester` it)"
        ),
    })
}

/// Checks that `holder` (a checksummed wallet) holds a credential of `kind`, in `mode` at
/// `now`: else [`ServiceError::IdentityRequirementUnmet`].
pub async fn check(
    store: &Store,
    mode: Mode,
    holder: Holder,
    wallet: &str,
    kind: Option<VerificationType>,
    now: i64,
) -> Result<(), ServiceError> {
    let Some(kind) = kind else {
        return Ok(());
    };
    let schema = schema_of(kind).to_string();
    if store
        .attestations()
        .holds(mode, wallet, &schema, now)
        .await?
    {
        return Ok(());
    }
    Err(ServiceError::IdentityRequirementUnmet {
        holder: holder.as_str(),
        wallet: wallet.to_string(),
        kind: kind.as_str(),
    })
}

/// Checks every requirement of `r` for a pull or a key: the payer's, and the signer's when
/// the key has one (a key without a signer on a mandate requiring an agent credential is
/// refused when it is issued).
pub async fn check_all(
    store: &Store,
    mode: Mode,
    r: &IdentityRequirements,
    payer: &str,
    signer: Option<&str>,
    now: i64,
) -> Result<(), ServiceError> {
    check(store, mode, Holder::Payer, payer, r.payer, now).await?;
    match (r.agent, signer) {
        (None, _) => Ok(()),
        (Some(kind), Some(s)) => check(store, mode, Holder::Signer, s, Some(kind), now).await,
        (Some(kind), None) => Err(ServiceError::IdentityRequirementUnmet {
            holder: Holder::Signer.as_str(),
            wallet: Address::ZERO.to_checksum(None),
            kind: kind.as_str(),
        }),
    }
}
