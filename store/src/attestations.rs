//! Identity attestations (issue 27 item 7): a verified credential attested by Openrail's
//! operator on the mode's attestation chain (`AttestationRegistry`). A request writes the
//! row (`pending`), its `identity.attestation.pending` event and its `attest` work in one
//! transaction; the attestation chain's engine sends it, and the journaled transaction's
//! fate moves it ([`fate_in`]): `active` once mined (its on-chain
//! `uid` is read from the receipt's `Attested` log by the engine), `failed` when reverted
//! or refused. A revoke (asked for, or because its credential was revoked) is `revoke`
//! work; its success moves it to `revoked`. `expired` is time (its `expires_at`), as a
//! session key's.
//!
//! The row holds what the chain holds — the credential's digest, issuer, type, expiry and
//! status reference, and the wallet it is about — never the credential's claims.

pub use openrail_domain::AttestationStatus;

use crate::db::{Store, StoreError};
use crate::events::{self, EventType};
use crate::exec::{Exec, Record, Stmt};
use crate::outbox::{self, WorkKind};
use crate::rows::{Page, Scope, in_list};
use openrail_domain::AttestationId;
use openrail_domain::AttestationTx;
use openrail_domain::journal::{Fate, Intent, TxStatus};

pub use crate::attestation::Attestation;
pub(crate) use crate::rows::agentic::{ATTESTATION_COLS as COLS, attestation_of};

/// Identity attestations and the receipts relayed to the mirror (`store.attestations()`).
#[derive(Debug, Clone, Copy)]
pub struct Attestations<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on identity attestations and the receipts relayed to the mirror ([`Attestations`]).
    pub fn attestations(&self) -> Attestations<'_> {
        Attestations(self)
    }
}

fn of_any(r: &impl Record) -> Result<Attestation, StoreError> {
    attestation_of(r)
}

/// The chain and mode of an attestation (`$1`: its id), for [`outbox::enqueue_for`].
const OF_ATTESTATION: &str = "SELECT chain_id, mode FROM identity_attestations WHERE id = $1";

/// Queues the revoke of every attestation of credential `credential_id` that is not
/// revoked or failed, inside the caller's transaction (the credential's revocation).
pub(crate) async fn revoke_for_credential_in(
    conn: &mut impl Exec,
    credential_id: &str,
    now: i64,
) -> Result<(), StoreError> {
    let q = Stmt::new(
        conn.backend(),
        "SELECT id FROM identity_attestations WHERE credential_id = $1 \
         AND status IN ('pending', 'active') ORDER BY created_at, id"
            .into(),
    )
    .bind(credential_id);
    let ids = conn.strings(&q, "id").await?;
    for id in ids {
        outbox::enqueue_for(
            &mut *conn,
            OF_ATTESTATION,
            &Intent::Attestation(AttestationId::from_trusted(id)),
            WorkKind::RevokeAttestation,
            now,
        )
        .await?;
    }
    Ok(())
}

