//! The request and response types of mandates, session keys and debit pulls: their
//! request bodies, the objects as the API shows them ([`Mandate`], [`SessionKey`],
//! [`DebitPull`]) and their lists, and the leaf schemas of their own statuses and fields,
//! written in the shared vocabulary of [`crate::types`]. Their renderings of the store's
//! rows are in `views`.

use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

use crate::body::Fields;
use crate::error::ApiError;
use crate::types::{
    Address, AmountInput, AmountString, AmountText, Consent, CurrencyCode, CurrencyInput,
    Eip712Domain, FailureCode, FreeText, FromField, Money, Nonce, OnChainTx, Party, RequestBody,
    Signature, Text, Timestamp, TxHash, Uint256, VerificationTypeName, leaf_schema, list_new,
    list_type, object_tag, request_body,
};

leaf_schema!(
    /// A mandate's epoch.
    IntervalName = json!({
        "type": "string",
        "enum": openrail_store::Interval::ALL.iter().map(|i| i.as_str()).collect::<Vec<_>>(),
        "description": "The epoch of a ceiling: calendar days, ISO weeks (from Monday), calendar months or years, UTC. The ceiling resets at the calendar boundary — `daily` at 00:00 UTC, `weekly` on Monday 00:00 UTC, `monthly` on the 1st at 00:00 UTC, `yearly` on 1 January 00:00 UTC — not a full period after the last pull, so up to twice `max_amount` can be taken within a short time around a boundary (the whole ceiling just before it and again just after).",
    })
);

leaf_schema!(
    /// Status of a mandate.
    MandateStatus = json!({
        "type": "string",
        "enum": openrail_store::agentic::MandateStatus::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "description": "requires_authorization (a wallet payer must sign) → pending (sent) → active; canceled; failed (its transaction failed)",
    })
);

leaf_schema!(
    /// Status of a debit pull.
    PullStatus = json!({
        "type": "string",
        "enum": openrail_store::agentic::PullStatus::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "description": "pending → authorized (allowance consumed on chain, tokens moved) → settled (bank leg done); declined (a rule refused it, see decline_code); failed",
    })
);

leaf_schema!(
    /// Why a pull was declined (also the 422 `code`).
    DeclineCode = json!({
        "type": ["string", "null"],
        "enum": openrail_store::agentic::DeclineReason::ALL.iter().map(|s| Value::from(s.as_str())).chain([Value::Null]).collect::<Vec<_>>(),
    })
);

request_body!(
    /// `POST /v1/mandates`: a ceiling per epoch a payer grants, enforced on chain.
    #[schema(example = json!({"payer_account_id": "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", "max_amount": "100.00", "currency": "USD", "interval": "daily", "purpose": "agent budget", "payees": ["0x90F79bf6EB2c4f870365E785982E1f101E93b906"]}))]
    pub struct MandateCreate {
        /// The payer: a wallet address (the payer then signs the mandate, see `authorization`) or a simulated bank account `ba_…` (its bank mandate is the consent).
        #[schema(value_type = Party)]
        pub payer_account_id: String,
        /// ISO 4217 code.
        #[schema(value_type = CurrencyInput)]
        pub currency: String,
        /// The most that may be pulled per epoch, in major units.
        #[schema(value_type = AmountInput)]
        pub max_amount: AmountText,
        /// The epoch: the ceiling resets at its calendar boundary (UTC), so up to twice `max_amount` can be taken around a boundary.
        #[schema(value_type = IntervalName)]
        pub interval: String,
        /// Free text, up to 500 characters, without control or bidirectional formatting characters. A wallet payer signs it (it is in `authorization.typed_data`).
        #[schema(value_type = Option<FreeText>)]
        pub purpose: Option<Text>,
        /// Who may be paid: at most 20 distinct wallets, none of them the payer. A wallet payer signs them, and the chain refuses any session key that would pay anyone else. None named: the account's settlement wallet for a wallet payer; any destination for a bank-account payer.
        #[schema(value_type = Option<Vec<Address>>, max_items = 20)]
        pub payees: Option<Vec<String>>,
        /// The one agent whose keys may pull: a wallet payer signs it, and every session key of the mandate must have it as its `signer` (each pull then needs the agent's signature). None: keys may have any signer, or none.
        #[schema(value_type = Option<Address>)]
        pub agent: Option<String>,
        /// Identity the mandate requires, enforced on chain: the payer (`payer`) and every session key's signer (`agent`) must hold an active attestation of that kind (`POST /v1/identity/attestations` of a credential Openrail issued, recorded on the settlement chain). Checked when the mandate and each key are created and on every pull: a pull whose requirement no longer holds (revoked, expired) is refused 403 `identity_requirement_unmet`. A wallet payer signs the requirements with the mandate. None: no identity required.
        #[schema(value_type = Option<MandateRequirementsInput>)]
        pub requirements: Option<MandateRequirements>,
    }
);

