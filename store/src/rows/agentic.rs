//! The rows of mandates, session keys, debit pulls and identity attestations, and a
//! mandate's or key's use of its epoch.

use openrail_domain::{
    AccountId, AttestationId, AttestationStatus, KeyStatus, MandateId, MandateStatus, PullId,
    PullStatus, SessionKeyId,
};

use super::{corrupt, currency_of, mode_of, u64_of};
use crate::attestation::Attestation;
use crate::db::StoreError;
use crate::epoch::Interval;
use crate::exec::{Exec, Record, Stmt};
use crate::ids::Mode;
use crate::money::Currency;
use openrail_domain::pulls::DeclineReason;

/// A mandate row.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mandate {
    /// `man_…`
    pub id: MandateId,
    /// Owner.
    pub account_id: AccountId,
    /// Mode of the key that created it.
    pub mode: Mode,
    /// As given: a wallet address (or, later, a bank account id).
    pub payer_account_id: String,
    /// The wallet the chain pulls from.
    pub payer_address: String,
    /// Currency.
    pub currency: Currency,
    /// Ceiling per epoch, minor units.
    pub max_amount: u64,
    /// Epoch length.
    pub interval: Interval,
    /// Free text, part of what a wallet payer signs.
    pub purpose: Option<String>,
    /// Who may be paid (checksummed addresses, in the order signed): every key's
    /// destinations are among them. Empty only for a bank-funded mandate (any destination).
    pub payees: Vec<String>,
    /// The agent every key must have as its signer (checksummed), when the payer named one.
    pub agent: Option<String>,
    /// The identity it requires (signed by the payer, enforced on chain), when any.
    pub requirements: Option<IdentityRequirements>,
    /// Lifecycle.
    pub status: MandateStatus,
    /// Chain holding it.
    pub chain_id: u64,
    /// Allowance state machine address.
    pub contract: String,
    /// On-chain id (0x bytes32).
    pub onchain_id: String,
    /// Creating transaction.
    pub tx_hash: Option<String>,
    /// Unix ms.
    pub created_at: i64,
}

/// The identity a mandate requires: the payer holds an active attestation of the `payer`
/// kind, and every key's signer one of the `agent` kind, attested by `attester` (the mode's
/// attestation chain operator) and recorded in the settlement chain's attestation mirror.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IdentityRequirements {
    /// Whose attestations count (checksummed).
    pub attester: String,
    /// The kind of credential the payer must hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payer: Option<crate::verification::VerificationType>,
    /// The kind of credential every key's signer must hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<crate::verification::VerificationType>,
}

impl Mandate {
    /// Whether a bank account pays it (its payer on chain is the treasury, and each pull's
    /// bank leg runs after the chain authorized it).
    pub fn is_bank_funded(&self) -> bool {
        bank_funded(&self.payer_account_id)
    }
}

/// Whether a mandate whose payer is `payer_account_id` is funded from a bank account.
pub(crate) fn bank_funded(payer_account_id: &str) -> bool {
    payer_account_id.starts_with("ba_")
}

/// A session key row.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SessionKey {
    /// `sk_…`
    pub id: SessionKeyId,
    /// Owner.
    pub account_id: AccountId,
    /// Mode.
    pub mode: Mode,
    /// Parent mandate.
    pub mandate_id: MandateId,
    /// Unix ms.
    pub expires_at: i64,
    /// Key ceiling per epoch, minor units.
    pub max_amount: Option<u64>,
    /// As given.
    pub allowed_destinations: Vec<String>,
    /// Stored status.
    pub status: KeyStatus,
    /// On-chain id (0x bytes32).
    pub onchain_id: String,
    /// Issuing transaction.
    pub tx_hash: Option<String>,
    /// Unix ms.
    pub created_at: i64,
    /// The agent whose signature each pull needs (checksummed address), if any.
    pub signer: Option<String>,
}

