//! The outbound transaction journal and idempotency records. A journaled transaction
//! carries its intents ([`Intent`]): stored as a JSON array of their text in
//! `chain_txs.intents` and one `chain_tx_intents` row each, converted to and from text only
//! here, at the SQL.

use crate::agentic::{
    Guard, KeyStatus, MandateStatus, PullChange, change_pulls_in, move_key_in, move_mandate_in,
};
use crate::db::{Store, StoreError};
use crate::exec::{Exec, Record, Stmt};
use openrail_domain::PullId;
pub use openrail_domain::journal::{Intent, TxKind, TxStatus};

/// Idempotency keys of API requests (`store.idempotency()`).
#[derive(Debug, Clone, Copy)]
pub struct Idempotency<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on idempotency keys of API requests ([`Idempotency`]).
    pub fn idempotency(&self) -> Idempotency<'_> {
        Idempotency(self)
    }
}

/// The journal of signed transactions: recording them, their fates and the chain watcher's cursor (`store.journal()`).
#[derive(Debug, Clone, Copy)]
pub struct Journal<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on the journal of signed transactions ([`Journal`]).
    pub fn journal(&self) -> Journal<'_> {
        Journal(self)
    }
}

/// What an `Idempotency-Key` lookup found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdempotencyBegin {
    /// First use: the request runs; call [`Idempotency::finish`] with its response.
    Started,
    /// Same key, same request, finished: replay this response.
    Replay {
        /// HTTP status.
        status: u16,
        /// Body.
        body: String,
    },
    /// Same key, another request.
    Mismatch,
    /// Same key, the first request still running.
    InProgress,
    /// Same key, same request, whose process died while running it after creating the
    /// object at this API path: answer with that object as it is now (or, if it was never
    /// created, [`Idempotency::restart`] and run the request again).
    Recover {
        /// The object's path, e.g. `/v1/debit-pulls/pull_…`.
        resource: String,
    },
}

/// A journaled transaction whose fate is not known (see [`Journal::unsettled`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsettledTx {
    /// Operator nonce.
    pub nonce: u64,
    /// 0x hash.
    pub hash: String,
    /// 0x EIP-2718 bytes.
    pub raw: String,
    /// What it does.
    pub kind: TxKind,
    /// The intents it carries.
    pub intents: Vec<Intent>,
}

/// Counts of a chain's journal by status (see [`Journal::summary`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JournalSummary {
    /// Fate not known yet.
    pub signed: u64,
    /// Mined (succeeded or reverted).
    pub mined: u64,
    /// Distinct nonces of the mined ones (summed per status).
    pub mined_nonces: u64,
    /// Refused by the node.
    pub rejected: u64,
    /// Replaced by another variant of the same work.
    pub replaced: u64,
}

/// Idempotency records are kept this long.
pub const IDEMPOTENCY_TTL_MS: i64 = 24 * 3600 * 1000;

/// Mandates canceled and session keys revoked on chain in a range of blocks, by their
/// on-chain ids (0x bytes32): the watcher records them whoever sent them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OnchainEnds {
    /// `MandateCanceled` ids.
    pub mandates_canceled: Vec<String>,
    /// `SessionKeyRevoked` ids.
    pub keys_revoked: Vec<String>,
}

/// How often `begin_idempotency` claims again when the claim in its way vanishes.
const IDEMPOTENCY_CLAIM_ATTEMPTS: usize = 5;

