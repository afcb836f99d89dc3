//! The typed API surface: every request body and every response of `/v1` as a Rust type.
//! Handlers read requests into these types and answer with them; the OpenAPI document's
//! schemas are generated from them ([`utoipa::ToSchema`], see [`crate::openapi`]), so a
//! handler's shape and the document cannot drift apart. Leaf types whose rules a derive
//! cannot say (amounts, addresses, the enums the store defines) write their schema once
//! here, next to the code that enforces it.

use std::borrow::Cow;

use openrail_store::money::{Decimal, MAX_MAJOR_UNITS, minor_to_decimal};
use openrail_store::{Amount, AmountError, Currency};
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

use crate::body::{Fields, invalid};
use crate::error::ApiError;

/// Marks a schema written as JSON: utoipa's [`Schema`] type cannot hold every keyword of
/// JSON Schema 2020-12 (`const`, type arrays, `examples` on a `oneOf`), so a leaf schema
/// travels through utoipa as an object whose description is this marker and its JSON, and
/// [`crate::openapi`] puts the JSON in its place ([`expand_leaf`]).
const LEAF: &str = "openrail-leaf-schema:";

/// A schema written as JSON (OpenAPI 3.1 is JSON Schema 2020-12).
pub(crate) fn schema_json(v: Value) -> RefOr<Schema> {
    RefOr::T(Schema::Object(
        utoipa::openapi::ObjectBuilder::new()
            .description(Some(format!("{LEAF}{v}")))
            .build(),
    ))
}

/// The JSON a [`schema_json`] placeholder stands for, if `v` is one.
pub(crate) fn expand_leaf(v: &Value) -> Option<Value> {
    let text = v.get("description")?.as_str()?.strip_prefix(LEAF)?;
    serde_json::from_str(text).ok()
}

/// A leaf type whose schema is written here as JSON, listed as a named component.
macro_rules! leaf_schema {
    ($(#[$m:meta])* $name:ident = $schema:expr) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name;
        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                schema_json($schema)
            }
        }
        impl ToSchema for $name {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }
        }
    };
}

/// Decimal major units with exactly the currency's two decimals, as responses write them.
pub const AMOUNT_OUT_PATTERN: &str = "^[0-9]+\\.[0-9]{2}$";

/// What a request's amount string may be: a positive decimal in major units, at most two
/// significant decimals (trailing zeros are fine), at most one trillion. Exactly what
/// [`Amount::parse`] accepts: no sign, exponent, separator or space.
pub const AMOUNT_IN_PATTERN: &str =
    "^0*(1000000000000(\\.0+)?|[1-9][0-9]{0,11}(\\.[0-9]{1,2}0*)?)$|^0+\\.(0[1-9]|[1-9][0-9]?)0*$";

/// What a request's balance string may be: an amount ([`AMOUNT_IN_PATTERN`]) or zero.
pub const BALANCE_IN_PATTERN: &str =
    "^0*(1000000000000(\\.0+)?|[1-9][0-9]{0,11}(\\.[0-9]{1,2}0*)?)$|^0+(\\.[0-9]{1,2}0*)?$";

/// A wallet address: `0x` and 40 hex digits; mixed case must be a valid EIP-55 checksum.
pub const ADDRESS_PATTERN: &str = "^0x[0-9a-fA-F]{40}$";

leaf_schema!(
    /// An amount in a response: a decimal string in major units.
    AmountString = json!({
        "type": "string",
        "pattern": AMOUNT_OUT_PATTERN,
        "description": "Decimal major units with the currency's two decimals (`\"12.50\"` is twelve fifty); exact, never a float",
        "examples": ["12.50"],
    })
);

leaf_schema!(
    /// An amount in a request: a JSON number or a decimal string, read exactly from its
    /// text (never through a float).
    AmountInput = json!({
        "description": "Decimal major units, exact: a decimal string (`\"12.50\"`) or a JSON number (`12.5`). Greater than zero, at most two significant decimals, at most 1,000,000,000,000. No sign, exponent, separators or spaces in strings; a number is read from its text, so `1e3` is refused as a string would be.",
        "oneOf": [
            { "type": "string", "pattern": AMOUNT_IN_PATTERN },
            { "type": "number", "exclusiveMinimum": 0, "maximum": MAX_MAJOR_UNITS, "multipleOf": 0.01 },
        ],
        "examples": ["12.50"],
    })
);

leaf_schema!(
    /// A wallet address.
    Address = json!({
        "type": "string",
        "pattern": ADDRESS_PATTERN,
        "not": { "const": "0x0000000000000000000000000000000000000000" },
        "format": "evm-address",
        "description": "An EVM address. All-lowercase and all-uppercase hex are accepted; mixed case must carry a valid EIP-55 checksum (a typo is refused with 400 parameter_invalid). The zero address and Openrail's own contracts are refused as payer, source, destination or allow-list entry.",
        "examples": ["0x90F79bf6EB2c4f870365E785982E1f101E93b906"],
    })
);

leaf_schema!(
    /// A wallet address or a simulated bank account.
    Party = json!({
        "anyOf": [
            { "$ref": "#/components/schemas/Address" },
            { "type": "string", "pattern": "^ba_[0-9A-Za-z]+$", "description": "A simulated bank account (`ba_…`)" },
        ],
    })
);

/// The schema of a payment's party: its `type` decides what its id is (the struct reads
/// both members; this says which pairs the server accepts).
fn party_schema(id: &str, what: &str) -> Value {
    json!({
        "description": what,
        "oneOf": [
            {
                "type": "object",
                "required": ["type", id],
                "properties": {
                    "type": { "const": "wallet" },
                    id: { "$ref": "#/components/schemas/Address" },
                },
                "additionalProperties": false,
            },
            {
                "type": "object",
                "required": ["type", id],
                "properties": {
                    "type": { "const": "bank_account" },
                    id: { "type": "string", "pattern": "^ba_[0-9A-Za-z]+$", "description": "A simulated bank account" },
                },
                "additionalProperties": false,
            },
        ],
    })
}

leaf_schema!(
    /// A payment's source in a request ([`PaymentSource`]).
    PaymentSourceInput = party_schema("id", "Where the money comes from: a wallet (which approved the router and signs the payment) or a simulated bank account")
);

leaf_schema!(
    /// A payment's destination in a request ([`PaymentDestination`]).
    PaymentDestinationInput = party_schema("address", "Where the money goes: a wallet or a simulated bank account")
);

leaf_schema!(
    /// A webhook URL.
    WebhookUrl = json!({
        "type": "string",
        "pattern": "^https?://[^\\s/?#]+[^\\s]*$",
        "maxLength": 2048,
        "description": "Where deliveries are POSTed. Mainnet: https to a host that resolves to public addresses only. Testnet: also http, and localhost or 127.0.0.1. Checked when set: a host that does not resolve, or resolves to an address the mode may not deliver to, is 400 `url_not_allowed`.",
        "examples": ["http://127.0.0.1:3000/webhooks"],
    })
);

leaf_schema!(
    /// An RFC 3339 UTC time.
    Timestamp = json!({
        "type": "string",
        "format": "date-time",
        "description": "RFC 3339, UTC",
        "examples": ["2026-01-01T00:00:00Z"],
    })
);

leaf_schema!(
    /// A 65-byte ECDSA signature (or an ERC-1271 wallet's answer), hex.
    Signature = json!({
        "type": "string",
        "pattern": "^0x[0-9a-fA-F]{130}$",
        "description": "A 65-byte signature as 0x and 130 hex digits (what eth_signTypedData_v4 and `cast wallet sign --data` print)",
    })
);

