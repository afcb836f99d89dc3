//! Identity: Openrail as an issuer of W3C Verifiable Credentials (its key per mode, the
//! credentials it issued with their slot in a Bitstring Status List, revocation) and the
//! single-use challenges of presentation verification. The credentials themselves are
//! not kept: their digest, type, subject and status slot are (no personal data).

use rand::Rng;

use crate::agentic::{Page, Scope};
use crate::db::{Backend, Store, StoreError};
use crate::exec::{Exec, Record, Stmt};
use crate::ids::{Mode, random_id};
use openrail_domain::{AccountId, SessionKeyId};

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

fn credential_of(r: &impl Record) -> Result<IssuedCredential, StoreError> {
    let mode = r.string("mode")?;
    Ok(IssuedCredential {
        id: r.string("id")?,
        account_id: AccountId::from_trusted(r.string("account_id")?),
        mode: Mode::parse(&mode).ok_or_else(|| StoreError::Corrupt(format!("mode {mode:?}")))?,
        credential_type: r.string("type")?,
        subject: r.text("subject")?,
        digest: r.string("digest")?,
        status_list_id: r.string("status_list_id")?,
        status_index: r.integer("status_index")? as u64,
        revoked_at: r.int("revoked_at")?,
        valid_until: r.int("valid_until")?,
        created_at: r.integer("created_at")?,
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

fn agent_credential_of(r: &impl Record) -> Result<AgentCredential, StoreError> {
    Ok(AgentCredential {
        session_key_id: SessionKeyId::from_trusted(r.string("session_key_id")?),
        credential_id: r.string("credential_id")?,
        credential: r.string("credential")?,
        created_at: r.integer("created_at")?,
    })
}

/// Openrail's issuer from its row.
fn issuer_of(r: &impl Record) -> Result<Issuer, StoreError> {
    Ok(Issuer {
        secret_key: r.string("secret_key")?,
        did: r.string("did")?,
    })
}

impl Identity<'_> {
    /// The AgentCredential issued for session key `key` of `scope`, if one was.
    pub async fn agent_credential(
        self,
        scope: Scope<'_>,
        key: &SessionKeyId,
    ) -> Result<Option<AgentCredential>, StoreError> {
        let q = self
            .0
            .stmt(
                "SELECT a.session_key_id, a.credential_id, a.credential, a.created_at \
                 FROM agent_credentials a JOIN session_keys k ON k.id = a.session_key_id \
                 WHERE a.session_key_id = $1 AND k.account_id = $2 AND k.mode = $3",
            )
            .bind(key.as_str())
            .bind(scope.account_id.as_str())
            .bind(scope.mode.as_str());
        let row = self.0.fetch_optional(&q).await?;
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
        let key = key.clone();
        let credential_id = credential_id.to_owned();
        let credential = credential.to_owned();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    let lock = match tx.backend() {
                        Backend::Postgres => " FOR SHARE",
                        Backend::Sqlite => "",
                    };
                    let q = Stmt::new(
                        tx.backend(),
                        format!(
                            "SELECT k.status AS key_status, k.expires_at AS expires_at, m.status AS mandate_status \
                             FROM session_keys k JOIN mandates m ON m.id = k.mandate_id WHERE k.id = $1{lock}"
                        ),
                    )
                    .bind(key.as_str());
                    let row = tx.fetch_optional(&q).await?.ok_or(StoreError::NotFound)?;
                    let key_status = row.string("key_status")?;
                    let mandate_status = row.string("mandate_status")?;
                    let expires_at = row.integer("expires_at")?;
                    let live = key_status == crate::agentic::KeyStatus::Active.as_str()
                        && expires_at > now
                        && mandate_status == crate::agentic::MandateStatus::Active.as_str();
                    let recorded = Stmt::new(
                        tx.backend(),
                        "SELECT session_key_id, credential_id, credential, created_at FROM agent_credentials \
                         WHERE session_key_id = $1"
                            .into(),
                    )
                    .bind(key.as_str());
                    if let Some(row) = tx.fetch_optional(&recorded).await? {
                        return Ok(AgentCredentialRecord::Existing(agent_credential_of(&row)?));
                    }
                    if !live {
                        let q = Stmt::new(
                            tx.backend(),
                            "UPDATE identity_credentials SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL \
                             AND NOT EXISTS (SELECT 1 FROM agent_credentials WHERE credential_id = $1)"
                                .into(),
                        )
                        .bind(credential_id.as_str())
                        .bind(now);
                        tx.execute(&q).await?;
                        return Ok(AgentCredentialRecord::KeyNotLive);
                    }
                    let q = Stmt::new(
                        tx.backend(),
                        "INSERT INTO agent_credentials (session_key_id, credential_id, credential, created_at) \
                         VALUES ($1, $2, $3, $4) ON CONFLICT (session_key_id) DO NOTHING"
                            .into(),
                    )
                    .bind(key.as_str())
                    .bind(credential_id.as_str())
                    .bind(credential.as_str())
                    .bind(now);
                    let inserted = tx.execute(&q).await? == 1;
                    let recorded = agent_credential_of(&tx.fetch_one(&recorded).await?)?;
                    Ok(if inserted {
                        AgentCredentialRecord::New(recorded)
                    } else {
                        AgentCredentialRecord::Existing(recorded)
                    })
                })
            })
            .await
    }

    /// Openrail's issuer for `mode`, made by `make` the first time it is asked for (two
    /// processes asking at once agree on the one stored first).
    pub async fn issuer(
        self,
        mode: Mode,
        make: impl FnOnce() -> Issuer,
        now: i64,
    ) -> Result<Issuer, StoreError> {
        const READ: &str = "SELECT secret_key, did FROM identity_issuers WHERE mode = $1";
        let q = self.0.stmt(READ).bind(mode.as_str());
        if let Some(r) = self.0.fetch_optional(&q).await? {
            return issuer_of(&r);
        }
        let new = make();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    let q = Stmt::new(
                        tx.backend(),
                        "INSERT INTO identity_issuers (mode, secret_key, did, created_at) VALUES ($1, $2, $3, $4) \
                         ON CONFLICT (mode) DO NOTHING"
                            .into(),
                    )
                    .bind(mode.as_str())
                    .bind(new.secret_key)
                    .bind(new.did)
                    .bind(now);
                    tx.execute(&q).await?;
                    let q = Stmt::new(tx.backend(), READ.into()).bind(mode.as_str());
                    issuer_of(&tx.fetch_one(&q).await?)
                })
            })
            .await
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
        let id = c.id.to_owned();
        let account_id = scope.account_id.clone();
        let mode = scope.mode;
        let credential_type = c.credential_type.to_owned();
        let subject = c.subject.map(str::to_owned);
        let valid_until = c.valid_until;
        let reserved = self
            .0
            .write(move |mut tx| {
                Box::pin(async move {
                    let q = Stmt::new(
                        tx.backend(),
                        "SELECT 1 AS one FROM identity_credentials WHERE id = $1".into(),
                    )
                    .bind(id.as_str());
                    if tx.fetch_optional(&q).await?.is_some() {
                        return Ok(false);
                    }
                    let q = Stmt::new(
                        tx.backend(),
                        "SELECT l.id, (SELECT COUNT(*) FROM identity_credentials c WHERE c.status_list_id = l.id) AS used \
                         FROM identity_status_lists l WHERE l.mode = $1 AND l.purpose = 'revocation' \
                         ORDER BY l.created_at DESC, l.id DESC LIMIT 1"
                            .into(),
                    )
                    .bind(mode.as_str());
                    let list_id = match tx.fetch_optional(&q).await? {
                        Some(r) if (r.integer("used")? as u64) < STATUS_LIST_FILL => r.string("id")?,
                        _ => {
                            let id = random_id("sl_", 24);
                            let q = Stmt::new(
                                tx.backend(),
                                "INSERT INTO identity_status_lists (id, mode, purpose, length, created_at) \
                                 VALUES ($1, $2, 'revocation', $3, $4)"
                                    .into(),
                            )
                            .bind(id.as_str())
                            .bind(mode.as_str())
                            .bind(STATUS_LIST_LENGTH as i64)
                            .bind(now);
                            tx.execute(&q).await?;
                            id
                        }
                    };
                    // At most half the list is used: a random index is free at least half the time.
                    for _ in 0..64 {
                        let index = rand::thread_rng().gen_range(0..STATUS_LIST_LENGTH) as i64;
                        let q = Stmt::new(
                            tx.backend(),
                            "INSERT INTO identity_credentials (id, account_id, mode, type, subject, digest, \
                             status_list_id, status_index, valid_until, created_at) \
                             VALUES ($1, $2, $3, $4, $5, '', $6, $7, $8, $9) \
                             ON CONFLICT (status_list_id, status_index) DO NOTHING"
                                .into(),
                        )
                        .bind(id.as_str())
                        .bind(account_id.as_str())
                        .bind(mode.as_str())
                        .bind(credential_type.as_str())
                        .bind(subject.as_deref())
                        .bind(list_id.as_str())
                        .bind(index)
                        .bind(valid_until)
                        .bind(now);
                        if tx.execute(&q).await? == 1 {
                            return Ok(true);
                        }
                    }
                    Err(StoreError::Corrupt(format!(
                        "status list {list_id}: no free index found"
                    )))
                })
            })
            .await?;
        if !reserved {
            return Ok(None);
        }
        self.0
            .identity()
            .issued_credential(scope, c.id)
            .await
            .map(Some)
    }

    /// Records the digest of credential `id` once it is signed.
    pub async fn seal_credential(self, id: &str, digest: &str) -> Result<(), StoreError> {
        let q = self
            .0
            .stmt("UPDATE identity_credentials SET digest = $2 WHERE id = $1 AND digest = ''")
            .bind(id)
            .bind(digest);
        self.0.execute(q).await?;
        Ok(())
    }

    /// A credential this account issued in this mode.
    pub async fn issued_credential(
        self,
        scope: Scope<'_>,
        id: &str,
    ) -> Result<IssuedCredential, StoreError> {
        let q = self
            .0
            .stmt(format!(
                "SELECT {CREDENTIAL_COLS} FROM identity_credentials WHERE id = $1 AND account_id = $2 AND mode = $3"
            ))
            .bind(id)
            .bind(scope.account_id.as_str())
            .bind(scope.mode.as_str());
        let row = self
            .0
            .fetch_optional(&q)
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
        let credential_id = id.to_owned();
        let account_id = scope.account_id.clone();
        let mode = scope.mode;
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    let q = Stmt::new(
                        tx.backend(),
                        "UPDATE identity_credentials SET revoked_at = $4 \
                         WHERE id = $1 AND account_id = $2 AND mode = $3 AND revoked_at IS NULL"
                            .into(),
                    )
                    .bind(credential_id.as_str())
                    .bind(account_id.as_str())
                    .bind(mode.as_str())
                    .bind(now);
                    if tx.execute(&q).await? == 1 {
                        crate::attestations::revoke_for_credential_in(&mut tx, &credential_id, now)
                            .await?;
                    }
                    Ok(())
                })
            })
            .await?;
        self.0.identity().issued_credential(scope, id).await
    }

    /// Status list `id` with the indexes of its revoked credentials.
    pub async fn status_list(self, id: &str) -> Result<StatusList, StoreError> {
        let q = self
            .0
            .stmt("SELECT id, mode, purpose, length FROM identity_status_lists WHERE id = $1")
            .bind(id);
        let row = self
            .0
            .fetch_optional(&q)
            .await?
            .ok_or(StoreError::NotFound)?;
        let mode = row.string("mode")?;
        let q = self
            .0
            .stmt(
                "SELECT status_index FROM identity_credentials \
                 WHERE status_list_id = $1 AND revoked_at IS NOT NULL ORDER BY status_index",
            )
            .bind(id);
        let set = self
            .0
            .fetch(&q)
            .await?
            .iter()
            .map(|r| Ok(r.integer("status_index")? as u64))
            .collect::<Result<_, StoreError>>()?;
        Ok(StatusList {
            id: row.string("id")?,
            mode: Mode::parse(&mode)
                .ok_or_else(|| StoreError::Corrupt(format!("mode {mode:?}")))?,
            purpose: row.string("purpose")?,
            length: row.integer("length")? as u64,
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
        let q = self
            .0
            .stmt(
                "INSERT INTO identity_challenges (challenge, mode, domain, expires_at, created_at) \
                 VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(challenge.as_str())
            .bind(mode.as_str())
            .bind(domain)
            .bind(expires_at)
            .bind(now);
        self.0.execute(q).await?;
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
        let q = self
            .0
            .stmt(
                "UPDATE identity_challenges SET used_at = $3 \
                 WHERE challenge = $1 AND mode = $2 AND used_at IS NULL AND expires_at > $3 RETURNING domain",
            )
            .bind(challenge)
            .bind(mode.as_str())
            .bind(now)
            .into_owned();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    tx.fetch_optional(&q)
                        .await?
                        .map(|r| r.text("domain"))
                        .transpose()
                })
            })
            .await
    }
}