impl Journal<'_> {
    /// Persists a signed transaction (and its intents) before broadcast; with a `fence`
    /// (lease name, holder), only while that lease is held and unexpired, checked in the
    /// same statement. Returns whether it was recorded; `false` means the caller lost the
    /// lease and must not broadcast.
    #[allow(clippy::too_many_arguments)]
    pub async fn record(
        self,
        chain_id: u64,
        nonce: u64,
        hash: &str,
        raw: &str,
        kind: TxKind,
        intents: &[Intent],
        fence: Option<(&str, &str)>,
        now: i64,
    ) -> Result<bool, StoreError> {
        let (lease, holder) = fence.unwrap_or_default();
        self.0
            .record_in_group(SignedRow {
                chain_id,
                nonce,
                hash: hash.to_string(),
                raw: raw.to_string(),
                kind,
                intents: intents.to_vec(),
                lease: lease.to_string(),
                holder: holder.to_string(),
                now,
            })
            .await
    }

    /// Journaled transactions of `chain_id` still `signed` (fate unknown), by nonce (a
    /// nonce has one row per signed variant).
    pub async fn unsettled(self, chain_id: u64) -> Result<Vec<UnsettledTx>, StoreError> {
        let q = self
            .0
            .stmt(
                "SELECT nonce, hash, raw, kind, intents FROM chain_txs WHERE chain_id = $1 AND status = 'signed' \
                 ORDER BY nonce, created_at",
            )
            .bind(chain_id as i64);
        let rows = self.0.fetch(&q).await?;
        rows.iter()
            .map(|r| {
                let kind = r.string("kind")?;
                Ok(UnsettledTx {
                    nonce: r.integer("nonce")? as u64,
                    hash: r.string("hash")?,
                    raw: r.string("raw")?,
                    kind: TxKind::parse(&kind)
                        .ok_or_else(|| StoreError::Corrupt(format!("transaction kind {kind:?}")))?,
                    intents: r.intents("intents")?,
                })
            })
            .collect()
    }

    /// Number of journaled transactions carrying `intent` (tests prove it is never two).
    pub async fn count_for_intent(self, intent: &Intent) -> Result<u64, StoreError> {
        let q = self
            .0
            .stmt("SELECT COUNT(*) AS n FROM chain_tx_intents WHERE intent = $1")
            .bind(intent);
        let row = self.0.fetch_one(&q).await?;
        Ok(row.integer("n")? as u64)
    }

    /// How many journaled transactions of `chain_id` stand at each status, and how many
    /// distinct nonces the mined ones use (tests compare it with the operator's nonce).
    pub async fn summary(self, chain_id: u64) -> Result<JournalSummary, StoreError> {
        let q = self
            .0
            .stmt(
                "SELECT status, COUNT(*) AS n, COUNT(DISTINCT nonce) AS nonces FROM chain_txs \
                 WHERE chain_id = $1 GROUP BY status",
            )
            .bind(chain_id as i64);
        let rows = self.0.fetch(&q).await?;
        let mut summary = JournalSummary::default();
        for r in rows {
            let status = r.string("status")?;
            let (count, nonces) = (r.integer("n")? as u64, r.integer("nonces")? as u64);
            match TxStatus::parse(&status) {
                Some(TxStatus::Signed) => summary.signed = count,
                Some(TxStatus::Succeeded | TxStatus::Reverted) => {
                    summary.mined += count;
                    summary.mined_nonces += nonces;
                }
                Some(TxStatus::Rejected) => summary.rejected = count,
                Some(TxStatus::Replaced) => summary.replaced = count,
                None => return Err(StoreError::Corrupt(format!("journal status {status}"))),
            }
        }
        Ok(summary)
    }
}

