//! Developer accounts and their API keys. A key is shown once at creation and stored only
//! as its SHA-256.

use crate::db::{Store, StoreError};
use crate::exec::Record;
use crate::ids::{Mode, hash_secret, random_id};
use openrail_domain::{AccountId, ApiKeyId};

/// API keys (`store.api_keys()`).
#[derive(Debug, Clone, Copy)]
pub struct ApiKeys<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on API keys ([`ApiKeys`]).
    pub fn api_keys(&self) -> ApiKeys<'_> {
        ApiKeys(self)
    }
}

/// Developer accounts (`store.accounts()`).
#[derive(Debug, Clone, Copy)]
pub struct Accounts<'a>(pub(crate) &'a Store);

impl Store {
    /// The handle on developer accounts ([`Accounts`]).
    pub fn accounts(&self) -> Accounts<'_> {
        Accounts(self)
    }
}

/// A developer account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// `acct_…`
    pub id: AccountId,
    /// Display name (the operator's; for a dashboard sign-up, its email). Never shown to
    /// payers: they see [`Account::business_name`].
    pub name: String,
    /// The business name the account gave, shown to payers (on the consent page) as
    /// unverified unless [`Account::business_verified`].
    pub business_name: Option<String>,
    /// Whether Openrail verified the business name (nothing does yet but
    /// [`Accounts::set_business_verified`]).
    pub business_verified: bool,
    /// Unix milliseconds.
    pub created_at: i64,
}

/// An API key's record (never its secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    /// `key_…`
    pub id: ApiKeyId,
    /// Owner.
    pub account_id: AccountId,
    /// Which money the key moves.
    pub mode: Mode,
    /// Last four characters of the secret, to tell keys apart.
    pub last4: String,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds, when revoked.
    pub revoked_at: Option<i64>,
    /// Unix milliseconds, when it last authenticated a request (kept to the minute: see
    /// [`ApiKeys::touch`]).
    pub last_used_at: Option<i64>,
}

/// What an authenticated API key may act as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The key's id.
    pub key_id: ApiKeyId,
    /// The account.
    pub account_id: AccountId,
    /// The key's mode.
    pub mode: Mode,
    /// When the key was last recorded as used (unix ms).
    pub last_used_at: Option<i64>,
}

/// Which of a mode's two chains settles an account's one-time payments (agentic debits
/// always settle on the settlement chain, where the allowance state machine is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PaymentsChain {
    /// Chain A: the settlement router beside the allowance state machine (the default).
    #[default]
    Settlement,
    /// Chain B: the settlement router beside the attestation registry.
    Attestation,
}

impl PaymentsChain {
    /// Both, in the order the API lists them.
    pub const ALL: [PaymentsChain; 2] = [PaymentsChain::Settlement, PaymentsChain::Attestation];

    /// `settlement` or `attestation`.
    pub fn as_str(self) -> &'static str {
        match self {
            PaymentsChain::Settlement => "settlement",
            PaymentsChain::Attestation => "attestation",
        }
    }

    /// The chain named `s`, if it is one.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// The secret of an API key: `sk_testnet_…` or `sk_mainnet_…` and 32 random characters.
pub fn new_api_key_secret(mode: Mode) -> String {
    random_id(&format!("sk_{}_", mode.as_str()), 32)
}