/// An agent's signature of one pull on a key with a signer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AgentAuthorization {
    /// The agent's nonce, decimal.
    pub nonce: String,
    /// Unix seconds.
    pub deadline: i64,
    /// 0x hex.
    pub signature: String,
}

/// A debit pull row.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DebitPull {
    /// `pull_…`
    pub id: PullId,
    /// Owner.
    pub account_id: AccountId,
    /// Mode.
    pub mode: Mode,
    /// The key pulled against.
    pub session_key_id: SessionKeyId,
    /// Its mandate.
    pub mandate_id: MandateId,
    /// Minor units.
    pub amount: u64,
    /// Currency.
    pub currency: Currency,
    /// As given (or the default).
    pub destination: String,
    /// The wallet paid.
    pub destination_address: String,
    /// Free text.
    pub description: Option<String>,
    /// Lifecycle.
    pub status: PullStatus,
    /// Why it was declined.
    pub decline_code: Option<DeclineReason>,
    /// Allowance left when declined for the ceiling (minor units).
    pub remaining: Option<u64>,
    /// When that allowance resets (unix ms).
    pub resets_at: Option<i64>,
    /// The transaction that carried it.
    pub tx_hash: Option<String>,
    /// Block time of the authorization (unix ms).
    pub authorized_at: Option<i64>,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms.
    pub updated_at: i64,
    /// Why the bank leg of an authorized pull failed.
    pub failure_reason: Option<openrail_domain::FailureReason>,
    /// The agent's signature, on a key with a signer.
    pub agent: Option<AgentAuthorization>,
}

/// The current epoch of a mandate or key: its bounds, what was spent and what is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EpochUse {
    /// Unix seconds.
    pub starts_at: i64,
    /// Unix seconds.
    pub ends_at: i64,
    /// Minor units spent this epoch.
    pub spent: u64,
    /// Minor units left this epoch (0 unless the mandate, or key, can pull).
    pub remaining: u64,
}

pub(crate) const MANDATE_COLS: &str = "id, account_id, mode, payer_account_id, payer_address, currency, max_amount, interval, \
    purpose, status, chain_id, contract, onchain_id, tx_hash, created_at, payees, agent, requirements";
pub(crate) const KEY_COLS: &str = "id, account_id, mode, mandate_id, expires_at, max_amount, allowed_destinations, status, \
    onchain_id, tx_hash, created_at, signer";
pub(crate) const PULL_COLS: &str = "id, account_id, mode, session_key_id, mandate_id, amount, currency, destination, \
    destination_address, description, status, decline_code, remaining, resets_at, tx_hash, authorized_at, \
    created_at, updated_at, failure_reason, agent_nonce, agent_deadline, agent_signature";

pub(crate) fn mandate_of(r: &impl Record) -> Result<Mandate, StoreError> {
    mandate_from(r, "")
}

/// A mandate from the columns of `r` named with `prefix`.
pub(crate) fn mandate_from(r: &impl Record, prefix: &str) -> Result<Mandate, StoreError> {
    // Column names as written when there is no prefix (every read but one), without an
    // allocation each.
    let c = |name: &'static str| -> std::borrow::Cow<'static, str> {
        if prefix.is_empty() {
            name.into()
        } else {
            format!("{prefix}{name}").into()
        }
    };
    let interval = r.string(&c("interval"))?;
    let status = r.string(&c("status"))?;
    let payees = r.string(&c("payees"))?;
    let requirements = match r.text(&c("requirements"))? {
        Some(j) => Some(serde_json::from_str(&j).map_err(|_| corrupt("requirements", &j))?),
        None => None,
    };
    Ok(Mandate {
        id: MandateId::from_trusted(r.string(&c("id"))?),
        account_id: AccountId::from_trusted(r.string(&c("account_id"))?),
        mode: mode_of(r, &c("mode"))?,
        payer_account_id: r.string(&c("payer_account_id"))?,
        payer_address: r.string(&c("payer_address"))?,
        currency: currency_of(r, &c("currency"))?,
        max_amount: u64_of(r.integer(&c("max_amount"))?),
        interval: Interval::parse(&interval).ok_or_else(|| corrupt("interval", &interval))?,
        purpose: r.text(&c("purpose"))?,
        payees: serde_json::from_str(&payees).map_err(|_| corrupt("payees", &payees))?,
        agent: r.text(&c("agent"))?,
        requirements,
        status: MandateStatus::parse(&status).ok_or_else(|| corrupt("mandate status", &status))?,
        chain_id: u64_of(r.integer(&c("chain_id"))?),
        contract: r.string(&c("contract"))?,
        onchain_id: r.string(&c("onchain_id"))?,
        tx_hash: r.text(&c("tx_hash"))?,
        created_at: r.integer(&c("created_at"))?,
    })
}

