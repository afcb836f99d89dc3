//! Agentic recurring debits: mandates (a payer's ceiling per epoch), session keys (what an
//! agent pulls with) and debit pulls (each checked on chain).

use serde::{Deserialize, Serialize};

use crate::http::HasId;
use crate::{Client, Consent, Error, ListParams, OnChain, Pages, RequestOptions};

/// What the agent credential routes answer.
#[derive(Deserialize)]
struct IssuedCredential {
    #[serde(rename = "verifiableCredential")]
    verifiable_credential: serde_json::Value,
}

/// The epoch a ceiling counts in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Epoch {
    /// Start (RFC 3339).
    pub starts_at: String,
    /// End, the next one's start.
    pub ends_at: String,
    /// Pulled so far this epoch (decimal major units).
    pub spent: String,
    /// What may still be pulled this epoch.
    pub remaining: String,
}

/// A mandate: the most a payer lets be pulled per epoch, enforced on chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mandate {
    /// `man_…`.
    pub id: String,
    /// `requires_authorization`, `pending`, `active`, `canceled` or `failed`.
    pub status: String,
    /// The payer: a wallet address or a bank account (`ba_…`).
    pub payer_account_id: String,
    /// The ceiling per epoch (decimal major units).
    pub max_amount: String,
    /// ISO 4217.
    pub currency: String,
    /// `daily`, `weekly`, `monthly` or `yearly`.
    pub interval: String,
    /// What it is for (a wallet payer signs it).
    pub purpose: Option<String>,
    /// Who may be paid: signed by a wallet payer and enforced on chain for every key
    /// (empty only for a bank-account payer: any destination).
    #[serde(default)]
    pub payees: Vec<String>,
    /// The one agent whose keys may pull (every key's `signer`), when named.
    #[serde(default)]
    pub agent: Option<String>,
    /// The identity it requires (signed by a wallet payer, enforced on chain), when any.
    #[serde(default)]
    pub requirements: Option<MandateRequirements>,
    /// The current epoch, once active.
    pub current_epoch: Option<Epoch>,
    /// How the payer consents (the typed data to sign for a wallet).
    pub authorization: Option<Consent>,
    /// Where it lives on chain.
    pub onchain: Option<OnChain>,
    /// Testnet or mainnet.
    pub livemode: bool,
    /// RFC 3339.
    pub created_at: String,
}

/// `POST /v1/mandates`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CreateMandate {
    /// A wallet address (then the payer signs) or a bank account `ba_…`.
    pub payer_account_id: String,
    /// The ceiling per epoch, decimal major units (`"100.00"`).
    pub max_amount: String,
    /// `USD` or `EUR` on testnet.
    pub currency: String,
    /// `daily`, `weekly`, `monthly` or `yearly`.
    pub interval: String,
    /// What it is for; a wallet payer signs it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
    /// Who may be paid (at most 20 wallets, not the payer). A wallet payer signs them and
    /// every key's destinations must be among them; left out, a wallet payer's mandate pays
    /// only the account's settlement wallet, and a bank account's any destination.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payees: Option<Vec<String>>,
    /// The one agent whose keys may pull: a wallet payer signs it, and every key of the
    /// mandate must have it as its `signer`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Identity the mandate requires of its payer and of every key's signer (kinds
    /// `personhood`, `financial_health`, `agent`): checked when it and its keys are created
    /// and on every pull, by the API (403 `identity_requirement_unmet`) and on chain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requirements: Option<MandateRequirements>,
}

/// What a mandate requires of identity: the kind of credential (an active attestation of
/// one Openrail issued) the payer, and every session key's signer, must hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MandateRequirements {
    /// Of the payer: `personhood`, `financial_health` or `agent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payer: Option<String>,
    /// Of every key's signer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The attester whose attestations count (in answers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attester: Option<String>,
}