impl Idempotency<'_> {
    /// Claims an idempotency key at `now` for a request with `fingerprint`, run by the process
    /// `node_id` (alive while it holds the lease [`crate::lease::node_lease`]). A claim of
    /// a dead process is recovered: see [`IdempotencyBegin::Recover`]; one that created
    /// nothing is taken over and the request runs again.
    pub async fn begin(
        self,
        api_key_id: &str,
        key: &str,
        fingerprint: &str,
        node_id: &str,
        now: i64,
    ) -> Result<IdempotencyBegin, StoreError> {
        let q = self
            .0
            .stmt("DELETE FROM idempotency_keys WHERE api_key_id = $1 AND idempotency_key = $2 AND created_at < $3")
            .bind(api_key_id)
            .bind(key)
            .bind(now - IDEMPOTENCY_TTL_MS);
        self.0.execute(q).await?;
        // The claim that blocked the insert may be abandoned (deleted after a 5xx) before it
        // is read: then claim again, rather than fail on a row that is gone.
        let mut found = None;
        for _ in 0..IDEMPOTENCY_CLAIM_ATTEMPTS {
            let q = self
                .0
                .stmt(
                    "INSERT INTO idempotency_keys (api_key_id, idempotency_key, fingerprint, status, created_at, node_id) \
                     VALUES ($1, $2, $3, 'in_flight', $4, $5) ON CONFLICT DO NOTHING",
                )
                .bind(api_key_id)
                .bind(key)
                .bind(fingerprint)
                .bind(now)
                .bind(node_id);
            if self.0.execute(q).await? == 1 {
                return Ok(IdempotencyBegin::Started);
            }
            let q = self
                .0
                .stmt(
                    "SELECT fingerprint, status, response_status, response_body, node_id, resource, \
                     (SELECT COUNT(*) FROM leases l WHERE l.name = 'node:' || idempotency_keys.node_id \
                      AND l.expires_at > $3) AS holder_alive \
                     FROM idempotency_keys WHERE api_key_id = $1 AND idempotency_key = $2",
                )
                .bind(api_key_id)
                .bind(key)
                .bind(now);
            found = self.0.fetch_optional(&q).await?;
            if found.is_some() {
                break;
            }
        }
        // Claimed and abandoned again and again meanwhile: another request is busy with it.
        let Some(row) = found else {
            return Ok(IdempotencyBegin::InProgress);
        };
        let stored = row.string("fingerprint")?;
        let status = row.string("status")?;
        let holder = row.text("node_id")?;
        let resource = row.text("resource")?;
        let holder_alive = row.integer("holder_alive")? > 0;
        if stored != fingerprint {
            return Ok(IdempotencyBegin::Mismatch);
        }
        if status != "in_flight" {
            return Ok(IdempotencyBegin::Replay {
                status: row.int("response_status")?.unwrap_or(500) as u16,
                body: row.text("response_body")?.unwrap_or_default(),
            });
        }
        // A claim from before claims named their process has no holder to check: it stays
        // in progress until it expires, as before.
        let Some(holder) = holder.filter(|_| !holder_alive) else {
            return Ok(IdempotencyBegin::InProgress);
        };
        if let Some(resource) = resource {
            return Ok(IdempotencyBegin::Recover { resource });
        }
        // It created nothing: take it over (only one of several retries does).
        let taken = self
            .take_over_claim(
                api_key_id,
                key,
                node_id,
                "node_id = $5 AND resource IS NULL",
                &holder,
                now,
            )
            .await?;
        Ok(if taken {
            IdempotencyBegin::Started
        } else {
            IdempotencyBegin::InProgress
        })
    }
}