request_body!(
    /// What a mandate requires of identity.
    pub struct MandateRequirements {
        /// The kind of credential the payer must hold (not for a bank-account payer).
        #[schema(value_type = Option<VerificationTypeName>)]
        pub payer: Option<String>,
        /// The kind of credential every session key's signer must hold (keys then need a `signer`).
        #[schema(value_type = Option<VerificationTypeName>)]
        pub agent: Option<String>,
    }
);

impl FromField for Option<MandateRequirements> {
    fn from_field(f: &mut Fields, name: &str) -> Result<Self, ApiError> {
        f.opt_object(name)?
            .map(<MandateRequirements as RequestBody>::read)
            .transpose()
    }
}

leaf_schema!(
    /// `requirements` of a mandate, as a request gives them.
    MandateRequirementsInput = json!({
        "type": "object",
        "properties": {
            "payer": { "$ref": "#/components/schemas/VerificationTypeName" },
            "agent": { "$ref": "#/components/schemas/VerificationTypeName" },
        },
        "additionalProperties": false,
    })
);

request_body!(
    /// `POST /v1/session-keys`: a key an agent pulls with, under a mandate.
    #[schema(example = json!({"mandate_id": "man_…", "expires_in": 3600, "max_amount": "60"}))]
    pub struct SessionKeyCreate {
        /// The mandate (`man_…`), active.
        #[schema(pattern = "^man_")]
        pub mandate_id: String,
        /// Lifetime in seconds, 60 to 31,536,000 (a year). A JSON integer (`3600.0` and `3.6e3` count).
        #[schema(minimum = 60, maximum = 31_536_000)]
        pub expires_in: u64,
        /// The key's own ceiling per epoch of its mandate, at most the mandate's.
        #[schema(value_type = Option<AmountInput>)]
        pub max_amount: Option<AmountText>,
        /// Wallets the key may pay, among its mandate's `payees` (none: all of the mandate's payees, or any wallet when the mandate names none). At most 20.
        #[schema(value_type = Option<Vec<Address>>, max_items = 20)]
        pub allowed_destinations: Option<Vec<String>>,
        /// An agent's address: every pull on the key must then carry its EIP-712 `DebitPull` signature, checked on chain. When the mandate names an `agent`, it must be that agent (left out: that agent).
        #[schema(value_type = Option<Address>)]
        pub signer: Option<String>,
    }
);

request_body!(
    /// `POST /v1/debit-pulls`: a pull against a session key, checked on chain.
    #[schema(example = json!({"session_key_id": "sk_…", "amount": "50.00"}))]
    pub struct DebitPullCreate {
        /// The session key (`sk_…`).
        #[schema(pattern = "^sk_")]
        pub session_key_id: String,
        /// Major units, in the mandate's currency.
        #[schema(value_type = AmountInput)]
        pub amount: AmountText,
        /// The wallet paid, on the key's allow-list (which is among its mandate's payees); default: the key's only destination when it has one, else the account's settlement wallet (the chain's treasury).
        #[schema(value_type = Option<Address>)]
        pub destination: Option<String>,
        /// Free text, up to 500 characters, without control or bidirectional formatting characters.
        #[schema(value_type = Option<FreeText>)]
        pub description: Option<Text>,
        /// Keys with a signer: the agent's EIP-712 signature of `DebitPull(bytes32 keyId,address destination,uint256 amount,uint256 nonce,uint256 deadline)` (keyId = the key's `onchain.id`, amount in token units, 6 decimals).
        #[schema(value_type = Option<Signature>)]
        pub signature: Option<String>,
        /// Keys with a signer: the agent's nonce, below 2^256 (each works once per key, in any order); a JSON integer or a decimal string.
        #[schema(value_type = Option<Nonce>)]
        pub nonce: Option<Uint256>,
        /// Keys with a signer: unix seconds after which the signature is void.
        #[schema(minimum = 0, maximum = 18_446_744_073_709_551_615_u64)]
        pub deadline: Option<u64>,
    }
);