pub(crate) fn key_of(r: &impl Record) -> Result<SessionKey, StoreError> {
    let dests = r.string("allowed_destinations")?;
    let status = r.string("status")?;
    Ok(SessionKey {
        id: SessionKeyId::from_trusted(r.string("id")?),
        account_id: AccountId::from_trusted(r.string("account_id")?),
        mode: mode_of(r, "mode")?,
        mandate_id: MandateId::from_trusted(r.string("mandate_id")?),
        expires_at: r.integer("expires_at")?,
        max_amount: r.int("max_amount")?.map(u64_of),
        allowed_destinations: serde_json::from_str(&dests)
            .map_err(|_| corrupt("destinations", &dests))?,
        status: KeyStatus::parse(&status).ok_or_else(|| corrupt("key status", &status))?,
        onchain_id: r.string("onchain_id")?,
        tx_hash: r.text("tx_hash")?,
        created_at: r.integer("created_at")?,
        signer: r.text("signer")?,
    })
}

pub(crate) fn pull_of(r: &impl Record) -> Result<DebitPull, StoreError> {
    let status = r.string("status")?;
    let mode = r.string("mode")?;
    let currency = r.string("currency")?;
    Ok(DebitPull {
        id: PullId::from_trusted(r.string("id")?),
        account_id: AccountId::from_trusted(r.string("account_id")?),
        mode: Mode::parse(&mode).ok_or_else(|| corrupt("mode", &mode))?,
        session_key_id: SessionKeyId::from_trusted(r.string("session_key_id")?),
        mandate_id: MandateId::from_trusted(r.string("mandate_id")?),
        amount: u64_of(r.integer("amount")?),
        currency: Currency::parse(&currency).ok_or_else(|| corrupt("currency", &currency))?,
        destination: r.string("destination")?,
        destination_address: r.string("destination_address")?,
        description: r.text("description")?,
        status: PullStatus::parse(&status).ok_or_else(|| corrupt("pull status", &status))?,
        decline_code: match r.text("decline_code")? {
            None => None,
            Some(c) => Some(DeclineReason::parse(&c).ok_or_else(|| corrupt("decline code", &c))?),
        },
        remaining: r.int("remaining")?.map(u64_of),
        resets_at: r.int("resets_at")?,
        tx_hash: r.text("tx_hash")?,
        authorized_at: r.int("authorized_at")?,
        created_at: r.integer("created_at")?,
        updated_at: r.integer("updated_at")?,
        failure_reason: super::failure_of(r)?,
        agent: match (
            r.text("agent_nonce")?,
            r.int("agent_deadline")?,
            r.text("agent_signature")?,
        ) {
            (Some(nonce), Some(deadline), Some(signature)) => Some(AgentAuthorization {
                nonce,
                deadline,
                signature,
            }),
            _ => None,
        },
    })
}