impl Idempotency<'_> {
    /// Takes an in-flight claim over for `node_id`, clearing its link, where `condition`
    /// (on `$5` = `value`) still holds; returns whether this caller got it (of several
    /// retries racing, one does).
    async fn take_over_claim(
        self,
        api_key_id: &str,
        key: &str,
        node_id: &str,
        condition: &'static str,
        value: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        let q = self
            .0
            .stmt(format!(
                "UPDATE idempotency_keys SET node_id = $3, resource = NULL, created_at = $4 \
                 WHERE api_key_id = $1 AND idempotency_key = $2 AND status = 'in_flight' AND {condition}"
            ))
            .bind(api_key_id)
            .bind(key)
            .bind(node_id)
            .bind(now)
            .bind(value);
        Ok(self.0.execute(q).await? == 1)
    }
    /// After [`IdempotencyBegin::Recover`] found no object at `resource` (the process died
    /// between linking and creating it): takes the claim over for `node_id` so the request
    /// runs again (the claim dated `now`); returns whether this caller got it.
    pub async fn restart(
        self,
        api_key_id: &str,
        key: &str,
        resource: &str,
        node_id: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        self.take_over_claim(api_key_id, key, node_id, "resource = $5", resource, now)
            .await
    }

    /// Links a claimed key to the object its request is about to create (its API path),
    /// before the object is written: after a crash, a retry gets that object.
    pub async fn link(self, api_key_id: &str, key: &str, resource: &str) -> Result<(), StoreError> {
        let q = self
            .0
            .stmt(
                "UPDATE idempotency_keys SET resource = $3 \
                 WHERE api_key_id = $1 AND idempotency_key = $2 AND status = 'in_flight'",
            )
            .bind(api_key_id)
            .bind(key)
            .bind(resource);
        self.0.execute(q).await?;
        Ok(())
    }

    /// Stores the response of a claimed idempotency key.
    pub async fn finish(
        self,
        api_key_id: &str,
        key: &str,
        status: u16,
        body: &str,
    ) -> Result<(), StoreError> {
        let q = self
            .0
            .stmt(
                "UPDATE idempotency_keys SET status = 'done', response_status = $3, response_body = $4 \
                 WHERE api_key_id = $1 AND idempotency_key = $2",
            )
            .bind(api_key_id)
            .bind(key)
            .bind(i64::from(status))
            .bind(body);
        self.0.execute(q).await?;
        Ok(())
    }

    /// Releases a claimed key without a stored response (the request failed on our side
    /// before doing anything), so a retry runs again.
    pub async fn abandon(self, api_key_id: &str, key: &str) -> Result<(), StoreError> {
        let q = self
            .0
            .stmt("DELETE FROM idempotency_keys WHERE api_key_id = $1 AND idempotency_key = $2 AND status = 'in_flight'")
            .bind(api_key_id)
            .bind(key);
        self.0.execute(q).await?;
        Ok(())
    }
}

/// The relayer's position on a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainCursor {
    /// Last block applied.
    pub block_number: u64,
    /// Its hash.
    pub block_hash: String,
}

impl Journal<'_> {
    /// The kind and intents of a journaled transaction.
    pub async fn intents(
        self,
        chain_id: u64,
        hash: &str,
    ) -> Result<Option<(TxKind, Vec<Intent>)>, StoreError> {
        let q = self
            .0
            .stmt("SELECT kind, intents FROM chain_txs WHERE chain_id = $1 AND hash = $2")
            .bind(chain_id as i64)
            .bind(hash);
        let row = self.0.fetch_optional(&q).await?;
        row.map(|r| {
            let kind = r.string("kind")?;
            let kind = TxKind::parse(&kind)
                .ok_or_else(|| StoreError::Corrupt(format!("transaction kind {kind:?}")))?;
            Ok((kind, r.intents("intents")?))
        })
        .transpose()
    }

    /// Where the relayer stands on `chain_id`.
    pub async fn chain_cursor(self, chain_id: u64) -> Result<Option<ChainCursor>, StoreError> {
        let q = self
            .0
            .stmt("SELECT block_number, block_hash FROM chain_cursors WHERE chain_id = $1")
            .bind(chain_id as i64);
        let row = self.0.fetch_optional(&q).await?;
        row.map(|r| {
            Ok(ChainCursor {
                block_number: r.integer("block_number")? as u64,
                block_hash: r.string("block_hash")?,
            })
        })
        .transpose()
    }

    /// Applies the effects of the events up to `cursor` and moves the cursor there, in one
    /// transaction, at `now` (unix ms): after a crash either both happened or neither. Returns how many pulls
    /// changed (pulls already resolved are left as they are).
    pub async fn commit_chain_events(
        self,
        chain_id: u64,
        cursor: &ChainCursor,
        pulls: &[(PullId, crate::agentic::PullResolution)],
        mined: &[(String, u64)],
        ended: &OnchainEnds,
        now: i64,
    ) -> Result<usize, StoreError> {
        let cursor = cursor.clone();
        let pulls = pulls.to_vec();
        let mined = mined.to_vec();
        let ended = ended.clone();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    commit_chain_events_in(&mut tx, chain_id, &cursor, &pulls, &mined, &ended, now)
                        .await
                })
            })
            .await
    }

    /// Undoes what transaction `hash` did when a reorganisation took it out of the chain
    /// before the watcher's depth (the submitter noticed its receipt gone): it goes back to
    /// `signed` (fate unknown) and the pulls it resolved back to `pending`, with a
    /// `debit_pull.reorged` event each. Returns how many pulls went back.
    pub async fn unmine(self, chain_id: u64, hash: &str, now: i64) -> Result<usize, StoreError> {
        let hash = hash.to_owned();
        self.0
            .write(move |mut tx| {
                Box::pin(async move { unmine_in(&mut tx, chain_id, &hash, now).await })
            })
            .await
    }

    /// Undoes what the blocks from `from_block` on did, after a reorganisation removed
    /// some of them, in one database transaction: every journaled transaction mined there
    /// goes back to `signed` (fate unknown), the pulls it resolved go back to `pending`,
    /// and the cursor moves to `cursor` (the block before `from_block`), so a crash never
    /// leaves effects undone but not re-scanned. Returns the transactions (hash, raw) for
    /// the caller to look up or rebroadcast, and how many pulls went back to `pending`.
    pub async fn rewind(
        self,
        chain_id: u64,
        from_block: u64,
        cursor: &ChainCursor,
        now: i64,
    ) -> Result<(Vec<(String, String)>, usize), StoreError> {
        let cursor = cursor.clone();
        self.0
            .write(move |mut tx| {
                Box::pin(
                    async move { rewind_in(&mut tx, chain_id, from_block, &cursor, now).await },
                )
            })
            .await
    }
}

