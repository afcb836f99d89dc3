//! Identity attestations (issue 27 item 7): a verified credential attested by Openrail's
//! operator on the mode's attestation chain (`AttestationRegistry`). A request writes the
//! row (`pending`), its `identity.attestation.pending` event and its `attest` work in one
//! transaction; the attestation chain's engine sends it, and the journaled transaction's
//! fate moves it ([`crate::agentic::fate_effect_in`]): `active` once mined (its on-chain
//! `uid` is read from the receipt's `Attested` log by the engine), `failed` when reverted
//! or refused. A revoke (asked for, or because its credential was revoked) is `revoke`
//! work; its success moves it to `revoked`. `expired` is time (its `expires_at`), as a
//! session key's.
//!
//! The row holds what the chain holds — the credential's digest, issuer, type, expiry and
//! status reference, and the wallet it is about — never the credential's claims.

use sqlx::Row;
use sqlx::any::AnyRow;

pub use openrail_domain::status::AttestationStatus;

use crate::agentic::{Page, Scope, in_list};
use crate::db::{Store, StoreError};
use crate::events::{self, EventType};
use crate::exec::{Exec, Stmt};
use crate::ids::{AccountId, AttestationId, Mode};
use crate::outbox::{self, WorkKind};

/// One identity attestation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Attestation {
    /// `att_…`
    pub id: AttestationId,
    /// Owner.
    pub account_id: AccountId,
    /// Mode.
    pub mode: Mode,
    /// The attestation chain.
    pub chain_id: u64,
    /// The registry attested on (0x, checksummed).
    pub registry: String,
    /// The registry schema's uid (0x bytes32).
    pub schema_uid: String,
    /// The wallet it is about (0x, checksummed): the credential's subject.
    pub recipient: String,
    /// The credential Openrail issued, when attested from one (`credential_id`).
    pub credential_id: Option<String>,
    /// SHA-256 of the credential's JSON (JCS form for Openrail's), hex.
    pub credential_digest: String,
    /// The credential's issuer (a DID).
    pub issuer: String,
    /// The credential's most specific type.
    pub credential_type: String,
    /// The credential's `validUntil` (unix ms), the attestation's expiration.
    pub expires_at: Option<i64>,
    /// Its revocation status list (`statusListCredential`), when it has one.
    pub status_list_credential: Option<String>,
    /// Its index in that list.
    pub status_list_index: Option<u64>,
    /// Stored status.
    pub status: AttestationStatus,
    /// The on-chain uid (0x bytes32), once mined and read.
    pub uid: Option<String>,
    /// Its `attest` transaction.
    pub tx_hash: Option<String>,
    /// When its revocation was mined (unix ms).
    pub revoked_at: Option<i64>,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms.
    pub updated_at: i64,
}

impl Attestation {
    /// The status as the API shows it at `now`: `expired` once an active attestation's
    /// expiry passed.
    pub fn status_at(&self, now: i64) -> &'static str {
        match (self.status, self.expires_at) {
            (AttestationStatus::Active, Some(t)) if t <= now => "expired",
            (s, _) => s.as_str(),
        }
    }
}

pub(crate) const COLS: &str = "id, account_id, mode, chain_id, registry, schema_uid, recipient, \
     credential_id, credential_digest, issuer, credential_type, expires_at, status_list_credential, \
     status_list_index, status, uid, tx_hash, revoked_at, created_at, updated_at";

fn corrupt(what: &str, v: &str) -> StoreError {
    StoreError::Corrupt(format!("{what} {v:?}"))
}

/// An attestation from its row (columns [`COLS`]).
pub(crate) fn attestation_of(r: &impl crate::exec::Record) -> Result<Attestation, StoreError> {
    let mode = r.string("mode")?;
    let status = r.string("status")?;
    Ok(Attestation {
        id: AttestationId::from_row(r.string("id")?),
        account_id: AccountId::from_row(r.string("account_id")?),
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
        created_at: r.integer("created_at")?,
        updated_at: r.integer("updated_at")?,
    })
}

fn of_any(r: &AnyRow) -> Result<Attestation, StoreError> {
    attestation_of(r)
}