pub(crate) async fn spend_in(
    conn: &mut impl Exec,
    col: &'static str,
    id: &str,
    since_ms: i64,
) -> Result<u64, StoreError> {
    let mut q = Stmt::new(
        conn.backend(),
        format!(
            "SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) AS spent FROM debit_pulls WHERE {col} = $1 \
             AND status IN ('authorized', 'settled', 'failed') AND authorized_at >= $2"
        ),
    );
    q.push(id).push(since_ms);
    let rows = conn.fetch(&q).await?;
    let row = rows
        .first()
        .ok_or_else(|| StoreError::Corrupt("a sum returned no row".into()))?;
    Ok(u64_of(row.integer("spent")?))
}

/// [`Mandates::epoch_use`](crate::agentic::Mandates::epoch_use) on a connection (inside a transaction when recording an event).
pub(crate) async fn mandate_use_in(
    conn: &mut impl Exec,
    m: &Mandate,
    now: i64,
) -> Result<EpochUse, StoreError> {
    let epoch = m.interval.epoch_at(now / 1000);
    let spent = spend_in(conn, "mandate_id", m.id.as_str(), epoch.starts_at * 1000).await?;
    let remaining = if m.status == MandateStatus::Active {
        m.max_amount.saturating_sub(spent)
    } else {
        0
    };
    Ok(EpochUse {
        starts_at: epoch.starts_at,
        ends_at: epoch.ends_at,
        spent,
        remaining,
    })
}

/// [`Keys::epoch_use`](crate::agentic::Keys::epoch_use) on a connection.
pub(crate) async fn key_use_in(
    conn: &mut impl Exec,
    k: &SessionKey,
    m: &Mandate,
    now: i64,
) -> Result<EpochUse, StoreError> {
    let mandate = mandate_use_in(conn, m, now).await?;
    let spent = spend_in(
        conn,
        "session_key_id",
        k.id.as_str(),
        mandate.starts_at * 1000,
    )
    .await?;
    let live = k.status == KeyStatus::Active && now < k.expires_at;
    let own = k
        .max_amount
        .map(|max| max.saturating_sub(spent))
        .unwrap_or(u64::MAX);
    let remaining = if live { own.min(mandate.remaining) } else { 0 };
    Ok(EpochUse {
        spent,
        remaining,
        ..mandate
    })
}

/// The columns [`attestation_of`] reads.
pub(crate) const ATTESTATION_COLS: &str = "id, account_id, mode, chain_id, registry, schema_uid, recipient, \
     credential_id, credential_digest, issuer, credential_type, expires_at, status_list_credential, \
     status_list_index, status, uid, tx_hash, revoked_at, created_at, updated_at, mirrored_sequence";

/// An attestation from its row (columns [`ATTESTATION_COLS`]).
pub(crate) fn attestation_of(r: &impl Record) -> Result<Attestation, StoreError> {
    let mode = r.string("mode")?;
    let status = r.string("status")?;
    Ok(Attestation {
        id: AttestationId::from_trusted(r.string("id")?),
        account_id: AccountId::from_trusted(r.string("account_id")?),
        mode: Mode::parse(&mode).ok_or_else(|| corrupt("mode", &mode))?,
        chain_id: u64::try_from(r.integer("chain_id")?).unwrap_or_default(),
        registry: r.string("registry")?,
        schema_uid: r.string("schema_uid")?,
        recipient: r.string("recipient")?,
        credential_id: r.text("credential_id")?,
        credential_digest: r.string("credential_digest")?,
        issuer: r.string("issuer")?,
        credential_type: r.string("credential_type")?,
        expires_at: r.int("expires_at")?,
        status_list_credential: r.text("status_list_credential")?,
        status_list_index: r.int("status_list_index")?.map(|i| i as u64),
        status: AttestationStatus::parse(&status).ok_or_else(|| corrupt("status", &status))?,
        uid: r.text("uid")?,
        tx_hash: r.text("tx_hash")?,
        revoked_at: r.int("revoked_at")?,
        mirrored_sequence: r.int("mirrored_sequence")?,
        created_at: r.integer("created_at")?,
        updated_at: r.integer("updated_at")?,
    })
}