/// [`Journal::commit_chain_events`] inside the caller's transaction.
async fn commit_chain_events_in(
    conn: &mut impl Exec,
    chain_id: u64,
    cursor: &ChainCursor,
    pulls: &[(PullId, crate::agentic::PullResolution)],
    mined: &[(String, u64)],
    ended: &OnchainEnds,
    now: i64,
) -> Result<usize, StoreError> {
    let mut changed = 0;
    for (id, resolution) in pulls {
        changed +=
            usize::from(crate::agentic::resolve_pull_in(conn, id.as_str(), resolution, now).await?);
    }
    // Cancels and revokes the chain shows, whoever sent them (the payer can, alone).
    // Not undone by `rewind_chain`: a reorganisation that drops a payer's own cancel
    // leaves the API showing `canceled` while the chain has it active (pulls on it
    // would still be declined here, off chain). Rare; an operator can cancel again.
    for onchain_id in &ended.mandates_canceled {
        let q = Stmt::new(
            conn.backend(),
            "SELECT id FROM mandates WHERE chain_id = $1 AND onchain_id = $2".into(),
        )
        .bind(chain_id as i64)
        .bind(onchain_id);
        let ids = conn.strings(&q, "id").await?;
        for id in ids {
            move_mandate_in(conn, &id, MandateStatus::Canceled, None, Guard::None, now).await?;
        }
    }
    for onchain_id in &ended.keys_revoked {
        let q = Stmt::new(
            conn.backend(),
            "SELECT id FROM session_keys WHERE onchain_id = $1".into(),
        )
        .bind(onchain_id);
        let ids = conn.strings(&q, "id").await?;
        for id in ids {
            move_key_in(conn, &id, KeyStatus::Revoked, None, Guard::None, now).await?;
        }
    }
    // Transactions seen emitting events succeeded in that block; this settles journal
    // entries whose fate nobody else is waiting for (rebroadcast after a reorg).
    let signed = Some(TxStatus::Signed);
    for (hash, block) in mined {
        // Its nonce's other variants (other fees, same work) can never be mined.
        let q = Stmt::new(
            conn.backend(),
            "SELECT hash FROM chain_txs WHERE chain_id = $1 AND status = 'signed' AND hash <> $2 \
             AND nonce = (SELECT nonce FROM chain_txs WHERE chain_id = $1 AND hash = $2)"
                .into(),
        )
        .bind(chain_id as i64)
        .bind(hash);
        let others = conn.strings(&q, "hash").await?;
        let mut marks = vec![(
            chain_id,
            hash.as_str(),
            TxStatus::Succeeded,
            Some(*block),
            signed,
        )];
        marks.extend(
            others
                .iter()
                .map(|h| (chain_id, h.as_str(), TxStatus::Replaced, None, signed)),
        );
        mark_txs_in(conn, &marks, now).await?;
    }
    let hashes: Vec<&str> = mined.iter().map(|(hash, _)| hash.as_str()).collect();
    apply_fates_in(conn, &hashes, now).await?;
    set_cursor_in(conn, chain_id, cursor, now).await?;
    Ok(changed)
}