impl Accounts<'_> {
    /// Creates a developer account at `now` (unix ms).
    pub async fn create(self, name: &str, now: i64) -> Result<Account, StoreError> {
        let account = Account {
            id: AccountId::new(),
            name: name.to_string(),
            business_name: None,
            business_verified: false,
            created_at: now,
        };
        let q = self
            .0
            .stmt("INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)")
            .bind(account.id.as_str())
            .bind(&account.name)
            .bind(account.created_at);
        self.0.execute(q).await?;
        Ok(account)
    }

    /// An account by id.
    pub async fn get(self, id: &AccountId) -> Result<Account, StoreError> {
        let q = self
            .0
            .stmt(
                "SELECT id, name, business_name, business_verified, created_at FROM accounts WHERE id = $1",
            )
            .bind(id.as_str());
        let row = self.0.fetch_one(&q).await?;
        Ok(Account {
            id: AccountId::from_trusted(row.string("id")?),
            name: row.string("name")?,
            business_name: row.text("business_name")?,
            business_verified: row.integer("business_verified")? != 0,
            created_at: row.integer("created_at")?,
        })
    }

    /// Sets (or, with `None`, clears) the business name of account `id`. A new name is
    /// not verified, whatever the old one was.
    pub async fn set_business_name(
        self,
        id: &AccountId,
        business_name: Option<&str>,
    ) -> Result<(), StoreError> {
        let q = self
            .0
            .stmt(
                "UPDATE accounts SET business_name = $2, \
                 business_verified = CASE WHEN business_name = $2 THEN business_verified ELSE 0 END \
                 WHERE id = $1",
            )
            .bind(id.as_str())
            .bind(business_name);
        if self.0.execute(q).await? == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// Marks the business name of account `id` verified or not. No verification exists
    /// yet: nothing in the service calls this; it is here for the operator's tools and
    /// tests.
    pub async fn set_business_verified(
        self,
        id: &AccountId,
        verified: bool,
    ) -> Result<(), StoreError> {
        let q = self
            .0
            .stmt("UPDATE accounts SET business_verified = $2 WHERE id = $1")
            .bind(id.as_str())
            .bind(i64::from(verified));
        if self.0.execute(q).await? == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// Where account `id`'s one-time payments of `mode` settle (the settlement chain until
    /// the account chooses otherwise).
    pub async fn payments_chain(
        self,
        id: &AccountId,
        mode: Mode,
    ) -> Result<PaymentsChain, StoreError> {
        let q = self
            .0
            .stmt("SELECT payments_chain FROM account_settings WHERE account_id = $1 AND mode = $2")
            .bind(id.as_str())
            .bind(mode.as_str());
        let Some(row) = self.0.fetch_optional(&q).await? else {
            return Ok(PaymentsChain::default());
        };
        let chain = row.string("payments_chain")?;
        PaymentsChain::parse(&chain)
            .ok_or_else(|| StoreError::Corrupt(format!("payments_chain {chain}")))
    }

    /// Sets where account `id`'s one-time payments of `mode` settle from `now` on (payments
    /// already created keep their chain).
    pub async fn set_payments_chain(
        self,
        id: &AccountId,
        mode: Mode,
        chain: PaymentsChain,
        now: i64,
    ) -> Result<(), StoreError> {
        let q = self
            .0
            .stmt(
                "INSERT INTO account_settings (account_id, mode, payments_chain, updated_at) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (account_id, mode) \
                 DO UPDATE SET payments_chain = excluded.payments_chain, updated_at = excluded.updated_at",
            )
            .bind(id.as_str())
            .bind(mode.as_str())
            .bind(chain.as_str())
            .bind(now);
        self.0.execute(q).await?;
        Ok(())
    }
}

impl ApiKeys<'_> {
    /// Creates an API key; returns its record and the secret, which is not stored.
    pub async fn create(
        self,
        account_id: &AccountId,
        mode: Mode,
        now: i64,
    ) -> Result<(ApiKey, String), StoreError> {
        self.0.accounts().get(account_id).await?;
        let secret = new_api_key_secret(mode);
        let key = ApiKey {
            id: ApiKeyId::new(),
            account_id: account_id.clone(),
            mode,
            last4: secret[secret.len() - 4..].to_string(),
            created_at: now,
            revoked_at: None,
            last_used_at: None,
        };
        let q = self
            .0
            .stmt(
                "INSERT INTO api_keys (id, account_id, mode, secret_hash, last4, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(key.id.as_str())
            .bind(key.account_id.as_str())
            .bind(mode.as_str())
            .bind(hash_secret(&secret))
            .bind(&key.last4)
            .bind(key.created_at);
        self.0.execute(q).await?;
        Ok((key, secret))
    }

    /// API keys, newest first; of one account when given.
    pub async fn list(self, account_id: Option<&AccountId>) -> Result<Vec<ApiKey>, StoreError> {
        let q = self
            .0
            .stmt(
                "SELECT id, account_id, mode, last4, created_at, revoked_at, last_used_at FROM api_keys \
                 WHERE ($1 IS NULL OR account_id = $1) ORDER BY created_at DESC, id DESC",
            )
            .bind(account_id.map(AccountId::as_str));
        let rows = self.0.fetch(&q).await?;
        rows.iter()
            .map(|r| {
                let mode = r.string("mode")?;
                Ok(ApiKey {
                    id: ApiKeyId::from_trusted(r.string("id")?),
                    account_id: AccountId::from_trusted(r.string("account_id")?),
                    mode: Mode::parse(&mode)
                        .ok_or_else(|| StoreError::Corrupt(format!("mode {mode}")))?,
                    last4: r.string("last4")?,
                    created_at: r.integer("created_at")?,
                    revoked_at: r.int("revoked_at")?,
                    last_used_at: r.int("last_used_at")?,
                })
            })
            .collect()
    }

    /// Revokes an API key at `now`; it stops authenticating at once. Revoking twice is a
    /// no-op.
    pub async fn revoke(self, id: &ApiKeyId, now: i64) -> Result<(), StoreError> {
        self.0.revoke_key_of(None, id, now).await
    }
}

impl Store {
    /// Revokes key `id` at `now`, when it belongs to `account_id` if given (a key of
    /// another account is [`StoreError::NotFound`]).
    async fn revoke_key_of(
        &self,
        account_id: Option<&AccountId>,
        id: &ApiKeyId,
        now: i64,
    ) -> Result<(), StoreError> {
        let q = self
            .stmt(
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $3) \
                 WHERE id = $1 AND ($2 IS NULL OR account_id = $2)",
            )
            .bind(id.as_str())
            .bind(account_id.map(AccountId::as_str))
            .bind(now);
        if self.execute(q).await? == 0 {
            Err(StoreError::NotFound)
        } else {
            Ok(())
        }
    }
}