/// A session key: what an agent pulls with, under one mandate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionKey {
    /// `sk_…`.
    pub id: String,
    /// Its mandate.
    pub mandate_id: String,
    /// `active`, `expired` or `revoked`.
    pub status: String,
    /// RFC 3339.
    pub expires_at: String,
    /// Its own ceiling per epoch, if tighter than the mandate's.
    pub max_amount: Option<String>,
    /// Wallets it may pay, among its mandate's payees (none: any, for a mandate that
    /// names no payees).
    pub allowed_destinations: Option<Vec<String>>,
    /// The agent whose signature every pull needs, if any.
    pub signer: Option<String>,
    /// The EIP-712 domain an agent signs pulls in (keys with a signer).
    pub eip712_domain: Option<serde_json::Value>,
    /// The mandate's currency.
    pub currency: String,
    /// The key's current epoch.
    pub current_epoch: Option<Epoch>,
    /// Where it lives on chain.
    pub onchain: Option<OnChain>,
    /// A bearer credential for the agent, shown once at creation (`sks_…`).
    #[serde(default)]
    pub secret: Option<String>,
    /// Testnet or mainnet.
    pub livemode: bool,
    /// RFC 3339.
    pub created_at: String,
}

/// `POST /v1/session-keys`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CreateSessionKey {
    /// The mandate (`man_…`), active.
    pub mandate_id: String,
    /// Lifetime in seconds, 60 to 31,536,000.
    pub expires_in: u64,
    /// Its own ceiling per epoch, at most the mandate's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_amount: Option<String>,
    /// Wallets it may pay (at most 20), among its mandate's payees (left out: all of
    /// them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_destinations: Option<Vec<String>>,
    /// The agent's address, whose signature every pull will need (when the mandate names
    /// an agent: that agent, also when left out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
}

/// A debit pull.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DebitPull {
    /// `pull_…`.
    pub id: String,
    /// `pending`, `authorized`, `settled`, `declined` or `failed`.
    pub status: String,
    /// Decimal major units.
    pub amount: String,
    /// ISO 4217.
    pub currency: String,
    /// Its key.
    pub session_key_id: String,
    /// Its key's mandate.
    pub mandate_id: String,
    /// The wallet or bank account paid.
    pub destination: String,
    /// Free text.
    pub description: Option<String>,
    /// Why the chain refused it.
    pub decline_code: Option<String>,
    /// Why a later leg failed.
    pub failure_reason: Option<String>,
    /// When the chain authorized it.
    pub authorized_at: Option<String>,
    /// Its transaction.
    pub onchain: Option<serde_json::Value>,
    /// Testnet or mainnet.
    pub livemode: bool,
    /// RFC 3339.
    pub created_at: String,
}

/// `POST /v1/debit-pulls`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CreatePull {
    /// The key (`sk_…`).
    pub session_key_id: String,
    /// Decimal major units in the mandate's currency (`"5.00"`).
    pub amount: String,
    /// A wallet or `ba_…` (default: the account's settlement wallet).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destination: Option<String>,
    /// Free text, up to 500 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Keys with a signer: the agent's EIP-712 signature (see
    /// [`crate::signing::sign_pull`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Keys with a signer: the signed nonce.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nonce: Option<u64>,
    /// Keys with a signer: the signed deadline, unix seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline: Option<u64>,
}

#[derive(Serialize)]
struct Authorize<'a> {
    signature: &'a str,
}

impl HasId for Mandate {
    fn id(&self) -> &str {
        &self.id
    }
}
impl HasId for SessionKey {
    fn id(&self) -> &str {
        &self.id
    }
}
impl HasId for DebitPull {
    fn id(&self) -> &str {
        &self.id
    }
}

/// The agentic routes (from [`Client::agentic`]).
#[derive(Debug, Clone, Copy)]
pub struct Agentic<'a>(pub(crate) &'a Client);