/// Moves the cursor of `chain_id` to `cursor` (its first, when it has none) inside the
/// caller's transaction.
async fn set_cursor_in(
    conn: &mut impl Exec,
    chain_id: u64,
    cursor: &ChainCursor,
    now: i64,
) -> Result<(), StoreError> {
    let q = Stmt::new(
        conn.backend(),
        "INSERT INTO chain_cursors (chain_id, block_number, block_hash, updated_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (chain_id) DO UPDATE SET block_number = excluded.block_number, \
         block_hash = excluded.block_hash, updated_at = excluded.updated_at"
            .into(),
    )
    .bind(chain_id as i64)
    .bind(cursor.block_number as i64)
    .bind(&cursor.block_hash)
    .bind(now);
    conn.execute(&q).await?;
    Ok(())
}

/// [`Journal::rewind`] inside the caller's transaction.
async fn rewind_in(
    conn: &mut impl Exec,
    chain_id: u64,
    from_block: u64,
    cursor: &ChainCursor,
    now: i64,
) -> Result<(Vec<(String, String)>, usize), StoreError> {
    let q = Stmt::new(
        conn.backend(),
        "SELECT hash, raw FROM chain_txs WHERE chain_id = $1 AND block_number >= $2 \
         AND status IN ('succeeded', 'reverted') ORDER BY nonce"
            .into(),
    )
    .bind(chain_id as i64)
    .bind(from_block as i64);
    let txs: Vec<(String, String)> = conn
        .fetch(&q)
        .await?
        .iter()
        .map(|r| Ok((r.string("hash")?, r.string("raw")?)))
        .collect::<Result<_, StoreError>>()?;
    let mut pulls = 0;
    for (hash, _) in &txs {
        pulls += unmine_in(conn, chain_id, hash, now).await?;
    }
    set_cursor_in(conn, chain_id, cursor, now).await?;
    Ok((txs, pulls))
}

/// Puts mined transaction `hash` back to `signed` and the pulls it resolved back to
/// `pending` (with their events), inside the caller's transaction; returns how many pulls.
async fn unmine_in(
    conn: &mut impl Exec,
    chain_id: u64,
    hash: &str,
    now: i64,
) -> Result<usize, StoreError> {
    mark_txs_in(conn, &[(chain_id, hash, TxStatus::Signed, None, None)], now).await?;
    let q = Stmt::new(
        conn.backend(),
        "SELECT id FROM debit_pulls WHERE tx_hash = $1 AND status IN ('authorized', 'declined')"
            .into(),
    )
    .bind(hash);
    let ids = conn.strings(&q, "id").await?;
    let changes: Vec<(&str, PullChange<'_>)> = ids
        .iter()
        .map(|id| (id.as_str(), PullChange::Reorg))
        .collect();
    let (moved, _) = change_pulls_in(conn, &changes, Guard::None, now).await?;
    Ok(moved.into_iter().filter(|m| *m).count())
}

/// A journaled transaction's new status: `(chain_id, hash, status, block, only_from)`;
/// with `only_from`, only a transaction still in that status moves.
pub(crate) type TxMark<'a> = (u64, &'a str, TxStatus, Option<u64>, Option<TxStatus>);