leaf_schema!(
    /// A transaction hash.
    TxHash = json!({
        "type": ["string", "null"],
        "pattern": "^0x[0-9a-f]{64}$",
        "description": "The transaction's hash once sent, else null",
    })
);

leaf_schema!(
    /// An ISO 4217 currency code as responses write it.
    CurrencyCode = json!({
        "type": "string",
        "enum": Currency::ALL.iter().map(|c| c.code()).collect::<Vec<_>>(),
        "description": "ISO 4217, uppercase",
    })
);

leaf_schema!(
    /// An ISO 4217 currency code as requests may write it (any case).
    CurrencyInput = json!({
        "type": "string",
        "enum": Currency::ALL.iter().flat_map(|c| [c.code().to_string(), c.code().to_ascii_lowercase()]).collect::<Vec<_>>(),
        "description": "ISO 4217: USD or EUR (case-insensitive: usd and eur too)",
        "examples": ["USD"],
    })
);

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
    /// Why money did not move: the `failure_reason` of a failed payment, bank transfer or
    /// debit pull's bank leg (`null` while nothing failed).
    FailureCode = json!({
        "type": ["string", "null"],
        "enum": openrail_domain::FailureReason::ALL.iter().map(|s| Value::from(s.as_str())).chain([Value::Null]).collect::<Vec<_>>(),
    })
);

leaf_schema!(
    /// Why a pull was declined (also the 422 `code`).
    DeclineCode = json!({
        "type": ["string", "null"],
        "enum": openrail_store::agentic::DeclineReason::ALL.iter().map(|s| Value::from(s.as_str())).chain([Value::Null]).collect::<Vec<_>>(),
    })
);

leaf_schema!(
    /// Status of a payment.
    PaymentStatus = json!({
        "type": "string",
        "enum": openrail_store::payments::PaymentStatus::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "description": "requires_authorization (a wallet source must sign) → pending → processing (sent) → succeeded | failed",
    })
);

leaf_schema!(
    /// A payment's refund.
    RefundStatus = json!({
        "type": ["string", "null"],
        "enum": openrail_store::payments::RefundStatus::ALL.iter().map(|s| Value::from(s.as_str())).chain([Value::Null]).collect::<Vec<_>>(),
        "description": "Set when the destination leg failed after the source leg: the amount goes back to the source (pending, then succeeded, or failed when the refund itself failed); null when no money moved",
    })
);

leaf_schema!(
    /// Kind of a payment's source or destination.
    PartyType = json!({
        "type": "string",
        "enum": openrail_store::payments::PartyKind::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    })
);

leaf_schema!(
    /// How a simulated bank account behaves.
    BankBehavior = json!({
        "type": "string",
        "enum": openrail_store::bank::Behavior::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "description": "settles (default): transfers settle after the delay; insufficient_funds: debits fail; closed: every transfer fails account_closed; delayed: settle after a longer delay (default 5 s); fails_late: debits show settled, then fail as returned one delay later",
    })
);

leaf_schema!(
    /// Direction of a bank transfer.
    TransferDirection = json!({
        "type": "string",
        "enum": openrail_store::bank::Direction::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    })
);

leaf_schema!(
    /// Status of a bank transfer.
    TransferStatus = json!({
        "type": "string",
        "enum": openrail_store::bank::TransferStatus::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    })
);

leaf_schema!(
    /// Type of an event.
    EventType = json!({
        "type": "string",
        "enum": openrail_store::events::EventType::all().into_iter().map(|t| t.as_str()).collect::<Vec<_>>(),
    })
);

leaf_schema!(
    /// What a webhook endpoint subscribes to.
    EnabledEvent = json!({
        "type": "string",
        "enum": std::iter::once("*").chain(openrail_store::events::EventType::all().into_iter().map(|t| t.as_str())).collect::<Vec<_>>(),
        "description": "An event type, or \"*\" (alone) for every type",
    })
);

leaf_schema!(
    /// Status of a webhook endpoint.
    EndpointStatus = json!({
        "type": "string",
        "enum": openrail_store::webhooks::EndpointStatus::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    })
);

leaf_schema!(
    /// Status of a webhook delivery.
    DeliveryStatus = json!({
        "type": "string",
        "enum": openrail_store::webhooks::DeliveryStatus::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    })
);

leaf_schema!(
    /// EIP-712 typed data, exactly what `eth_signTypedData_v4` and `cast wallet sign --data`
    /// take.
    TypedData = json!({
        "type": "object",
        "required": ["types", "primaryType", "domain", "message"],
        "properties": {
            "types": { "type": "object", "additionalProperties": { "type": "array", "items": {
                "type": "object", "required": ["name", "type"],
                "properties": { "name": { "type": "string" }, "type": { "type": "string" } },
            } } },
            "primaryType": { "type": "string", "enum": ["Mandate", "Payment"] },
            "domain": { "$ref": "#/components/schemas/Eip712Domain" },
            "message": { "type": "object" },
        },
        "additionalProperties": false,
    })
);

leaf_schema!(
    /// The EIP-712 domain of Openrail's signatures.
    Eip712Domain = json!({
        "type": "object",
        "required": ["name", "version", "chainId", "verifyingContract"],
        "properties": {
            "name": { "const": "Openrail" },
            "version": { "const": "1" },
            "chainId": { "type": "integer", "minimum": 0 },
            "verifyingContract": { "$ref": "#/components/schemas/Address" },
        },
        "additionalProperties": false,
    })
);

// ------------------------------------------------------------------ amounts

/// An amount in a response: exact decimal major units (a [`Decimal`] at the currency's
/// scale), written as a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Money(pub Decimal);

impl Money {
    /// Minor units of `currency` as major units.
    pub fn of(minor: u64, currency: Currency) -> Self {
        Self(minor_to_decimal(minor, currency))
    }
}

impl Serialize for Money {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// The text of an amount a request sent (a JSON number's own text, or a string's
/// content), parsed once the currency is known ([`AmountText::amount`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmountText(pub String);

impl AmountText {
    /// The amount in `currency`; `param` names the field in errors.
    pub fn amount(&self, param: &str, currency: Currency) -> Result<Amount, ApiError> {
        Amount::parse(&self.0, currency).map_err(|e| amount_invalid(param, e))
    }