impl ApiKeys<'_> {
    /// The principal of a live API key secret, or `None`.
    pub async fn authenticate(self, secret: &str) -> Result<Option<Principal>, StoreError> {
        // Every request with an API key authenticates with this read: inline on SQLite
        // (see `crate::inline`).
        let hash = hash_secret(secret);
        let stmt = self
            .0
            .stmt(
                "SELECT id, account_id, mode, last_used_at FROM api_keys \
                 WHERE secret_hash = $1 AND revoked_at IS NULL",
            )
            .bind(&hash);
        let row = self.0.fetch_optional(&stmt).await?;
        row.map(|r| {
            let mode = r.string("mode")?;
            Ok(Principal {
                key_id: ApiKeyId::from_trusted(r.string("id")?),
                account_id: AccountId::from_trusted(r.string("account_id")?),
                mode: Mode::parse(&mode)
                    .ok_or_else(|| StoreError::Corrupt(format!("mode {mode}")))?,
                last_used_at: r.int("last_used_at")?,
            })
        })
        .transpose()
    }

    /// Records that key `id` authenticated a request at `now`. Callers write it at most
    /// about once a minute per key (when the recorded time is older), so the hot path
    /// costs no write per request.
    pub async fn touch(self, id: &ApiKeyId, now: i64) -> Result<(), StoreError> {
        let q = self
            .0
            .stmt(
                "UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)",
            )
            .bind(id.as_str())
            .bind(now);
        self.0.execute(q).await?;
        Ok(())
    }

    /// Revokes key `id` of `account_id` at `now` (a key of another account is
    /// [`StoreError::NotFound`]). Revoking twice is a no-op.
    pub async fn revoke_of_account(
        self,
        account_id: &AccountId,
        id: &ApiKeyId,
        now: i64,
    ) -> Result<(), StoreError> {
        self.0.revoke_key_of(Some(account_id), id, now).await
    }
}