/// What a mandate's events hold: the row, its epoch use and its payer's authorization.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MandateSnapshot {
    /// The row.
    pub mandate: Mandate,
    /// The epoch containing the event's time.
    pub current_epoch: EpochUse,
    /// What a wallet payer was asked to sign, and the signature once given.
    pub authorization: Option<super::consent::Authorization>,
}

impl MandateSnapshot {
    /// Mandate `id` as it is now inside `conn`'s transaction, with its owner and mode.
    pub(crate) async fn read_in(
        conn: &mut impl Exec,
        id: &str,
        now: i64,
    ) -> Result<(Self, AccountId, Mode), StoreError> {
        let m = mandate_of(&super::row_in(conn, "mandates", MANDATE_COLS, id).await?)?;
        let current_epoch = mandate_use_in(conn, &m, now).await?;
        let authorization = super::consent::authorization_in(conn, id).await?;
        let (account, mode) = (m.account_id.clone(), m.mode);
        let snap = MandateSnapshot {
            mandate: m,
            current_epoch,
            authorization,
        };
        Ok((snap, account, mode))
    }
}

/// What a session key's events hold: the row, its mandate and its epoch use.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SessionKeySnapshot {
    /// The row.
    pub session_key: SessionKey,
    /// Its mandate.
    pub mandate: Mandate,
    /// The epoch containing the event's time.
    pub current_epoch: EpochUse,
}

impl SessionKeySnapshot {
    /// Key `id` as it is now inside `conn`'s transaction, with its owner and mode.
    pub(crate) async fn read_in(
        conn: &mut impl Exec,
        id: &str,
        now: i64,
    ) -> Result<(Self, AccountId, Mode), StoreError> {
        let k = key_of(&super::row_in(conn, "session_keys", KEY_COLS, id).await?)?;
        let m = mandate_of(
            &super::row_in(conn, "mandates", MANDATE_COLS, k.mandate_id.as_str()).await?,
        )?;
        let current_epoch = key_use_in(conn, &k, &m, now).await?;
        let (account, mode) = (k.account_id.clone(), k.mode);
        let snap = SessionKeySnapshot {
            session_key: k,
            mandate: m,
            current_epoch,
        };
        Ok((snap, account, mode))
    }
}

/// What a debit pull's events hold: the row and the chain of its mandate.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DebitPullSnapshot {
    /// The row.
    pub debit_pull: DebitPull,
    /// The chain of its mandate.
    pub chain_id: u64,
}

impl DebitPullSnapshot {
    /// Pull `id` as it is now inside `conn`'s transaction, with its owner and mode.
    pub(crate) async fn read_in(
        conn: &mut impl Exec,
        id: &str,
        _now: i64,
    ) -> Result<(Self, AccountId, Mode), StoreError> {
        let p = pull_of(&super::row_in(conn, "debit_pulls", PULL_COLS, id).await?)?;
        let m = mandate_of(
            &super::row_in(conn, "mandates", MANDATE_COLS, p.mandate_id.as_str()).await?,
        )?;
        let (account, mode) = (p.account_id.clone(), p.mode);
        let snap = DebitPullSnapshot {
            debit_pull: p,
            chain_id: m.chain_id,
        };
        Ok((snap, account, mode))
    }
}

/// What an identity attestation's events hold: the row.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AttestationSnapshot {
    /// The row.
    pub attestation: Attestation,
}

impl AttestationSnapshot {
    /// Attestation `id` as it is now inside `conn`'s transaction, with its owner and mode.
    pub(crate) async fn read_in(
        conn: &mut impl Exec,
        id: &str,
        _now: i64,
    ) -> Result<(Self, AccountId, Mode), StoreError> {
        let a = attestation_of(
            &super::row_in(conn, "identity_attestations", ATTESTATION_COLS, id).await?,
        )?;
        let (account, mode) = (a.account_id.clone(), a.mode);
        Ok((AttestationSnapshot { attestation: a }, account, mode))
    }
}