/// **The one place a journaled transaction's status changes after it was recorded**,
/// inside the caller's transaction: each mark sets its status and block (back to `signed`:
/// its fate unknown again and not yet applied), a few statements for many. Unlike an
/// object's, a transaction's status follows what the chain says, in any order (a receipt,
/// a reorganisation, a variant mined after a reorg): no transition table.
pub(crate) async fn mark_txs_in(
    conn: &mut impl Exec,
    marks: &[TxMark<'_>],
    now: i64,
) -> Result<(), StoreError> {
    for chunk in marks.chunks(400) {
        let mut q = Stmt::new(
            conn.backend(),
            format!(
                "UPDATE chain_txs SET status = v.column3, block_number = v.column4, \
                 applied = CASE WHEN v.column3 = 'signed' THEN 0 ELSE chain_txs.applied END, \
                 mined_at = CASE WHEN v.column3 IN ('succeeded', 'reverted') \
                 THEN COALESCE(chain_txs.mined_at, v.column6) ELSE NULL END \
                 FROM (VALUES {}) AS v WHERE chain_txs.chain_id = v.column1 AND chain_txs.hash = v.column2 \
                 AND (v.column5 IS NULL OR chain_txs.status = v.column5)",
                crate::sql::placeholders(chunk.len(), 6)
            ),
        );
        for (chain_id, hash, status, block, only_from) in chunk {
            q.push(*chain_id as i64)
                .push(hash)
                .push(status.as_str())
                .push(block.map(|b| b as i64))
                .push(only_from.map(TxStatus::as_str))
                .push(now);
        }
        conn.execute(&q).await?;
    }
    Ok(())
}

/// **The one place a journaled transaction's fate takes effect**, inside the transaction
/// that records the fate (the group commit's, for a receipt; the watcher's, for a
/// transaction seen in a block): for each of `hashes` whose fate is known and not yet
/// applied, the effect on every object it carries ([`fate_effect_in`]),
/// its work closed (nothing is left to send for it), and the fate marked applied — so a
/// fate recorded twice (a receipt and a rescan) takes effect once, and a reorganisation,
/// which puts the transaction back to `signed`, lets its next fate take effect again.
pub(crate) async fn apply_fates_in(
    conn: &mut impl Exec,
    hashes: &[&str],
    now: i64,
) -> Result<(), StoreError> {
    let backend = conn.backend();
    for chunk in hashes.chunks(500) {
        let known = |sql: &str| {
            let mut q = Stmt::new(
                backend,
                format!(
                    "{sql} WHERE applied = 0 AND status <> 'signed' AND hash IN ({})",
                    crate::sql::numbered(1, chunk.len())
                ),
            );
            for hash in chunk {
                q.push(hash);
            }
            q
        };
        let rows = conn
            .fetch(&known("SELECT hash, kind, status, intents FROM chain_txs"))
            .await?;
        // The work each transaction leaves nothing to send for, closed per kind at once.
        let mut closed: Vec<(crate::outbox::WorkKind, Vec<Intent>)> = Vec::new();
        for r in &rows {
            let (hash, kind, status) = (r.string("hash")?, r.string("kind")?, r.string("status")?);
            let kind = TxKind::parse(&kind)
                .ok_or_else(|| StoreError::Corrupt(format!("transaction kind {kind:?}")))?;
            let fate = TxStatus::parse(&status)
                .ok_or_else(|| StoreError::Corrupt(format!("journal status {status:?}")))?;
            if fate == TxStatus::Replaced {
                // Another transaction carries its work: nothing follows from this one.
                continue;
            }
            let intents = r.intents("intents")?;
            for intent in &intents {
                fate_effect_in(conn, kind, fate, &hash, intent, now).await?;
            }
            if let Some(work) = crate::outbox::WorkKind::sending(kind) {
                match closed.iter_mut().find(|(k, _)| *k == work) {
                    Some((_, all)) => all.extend(intents),
                    None => closed.push((work, intents)),
                }
            }
        }
        for (work, intents) in &closed {
            crate::outbox::close_all(conn, intents, *work, now).await?;
        }
        if !rows.is_empty() {
            conn.execute(&known("UPDATE chain_txs SET applied = 1"))
                .await?;
        }
    }
    Ok(())
}

/// What one journaled transaction's fate does to the object `intent` it carries: its
/// object's own rule, in the object's store handle (each on-chain object has one arm here;
/// a kind without its effect does not compile).
async fn fate_effect_in(
    conn: &mut impl Exec,
    kind: TxKind,
    fate: TxStatus,
    hash: &str,
    intent: &Intent,
    now: i64,
) -> Result<(), StoreError> {
    match kind {
        TxKind::Mandate(k) => {
            crate::agentic::mandate_fate_in(conn, k, fate, hash, intent, now).await
        }
        TxKind::SessionKey(k) => {
            crate::agentic::key_fate_in(conn, k, fate, hash, intent, now).await
        }
        TxKind::Pull(k) => crate::agentic::pull_fate_in(conn, k, fate, intent, now).await,
        TxKind::Attestation(k) => {
            crate::attestations::fate_in(conn, k, fate, hash, intent, now).await
        }
        // A payment's legs and a pull's payout are recorded by the engine's payment
        // driver, which reads their fates; a cancellation carries no intent.
        TxKind::Payment(_) | TxKind::CancelNonce => Ok(()),
    }
}

/// A signed transaction to journal (see [`Journal::record`]).
#[derive(Debug, Clone)]
pub(crate) struct SignedRow {
    pub(crate) chain_id: u64,
    pub(crate) nonce: u64,
    pub(crate) hash: String,
    pub(crate) raw: String,
    pub(crate) kind: TxKind,
    pub(crate) intents: Vec<Intent>,
    /// The lease (name, holder) it is fenced by; empty names: none.
    pub(crate) lease: String,
    pub(crate) holder: String,
    pub(crate) now: i64,
}

/// Journals `t` inside the caller's transaction when its lease is still held (or it has
/// none), with one `chain_tx_intents` row per intent; returns whether it was journaled.
pub(crate) async fn record_tx_in(conn: &mut impl Exec, t: &SignedRow) -> Result<bool, StoreError> {
    let mut q = Stmt::new(
        conn.backend(),
        "INSERT INTO chain_txs (chain_id, nonce, hash, raw, kind, intents, status, created_at) \
         SELECT CAST($1 AS BIGINT), CAST($2 AS BIGINT), CAST($3 AS TEXT), CAST($4 AS TEXT), \
         CAST($5 AS TEXT), CAST($6 AS TEXT), 'signed', CAST($7 AS BIGINT) \
         WHERE CAST($8 AS TEXT) = '' \
         OR EXISTS (SELECT 1 FROM leases WHERE name = $8 AND holder = $9 AND expires_at > $7)"
            .to_string(),
    );
    q.push(t.chain_id as i64)
        .push(t.nonce as i64)
        .push(&t.hash)
        .push(&t.raw)
        .push(t.kind.as_str())
        .push(serde_json::to_string(&t.intents).expect("intents serialize as strings"))
        .push(t.now)
        .push(&t.lease)
        .push(&t.holder);
    if conn.execute(&q).await? != 1 {
        return Ok(false);
    }
    for chunk in t.intents.chunks(500) {
        let mut q = Stmt::new(
            conn.backend(),
            format!(
                "INSERT INTO chain_tx_intents (intent, hash) VALUES {} ON CONFLICT DO NOTHING",
                crate::sql::placeholders(chunk.len(), 2)
            ),
        );
        for intent in chunk {
            q.push(intent).push(&t.hash);
        }
        conn.execute(&q).await?;
    }
    Ok(true)
}