object_tag!(
    /// `"mandate"`
    MandateTag = "mandate"
);
object_tag!(
    /// `"session_key"`
    SessionKeyTag = "session_key"
);
object_tag!(
    /// `"debit_pull"`
    DebitPullTag = "debit_pull"
);

/// The epoch a mandate's or key's ceiling currently counts in.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Epoch {
    /// Start of the epoch.
    #[schema(value_type = Timestamp)]
    pub starts_at: String,
    /// End of the epoch (the next one's start).
    #[schema(value_type = Timestamp)]
    pub ends_at: String,
    /// Pulled so far this epoch.
    #[schema(value_type = AmountString)]
    pub spent: Money,
    /// What may still be pulled this epoch.
    #[schema(value_type = AmountString)]
    pub remaining: Money,
}

/// Where an object lives on chain.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OnChainObject {
    /// The settlement chain.
    pub chain_id: u64,
    /// The allowance state machine.
    #[schema(value_type = Address)]
    pub contract: String,
    /// The object's id on chain (bytes32).
    #[schema(pattern = "^0x[0-9a-f]{64}$")]
    pub id: String,
    /// The transaction that created it, once sent.
    #[schema(value_type = TxHash)]
    pub tx_hash: Option<String>,
}

/// A mandate: at most `max_amount` per `interval`, enforced on chain.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Mandate {
    /// `man_…`
    #[schema(pattern = "^man_")]
    pub id: String,
    /// Always `mandate`.
    pub object: MandateTag,
    /// Mainnet (true) or testnet (false), by the key that created it.
    pub livemode: bool,
    /// Creation time.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
    /// The payer: a wallet address or `ba_…`.
    pub payer_account_id: String,
    /// Ceiling per epoch.
    #[schema(value_type = AmountString)]
    pub max_amount: Money,
    /// ISO 4217 code.
    #[schema(value_type = CurrencyCode)]
    pub currency: &'static str,
    /// The epoch.
    #[schema(value_type = IntervalName)]
    pub interval: &'static str,
    /// Free text; a wallet payer signs it.
    pub purpose: Option<String>,
    /// Who may be paid (signed by a wallet payer and enforced on chain for every key); empty only for a bank-account payer (any destination).
    #[schema(value_type = Vec<Address>)]
    pub payees: Vec<String>,
    /// The one agent whose keys may pull (every key's `signer`), when named.
    #[schema(value_type = Option<Address>)]
    pub agent: Option<String>,
    /// The identity it requires (signed by a wallet payer, enforced on chain on every pull), when any.
    pub requirements: Option<MandateRequirementsView>,
    /// Lifecycle.
    #[schema(value_type = MandateStatus)]
    pub status: &'static str,
    /// This epoch's use.
    pub current_epoch: Epoch,
    /// On chain.
    pub onchain: OnChainObject,
    /// The payer's consent: the typed data a wallet signs (and the signature once given),
    /// or the bank mandate of a bank-account payer.
    pub authorization: Option<Consent>,
}

/// What a mandate requires of identity.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MandateRequirementsView {
    /// The kind of credential the payer must hold, when any.
    #[schema(value_type = Option<VerificationTypeName>)]
    pub payer: Option<&'static str>,
    /// The kind of credential every session key's signer must hold, when any.
    #[schema(value_type = Option<VerificationTypeName>)]
    pub agent: Option<&'static str>,
    /// Whose attestations count: the mode's attestation chain operator (the attester the settlement chain's mirror trusts).
    #[schema(value_type = Address)]
    pub attester: String,
}

/// Status of a session key as shown (`expired` from the moment its time passes).
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionKeyStatus {
    /// Issued, its transaction not yet mined.
    Pending,
    /// On chain and usable.
    Active,
    /// Past `expires_at`.
    Expired,
    /// Revoked.
    Revoked,
    /// Its transaction failed.
    Failed,
}