    /// Minor units in `currency`, zero allowed (a starting balance).
    pub fn minor_or_zero(&self, param: &str, currency: Currency) -> Result<u64, ApiError> {
        match Amount::parse(&self.0, currency) {
            Ok(a) => Ok(a.minor()),
            Err(AmountError::Zero) => Ok(0),
            Err(e) => Err(amount_invalid(param, e)),
        }
    }
}

fn amount_invalid(param: &str, e: AmountError) -> ApiError {
    ApiError::AmountInvalid {
        param: param.into(),
        detail: e.to_string(),
    }
}

// ------------------------------------------------------------------ requests

/// A value of a request field, read from [`Fields`] by name with the field's own errors.
pub trait FromField: Sized {
    /// Takes field `name` (absent and `null` are the same).
    fn from_field(f: &mut Fields, name: &str) -> Result<Self, ApiError>;
}

/// A JSON object taken as it is (a credential, a presentation, verification options).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonObject(pub serde_json::Map<String, serde_json::Value>);

impl FromField for JsonObject {
    fn from_field(f: &mut Fields, name: &str) -> Result<Self, ApiError> {
        f.opt_json_object(name)?
            .map(JsonObject)
            .ok_or_else(|| ApiError::ParameterMissing { param: name.into() })
    }
}

impl FromField for Option<JsonObject> {
    fn from_field(f: &mut Fields, name: &str) -> Result<Self, ApiError> {
        Ok(f.opt_json_object(name)?.map(JsonObject))
    }
}

impl FromField for String {
    fn from_field(f: &mut Fields, name: &str) -> Result<Self, ApiError> {
        f.string(name)
    }
}

impl FromField for Option<String> {
    fn from_field(f: &mut Fields, name: &str) -> Result<Self, ApiError> {
        f.opt_string(name)
    }
}

impl FromField for u64 {
    fn from_field(f: &mut Fields, name: &str) -> Result<Self, ApiError> {
        f.integer(name)
    }
}

impl FromField for Option<u64> {
    fn from_field(f: &mut Fields, name: &str) -> Result<Self, ApiError> {
        f.opt_integer(name)
    }
}

impl FromField for AmountText {
    fn from_field(f: &mut Fields, name: &str) -> Result<Self, ApiError> {
        f.amount_text(name).map(AmountText)
    }
}

impl FromField for Option<AmountText> {
    fn from_field(f: &mut Fields, name: &str) -> Result<Self, ApiError> {
        Ok(f.opt_amount_text(name)?.map(AmountText))
    }
}

impl FromField for Option<Vec<String>> {
    fn from_field(f: &mut Fields, name: &str) -> Result<Self, ApiError> {
        f.opt_string_array(name)
    }
}

impl FromField for Vec<String> {
    fn from_field(f: &mut Fields, name: &str) -> Result<Self, ApiError> {
        f.opt_string_array(name)?
            .ok_or_else(|| ApiError::ParameterMissing { param: name.into() })
    }
}

/// Free text of at most 500 characters, with no control characters (C0, DEL, C1: NUL, BEL,
/// line breaks, …) and no bidirectional formatting characters (embeddings, overrides,
/// isolates and marks), which could make a text read otherwise than it is where it is
/// shown (the hosted consent page, a wallet, the dashboard).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text(pub String);

/// Longest free-text field, in characters.
pub const MAX_TEXT: usize = 500;

/// What free text may be: [`Text`]'s rule as a pattern (ECMAScript and Python read
/// `\uXXXX`), for the document.
pub const TEXT_PATTERN: &str =
    "^[^\\u0000-\\u001F\\u007F-\\u009F\\u061C\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069]*$";

/// Whether `c` may not appear in free text: a control character (C0, DEL, C1), or a
/// bidirectional formatting character (U+202A–U+202E embeddings and overrides,
/// U+2066–U+2069 isolates, U+200E/U+200F and U+061C marks).
pub fn refused_in_text(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

impl Text {
    /// `t` as free text, or what is wrong with it (for a `parameter_invalid` detail).
    pub fn check(t: &str) -> Result<(), String> {
        if t.chars().count() > MAX_TEXT {
            return Err(format!("is longer than {MAX_TEXT} characters"));
        }
        if let Some((i, c)) = t.chars().enumerate().find(|(_, c)| refused_in_text(*c)) {
            let kind = if c.is_control() {
                "a control character"
            } else {
                "a bidirectional formatting character"
            };
            return Err(format!(
                "contains {kind} (U+{:04X} at character {}); send plain text without control or \
                 bidirectional formatting characters",
                u32::from(c),
                i + 1
            ));
        }
        Ok(())
    }
}

impl FromField for Option<Text> {
    fn from_field(f: &mut Fields, name: &str) -> Result<Self, ApiError> {
        match f.opt_string(name)? {
            Some(t) => match Text::check(&t) {
                Ok(()) => Ok(Some(Text(t))),
                Err(detail) => Err(invalid(&f.param(name), &detail)),
            },
            None => Ok(None),
        }
    }
}

leaf_schema!(
    /// Free text in a request.
    FreeText = json!({
        "type": "string",
        "maxLength": MAX_TEXT,
        "pattern": TEXT_PATTERN,
        "description": "Free text, up to 500 characters, without control characters (U+0000–U+001F, U+007F–U+009F: NUL, BEL, tab, line breaks) or bidirectional formatting characters (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C); else 400 `parameter_invalid` naming the field.",
    })
);

/// A nonce: a whole number below 2^256, as a JSON integer or a decimal string; kept as
/// canonical decimal text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uint256(pub String);

impl FromField for Option<Uint256> {
    fn from_field(f: &mut Fields, name: &str) -> Result<Self, ApiError> {
        Ok(f.opt_uint256(name)?.map(Uint256))
    }
}

/// A request body type: read field by field, in declaration order, from a strict JSON
/// object ([`Fields`]: duplicates and unknown fields refused).
pub trait RequestBody: Sized {
    /// Reads the whole object (unknown fields are refused at the end).
    fn read(f: Fields) -> Result<Self, ApiError>;
}

/// Declares a request body: the struct (with its schema, from the same field list) and
/// its reader, which takes every field by its Rust name, so the document's properties
/// and what the server reads are one list.
macro_rules! request_body {
    ($(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* pub $field:ident : $ty:ty),* $(,)? }) => {
        #[derive(Debug, Clone, ToSchema)]
        $(#[$m])*
        pub struct $name { $($(#[$fm])* pub $field: $ty),* }
        impl RequestBody for $name {
            fn read(mut f: Fields) -> Result<Self, ApiError> {
                let v = Self { $($field: FromField::from_field(&mut f, field_name(stringify!($field)))?),* };
                f.finish()?;
                Ok(v)
            }
        }
        impl FromField for $name {
            fn from_field(f: &mut Fields, name: &str) -> Result<Self, ApiError> {
                <$name as RequestBody>::read(f.object(name)?)
            }
        }
    };
}

/// A field's JSON name from its Rust name (`r#type` → `type`).
fn field_name(rust: &'static str) -> &'static str {
    rust.strip_prefix("r#").unwrap_or(rust)
}

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
    /// `POST /v1/mandates/{id}/authorize` and `POST /v1/payments/{id}/authorize`.
    #[schema(example = json!({"signature": "0x5f1c…1b"}))]
    pub struct AuthorizationCreate {
        /// The payer's signature of the object's `authorization.typed_data`.
        #[schema(value_type = Signature)]
        pub signature: String,
    }
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

leaf_schema!(
    /// A 256-bit nonce.
    Nonce = json!({
        "oneOf": [
            { "type": "integer", "minimum": 0, "maximum": 18_446_744_073_709_551_615_u64 },
            { "type": "string", "pattern": "^[0-9]{1,78}$", "description": "Decimal digits below 2^256" },
        ],
    })
);

request_body!(
    /// Where a payment's money comes from.
    pub struct PaymentSource {
        /// `wallet` or `bank_account`.
        #[schema(value_type = PartyType)]
        pub r#type: String,
        /// A wallet address (which approved the router and signs the payment) or a bank account `ba_…`.
        #[schema(value_type = Party)]
        pub id: String,
    }
);

request_body!(
    /// Where a payment's money goes.
    pub struct PaymentDestination {
        /// `wallet` or `bank_account`.
        #[schema(value_type = PartyType)]
        pub r#type: String,
        /// A wallet address or a bank account `ba_…`.
        #[schema(value_type = Party)]
        pub address: String,
    }
);

request_body!(
    /// `POST /v1/payments`: a one-time payment. The destination must differ from the
    /// source (else 400 `parameter_invalid`, `param: destination.address`).
    #[schema(example = json!({"amount": "12.50", "currency": "USD", "source": {"type": "wallet", "id": "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"}, "destination": {"type": "wallet", "address": "0x90F79bf6EB2c4f870365E785982E1f101E93b906"}}))]
    pub struct PaymentCreate {
        /// ISO 4217 code.
        #[schema(value_type = CurrencyInput)]
        pub currency: String,
        /// Major units.
        #[schema(value_type = AmountInput)]
        pub amount: AmountText,
        /// The source.
        #[schema(value_type = PaymentSourceInput)]
        pub source: PaymentSource,
        /// The destination.
        #[schema(value_type = PaymentDestinationInput)]
        pub destination: PaymentDestination,
    }
);

request_body!(
    /// `POST /v1/bank-accounts`: a simulated bank account (testnet).
    #[schema(example = json!({"owner_name": "Ada Lovelace", "currency": "EUR", "balance": "1500.00", "behavior": "settles", "delay_seconds": 2}))]
    pub struct BankAccountCreate {
        /// The holder's name: 1 to 200 characters, not only spaces.
        #[schema(min_length = 1, max_length = 200, pattern = "\\S")]
        pub owner_name: String,
        /// ISO 4217 code.
        #[schema(value_type = CurrencyInput)]
        pub currency: String,
        /// The starting balance (zero allowed; default zero).
        #[schema(value_type = Option<BalanceInput>)]
        pub balance: Option<AmountText>,
        /// How its transfers behave.
        #[schema(value_type = Option<BankBehavior>)]
        pub behavior: Option<String>,
        /// How long its transfers stay pending, 0 to 3600 seconds.
        #[schema(minimum = 0, maximum = 3600)]
        pub delay_seconds: Option<u64>,
    }
);

request_body!(
    /// `POST /v1/account`: the account's settings for the key's mode.
    #[schema(example = json!({"payments_chain": "attestation"}))]
    pub struct AccountUpdate {
        /// Which chain settles the account's one-time payments from now on (payments already created keep theirs). Agentic debits always settle on the settlement chain.
        #[schema(value_type = Option<PaymentsChainName>)]
        pub payments_chain: Option<String>,
    }
);

leaf_schema!(
    /// Which of a mode's chains.
    PaymentsChainName = json!({
        "type": "string",
        "enum": openrail_store::accounts::PaymentsChain::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        "description": "settlement: the chain with the allowance state machine (agentic debits) and a settlement router; attestation: the second chain, with a settlement router and the attestation registry",
    })
);

leaf_schema!(
    /// A balance in a request: an amount, or zero.
    BalanceInput = json!({
        "description": "Decimal major units, exact, zero allowed: a decimal string or a JSON number",
        "oneOf": [
            { "type": "string", "pattern": BALANCE_IN_PATTERN },
            { "type": "number", "minimum": 0, "maximum": MAX_MAJOR_UNITS, "multipleOf": 0.01 },
        ],
    })
);

request_body!(
    /// `POST /v1/webhook-endpoints`.
    #[schema(example = json!({"url": "http://127.0.0.1:3000/webhooks", "enabled_events": ["debit_pull.authorized", "payment.succeeded"]}))]
    pub struct WebhookEndpointCreate {
        /// Where deliveries are POSTed.
        #[schema(value_type = WebhookUrl)]
        pub url: String,
        /// Event types, each once, or `["*"]` for every type.
        #[schema(value_type = Vec<EnabledEvent>, min_items = 1, max_items = 64)]
        pub enabled_events: Vec<String>,
        /// Free text, up to 500 characters, without control or bidirectional formatting characters.
        #[schema(value_type = Option<FreeText>)]
        pub description: Option<Text>,
    }
);

request_body!(
    /// `POST /v1/webhook-endpoints/{id}`: what to change (absent fields stay).
    pub struct WebhookEndpointUpdate {
        /// A new URL (the same rules as at creation).
        #[schema(value_type = Option<WebhookUrl>)]
        pub url: Option<String>,
        /// New event types.
        #[schema(value_type = Option<Vec<EnabledEvent>>, min_items = 1, max_items = 64)]
        pub enabled_events: Option<Vec<String>>,
        /// A new description (`null` clears it); free text as at creation.
        #[schema(value_type = Option<FreeText>)]
        pub description: Option<Text>,
        /// `enabled` (clears the failure record) or `disabled`.
        #[schema(value_type = Option<EndpointStatus>)]
        pub status: Option<String>,
    }
);

request_body!(
    /// `POST /v1/events/{id}/redeliver`: `{}` for every enabled endpoint that wants the
    /// event's type, or one endpoint.
    pub struct RedeliverCreate {
        /// Only this endpoint (`we_…`), whatever its enabled_events.
        #[schema(pattern = "^we_")]
        pub endpoint: Option<String>,
    }
);

request_body!(
    /// `POST /v1/identity/verifications`: a verification session about a wallet (testnet:
    /// answered by a simulated provider).
    #[schema(example = json!({"type": "personhood", "subject": "0x90F79bf6EB2c4f870365E785982E1f101E93b906", "simulate": {"outcome": "failed", "failure_reason": "the document had expired"}}))]
    pub struct IdentityVerificationCreate {
        /// What to verify; a verified session issues the matching credential (`PersonhoodCredential`, `FinancialHealthCredential`, `AgentCredential`).
        #[schema(value_type = VerificationTypeName)]
        pub r#type: String,
        /// The wallet verified: the credential's subject is its `did:pkh` on the settlement chain.
        #[schema(value_type = Address)]
        pub subject: String,
        /// Testnet: what the simulated provider answers once the session is submitted (default: `verified`).
        #[schema(value_type = Option<VerificationSimulateInput>)]
        pub simulate: Option<VerificationSimulate>,
    }
);

request_body!(
    /// What testnet's simulated provider answers a session.
    pub struct VerificationSimulate {
        /// `verified` (about half a second after submission), `failed` (the first check fails with `failure_reason`; a later submission passes) or `slow` (verified after about five seconds). Default `verified`.
        #[schema(value_type = Option<SimulatedOutcome>)]
        pub outcome: Option<String>,
        /// The `last_error.reason` of the failed check (used by `failed` only). Free text, up to 500 characters, without control or bidirectional formatting characters.
        #[schema(value_type = Option<FreeText>)]
        pub failure_reason: Option<Text>,
    }
);

impl FromField for Option<VerificationSimulate> {
    fn from_field(f: &mut Fields, name: &str) -> Result<Self, ApiError> {
        f.opt_object(name)?
            .map(<VerificationSimulate as RequestBody>::read)
            .transpose()
    }
}

leaf_schema!(
    /// `simulate` of a verification session.
    VerificationSimulateInput = json!({
        "type": "object",
        "properties": {
            "outcome": { "$ref": "#/components/schemas/SimulatedOutcome" },
            "failure_reason": { "$ref": "#/components/schemas/FreeText" },
        },
        "additionalProperties": false,
    })
);

leaf_schema!(
    /// What a verification session verifies.
    VerificationTypeName = json!({
        "type": "string",
        "enum": openrail_store::verifications::VerificationType::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
    })
);

leaf_schema!(
    /// What the simulated provider answers.
    SimulatedOutcome = json!({
        "type": "string",
        "enum": openrail_store::verifications::Scenario::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
    })
);

leaf_schema!(
    /// The lifecycle of a verification session.
    VerificationStatusName = json!({
        "type": "string",
        "enum": openrail_store::verifications::VerificationStatus::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        "description": "requires_input: waiting for the flow (again, with `last_error`, after a failed check); processing: submitted, the provider is checking; verified: passed, the credential is issued (`credential_id`); canceled: withdrawn before submission",
    })
);

// ------------------------------------------------------------------ responses

/// Declares the `object` member of a resource: a one-value string.
macro_rules! object_tag {
    ($(#[$m:meta])* $name:ident = $text:literal) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $name;
        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($text)
            }
        }
        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                schema_json(json!({ "type": "string", "const": $text }))
            }
        }
        impl ToSchema for $name {}
    };
}

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
object_tag!(
    /// `"payment"`
    PaymentTag = "payment"
);
object_tag!(
    /// `"bank_account"`
    BankAccountTag = "bank_account"
);
object_tag!(
    /// `"account"`
    AccountTag = "account"
);
object_tag!(
    /// `"bank_transfer"`
    BankTransferTag = "bank_transfer"
);
object_tag!(
    /// `"event"`
    EventTag = "event"
);
object_tag!(
    /// `"identity_verification"`
    IdentityVerificationTag = "identity_verification"
);
object_tag!(
    /// `"webhook_endpoint"`
    WebhookEndpointTag = "webhook_endpoint"
);
object_tag!(
    /// `"webhook_delivery"`
    WebhookDeliveryTag = "webhook_delivery"
);
object_tag!(
    /// `"list"`
    ListTag = "list"
);
object_tag!(
    /// `"identity_attestation"`
    IdentityAttestationTag = "identity_attestation"
);

leaf_schema!(
    /// Status of an identity attestation (`expired`: its credential's `validUntil` passed).
    AttestationStatus = json!({
        "type": "string",
        "enum": openrail_store::attestations::AttestationStatus::ALL.iter().map(|s| s.as_str()).chain(["expired"]).collect::<Vec<_>>(),
    })
);

/// A verified credential attested on the mode's attestation chain: what the chain holds —
/// the credential's digest, issuer, type, expiry and status reference, and the wallet it is
/// about — never its claims.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IdentityAttestation {
    /// `att_…`
    #[schema(pattern = "^att_")]
    pub id: String,
    /// Always `identity_attestation`.
    pub object: IdentityAttestationTag,
    /// `pending` → `active` → `revoked` (or `expired` once its expiry passed); `failed`
    /// when its transaction failed.
    #[schema(value_type = AttestationStatus)]
    pub status: &'static str,
    /// The wallet the credential is about (its subject).
    #[schema(value_type = Address)]
    pub recipient: String,
    /// The credential Openrail issued, when attested from one.
    pub credential_id: Option<String>,
    /// SHA-256 of the credential (hex, 64 digits).
    #[schema(pattern = "^[0-9a-f]{64}$")]
    pub credential_digest: String,
    /// The credential's issuer (a DID).
    pub issuer: String,
    /// The credential's most specific type.
    pub credential_type: String,
    /// The credential's `validUntil`: the attestation expires then.
    #[schema(value_type = Option<Timestamp>)]
    pub expires_at: Option<String>,
    /// The credential's revocation status list.
    pub status_list_credential: Option<String>,
    /// Its index in that list.
    pub status_list_index: Option<u64>,
    /// The chain it is attested on (the mode's attestation chain).
    pub chain_id: u64,
    /// The attestation registry.
    #[schema(value_type = Address)]
    pub registry: String,
    /// The registry schema (0x, 32 bytes).
    #[schema(pattern = "^0x[0-9a-f]{64}$")]
    pub schema: String,
    /// The attestation's uid on chain, once mined.
    #[schema(pattern = "^0x[0-9a-f]{64}$")]
    pub uid: Option<String>,
    /// Its `attest` transaction.
    pub tx_hash: Option<String>,
    /// When its revocation was mined.
    #[schema(value_type = Option<Timestamp>)]
    pub revoked_at: Option<String>,
    /// Whether the settlement chain's attestation mirror has recorded it: only then does an active attestation meet a mandate's identity requirement, which the chain checks against the mirror. Set a moment after `active` (the attestation chain's operator signs a receipt and the settlement chain's operator records it); a revocation reaches the mirror the same way, and the API refuses a revoked attestation at once.
    pub settlement_recorded: bool,
    /// Whether it is a mainnet object.
    pub livemode: bool,
    /// Creation time.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
    /// Last change.
    #[schema(value_type = Timestamp)]
    pub updated_at: String,
}

leaf_schema!(
    /// `POST /v1/identity/attestations`: one of `credential_id` and `verifiableCredential`.
    AttestationCreate = json!({
        "type": "object",
        "properties": {
            "credential_id": { "type": "string", "description": "A credential this account issued (`POST /v1/identity/credentials/issue`), not revoked" },
            "verifiableCredential": { "type": "object", "description": "A credential to verify and attest (any issuer; it must verify)", "additionalProperties": true },
            "recipient": { "type": "string", "pattern": "^0x[0-9a-fA-F]{40}$", "description": "The wallet to attest about, when the credential's subject is not one (`did:pkh:eip155:…:0x…`; a bare 0x address only for a credential named by `credential_id`: in a posted credential it is no IRI, so its proof does not cover it); when both are given they must agree" },
        },
        "example": {"credential_id": "urn:uuid:…"},
    })
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

/// A transaction of a pull or payment.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OnChainTx {
    /// The settlement chain.
    pub chain_id: u64,
    /// The transaction, once sent.
    #[schema(value_type = TxHash)]
    pub tx_hash: Option<String>,
}

/// How the payer consented.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Consent {
    /// A wallet payer or source signs the EIP-712 `typed_data` (with
    /// `eth_signTypedData_v4` or `cast wallet sign --data`) before `expires_at`, then sends
    /// the signature to `…/authorize`.
    PayerSignature {
        /// Who must sign (checksummed).
        #[schema(value_type = Address)]
        signer: String,
        /// What to sign.
        #[schema(value_type = TypedData)]
        typed_data: Value,
        /// The signature's on-chain deadline.
        #[schema(value_type = Timestamp)]
        expires_at: String,
        /// The signature, once given.
        #[schema(value_type = Option<Signature>)]
        signature: Option<String>,
        /// When it was given.
        #[schema(value_type = Option<Timestamp>)]
        authorized_at: Option<String>,
    },
    /// A bank-account payer: its bank mandate is the consent; the treasury funds the chain
    /// side.
    BankMandate,
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

/// A payment's source as shown.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PaymentSourceView {
    /// `wallet` or `bank_account`.
    #[serde(rename = "type")]
    #[schema(value_type = PartyType)]
    pub kind: &'static str,
    /// The wallet address or `ba_…`.
    pub id: String,
}

/// A payment's destination as shown.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PaymentDestinationView {
    /// `wallet` or `bank_account`.
    #[serde(rename = "type")]
    #[schema(value_type = PartyType)]
    pub kind: &'static str,
    /// The wallet address or `ba_…`.
    pub address: String,
}

