//! The developer dashboard's people, sessions and failed sign-ins. Passwords arrive here
//! already hashed (argon2id, by `openrail-api`); session secrets arrive as their SHA-256.

use crate::accounts::Account;
use crate::db::{Store, StoreError};
use crate::exec::{Exec, Record, Stmt};
use openrail_domain::AccountId;

/// The dashboard's users, sessions and failed logins (`store.dashboard()`).
#[derive(Debug, Clone, Copy)]
pub struct Dashboard<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on the dashboard's users, sessions and failed logins ([`Dashboard`]).
    pub fn dashboard(&self) -> Dashboard<'_> {
        Dashboard(self)
    }
}

/// A person who signs in to an account's dashboard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DashboardUser {
    /// The account they sign in to.
    pub account_id: AccountId,
    /// Lowercased email address.
    pub email: String,
    /// argon2id PHC string.
    pub password_hash: String,
}

/// A live browser session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DashboardSession {
    /// The account signed in.
    pub account_id: AccountId,
    /// The signed-in person's email.
    pub email: String,
    /// The synchronizer token every form of this session carries.
    pub csrf_token: String,
    /// Unix ms.
    pub expires_at: i64,
}

/// How a sign-up ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignUp {
    /// A new account, with its person.
    Created(Account),
    /// The email already signs in to an account.
    EmailTaken,
}

