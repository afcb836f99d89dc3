//! The vocabulary the request and response types of `/v1` share. Each object's own types
//! (its request bodies, its response and its list, the leaf schemas of its statuses) are
//! in its handler module's `types` (`crate::payments::types`, …), beside its handlers;
//! handlers read requests into those types and answer with them, and the OpenAPI
//! document's schemas are generated from them ([`utoipa::ToSchema`], see
//! [`crate::openapi`]), so a handler's shape and the document cannot drift apart. Here is
//! what they are written in: leaf schemas written as JSON (`schema_json`,
//! `leaf_schema!`) and the leaf types whose rules a derive cannot say (amounts, addresses,
//! times, currencies, free text: each schema written once, next to the code that enforces
//! it); how a request body reads itself ([`RequestBody`], [`FromField`], `request_body!`);
//! the `object` tags and pages of lists (`object_tag!`, [`ListTag`], `list_type!`); and
//! the types more than one object uses ([`Consent`], [`OnChainTx`],
//! [`AuthorizationCreate`], [`VerificationTypeName`], [`IssuedCredential`], …).

use openrail_store::money::{Decimal, MAX_MAJOR_UNITS, minor_to_decimal};
use openrail_store::{Amount, AmountError, Currency};
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;
use utoipa::openapi::{RefOr, Schema};

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

/// A leaf type whose schema is written as JSON beside it, listed as a named component
/// (`crate::types::leaf_schema!`, usable in every module: its paths are absolute).
macro_rules! leaf_schema {
    ($(#[$m:meta])* $name:ident = $schema:expr) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name;
        impl ::utoipa::PartialSchema for $name {
            fn schema() -> ::utoipa::openapi::RefOr<::utoipa::openapi::Schema> {
                $crate::types::schema_json($schema)
            }
        }
        impl ::utoipa::ToSchema for $name {
            fn name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(stringify!($name))
            }
        }
    };
}
pub(crate) use leaf_schema;

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
    /// A balance in a request: an amount, or zero.
    BalanceInput = json!({
        "description": "Decimal major units, exact, zero allowed: a decimal string or a JSON number",
        "oneOf": [
            { "type": "string", "pattern": BALANCE_IN_PATTERN },
            { "type": "number", "minimum": 0, "maximum": MAX_MAJOR_UNITS, "multipleOf": 0.01 },
        ],
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
    /// Why money did not move: the `failure_reason` of a failed payment, bank transfer or
    /// debit pull's bank leg (`null` while nothing failed).
    FailureCode = json!({
        "type": ["string", "null"],
        "enum": openrail_domain::FailureReason::ALL.iter().map(|s| Value::from(s.as_str())).chain([Value::Null]).collect::<Vec<_>>(),
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

leaf_schema!(
    /// `true`.
    DeletedTrue = json!({ "const": true })
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

leaf_schema!(
    /// A 256-bit nonce.
    Nonce = json!({
        "oneOf": [
            { "type": "integer", "minimum": 0, "maximum": 18_446_744_073_709_551_615_u64 },
            { "type": "string", "pattern": "^[0-9]{1,78}$", "description": "Decimal digits below 2^256" },
        ],
    })
);

/// A request body type: read field by field, in declaration order, from a strict JSON
/// object ([`Fields`]: duplicates and unknown fields refused).
pub trait RequestBody: Sized {
    /// Reads the whole object (unknown fields are refused at the end).
    fn read(f: Fields) -> Result<Self, ApiError>;
}

/// Declares a request body: the struct (with its schema, from the same field list) and
/// its reader, which takes every field by its Rust name, so the document's properties
/// and what the server reads are one list. Each field's type reads itself ([`FromField`]);
/// the schemas its `value_type`s name must be in scope where it is used.
macro_rules! request_body {
    ($(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* pub $field:ident : $ty:ty),* $(,)? }) => {
        #[derive(Debug, Clone, ::utoipa::ToSchema)]
        $(#[$m])*
        pub struct $name { $($(#[$fm])* pub $field: $ty),* }
        impl $crate::types::RequestBody for $name {
            fn read(mut f: $crate::body::Fields) -> Result<Self, $crate::error::ApiError> {
                let v = Self { $($field: $crate::types::FromField::from_field(
                    &mut f,
                    $crate::types::field_name(stringify!($field)),
                )?),* };
                f.finish()?;
                Ok(v)
            }
        }
        impl $crate::types::FromField for $name {
            fn from_field(
                f: &mut $crate::body::Fields,
                name: &str,
            ) -> Result<Self, $crate::error::ApiError> {
                <$name as $crate::types::RequestBody>::read(f.object(name)?)
            }
        }
    };
}
pub(crate) use request_body;

/// A field's JSON name from its Rust name (`r#type` → `type`).
pub(crate) fn field_name(rust: &'static str) -> &'static str {
    rust.strip_prefix("r#").unwrap_or(rust)
}

request_body!(
    /// `POST /v1/mandates/{id}/authorize` and `POST /v1/payments/{id}/authorize`.
    #[schema(example = json!({"signature": "0x5f1c…1b"}))]
    pub struct AuthorizationCreate {
        /// The payer's signature of the object's `authorization.typed_data`.
        #[schema(value_type = Signature)]
        pub signature: String,
    }
);

// ------------------------------------------------------------------ responses

/// Declares the `object` member of a resource: a one-value string.
macro_rules! object_tag {
    ($(#[$m:meta])* $name:ident = $text:literal) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $name;
        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($text)
            }
        }
        impl ::utoipa::PartialSchema for $name {
            fn schema() -> ::utoipa::openapi::RefOr<::utoipa::openapi::Schema> {
                $crate::types::schema_json(
                    ::serde_json::json!({ "type": "string", "const": $text }),
                )
            }
        }
        impl ::utoipa::ToSchema for $name {}
    };
}
pub(crate) use object_tag;

object_tag!(
    /// `"list"`
    ListTag = "list"
);

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

/// Declares a list type of one resource.
macro_rules! list_type {
    ($(#[$m:meta])* $name:ident of $item:ty) => {
        $(#[$m])*
        #[derive(Debug, Clone, ::serde::Serialize, ::utoipa::ToSchema)]
        pub struct $name {
            /// Always `list`.
            pub object: $crate::types::ListTag,
            /// The list's path.
            pub url: String,
            /// The page, newest first.
            pub data: Vec<$item>,
            /// Whether more follow: ask again with `starting_after` = the last id.
            pub has_more: bool,
        }
    };
}
pub(crate) use list_type;

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
            pub fn new(
                object: $crate::types::ListTag,
                url: String,
                data: Vec<$item>,
                has_more: bool,
            ) -> Self {
                Self { object, url, data, has_more }
            }
        }
    )*};
}
pub(crate) use list_new;

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
    /// `POST /v1/identity/credentials/issue`'s answer.
    IssuedCredential = json!({
        "type": "object",
        "required": ["verifiableCredential"],
        "properties": {
            "verifiableCredential": { "type": "object", "description": "The signed credential", "additionalProperties": true },
        },
    })
);

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Bytes;

    fn fields(json: Value) -> Fields {
        Fields::parse(Bytes::from(json.to_string())).unwrap()
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