impl Attestations<'_> {
    /// Inserts a new (`pending`) attestation with its `identity.attestation.pending` event
    /// and its `attest` work on its chain, in one transaction.
    pub async fn insert(self, a: &Attestation) -> Result<(), StoreError> {
        if a.status != AttestationStatus::Pending {
            return Err(StoreError::Transition(format!(
                "attestation {} starts pending, not {}",
                a.id,
                a.status.as_str()
            )));
        }
        let a = a.clone();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    let q = Stmt::new(
                        tx.backend(),
                        format!(
                            "INSERT INTO identity_attestations ({COLS}) VALUES \
                             ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21)"
                        ),
                    )
                    .bind(a.id.as_str())
                    .bind(a.account_id.as_str())
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
                    .bind(a.mirrored_sequence);
                    tx.execute(&q).await?;
                    events::record(
                        &mut tx,
                        EventType::IdentityAttestationPending,
                        a.id.as_str(),
                        a.created_at,
                    )
                    .await?;
                    outbox::enqueue(
                        &mut tx,
                        &Intent::Attestation(a.id.clone()),
                        WorkKind::Attest,
                        a.chain_id,
                        a.mode,
                        a.created_at,
                    )
                    .await?;
                    Ok(())
                })
            })
            .await
    }

    /// An attestation of this account and mode.
    pub async fn get(
        self,
        scope: Scope<'_>,
        id: &AttestationId,
    ) -> Result<Attestation, StoreError> {
        of_any(
            &self
                .0
                .scoped_row("identity_attestations", COLS, scope, id.as_str())
                .await?,
        )
    }

    /// An attestation, whoever owns it (the engine's read).
    pub async fn get_unscoped(self, id: &AttestationId) -> Result<Attestation, StoreError> {
        let q = self
            .0
            .stmt(format!(
                "SELECT {COLS} FROM identity_attestations WHERE id = $1"
            ))
            .bind(id.as_str());
        let row = self
            .0
            .fetch_optional(&q)
            .await?
            .ok_or(StoreError::NotFound)?;
        of_any(&row)
    }

    /// Attestations of this account and mode, newest first, optionally about one
    /// `recipient` (0x, checksummed).
    pub async fn list(
        self,
        scope: Scope<'_>,
        recipient: Option<&str>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<Attestation>, StoreError> {
        let filters: Vec<(&'static str, &str)> =
            recipient.map(|r| ("recipient", r)).into_iter().collect();
        let (rows, has_more) = self
            .0
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
    pub async fn record_uid(self, id: &AttestationId, uid: &str) -> Result<(), StoreError> {
        let q = self
            .0
            .stmt("UPDATE identity_attestations SET uid = $2 WHERE id = $1")
            .bind(id.as_str())
            .bind(uid);
        self.0.execute(q).await?;
        Ok(())
    }

    /// Queues the revoke of attestation `id` of `scope` at `now` (a pending one is revoked
    /// once it is on chain). Returns it as it stands.
    pub async fn request_revoke(
        self,
        scope: Scope<'_>,
        id: &AttestationId,
        now: i64,
    ) -> Result<Attestation, StoreError> {
        let a = self.0.attestations().get(scope, id).await?;
        if matches!(
            a.status,
            AttestationStatus::Pending | AttestationStatus::Active
        ) {
            let intent = Intent::Attestation(id.clone());
            self.0
                .write(move |mut tx| {
                    Box::pin(async move {
                        outbox::enqueue_for(
                            &mut tx,
                            OF_ATTESTATION,
                            &intent,
                            WorkKind::RevokeAttestation,
                            now,
                        )
                        .await
                    })
                })
                .await?;
        }
        Ok(a)
    }

    /// Fails an attestation no transaction carries (its row makes no usable call, or its
    /// only transaction was refused), with its event. Returns whether it moved.
    pub async fn fail_unsent(self, id: &AttestationId, now: i64) -> Result<bool, StoreError> {
        let id = id.clone();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    move_attestation_in(
                        &mut tx,
                        id.as_str(),
                        AttestationStatus::Failed,
                        None,
                        "",
                        now,
                    )
                    .await
                })
            })
            .await
    }

    /// Moves attestation `id` to `to` at `now` through its one writer, refusing a move the
    /// lifecycle does not allow ([`StoreError::Transition`], nothing written). The service
    /// moves attestations only by their transactions' fates; this is the table's check.
    pub async fn move_to(
        self,
        id: &AttestationId,
        to: AttestationStatus,
        now: i64,
    ) -> Result<bool, StoreError> {
        use openrail_domain::status::Lifecycle;
        let id = id.clone();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    let q = Stmt::new(
                        tx.backend(),
                        "SELECT status FROM identity_attestations WHERE id = $1".into(),
                    )
                    .bind(id.as_str());
                    let row = tx.fetch_optional(&q).await?.ok_or(StoreError::NotFound)?;
                    let from = row.string("status")?;
                    let from = AttestationStatus::parse(&from)
                        .ok_or_else(|| StoreError::Corrupt(format!("status {from:?}")))?;
                    if !to.reachable_from(from) {
                        return Err(StoreError::Transition(format!(
                            "attestation {id}: {} → {}",
                            from.as_str(),
                            to.as_str()
                        )));
                    }
                    move_attestation_in(&mut tx, id.as_str(), to, None, "", now).await
                })
            })
            .await
    }
}