impl Dashboard<'_> {
    /// Creates an account named after `email`, with the business name it gave (if any;
    /// unverified) and its dashboard user, in one transaction.
    pub async fn sign_up(
        self,
        email: &str,
        password_hash: &str,
        business_name: Option<&str>,
        now: i64,
    ) -> Result<SignUp, StoreError> {
        let account = Account {
            id: AccountId::new(),
            name: email.to_string(),
            business_name: business_name.map(str::to_string),
            business_verified: false,
            created_at: now,
        };
        let (email, password_hash) = (email.to_owned(), password_hash.to_owned());
        // `None`: the email is taken, and what the body wrote is undone.
        let signed_up = {
            let account = account.clone();
            self.0
                .write_or_undo(move |mut tx| {
                    Box::pin(async move {
                        let q = Stmt::new(
                            tx.backend(),
                            "SELECT 1 AS one FROM dashboard_users WHERE email = $1".into(),
                        )
                        .bind(&email);
                        if tx.fetch_optional(&q).await?.is_some() {
                            return Ok(None);
                        }
                        let q = Stmt::new(
                            tx.backend(),
                            "INSERT INTO accounts (id, name, business_name, created_at) VALUES ($1, $2, $3, $4)"
                                .into(),
                        )
                        .bind(account.id.as_str())
                        .bind(&account.name)
                        .bind(&account.business_name)
                        .bind(now);
                        tx.execute(&q).await?;
                        let q = Stmt::new(
                            tx.backend(),
                            "INSERT INTO dashboard_users (account_id, email, password_hash, created_at) VALUES ($1, $2, $3, $4)"
                                .into(),
                        )
                        .bind(account.id.as_str())
                        .bind(&email)
                        .bind(&password_hash)
                        .bind(now);
                        match tx.execute(&q).await {
                            Ok(_) => Ok(Some(())),
                            // Two sign-ups of one email at once (PostgreSQL; SQLite's
                            // writer runs them in turn): the unique index keeps one.
                            Err(e) if e.is_unique_violation() => Ok(None),
                            Err(e) => Err(e),
                        }
                    })
                })
                .await
        };
        match signed_up {
            Ok(Some(())) => Ok(SignUp::Created(account)),
            Ok(None) => Ok(SignUp::EmailTaken),
            Err(e) => Err(e),
        }
    }

    /// The dashboard user of `email` (lowercased by the caller), if any.
    pub async fn user(self, email: &str) -> Result<Option<DashboardUser>, StoreError> {
        let q = self
            .0
            .stmt("SELECT account_id, email, password_hash FROM dashboard_users WHERE email = $1")
            .bind(email);
        let row = self.0.fetch_optional(&q).await?;
        row.map(|r| {
            Ok(DashboardUser {
                account_id: AccountId::from_trusted(r.string("account_id")?),
                email: r.string("email")?,
                password_hash: r.string("password_hash")?,
            })
        })
        .transpose()
    }

    /// Starts a session of `account_id` whose cookie secret hashes to `secret_hash`.
    pub async fn create_session(
        self,
        secret_hash: &str,
        account_id: &AccountId,
        csrf_token: &str,
        now: i64,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        let q = self
            .0
            .stmt(
                "INSERT INTO dashboard_sessions (secret_hash, account_id, csrf_token, created_at, expires_at) \
                 VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(secret_hash)
            .bind(account_id.as_str())
            .bind(csrf_token)
            .bind(now)
            .bind(expires_at);
        self.0.execute(q).await?;
        Ok(())
    }

    /// The live session whose cookie secret hashes to `secret_hash` at `now`.
    pub async fn session(
        self,
        secret_hash: &str,
        now: i64,
    ) -> Result<Option<DashboardSession>, StoreError> {
        let q = self
            .0
            .stmt(
                "SELECT s.account_id AS account_id, u.email AS email, s.csrf_token AS csrf_token, \
                 s.expires_at AS expires_at FROM dashboard_sessions s \
                 JOIN dashboard_users u ON u.account_id = s.account_id \
                 WHERE s.secret_hash = $1 AND s.expires_at > $2",
            )
            .bind(secret_hash)
            .bind(now);
        let row = self.0.fetch_optional(&q).await?;
        row.map(|r| {
            Ok(DashboardSession {
                account_id: AccountId::from_trusted(r.string("account_id")?),
                email: r.string("email")?,
                csrf_token: r.string("csrf_token")?,
                expires_at: r.integer("expires_at")?,
            })
        })
        .transpose()
    }

    /// Ends a session (signing out); ending an unknown one is a no-op. Also drops every
    /// session of any account that expired before `now`.
    pub async fn end_session(self, secret_hash: &str, now: i64) -> Result<(), StoreError> {
        let q = self
            .0
            .stmt("DELETE FROM dashboard_sessions WHERE secret_hash = $1 OR expires_at <= $2")
            .bind(secret_hash)
            .bind(now);
        self.0.execute(q).await?;
        Ok(())
    }

    /// Records one failed sign-in against each of `subjects` at `now`, and drops records
    /// older than `forget_before`.
    pub async fn record_login_failure(
        self,
        subjects: &[&str],
        now: i64,
        forget_before: i64,
    ) -> Result<(), StoreError> {
        let subjects: Vec<String> = subjects.iter().map(|s| s.to_string()).collect();
        self.0
            .write(move |mut tx| {
                Box::pin(async move {
                    let q = Stmt::new(
                        tx.backend(),
                        "DELETE FROM dashboard_login_failures WHERE at < $1".into(),
                    )
                    .bind(forget_before);
                    tx.execute(&q).await?;
                    for s in &subjects {
                        let q = Stmt::new(
                            tx.backend(),
                            "INSERT INTO dashboard_login_failures (subject, at) VALUES ($1, $2)"
                                .into(),
                        )
                        .bind(s)
                        .bind(now);
                        tx.execute(&q).await?;
                    }
                    Ok(())
                })
            })
            .await
    }

    /// Failed sign-ins recorded against `subject` since `since` (unix ms).
    pub async fn login_failures(self, subject: &str, since: i64) -> Result<i64, StoreError> {
        let q = self
            .0
            .stmt(
                "SELECT COUNT(*) AS n FROM dashboard_login_failures WHERE subject = $1 AND at >= $2",
            )
            .bind(subject)
            .bind(since);
        self.0.fetch_one(&q).await?.integer("n")
    }

    /// Forgets the failed sign-ins of `subject` (after a successful one).
    pub async fn clear_login_failures(self, subject: &str) -> Result<(), StoreError> {
        let q = self
            .0
            .stmt("DELETE FROM dashboard_login_failures WHERE subject = $1")
            .bind(subject);
        self.0.execute(q).await?;
        Ok(())
    }

    /// The block each of `hashes` was mined in on `chain_id`, as the journal knows it
    /// (hashes it does not know, or not yet mined, are absent).
    pub async fn tx_blocks(
        self,
        chain_id: u64,
        hashes: &[&str],
    ) -> Result<std::collections::HashMap<String, u64>, StoreError> {
        let mut out = std::collections::HashMap::new();
        for hash in hashes {
            let q = self
                .0
                .stmt(
                    "SELECT block_number FROM chain_txs WHERE hash = $1 AND chain_id = $2 AND block_number IS NOT NULL",
                )
                .bind(*hash)
                .bind(chain_id as i64);
            if let Some(r) = self.0.fetch_optional(&q).await? {
                let block = r.integer("block_number")?;
                out.insert(hash.to_string(), block as u64);
            }
        }
        Ok(out)
    }
}