/// A one-time payment.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Payment {
    /// `pay_…`
    #[schema(pattern = "^pay_")]
    pub id: String,
    /// Always `payment`.
    pub object: PaymentTag,
    /// Mainnet or testnet.
    pub livemode: bool,
    /// Creation time.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
    /// How much.
    #[schema(value_type = AmountString)]
    pub amount: Money,
    /// ISO 4217 code.
    #[schema(value_type = CurrencyCode)]
    pub currency: &'static str,
    /// Where the money comes from.
    pub source: PaymentSourceView,
    /// Where it goes.
    pub destination: PaymentDestinationView,
    /// Lifecycle.
    #[schema(value_type = PaymentStatus)]
    pub status: &'static str,
    /// Why it failed (status failed).
    #[schema(value_type = FailureCode)]
    pub failure_reason: Option<&'static str>,
    /// The refund a failed payment owes, if any.
    #[schema(value_type = RefundStatus)]
    pub refund_status: Option<&'static str>,
    /// Its transaction.
    pub onchain: OnChainTx,
    /// The source's consent (a wallet's EIP-712 signature, or a bank mandate).
    pub authorization: Option<Consent>,
}

/// A simulated bank transfer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BankTransfer {
    /// `btr_…`
    #[schema(pattern = "^btr_")]
    pub id: String,
    /// Always `bank_transfer`.
    pub object: BankTransferTag,
    /// Its account.
    #[schema(pattern = "^ba_")]
    pub bank_account_id: String,
    /// Debit or credit.
    #[schema(value_type = TransferDirection)]
    pub direction: &'static str,
    /// How much.
    #[schema(value_type = AmountString)]
    pub amount: Money,
    /// Lifecycle.
    #[schema(value_type = TransferStatus)]
    pub status: &'static str,
    /// Why it failed (status failed).
    #[schema(value_type = FailureCode)]
    pub failure_reason: Option<&'static str>,
    /// Creation time.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
    /// Last change.
    #[schema(value_type = Timestamp)]
    pub updated_at: String,
}