/// Which receipt of an attestation goes to the settlement chain's attestation mirror.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelayStep {
    /// The receipt of its `attest` (the slot now holds it).
    Attested,
    /// The receipt of its `revoke`.
    Revoked,
}

impl RelayStep {
    /// The `relayed` value once this step is queued.
    fn level(self) -> i64 {
        match self {
            RelayStep::Attested => 1,
            RelayStep::Revoked => 2,
        }
    }

    /// The work that records it on the settlement chain.
    pub fn work(self) -> WorkKind {
        match self {
            RelayStep::Attested => WorkKind::MirrorAttested,
            RelayStep::Revoked => WorkKind::MirrorRevoked,
        }
    }
}

impl Attestations<'_> {
    /// Attestations of attestation chain `chain_id` under one of `schemas` whose next
    /// receipt has not been queued for the settlement chain (at most `limit`, oldest change
    /// first), with that step: an active one's attestation, a revoked one's revocation (an
    /// attestation revoked before its first receipt went needs only the second).
    pub async fn to_relay(
        self,
        chain_id: u64,
        schemas: &[String],
        limit: u32,
    ) -> Result<Vec<(Attestation, RelayStep)>, StoreError> {
        if schemas.is_empty() {
            return Ok(Vec::new());
        }
        let listed = in_list(schemas.iter().map(String::as_str));
        let q = self
            .0
            .stmt(format!(
                "SELECT {COLS} FROM identity_attestations WHERE chain_id = $1 AND uid IS NOT NULL \
                 AND schema_uid IN ({listed}) \
                 AND ((status = 'active' AND relayed < 1) OR (status = 'revoked' AND relayed < 2)) \
                 ORDER BY updated_at, id LIMIT $2"
            ))
            .bind(i64::try_from(chain_id).unwrap_or(i64::MAX))
            .bind(i64::from(limit));
        let rows = self.0.fetch(&q).await?;
        rows.iter()
            .map(|r| {
                let a = of_any(r)?;
                let step = if a.status == AttestationStatus::Revoked {
                    RelayStep::Revoked
                } else {
                    RelayStep::Attested
                };
                Ok((a, step))
            })
            .collect()
    }

    /// Records that `step` of attestation `id` is relayed: its signed `receipt` (JSON) and
    /// sequence, with the work recording it on `settlement_chain_id`, in one transaction;
    /// `None` when the step changed nothing the mirror must hear of (its log left the slot
    /// as it was). Returns whether this call recorded it (false: done already).
    pub async fn queue_receipt(
        self,
        id: &AttestationId,
        step: RelayStep,
        receipt: Option<(&str, u64)>,
        settlement_chain_id: u64,
        now: i64,
    ) -> Result<bool, StoreError> {
        let id = id.clone();
        let receipt = receipt.map(|(json, seq)| (json.to_owned(), seq));
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    let q = Stmt::new(
                        tx.backend(),
                        "UPDATE identity_attestations SET relayed = $2, receipt = COALESCE($3, receipt), \
                         receipt_sequence = COALESCE($4, receipt_sequence) WHERE id = $1 AND relayed < $2"
                            .into(),
                    )
                    .bind(id.as_str())
                    .bind(step.level())
                    .bind(receipt.as_ref().map(|(json, _)| json.as_str()))
                    .bind(
                        receipt
                            .as_ref()
                            .map(|(_, seq)| i64::try_from(*seq).unwrap_or(i64::MAX)),
                    );
                    let updated = tx.execute(&q).await? == 1;
                    if updated && receipt.is_some() {
                        let q = Stmt::new(
                            tx.backend(),
                            "SELECT mode FROM identity_attestations WHERE id = $1".into(),
                        )
                        .bind(id.as_str());
                        let mode = tx.fetch_one(&q).await?.string("mode")?;
                        let mode = crate::ids::Mode::parse(&mode)
                            .ok_or_else(|| StoreError::Corrupt(format!("mode {mode:?}")))?;
                        outbox::enqueue(
                            &mut tx,
                            &Intent::Attestation(id.clone()),
                            step.work(),
                            settlement_chain_id,
                            mode,
                            now,
                        )
                        .await?;
                    }
                    Ok(updated)
                })
            })
            .await
    }

    /// The signed receipt (JSON) attestation `id` has for the mirror, unless the mirror
    /// recorded it (or a later one) already.
    pub async fn receipt_to_record(self, id: &str) -> Result<Option<String>, StoreError> {
        let q = self
            .0
            .stmt(
                "SELECT receipt FROM identity_attestations WHERE id = $1 AND receipt IS NOT NULL \
                 AND (mirrored_sequence IS NULL OR mirrored_sequence < receipt_sequence)",
            )
            .bind(id);
        let row = self.0.fetch_optional(&q).await?;
        row.map(|r| r.string("receipt")).transpose()
    }

    /// Whether wallet `recipient` (checksummed) holds, in `mode` at `now`, an active and
    /// unexpired attestation of schema `schema_uid` whose receipt the settlement chain's
    /// mirror recorded: what a mandate's identity requirement asks, as the chain will.
    pub async fn holds(
        self,
        mode: crate::ids::Mode,
        recipient: &str,
        schema_uid: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        let q = self
            .0
            .stmt(
                "SELECT 1 AS one FROM identity_attestations WHERE mode = $1 AND recipient = $2 \
                 AND schema_uid = $3 AND status = 'active' AND (expires_at IS NULL OR expires_at > $4) \
                 AND mirrored_sequence IS NOT NULL AND mirrored_sequence >= receipt_sequence LIMIT 1",
            )
            .bind(mode.as_str())
            .bind(recipient)
            .bind(schema_uid)
            .bind(now);
        Ok(self.0.fetch_optional(&q).await?.is_some())
    }
}

