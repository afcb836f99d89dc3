//! Identity: Openrail as an issuer of W3C Verifiable Credentials (its key per mode, the
//! credentials it issued with their slot in a Bitstring Status List, revocation) and the
//! single-use challenges of presentation verification. The credentials themselves are
//! not kept: their digest, type, subject and status slot are (no personal data).

use rand::Rng;
use sqlx::Row;
use sqlx::any::AnyRow;

use crate::agentic::{Page, Scope};
use crate::db::{Backend, Store, StoreError};
use crate::ids::{AccountId, Mode, SessionKeyId, random_id};

/// Openrail's issuer: agent credentials, issued credentials, status lists and presentation challenges (`store.identity()`).
#[derive(Debug, Clone, Copy)]
pub struct Identity<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on Openrail's issuer ([`Identity`]).
    pub fn identity(&self) -> Identity<'_> {
        Identity(self)
    }
}

/// How many entries a status list has (the Bitstring Status List minimum, 16 KiB: large
/// enough that a list says nothing about which credential a verifier asks about).
pub const STATUS_LIST_LENGTH: u64 = 131_072;

/// A list takes new credentials until this many of its entries are used (random indexes
/// then rarely collide), then the mode's next list does.
const STATUS_LIST_FILL: u64 = STATUS_LIST_LENGTH / 2;

/// Openrail's issuer of a mode: its Ed25519 secret key (hex) and its DID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issuer {
    /// The 32-byte Ed25519 seed, hex.
    pub secret_key: String,
    /// `did:key:z6Mk…`
    pub did: String,
}

/// A credential Openrail issued (its record, not the credential).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedCredential {
    /// The credential's `id` (`urn:uuid:…`).
    pub id: String,
    /// Who asked for it.
    pub account_id: AccountId,
    /// Its mode.
    pub mode: Mode,
    /// Its most specific type (`AgentCredential`, …; `VerifiableCredential` alone if none).
    pub credential_type: String,
    /// `credentialSubject.id`, when it has one.
    pub subject: Option<String>,
    /// SHA-256 of the signed credential's JCS form, hex (empty until signed).
    pub digest: String,
    /// Its status list.
    pub status_list_id: String,
    /// Its index in the list.
    pub status_index: u64,
    /// When it was revoked, unix ms.
    pub revoked_at: Option<i64>,
    /// Its `validUntil`, unix ms.
    pub valid_until: Option<i64>,
    /// Unix ms.
    pub created_at: i64,
}

/// A status list: its mode and length, and the indexes set (revoked credentials).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusList {
    /// `sl_…`
    pub id: String,
    /// Its mode.
    pub mode: Mode,
    /// Its purpose (`revocation`).
    pub purpose: String,
    /// How many entries.
    pub length: u64,
    /// The indexes whose bit is set, ascending.
    pub set: Vec<u64>,
}

const CREDENTIAL_COLS: &str = "id, account_id, mode, type, subject, digest, status_list_id, \
     status_index, revoked_at, valid_until, created_at";

fn credential_of(r: &AnyRow) -> Result<IssuedCredential, StoreError> {
    let mode: String = r.try_get("mode")?;
    Ok(IssuedCredential {
        id: r.try_get("id")?,
        account_id: r.try_get("account_id")?,
        mode: Mode::parse(&mode).ok_or_else(|| StoreError::Corrupt(format!("mode {mode:?}")))?,
        credential_type: r.try_get("type")?,
        subject: r.try_get("subject")?,
        digest: r.try_get("digest")?,
        status_list_id: r.try_get("status_list_id")?,
        status_index: r.try_get::<i64, _>("status_index")? as u64,
        revoked_at: r.try_get("revoked_at")?,
        valid_until: r.try_get("valid_until")?,
        created_at: r.try_get("created_at")?,
    })
}

/// What a new credential's record starts with (its digest follows once it is signed).
#[derive(Debug, Clone)]
pub struct NewCredential<'a> {
    /// The credential's `id` (`urn:uuid:…`).
    pub id: &'a str,
    /// Its most specific type.
    pub credential_type: &'a str,
    /// `credentialSubject.id`.
    pub subject: Option<&'a str>,
    /// Its `validUntil`, unix ms.
    pub valid_until: Option<i64>,
}

/// The AgentCredential Openrail issued for a session key (`agent_credentials`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentCredential {
    /// The key it binds.
    pub session_key_id: SessionKeyId,
    /// Its record in `identity_credentials` (the credential's `id`).
    pub credential_id: String,
    /// The signed credential, JSON.
    pub credential: String,
    /// Unix ms.
    pub created_at: i64,
}