/// The caller's account, as its key's mode sees it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Account {
    /// `acct_…`
    #[schema(pattern = "^acct_")]
    pub id: String,
    /// Always `account`.
    pub object: AccountTag,
    /// Whether the key is a mainnet key.
    pub livemode: bool,
    /// The business name payers are shown, if the account gave one.
    pub business_name: Option<String>,
    /// Which chain settles the account's one-time payments.
    #[schema(value_type = PaymentsChainName)]
    pub payments_chain: &'static str,
    /// The chains this mode has on this server, the settlement chain first.
    pub chains: Vec<AccountChain>,
}

/// One chain of a mode.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AccountChain {
    /// What the chain is for.
    #[schema(value_type = PaymentsChainName)]
    pub role: &'static str,
    /// Its chain id.
    pub chain_id: u64,
}

/// A simulated bank account (testnet).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BankAccount {
    /// `ba_…`
    #[schema(pattern = "^ba_")]
    pub id: String,
    /// Always `bank_account`.
    pub object: BankAccountTag,
    /// Always false (testnet only).
    pub livemode: bool,
    /// Creation time.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
    /// The holder.
    pub owner_name: String,
    /// ISO 4217 code.
    #[schema(value_type = CurrencyCode)]
    pub currency: &'static str,
    /// The balance.
    #[schema(value_type = AmountString)]
    pub balance: Money,
    /// The balance minus what pending debits hold: what a new debit may take.
    #[schema(value_type = AmountString)]
    pub available_balance: Money,
    /// How its transfers behave.
    #[schema(value_type = BankBehavior)]
    pub behavior: &'static str,
    /// How long its transfers stay pending.
    pub delay_seconds: i64,
    /// The latest transfers, newest first.
    pub transfers: Vec<BankTransfer>,
}