/// **The one place an attestation's status changes after creation.** Moves attestation `id`
/// to `to` from a status it may move from ([`AttestationStatus::sources`]), under `guard`
/// (an extra SQL condition, `""` for none), sets its transaction when given and its
/// revocation time on `revoked`, and records the event — inside the caller's transaction.
/// Returns whether it moved; a move outside the table is [`StoreError::Transition`].
pub(crate) async fn move_attestation_in(
    conn: &mut impl Exec,
    id: &str,
    to: AttestationStatus,
    tx_hash: Option<&str>,
    guard: &str,
    now: i64,
) -> Result<bool, StoreError> {
    if to.sources().is_empty() {
        return Err(StoreError::Transition(format!(
            "attestation {id}: nothing moves to {}",
            to.as_str()
        )));
    }
    let revoked_at = (to == AttestationStatus::Revoked).then_some(now);
    let mut q = Stmt::new(
        conn.backend(),
        format!(
            "UPDATE identity_attestations SET status = $2, tx_hash = COALESCE(tx_hash, $3), \
             revoked_at = COALESCE(revoked_at, $4), updated_at = $5 \
             WHERE id = $1 AND status IN ({}){guard}",
            in_list(to.sources().iter().map(|s| s.as_str()))
        ),
    );
    q.text(Some(id))
        .text(Some(to.as_str()))
        .text(tx_hash)
        .int(revoked_at)
        .int(Some(now));
    let moved = conn.execute(&q).await? == 1;
    if moved {
        events::record(conn, EventType::of_attestation(to), id, now).await?;
    }
    Ok(moved)
}

/// No other transaction carrying the attestation (`$1`) is still live: a failed `attest`
/// fails it only if nothing else may still carry it.
pub(crate) const NO_LIVE_TRANSACTION: &str = " AND NOT EXISTS (SELECT 1 FROM chain_tx_intents i \
     JOIN chain_txs t ON t.hash = i.hash WHERE i.intent = $1 AND t.status IN ('signed', 'succeeded') \
     AND t.kind = 'attest')";

/// The chain and mode of an attestation (`$1`: its id), for [`outbox::enqueue_for`].
const OF_ATTESTATION: &str = "SELECT chain_id, mode FROM identity_attestations WHERE id = $1";

/// Queues the revoke of every attestation of credential `credential_id` that is not
/// revoked or failed, inside the caller's transaction (the credential's revocation).
pub(crate) async fn revoke_for_credential_in(
    conn: &mut sqlx::AnyConnection,
    credential_id: &str,
    now: i64,
) -> Result<(), StoreError> {
    let ids: Vec<String> = sqlx::query(
        "SELECT id FROM identity_attestations WHERE credential_id = $1 \
         AND status IN ('pending', 'active') ORDER BY created_at, id",
    )
    .bind(credential_id)
    .fetch_all(&mut *conn)
    .await?
    .iter()
    .map(|r| r.try_get("id"))
    .collect::<Result<_, _>>()?;
    for id in ids {
        outbox::enqueue_for(conn, OF_ATTESTATION, &id, WorkKind::RevokeAttestation, now).await?;
    }
    Ok(())
}