/// Whether `status` is one an attestation can be revoked from (queued or on chain).
pub fn revocable(status: AttestationStatus) -> bool {
    matches!(
        status,
        AttestationStatus::Pending | AttestationStatus::Active
    )
}

/// What the fate of an attestation's transaction does to it, inside the caller's
/// transaction (see [`crate::journal::apply_fates_in`], the only caller): one still
/// `pending` whose attest succeeded (→ `active`, with its hash) or was reverted or refused
/// with no other live transaction (→ `failed`); one whose revoke succeeded (→ `revoked`);
/// and a mirror's record that succeeded marks its latest receipt mirrored (not a status:
/// the settlement chain's view, which the API's identity checks require). Whether it
/// moved is not asked: a fate recorded again changes nothing.
pub(crate) async fn fate_in(
    conn: &mut impl Exec,
    kind: AttestationTx,
    fate: TxStatus,
    hash: &str,
    intent: &Intent,
    now: i64,
) -> Result<(), StoreError> {
    let Intent::Attestation(id) = intent else {
        // Never journaled so: an attestation's transaction carries the attestation.
        return Ok(());
    };
    let id = id.as_str();
    match (kind, fate.fate()) {
        (AttestationTx::Attest, Fate::Succeeded) => {
            move_attestation_in(conn, id, AttestationStatus::Active, Some(hash), "", now).await?;
        }
        (AttestationTx::Attest, Fate::Failed) => {
            let live = NO_LIVE_TRANSACTION;
            move_attestation_in(conn, id, AttestationStatus::Failed, None, live, now).await?;
        }
        (AttestationTx::RevokeAttestation, Fate::Succeeded) => {
            move_attestation_in(conn, id, AttestationStatus::Revoked, None, "", now).await?;
        }
        (AttestationTx::MirrorAttested | AttestationTx::MirrorRevoked, Fate::Succeeded) => {
            let mut q = Stmt::new(
                conn.backend(),
                "UPDATE identity_attestations SET mirrored_sequence = receipt_sequence \
                 WHERE id = $1 AND receipt_sequence IS NOT NULL \
                 AND (mirrored_sequence IS NULL OR mirrored_sequence < receipt_sequence)"
                    .to_string(),
            );
            q.push(id);
            conn.execute(&q).await?;
        }
        // A revoke or a mirror's record that failed changes nothing.
        (
            AttestationTx::Attest
            | AttestationTx::RevokeAttestation
            | AttestationTx::MirrorAttested
            | AttestationTx::MirrorRevoked,
            _,
        ) => {}
    }
    Ok(())
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
    q.push(id)
        .push(to.as_str())
        .push(tx_hash)
        .push(revoked_at)
        .push(now);
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