/// An identity verification session.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IdentityVerification {
    /// `idv_…`
    #[schema(pattern = "^idv_")]
    pub id: String,
    /// Always `identity_verification`.
    pub object: IdentityVerificationTag,
    /// Always false (testnet only).
    pub livemode: bool,
    /// Creation time.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
    /// What it verifies.
    #[serde(rename = "type")]
    #[schema(value_type = VerificationTypeName)]
    pub kind: &'static str,
    /// The credential type a verified session issues.
    pub credential_type: &'static str,
    /// The wallet verified (EIP-55).
    #[schema(value_type = Address)]
    pub subject: String,
    /// Lifecycle.
    #[schema(value_type = VerificationStatusName)]
    pub status: &'static str,
    /// Why the last check failed (the session is back in `requires_input`); cleared by the next submission.
    pub last_error: Option<VerificationError>,
    /// Verified: the issued credential's `id` (`urn:uuid:…`); the credential itself is at `GET /v1/identity/verifications/{id}/credential`.
    pub credential_id: Option<String>,
    /// What the simulated provider answers.
    pub simulate: VerificationSimulation,
}

/// Why a verification's check failed.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VerificationError {
    /// A stable code (`verification_failed`).
    pub code: String,
    /// Said for a person.
    pub reason: String,
}

/// What the simulated provider answers a session.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VerificationSimulation {
    /// The scenario.
    #[schema(value_type = SimulatedOutcome)]
    pub outcome: &'static str,
    /// The reason a failed check gives.
    pub failure_reason: Option<String>,
}

/// A webhook endpoint (its secret only at creation and rotation).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WebhookEndpoint {
    /// `we_…`
    #[schema(pattern = "^we_")]
    pub id: String,
    /// Always `webhook_endpoint`.
    pub object: WebhookEndpointTag,
    /// Mainnet or testnet.
    pub livemode: bool,
    /// Creation time.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
    /// Where deliveries go.
    pub url: String,
    /// Free text.
    pub description: Option<String>,
    /// The event types delivered (`["*"]`: all).
    #[schema(value_type = Vec<EnabledEvent>)]
    pub enabled_events: Vec<&'static str>,
    /// enabled or disabled.
    #[schema(value_type = EndpointStatus)]
    pub status: &'static str,
    /// `failing`: every attempt failed for longer than the server allows (the
    /// `webhook_endpoint.disabled` event says so).
    #[schema(value_type = Option<DisabledReason>)]
    pub disabled_reason: Option<String>,
    /// The first failed attempt since the last success.
    #[schema(value_type = Option<Timestamp>)]
    pub failing_since: Option<String>,
    /// Until then the secret before the last rotation signs too (a second v1 signature).
    #[schema(value_type = Option<Timestamp>)]
    pub previous_secret_expires_at: Option<String>,
    /// The signing secret (`whsec_…`): only in the creation and rotation responses (a
    /// replay with the same Idempotency-Key answers null with `secret_redacted`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^whsec_")]
    pub secret: Option<String>,
    /// True in a replayed creation or rotation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_redacted: Option<bool>,
}

leaf_schema!(
    /// Why an endpoint was disabled.
    DisabledReason = json!({ "type": "string", "enum": ["failing"] })
);

/// A deleted webhook endpoint.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DeletedWebhookEndpoint {
    /// `we_…`
    #[schema(pattern = "^we_")]
    pub id: String,
    /// Always `webhook_endpoint`.
    pub object: WebhookEndpointTag,
    /// Always true.
    #[schema(value_type = DeletedTrue)]
    pub deleted: bool,
}

leaf_schema!(
    /// `true`.
    DeletedTrue = json!({ "const": true })
);