/// A session key: what an agent pulls with.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SessionKey {
    /// `sk_…`
    #[schema(pattern = "^sk_")]
    pub id: String,
    /// Always `session_key`.
    pub object: SessionKeyTag,
    /// Mainnet or testnet.
    pub livemode: bool,
    /// Creation time.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
    /// Its mandate.
    #[schema(pattern = "^man_")]
    pub mandate_id: String,
    /// Lifecycle.
    pub status: SessionKeyStatus,
    /// When it stops working.
    #[schema(value_type = Timestamp)]
    pub expires_at: String,
    /// Its own ceiling per epoch, or null (the mandate's).
    #[schema(value_type = Option<AmountString>)]
    pub max_amount: Option<Money>,
    /// The mandate's currency.
    #[schema(value_type = CurrencyCode)]
    pub currency: &'static str,
    /// Wallets it may pay, among its mandate's payees (empty only on a bank-account mandate that names no payees: any).
    #[schema(value_type = Vec<Address>)]
    pub allowed_destinations: Vec<String>,
    /// This epoch's use.
    pub current_epoch: Epoch,
    /// On chain.
    pub onchain: OnChainObject,
    /// The agent's address whose signature every pull needs, or null.
    #[schema(value_type = Option<Address>)]
    pub signer: Option<String>,
    /// The domain of the `DebitPull` signatures a key with a signer needs.
    #[schema(value_type = Option<Eip712Domain>)]
    pub eip712_domain: Option<Value>,
    /// The agent's bearer secret (`sks_…`): only in the creation response. A replay of
    /// the creation (same Idempotency-Key) answers null with `secret_redacted`: the
    /// secret is never stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^sks_")]
    pub secret: Option<String>,
    /// True in a replayed creation, whose secret is not shown again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_redacted: Option<bool>,
}

/// A debit pull.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DebitPull {
    /// `pull_…`
    #[schema(pattern = "^pull_")]
    pub id: String,
    /// Always `debit_pull`.
    pub object: DebitPullTag,
    /// Mainnet or testnet.
    pub livemode: bool,
    /// Creation time.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
    /// The key it pulled on.
    #[schema(pattern = "^sk_")]
    pub session_key_id: String,
    /// The key's mandate.
    #[schema(pattern = "^man_")]
    pub mandate_id: String,
    /// How much.
    #[schema(value_type = AmountString)]
    pub amount: Money,
    /// The mandate's currency.
    #[schema(value_type = CurrencyCode)]
    pub currency: &'static str,
    /// The wallet paid.
    #[schema(value_type = Address)]
    pub destination: String,
    /// Free text.
    pub description: Option<String>,
    /// Lifecycle.
    #[schema(value_type = PullStatus)]
    pub status: &'static str,
    /// Why it was declined (status declined).
    #[schema(value_type = DeclineCode)]
    pub decline_code: Option<&'static str>,
    /// Why its bank leg failed (status failed).
    #[schema(value_type = FailureCode)]
    pub failure_reason: Option<&'static str>,
    /// When the chain authorized it.
    #[schema(value_type = Option<Timestamp>)]
    pub authorized_at: Option<String>,
    /// Its transaction.
    pub onchain: OnChainTx,
}

list_type!(
    /// A page of mandates.
    MandateList of Mandate
);
list_type!(
    /// A page of session keys.
    SessionKeyList of SessionKey
);
list_type!(
    /// A page of debit pulls.
    DebitPullList of DebitPull
);

list_new!(
    MandateList of Mandate,
    SessionKeyList of SessionKey,
    DebitPullList of DebitPull
);

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Bytes;
    use serde_json::Value;

    use crate::body::Fields;
    use crate::types::RequestBody;

    fn fields(json: Value) -> Fields {
        Fields::parse(Bytes::from(json.to_string())).unwrap()
    }

    #[test]
    fn mandate_create_reads_its_fields_by_their_schema_names() {
        let m = MandateCreate::read(fields(json!({
            "payer_account_id": "ba_1", "currency": "usd", "max_amount": 12.5,
            "interval": "daily", "purpose": null,
        })))
        .unwrap();
        assert_eq!(m.max_amount, AmountText("12.5".into()));
        assert!(m.purpose.is_none());
    }
}