/// What [`Identity::record_agent_credential`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentCredentialRecord {
    /// Recorded now: the key's first.
    New(AgentCredential),
    /// The key had one already (another request recorded it first, or it was recorded
    /// before the key stopped being live): that one.
    Existing(AgentCredential),
    /// The key is no longer active and unexpired, or its mandate no longer active:
    /// nothing recorded, and the credential's reserved record revoked.
    KeyNotLive,
}

fn agent_credential_of(r: &AnyRow) -> Result<AgentCredential, StoreError> {
    Ok(AgentCredential {
        session_key_id: r.try_get("session_key_id")?,
        credential_id: r.try_get("credential_id")?,
        credential: r.try_get("credential")?,
        created_at: r.try_get("created_at")?,
    })
}

impl Identity<'_> {
    /// The AgentCredential issued for session key `key` of `scope`, if one was.
    pub async fn agent_credential(
        self,
        scope: Scope<'_>,
        key: &SessionKeyId,
    ) -> Result<Option<AgentCredential>, StoreError> {
        let row = sqlx::query(
            "SELECT a.session_key_id, a.credential_id, a.credential, a.created_at \
             FROM agent_credentials a JOIN session_keys k ON k.id = a.session_key_id \
             WHERE a.session_key_id = $1 AND k.account_id = $2 AND k.mode = $3",
        )
        .bind(key)
        .bind(scope.account_id)
        .bind(scope.mode.as_str())
        .fetch_optional(self.0.writer())
        .await?;
        row.as_ref().map(agent_credential_of).transpose()
    }

    /// Records `credential` (signed JSON, its record `credential_id` reserved by
    /// [`Identity::reserve_credential`]) as the AgentCredential of session key `key`, when the
    /// key is still `active` and unexpired at `now` and its mandate `active`. Checked under
    /// the key's and the mandate's row locks (PostgreSQL: `FOR SHARE`; SQLite: the write
    /// transaction), so a revocation or cancellation either committed first — refused here,
    /// and the reserved record revoked — or waits for this one and then sees the record
    /// and revokes it (`store::agentic`, in the status change's transaction).
    pub async fn record_agent_credential(
        self,
        key: &SessionKeyId,
        credential_id: &str,
        credential: &str,
        now: i64,
    ) -> Result<AgentCredentialRecord, StoreError> {
        let mut tx = self.0.write_tx().await?;
        let lock = match self.0.backend() {
            Backend::Postgres => " FOR SHARE",
            Backend::Sqlite => "",
        };
        let row = sqlx::query(&format!(
            "SELECT k.status AS key_status, k.expires_at AS expires_at, m.status AS mandate_status \
             FROM session_keys k JOIN mandates m ON m.id = k.mandate_id WHERE k.id = $1{lock}"
        ))
        .bind(key)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(StoreError::NotFound)?;
        let key_status: String = row.try_get("key_status")?;
        let mandate_status: String = row.try_get("mandate_status")?;
        let expires_at: i64 = row.try_get("expires_at")?;
        let live = key_status == crate::agentic::KeyStatus::Active.as_str()
            && expires_at > now
            && mandate_status == crate::agentic::MandateStatus::Active.as_str();
        let existing = sqlx::query(
            "SELECT session_key_id, credential_id, credential, created_at FROM agent_credentials \
             WHERE session_key_id = $1",
        )
        .bind(key)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(row) = existing {
            tx.commit().await?;
            return Ok(AgentCredentialRecord::Existing(agent_credential_of(&row)?));
        }
        if !live {
            sqlx::query(
                "UPDATE identity_credentials SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL \
                 AND NOT EXISTS (SELECT 1 FROM agent_credentials WHERE credential_id = $1)",
            )
            .bind(credential_id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            return Ok(AgentCredentialRecord::KeyNotLive);
        }
        let inserted = sqlx::query(
            "INSERT INTO agent_credentials (session_key_id, credential_id, credential, created_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (session_key_id) DO NOTHING",
        )
        .bind(key)
        .bind(credential_id)
        .bind(credential)
        .bind(now)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        let row = sqlx::query(
            "SELECT session_key_id, credential_id, credential, created_at FROM agent_credentials \
             WHERE session_key_id = $1",
        )
        .bind(key)
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        let recorded = agent_credential_of(&row)?;
        Ok(if inserted {
            AgentCredentialRecord::New(recorded)
        } else {
            AgentCredentialRecord::Existing(recorded)
        })
    }

    /// Openrail's issuer for `mode`, made by `make` the first time it is asked for (two
    /// processes asking at once agree on the one stored first).
    pub async fn issuer(
        self,
        mode: Mode,
        make: impl FnOnce() -> Issuer,
        now: i64,
    ) -> Result<Issuer, StoreError> {
        let read = |r: AnyRow| -> Result<Issuer, StoreError> {
            Ok(Issuer {
                secret_key: r.try_get("secret_key")?,
                did: r.try_get("did")?,
            })
        };
        let row = sqlx::query("SELECT secret_key, did FROM identity_issuers WHERE mode = $1")
            .bind(mode.as_str())
            .fetch_optional(self.0.pool())
            .await?;
        if let Some(r) = row {
            return read(r);
        }
        let new = make();
        sqlx::query(
            "INSERT INTO identity_issuers (mode, secret_key, did, created_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (mode) DO NOTHING",
        )
        .bind(mode.as_str())
        .bind(&new.secret_key)
        .bind(&new.did)
        .bind(now)
        .execute(self.0.writer())
        .await?;
        let r = sqlx::query("SELECT secret_key, did FROM identity_issuers WHERE mode = $1")
            .bind(mode.as_str())
            .fetch_one(self.0.writer())
            .await?;
        read(r)
    }

    /// Reserves a status slot for a new credential of `scope` and records it (digest
    /// empty until [`Identity::seal_credential`]): a random free index of the mode's current
    /// revocation list, a new list when that one is half used. Returns the record, or
    /// `None` when a credential with this id exists already (of any account).
    pub async fn reserve_credential(
        self,
        scope: Scope<'_>,
        c: &NewCredential<'_>,
        now: i64,
    ) -> Result<Option<IssuedCredential>, StoreError> {
        let mut tx = self.0.write_tx().await?;
        let taken = sqlx::query("SELECT 1 AS one FROM identity_credentials WHERE id = $1")
            .bind(c.id)
            .fetch_optional(&mut *tx)
            .await?;
        if taken.is_some() {
            return Ok(None);
        }
        let current = sqlx::query(
            "SELECT l.id, (SELECT COUNT(*) FROM identity_credentials c WHERE c.status_list_id = l.id) AS used \
             FROM identity_status_lists l WHERE l.mode = $1 AND l.purpose = 'revocation' \
             ORDER BY l.created_at DESC, l.id DESC LIMIT 1",
        )
        .bind(scope.mode.as_str())
        .fetch_optional(&mut *tx)
        .await?;
        let list_id = match current {
            Some(r) if (r.try_get::<i64, _>("used")? as u64) < STATUS_LIST_FILL => {
                r.try_get::<String, _>("id")?
            }
            _ => {
                let id = random_id("sl_", 24);
                sqlx::query(
                    "INSERT INTO identity_status_lists (id, mode, purpose, length, created_at) \
                     VALUES ($1, $2, 'revocation', $3, $4)",
                )
                .bind(&id)
                .bind(scope.mode.as_str())
                .bind(STATUS_LIST_LENGTH as i64)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                id
            }
        };
        // At most half the list is used: a random index is free at least half the time.
        for _ in 0..64 {
            let index = rand::thread_rng().gen_range(0..STATUS_LIST_LENGTH) as i64;
            let inserted = sqlx::query(
                "INSERT INTO identity_credentials (id, account_id, mode, type, subject, digest, \
                 status_list_id, status_index, valid_until, created_at) \
                 VALUES ($1, $2, $3, $4, $5, '', $6, $7, $8, $9) \
                 ON CONFLICT (status_list_id, status_index) DO NOTHING",
            )
            .bind(c.id)
            .bind(scope.account_id)
            .bind(scope.mode.as_str())
            .bind(c.credential_type)
            .bind(c.subject)
            .bind(&list_id)
            .bind(index)
            .bind(c.valid_until)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            if inserted.rows_affected() == 1 {
                tx.commit().await?;
                return self
                    .0
                    .identity()
                    .issued_credential(scope, c.id)
                    .await
                    .map(Some);
            }
        }
        Err(StoreError::Corrupt(format!(
            "status list {list_id}: no free index found"
        )))
    }

    /// Records the digest of credential `id` once it is signed.
    pub async fn seal_credential(self, id: &str, digest: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE identity_credentials SET digest = $2 WHERE id = $1 AND digest = ''")
            .bind(id)
            .bind(digest)
            .execute(self.0.writer())
            .await?;
        Ok(())
    }

    /// A credential this account issued in this mode.
    pub async fn issued_credential(
        self,
        scope: Scope<'_>,
        id: &str,
    ) -> Result<IssuedCredential, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {CREDENTIAL_COLS} FROM identity_credentials WHERE id = $1 AND account_id = $2 AND mode = $3"
        ))
        .bind(id)
        .bind(scope.account_id)
        .bind(scope.mode.as_str())
        .fetch_optional(self.0.writer())
        .await?
        .ok_or(StoreError::NotFound)?;
        credential_of(&row)
    }

    /// The credentials this account issued in this mode, newest first (the records: type,
    /// subject, status slot, revocation; never the credentials).
    pub async fn list_issued_credentials(
        self,
        scope: Scope<'_>,
        limit: u32,
        starting_after: Option<&str>,
    ) -> Result<Page<IssuedCredential>, StoreError> {
        let (rows, has_more) = self
            .0
            .list_rows(
                "identity_credentials",
                CREDENTIAL_COLS,
                scope,
                &[],
                limit,
                starting_after,
            )
            .await?;
        Ok(Page {
            data: rows.iter().map(credential_of).collect::<Result<_, _>>()?,
            has_more,
        })
    }

    /// Revokes credential `id` of this account and mode at `now` (final: its status bit
    /// is set for good), and queues the revoke of its attestations on the attestation chain
    /// in the same transaction. Returns the record; revoking again changes nothing.
    pub async fn revoke_credential(
        self,
        scope: Scope<'_>,
        id: &str,
        now: i64,
    ) -> Result<IssuedCredential, StoreError> {
        let mut tx = self.0.write_tx().await?;
        let revoked = sqlx::query(
            "UPDATE identity_credentials SET revoked_at = $4 \
             WHERE id = $1 AND account_id = $2 AND mode = $3 AND revoked_at IS NULL",
        )
        .bind(id)
        .bind(scope.account_id)
        .bind(scope.mode.as_str())
        .bind(now)
        .execute(&mut *tx)
        .await?;
        if revoked.rows_affected() == 1 {
            crate::attestations::revoke_for_credential_in(&mut tx, id, now).await?;
        }
        tx.commit().await?;
        self.0.identity().issued_credential(scope, id).await
    }

    /// Status list `id` with the indexes of its revoked credentials.
    pub async fn status_list(self, id: &str) -> Result<StatusList, StoreError> {
        let row = sqlx::query(
            "SELECT id, mode, purpose, length FROM identity_status_lists WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(self.0.pool())
        .await?
        .ok_or(StoreError::NotFound)?;
        let mode: String = row.try_get("mode")?;
        let set = sqlx::query(
            "SELECT status_index FROM identity_credentials \
             WHERE status_list_id = $1 AND revoked_at IS NOT NULL ORDER BY status_index",
        )
        .bind(id)
        .fetch_all(self.0.pool())
        .await?
        .iter()
        .map(|r| Ok(r.try_get::<i64, _>("status_index")? as u64))
        .collect::<Result<_, StoreError>>()?;
        Ok(StatusList {
            id: row.try_get("id")?,
            mode: Mode::parse(&mode)
                .ok_or_else(|| StoreError::Corrupt(format!("mode {mode:?}")))?,
            purpose: row.try_get("purpose")?,
            length: row.try_get::<i64, _>("length")? as u64,
            set,
        })
    }

    /// A new single-use challenge for a presentation in `mode`, valid until `expires_at`
    /// (unix ms), bound to `domain` when given.
    pub async fn create_challenge(
        self,
        mode: Mode,
        domain: Option<&str>,
        expires_at: i64,
        now: i64,
    ) -> Result<String, StoreError> {
        let challenge = random_id("chl_", 32);
        sqlx::query(
            "INSERT INTO identity_challenges (challenge, mode, domain, expires_at, created_at) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&challenge)
        .bind(mode.as_str())
        .bind(domain)
        .bind(expires_at)
        .bind(now)
        .execute(self.0.writer())
        .await?;
        Ok(challenge)
    }

    /// Uses challenge `challenge` of `mode` at `now`: `Some(domain)` the first time, before
    /// it expires; `None` when unknown, used or expired.
    pub async fn use_challenge(
        self,
        mode: Mode,
        challenge: &str,
        now: i64,
    ) -> Result<Option<Option<String>>, StoreError> {
        let row = sqlx::query(
            "UPDATE identity_challenges SET used_at = $3 \
             WHERE challenge = $1 AND mode = $2 AND used_at IS NULL AND expires_at > $3 RETURNING domain",
        )
        .bind(challenge)
        .bind(mode.as_str())
        .bind(now)
        .fetch_optional(self.0.writer())
        .await?;
        row.map(|r| Ok(r.try_get("domain")?)).transpose()
    }
}