impl Store {
    /// Inserts a new (`pending`) attestation with its `identity.attestation.pending` event
    /// and its `attest` work on its chain, in one transaction.
    pub async fn insert_attestation(&self, a: &Attestation) -> Result<(), StoreError> {
        if a.status != AttestationStatus::Pending {
            return Err(StoreError::Transition(format!(
                "attestation {} starts pending, not {}",
                a.id,
                a.status.as_str()
            )));
        }
        let mut tx = self.write_tx().await?;
        sqlx::query(&format!(
            "INSERT INTO identity_attestations ({COLS}) VALUES \
             ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20)"
        ))
        .bind(&a.id)
        .bind(&a.account_id)
        .bind(a.mode.as_str())
        .bind(i64::try_from(a.chain_id).unwrap_or(i64::MAX))
        .bind(&a.registry)
        .bind(&a.schema_uid)
        .bind(&a.recipient)
        .bind(&a.credential_id)
        .bind(&a.credential_digest)
        .bind(&a.issuer)
        .bind(&a.credential_type)
        .bind(a.expires_at)
        .bind(&a.status_list_credential)
        .bind(a.status_list_index.map(|i| i as i64))
        .bind(a.status.as_str())
        .bind(&a.uid)
        .bind(&a.tx_hash)
        .bind(a.revoked_at)
        .bind(a.created_at)
        .bind(a.updated_at)
        .execute(&mut *tx)
        .await?;
        events::record(
            &mut *tx,
            EventType::IdentityAttestationPending,
            &a.id,
            a.created_at,
        )
        .await?;
        outbox::enqueue(
            &mut tx,
            &a.id,
            WorkKind::Attest,
            a.chain_id,
            a.mode,
            a.created_at,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// An attestation of this account and mode.
    pub async fn attestation(
        &self,
        scope: Scope<'_>,
        id: &AttestationId,
    ) -> Result<Attestation, StoreError> {
        of_any(
            &self
                .scoped_row("identity_attestations", COLS, scope, id)
                .await?,
        )
    }

    /// An attestation, whoever owns it (the engine's read).
    pub async fn attestation_unscoped(
        &self,
        id: &AttestationId,
    ) -> Result<Attestation, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {COLS} FROM identity_attestations WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(self.writer())
        .await?
        .ok_or(StoreError::NotFound)?;
        of_any(&row)
    }

    /// Attestations of this account and mode, newest first, optionally about one
    /// `recipient` (0x, checksummed).
    pub async fn list_attestations(
        &self,
        scope: Scope<'_>,
        recipient: Option<&str>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<Attestation>, StoreError> {
        let filters: Vec<(&'static str, &str)> =
            recipient.map(|r| ("recipient", r)).into_iter().collect();
        let (rows, has_more) = self
            .list_rows(
                "identity_attestations",
                COLS,
                scope,
                &filters,
                limit,
                starting_after,
            )
            .await?;
        Ok(Page {
            data: rows.iter().map(of_any).collect::<Result<_, _>>()?,
            has_more,
        })
    }

    /// Records the on-chain uid of attestation `id`, as read from its `attest` receipt (a
    /// reorganisation that mines the same transaction in another block changes it: the
    /// registry's uid includes the block's time).
    pub async fn record_attestation_uid(
        &self,
        id: &AttestationId,
        uid: &str,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE identity_attestations SET uid = $2 WHERE id = $1")
            .bind(id)
            .bind(uid)
            .execute(self.writer())
            .await?;
        Ok(())
    }

    /// Queues the revoke of attestation `id` of `scope` at `now` (a pending one is revoked
    /// once it is on chain). Returns it as it stands.
    pub async fn request_attestation_revoke(
        &self,
        scope: Scope<'_>,
        id: &AttestationId,
        now: i64,
    ) -> Result<Attestation, StoreError> {
        let a = self.attestation(scope, id).await?;
        if matches!(
            a.status,
            AttestationStatus::Pending | AttestationStatus::Active
        ) {
            let mut tx = self.write_tx().await?;
            outbox::enqueue_for(
                &mut tx,
                OF_ATTESTATION,
                id,
                WorkKind::RevokeAttestation,
                now,
            )
            .await?;
            tx.commit().await?;
        }
        Ok(a)
    }

    /// Fails an attestation no transaction carries (its row makes no usable call, or its
    /// only transaction was refused), with its event. Returns whether it moved.
    pub async fn fail_unsent_attestation(
        &self,
        id: &AttestationId,
        now: i64,
    ) -> Result<bool, StoreError> {
        let mut tx = self.write_tx().await?;
        let moved =
            move_attestation_in(&mut *tx, id, AttestationStatus::Failed, None, "", now).await?;
        tx.commit().await?;
        Ok(moved)
    }

    /// Moves attestation `id` to `to` at `now` through its one writer, refusing a move the
    /// lifecycle does not allow ([`StoreError::Transition`], nothing written). The service
    /// moves attestations only by their transactions' fates; this is the table's check.
    pub async fn move_attestation(
        &self,
        id: &AttestationId,
        to: AttestationStatus,
        now: i64,
    ) -> Result<bool, StoreError> {
        use openrail_domain::status::Lifecycle;
        let mut tx = self.write_tx().await?;
        let row = sqlx::query("SELECT status FROM identity_attestations WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or(StoreError::NotFound)?;
        let from: String = row.try_get("status")?;
        let from = AttestationStatus::parse(&from).ok_or_else(|| corrupt("status", &from))?;
        if !to.reachable_from(from) {
            return Err(StoreError::Transition(format!(
                "attestation {id}: {} → {}",
                from.as_str(),
                to.as_str()
            )));
        }
        let moved = move_attestation_in(&mut *tx, id, to, None, "", now).await?;
        tx.commit().await?;
        Ok(moved)
    }
}

/// Whether `status` is one an attestation can be revoked from (queued or on chain).
pub fn revocable(status: AttestationStatus) -> bool {
    matches!(
        status,
        AttestationStatus::Pending | AttestationStatus::Active
    )
}