impl Agentic<'_> {
    /// Creates a mandate: `requires_authorization` for a wallet payer (sign its
    /// `authorization.typed_data`, then [`Agentic::authorize_mandate`]); a bank-account
    /// payer's is sent at once.
    pub async fn create_mandate(&self, m: &CreateMandate) -> Result<Mandate, Error> {
        self.0
            .post("/v1/mandates", m, &RequestOptions::default())
            .await
    }

    /// Sends the payer's signature of the mandate's typed data; the mandate goes on chain.
    pub async fn authorize_mandate(&self, id: &str, signature: &str) -> Result<Mandate, Error> {
        self.0
            .post(
                &format!("/v1/mandates/{id}/authorize"),
                &Authorize { signature },
                &RequestOptions::default(),
            )
            .await
    }

    /// A mandate.
    pub async fn mandate(&self, id: &str) -> Result<Mandate, Error> {
        self.0.get(&format!("/v1/mandates/{id}")).await
    }

    /// The mandates, newest first.
    pub fn mandates(&self, params: ListParams) -> Pages<Mandate> {
        self.0.pages("/v1/mandates", params)
    }

    /// Cancels a mandate on chain; its keys can no longer pull.
    pub async fn cancel_mandate(&self, id: &str) -> Result<Mandate, Error> {
        self.0
            .post(
                &format!("/v1/mandates/{id}/cancel"),
                &serde_json::json!({}),
                &RequestOptions::default(),
            )
            .await
    }

    /// Creates a session key; its `secret` is in this answer only.
    pub async fn create_session_key(&self, k: &CreateSessionKey) -> Result<SessionKey, Error> {
        self.0
            .post("/v1/session-keys", k, &RequestOptions::default())
            .await
    }

    /// A session key.
    pub async fn session_key(&self, id: &str) -> Result<SessionKey, Error> {
        self.0.get(&format!("/v1/session-keys/{id}")).await
    }

    /// The session keys, newest first (filter `mandate_id`).
    pub fn session_keys(&self, params: ListParams) -> Pages<SessionKey> {
        self.0.pages("/v1/session-keys", params)
    }

    /// Revokes a session key on chain.
    pub async fn revoke_session_key(&self, id: &str) -> Result<SessionKey, Error> {
        self.0
            .delete(
                &format!("/v1/session-keys/{id}"),
                &RequestOptions::default(),
            )
            .await
    }

    /// Issues key `id`'s `AgentCredential` (a W3C credential Openrail signs, binding the
    /// key's `signer` to its payer, mandate and ceiling, valid until the key expires), or
    /// answers the one issued before. A key without a signer is [`Error::Api`] 409
    /// `session_key_without_signer`; a key that can no longer pull, 422.
    pub async fn issue_agent_credential(&self, id: &str) -> Result<serde_json::Value, Error> {
        let issued: IssuedCredential = self
            .0
            .post(
                &format!("/v1/session-keys/{id}/credential"),
                &serde_json::json!({}),
                &RequestOptions::default(),
            )
            .await?;
        Ok(issued.verifiable_credential)
    }

    /// Key `id`'s `AgentCredential`, once issued (404 before).
    pub async fn agent_credential(&self, id: &str) -> Result<serde_json::Value, Error> {
        let issued: IssuedCredential = self
            .0
            .get(&format!("/v1/session-keys/{id}/credential"))
            .await?;
        Ok(issued.verifiable_credential)
    }

    /// Pulls against a key. A decline is [`Error::Api`] with the rule's code
    /// (`allowance_exceeded`, with `remaining` and `resets_at`) and the declined pull's id.
    pub async fn create_pull(&self, p: &CreatePull) -> Result<DebitPull, Error> {
        self.create_pull_with(p, &RequestOptions::default()).await
    }

    /// [`Agentic::create_pull`] with options (an idempotency key of the caller's).
    pub async fn create_pull_with(
        &self,
        p: &CreatePull,
        options: &RequestOptions,
    ) -> Result<DebitPull, Error> {
        self.0.post("/v1/debit-pulls", p, options).await
    }

    /// A debit pull.
    pub async fn pull(&self, id: &str) -> Result<DebitPull, Error> {
        self.0.get(&format!("/v1/debit-pulls/{id}")).await
    }

    /// The debit pulls, newest first (filters `session_key_id`, `status`).
    pub fn pulls(&self, params: ListParams) -> Pages<DebitPull> {
        self.0.pages("/v1/debit-pulls", params)
    }
}