/// One delivery of an event to an endpoint, with its last attempt.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WebhookDelivery {
    /// `whd_…`
    #[schema(pattern = "^whd_")]
    pub id: String,
    /// Always `webhook_delivery`.
    pub object: WebhookDeliveryTag,
    /// The endpoint.
    #[schema(pattern = "^we_")]
    pub endpoint_id: String,
    /// The event.
    #[schema(pattern = "^evt_")]
    pub event_id: String,
    /// Asked for with `POST /v1/events/{id}/redeliver`.
    pub redelivery: bool,
    /// Lifecycle.
    #[schema(value_type = DeliveryStatus)]
    pub status: &'static str,
    /// Attempts so far.
    pub attempts: i64,
    /// The last attempt's HTTP status.
    pub last_status_code: Option<i64>,
    /// The last attempt's error.
    pub last_error: Option<String>,
    /// The last attempt's latency.
    pub latency_ms: Option<i64>,
    /// The last attempt.
    #[schema(value_type = Option<Timestamp>)]
    pub last_attempt_at: Option<String>,
    /// While pending: the next attempt.
    #[schema(value_type = Option<Timestamp>)]
    pub next_attempt_at: Option<String>,
    /// Creation time.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
}

/// What an event carries.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EventData {
    /// The object as it was at the moment of the event.
    pub object: crate::ApiObject,
}

/// Something that happened to one of the account's objects.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Event {
    /// `evt_…`
    #[schema(pattern = "^evt_")]
    pub id: String,
    /// Always `event`.
    pub object: EventTag,
    /// What happened.
    #[serde(rename = "type")]
    #[schema(value_type = EventType)]
    pub kind: &'static str,
    /// Mainnet or testnet.
    pub livemode: bool,
    /// When.
    #[schema(value_type = Timestamp)]
    pub created_at: String,
    /// The object.
    pub data: EventData,
}

/// Declares a list type of one resource.
macro_rules! list_type {
    ($(#[$m:meta])* $name:ident of $item:ty) => {
        $(#[$m])*
        #[derive(Debug, Clone, Serialize, ToSchema)]
        pub struct $name {
            /// Always `list`.
            pub object: ListTag,
            /// The list's path.
            pub url: String,
            /// The page, newest first.
            pub data: Vec<$item>,
            /// Whether more follow: ask again with `starting_after` = the last id.
            pub has_more: bool,
        }
    };
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
list_type!(
    /// A page of payments.
    PaymentList of Payment
);
list_type!(
    /// A page of events.
    EventList of Event
);
list_type!(
    /// A page of webhook endpoints.
    WebhookEndpointList of WebhookEndpoint
);
list_type!(
    /// A page of webhook deliveries.
    WebhookDeliveryList of WebhookDelivery
);
list_type!(
    /// A page of identity verification sessions.
    IdentityVerificationList of IdentityVerification
);
list_type!(
    /// A page of identity attestations.
    IdentityAttestationList of IdentityAttestation
);

/// A page of a list (the store's page, rendered).
pub fn page<T, L>(
    data: Vec<T>,
    has_more: bool,
    url: &str,
    make: fn(ListTag, String, Vec<T>, bool) -> L,
) -> L {
    make(ListTag, url.to_string(), data, has_more)
}

/// Declares the constructor [`page`] takes for each list type.
macro_rules! list_new {
    ($($name:ident of $item:ty),*) => {$(
        impl $name {
            /// The page.
            pub fn new(object: ListTag, url: String, data: Vec<$item>, has_more: bool) -> Self {
                Self { object, url, data, has_more }
            }
        }
    )*};
}

list_new!(
    MandateList of Mandate,
    SessionKeyList of SessionKey,
    DebitPullList of DebitPull,
    PaymentList of Payment,
    EventList of Event,
    WebhookEndpointList of WebhookEndpoint,
    WebhookDeliveryList of WebhookDelivery,
    IdentityVerificationList of IdentityVerification,
    IdentityAttestationList of IdentityAttestation
);

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Bytes;

    fn fields(json: Value) -> Fields {
        Fields::parse(Bytes::from(json.to_string())).unwrap()
    }

    #[test]
    fn request_bodies_read_their_fields_by_their_schema_names() {
        let m = MandateCreate::read(fields(json!({
            "payer_account_id": "ba_1", "currency": "usd", "max_amount": 12.5,
            "interval": "daily", "purpose": null,
        })))
        .unwrap();
        assert_eq!(m.max_amount, AmountText("12.5".into()));
        assert!(m.purpose.is_none());
        let p = PaymentCreate::read(fields(json!({
            "currency": "USD", "amount": "1", "source": {"type": "wallet", "id": "0x"},
            "destination": {"type": "bank_account", "address": "ba_1"},
        })))
        .unwrap();
        assert_eq!(p.destination.r#type, "bank_account");
        assert!(matches!(
            PaymentCreate::read(fields(json!({
                "currency": "USD", "amount": "1", "source": {"type": "wallet", "id": "0x", "x": 1},
                "destination": {"type": "bank_account", "address": "ba_1"},
            }))),
            Err(ApiError::ParameterUnknown { param }) if param == "source.x"
        ));
    }

    #[test]
    fn amount_patterns_say_what_the_parser_accepts() {
        let re_in = regex_lite(AMOUNT_IN_PATTERN);
        for (text, ok) in [
            ("12.50", true),
            ("12.5", true),
            ("0.01", true),
            ("0.10", true),
            ("1.10000", true),
            ("007.5", true),
            ("1000000000000", true),
            ("1000000000000.00", true),
            ("999999999999.99", true),
            ("0", false),
            ("0.00", false),
            ("0.001", false),
            ("1000000000000.01", false),
            ("1e3", false),
            ("-1", false),
            (".5", false),
            ("5.", false),
            (" 5", false),
        ] {
            let parsed = Amount::parse(text, Currency::Usd).is_ok();
            assert_eq!(parsed, ok, "parser on {text:?}");
            assert_eq!(re_in(text), ok, "pattern on {text:?}");
        }
    }

    fn regex_lite(pattern: &'static str) -> impl Fn(&str) -> bool {
        let re = regex::Regex::new(pattern).expect("pattern compiles");
        move |s: &str| re.is_match(s)
    }

    /// Free text refuses control and bidirectional formatting characters, and its
    /// document pattern says the same.
    #[test]
    fn free_text_refuses_controls_and_bidi_formatting() {
        let re = regex_lite(TEXT_PATTERN);
        for (text, ok) in [
            ("agent budget", true),
            ("Café ünïcode — “quotes” 日本語 عربي", true),
            ("", true),
            ("nul\0here", false),
            ("bell\u{7}", false),
            ("tab\there", false),
            ("line\nbreak", false),
            ("del\u{7F}", false),
            ("c1\u{85}", false),
            ("c1\u{9F}", false),
            ("Refund \u{202E}DSU 001 EVIECER", false),
            ("lre\u{202A}", false),
            ("lri\u{2066}x\u{2069}", false),
            ("fsi\u{2068}", false),
            ("lrm\u{200E}", false),
            ("rlm\u{200F}", false),
            ("alm\u{061C}", false),
            ("zwj\u{200D} is fine", true),
        ] {
            assert_eq!(Text::check(text).is_ok(), ok, "check on {text:?}");
            assert_eq!(re(text), ok, "pattern on {text:?}");
        }
        let long = "x".repeat(MAX_TEXT + 1);
        assert!(Text::check(&long).is_err());
        assert!(Text::check(&long[1..]).is_ok());
        let mut f = fields(json!({"purpose": "to RECEIVE\u{202E} 100 USD"}));
        let err = <Option<Text>>::from_field(&mut f, "purpose").unwrap_err();
        assert!(
            matches!(&err, ApiError::ParameterInvalid { param, detail } if param == "purpose" && detail.contains("U+202E")),
            "{err:?}"
        );
    }

    #[test]
    fn balance_pattern_says_what_the_parser_accepts() {
        let re = regex_lite(BALANCE_IN_PATTERN);
        for text in [
            "0",
            "0.00",
            "0.05",
            "1500.00",
            "1000000000000",
            "0.001",
            "-1",
            "1e3",
            "1000000000000.5",
        ] {
            let parsed = AmountText(text.into())
                .minor_or_zero("balance", Currency::Usd)
                .is_ok();
            assert_eq!(re(text), parsed, "{text:?}");
        }
    }
}

leaf_schema!(
    /// `POST /v1/identity/credentials/verify` (VC API).
    CredentialVerifyRequest = json!({
        "type": "object",
        "required": ["verifiableCredential"],
        "properties": {
            "verifiableCredential": {
                "type": "object",
                "description": "A Verifiable Credential (VC Data Model 1.1 or 2.0) with one or more Data Integrity proofs",
                "additionalProperties": true,
            },
            "options": {
                "type": "object",
                "description": "Accepted and ignored (the legacy `checks` too): every check always runs",
                "additionalProperties": true,
            },
        },
        "example": {"verifiableCredential": {"@context": ["https://www.w3.org/ns/credentials/v2"], "type": ["VerifiableCredential"], "issuer": "did:key:z6Mk…", "credentialSubject": {"id": "did:example:alice"}, "proof": {"type": "DataIntegrityProof", "cryptosuite": "eddsa-rdfc-2022", "…": "…"}}},
    })
);

leaf_schema!(
    /// `POST /v1/identity/presentations/verify` (VC API).
    PresentationVerifyRequest = json!({
        "type": "object",
        "required": ["verifiablePresentation", "options"],
        "properties": {
            "verifiablePresentation": {
                "type": "object",
                "description": "A Verifiable Presentation with a Data Integrity proof of purpose `authentication`",
                "additionalProperties": true,
            },
            "options": {
                "type": "object",
                "required": ["challenge"],
                "properties": {
                    "challenge": { "type": "string", "description": "A challenge from `POST /v1/identity/challenges` (used up here)" },
                    "domain": { "type": "string", "description": "The domain the proof must carry (default: the challenge's)" },
                },
                "additionalProperties": true,
            },
        },
    })
);

leaf_schema!(
    /// `POST /v1/identity/challenges`.
    ChallengeCreate = json!({
        "type": "object",
        "properties": {
            "domain": { "type": ["string", "null"], "minLength": 1, "maxLength": 253, "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f]+$", "description": "Binds the challenge to this domain (the proof's `domain`)" },
        },
        "example": {"domain": "shop.example"},
    })
);

leaf_schema!(
    /// `POST /v1/identity/credentials/issue` (VC API).
    CredentialIssueRequest = json!({
        "type": "object",
        "required": ["credential"],
        "properties": {
            "credential": {
                "type": "object",
                "description": "An unsigned VC 2.0 credential: `@context` starting with https://www.w3.org/ns/credentials/v2, `type` with VerifiableCredential, one `credentialSubject` object; no `proof` or `credentialStatus`",
                "additionalProperties": true,
            },
            "options": { "type": "object", "description": "Accepted and ignored", "additionalProperties": true },
        },
        "example": {"credential": {"@context": ["https://www.w3.org/ns/credentials/v2", "https://www.w3.org/ns/credentials/examples/v2"], "type": ["VerifiableCredential", "ExampleAlumniCredential"], "credentialSubject": {"id": "did:example:alice", "alumniOf": "Example University"}}},
    })
);

leaf_schema!(
    /// `POST /v1/identity/credentials/status` (VC API).
    CredentialStatusUpdate = json!({
        "type": "object",
        "required": ["credentialId"],
        "properties": {
            "credentialId": { "type": "string", "description": "The `id` of a credential this account issued" },
            "credentialStatus": {
                "type": "object",
                "properties": {
                    "type": { "type": "string", "description": "BitstringStatusListEntry" },
                    "statusPurpose": { "type": "string", "enum": ["revocation"] },
                },
                "additionalProperties": true,
            },
            "status": { "type": "boolean", "description": "true (the default): revoke. Revocation is final" },
        },
        "example": {"credentialId": "urn:uuid:…", "credentialStatus": {"type": "BitstringStatusListEntry", "statusPurpose": "revocation"}, "status": true},
    })
);

leaf_schema!(
    /// The VC API's verification response.
    VerificationResult = json!({
        "type": "object",
        "required": ["verified", "problemDetails", "results"],
        "properties": {
            "verified": { "type": "boolean" },
            "problemDetails": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["type", "code", "title", "detail"],
                    "properties": {
                        "type": { "type": "string", "description": "https://www.w3.org/TR/vc-data-model#PROOF_VERIFICATION_ERROR, …" },
                        "code": { "type": "integer" },
                        "title": { "type": "string" },
                        "detail": { "type": "string" },
                    },
                },
            },
            "results": {
                "type": "object",
                "description": "Each check's outcome: `proofs` (per proof), `validity`, `status` (per status entry), and for a presentation `credentials`",
                "additionalProperties": true,
            },
        },
    })
);

leaf_schema!(
    /// A presentation challenge.
    IdentityChallenge = json!({
        "type": "object",
        "properties": {
            "object": { "const": "identity_challenge" },
            "challenge": { "type": "string", "pattern": "^chl_" },
            "domain": { "type": ["string", "null"] },
            "expires_at": { "type": "integer", "description": "Unix seconds" },
            "livemode": { "type": "boolean" },
        },
    })
);

leaf_schema!(
    /// `POST /v1/identity/credentials/issue`'s answer.
    IssuedCredential = json!({
        "type": "object",
        "required": ["verifiableCredential"],
        "properties": {
            "verifiableCredential": { "type": "object", "description": "The signed credential", "additionalProperties": true },
        },
    })
);

leaf_schema!(
    /// A credential Openrail issued: its record (the credential itself is not kept).
    IdentityCredential = json!({
        "type": "object",
        "properties": {
            "object": { "const": "identity_credential" },
            "id": { "type": "string" },
            "type": { "type": "string", "description": "Its most specific type" },
            "subject": { "type": ["string", "null"], "description": "`credentialSubject.id`" },
            "status": { "type": "string", "enum": ["active", "revoked"] },
            "status_list_id": { "type": "string", "pattern": "^sl_" },
            "status_list_index": { "type": "integer", "minimum": 0 },
            "revoked_at": { "type": ["integer", "null"], "description": "Unix seconds" },
            "valid_until": { "type": ["integer", "null"], "description": "Unix seconds" },
            "created": { "type": "integer", "description": "Unix seconds" },
            "livemode": { "type": "boolean" },
        },
    })
);

leaf_schema!(
    /// A `BitstringStatusListCredential`.
    StatusListCredential = json!({
        "type": "object",
        "required": ["@context", "id", "type", "issuer", "validFrom", "credentialSubject", "proof"],
        "properties": {
            "@context": { "type": "array", "items": { "type": "string" } },
            "id": { "type": "string" },
            "type": { "type": "array", "items": { "type": "string" } },
            "issuer": { "type": "string" },
            "validFrom": { "type": "string" },
            "credentialSubject": { "type": "object", "additionalProperties": true },
            "proof": { "type": "object", "additionalProperties": true },
        },
        "additionalProperties": true,
    })
);
