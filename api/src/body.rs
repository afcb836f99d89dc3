//! Strict JSON request bodies: content type checked, size limited, an object required, each
//! field taken by name with its own error, unknown fields refused. Fields are kept as raw
//! JSON text so amounts sent as numbers are parsed exactly, never through a float. The
//! request types (each handler module's `types`, declared with [`crate::types`]'s
//! `request_body!`) read themselves from these fields.

use std::collections::BTreeMap;

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header;
use openrail_store::AmountError;
use serde_json::value::RawValue;

use crate::error::ApiError;

/// Largest accepted request body.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The fields of a JSON object body, consumed one by one.
#[derive(Debug, Default)]
pub struct Fields {
    raw: Vec<u8>,
    map: BTreeMap<String, Box<RawValue>>,
    /// `source.` for the fields of a nested object, so errors name the full path.
    prefix: String,
}

impl<S: Send + Sync> FromRequest<S> for Fields {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, ApiError> {
        let json = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|ct| {
                let mime = ct
                    .split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase();
                mime == "application/json"
                    || (mime.starts_with("application/") && mime.ends_with("+json"))
            })
            .unwrap_or(false);
        let bytes = axum::body::to_bytes(req.into_body(), MAX_BODY_BYTES)
            .await
            .map_err(|_| ApiError::PayloadTooLarge {
                limit: MAX_BODY_BYTES,
            })?;
        if !json {
            return Err(ApiError::UnsupportedMediaType);
        }
        Self::parse(bytes)
    }
}

impl Fields {
    /// Parses a JSON object.
    pub fn parse(bytes: Bytes) -> Result<Self, ApiError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(ApiError::InvalidJson(
                "the request body is empty; send a JSON object".into(),
            ));
        }
        let value: Box<RawValue> = serde_json::from_slice(&bytes).map_err(|e| {
            ApiError::InvalidJson(format!("the request body is not valid JSON: {e}"))
        })?;
        let entries: Entries = serde_json::from_str(value.get())
            .map_err(|_| ApiError::InvalidJson("the request body must be a JSON object".into()))?;
        Ok(Self {
            raw: bytes.to_vec(),
            map: entries.into_map("")?,
            prefix: String::new(),
        })
    }

    /// The raw body, for idempotency fingerprints.
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    fn p(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// Field `name`'s full name as problems name it (`simulate.failure_reason` inside
    /// `simulate`).
    pub fn param(&self, name: &str) -> String {
        self.p(name)
    }

    /// A required nested object, read with the same strictness (`source.type`, …).
    pub fn object(&mut self, name: &str) -> Result<Fields, ApiError> {
        let raw = self.take(name).ok_or_else(|| ApiError::ParameterMissing {
            param: self.p(name),
        })?;
        let entries: Entries = serde_json::from_str(raw.get())
            .map_err(|_| invalid(&self.p(name), "must be an object"))?;
        let prefix = format!("{}.", self.p(name));
        Ok(Fields {
            raw: Vec::new(),
            map: entries.into_map(&prefix)?,
            prefix,
        })
    }

    /// An optional nested object (absent or `null`: none), read with [`Fields::object`].
    pub fn opt_object(&mut self, name: &str) -> Result<Option<Fields>, ApiError> {
        if self.map.get(name).is_none_or(|v| v.get() == "null") {
            self.map.remove(name);
            return Ok(None);
        }
        self.object(name).map(Some)
    }

    fn take(&mut self, name: &str) -> Option<Box<RawValue>> {
        self.map.remove(name).filter(|v| v.get() != "null")
    }

    /// An optional JSON object taken as it is (`null` counts as absent): documents whose
    /// members are not this API's to check, such as a Verifiable Credential.
    pub fn opt_json_object(
        &mut self,
        name: &str,
    ) -> Result<Option<serde_json::Map<String, serde_json::Value>>, ApiError> {
        self.take(name)
            .map(|raw| {
                serde_json::from_str(raw.get())
                    .map_err(|_| invalid(&self.p(name), "must be a JSON object"))
            })
            .transpose()
    }

    /// An optional boolean (`null` counts as absent).
    pub fn opt_bool(&mut self, name: &str) -> Result<Option<bool>, ApiError> {
        self.take(name)
            .map(|raw| {
                serde_json::from_str::<bool>(raw.get())
                    .map_err(|_| invalid(&self.p(name), "must be true or false"))
            })
            .transpose()
    }

    /// A required string.
    pub fn string(&mut self, name: &str) -> Result<String, ApiError> {
        self.opt_string(name)?
            .ok_or_else(|| ApiError::ParameterMissing {
                param: self.p(name),
            })
    }

    /// An optional string (`null` counts as absent).
    pub fn opt_string(&mut self, name: &str) -> Result<Option<String>, ApiError> {
        self.take(name)
            .map(|raw| {
                serde_json::from_str::<String>(raw.get())
                    .map_err(|_| invalid(&self.p(name), "must be a string"))
            })
            .transpose()
    }

    /// A required non-negative integer.
    pub fn integer(&mut self, name: &str) -> Result<u64, ApiError> {
        let raw = self.take(name).ok_or_else(|| ApiError::ParameterMissing {
            param: self.p(name),
        })?;
        match integral(raw.get()) {
            Integral::Whole(n) => Ok(n),
            Integral::TooLarge => Err(invalid(&self.p(name), "is too large")),
            Integral::Not => Err(invalid(&self.p(name), "must be a whole number")),
        }
    }

    /// The text of a required amount field (parsed once the currency is known:
    /// [`crate::types::AmountText`]).
    pub fn amount_text(&mut self, name: &str) -> Result<String, ApiError> {
        self.opt_amount_text(name)?
            .ok_or_else(|| ApiError::ParameterMissing {
                param: self.p(name),
            })
    }

    /// The text of an amount field: a JSON number's own text, or a string's content.
    pub fn opt_amount_text(&mut self, name: &str) -> Result<Option<String>, ApiError> {
        let Some(raw) = self.take(name) else {
            return Ok(None);
        };
        let text = raw.get();
        if text.starts_with('"') {
            serde_json::from_str::<String>(text)
                .map(Some)
                .map_err(|_| amount_invalid(&self.p(name), AmountError::NotDecimal))
        } else {
            Ok(Some(text.to_string()))
        }
    }

    /// Whether a field was sent at all (even as `null`), without consuming it.
    pub fn peek_present(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    /// An optional non-negative integer.
    pub fn opt_integer(&mut self, name: &str) -> Result<Option<u64>, ApiError> {
        if self.map.get(name).is_none_or(|v| v.get() == "null") {
            self.map.remove(name);
            return Ok(None);
        }
        self.integer(name).map(Some)
    }

    /// An optional unsigned integer of up to 256 bits, as a JSON integer or a decimal
    /// string (a nonce); returned as canonical decimal text.
    pub fn opt_uint256(&mut self, name: &str) -> Result<Option<String>, ApiError> {
        let Some(raw) = self.take(name) else {
            return Ok(None);
        };
        let text = raw.get();
        // A string's digits, or a JSON number read as JSON Schema's integer (`7.0` is 7).
        let digits = match serde_json::from_str::<String>(text) {
            Ok(s) => s,
            Err(_) => match integral(text) {
                Integral::Whole(n) => n.to_string(),
                Integral::TooLarge | Integral::Not => text.to_string(),
            },
        };
        let bad = || invalid(&self.p(name), "must be a whole number below 2^256");
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        alloy::primitives::U256::from_str_radix(&digits, 10)
            .map(|u| Some(u.to_string()))
            .map_err(|_| bad())
    }

    /// An optional array of strings.
    pub fn opt_string_array(&mut self, name: &str) -> Result<Option<Vec<String>>, ApiError> {
        self.take(name)
            .map(|raw| {
                serde_json::from_str::<Vec<String>>(raw.get())
                    .map_err(|_| invalid(&self.p(name), "must be an array of strings"))
            })
            .transpose()
    }

    /// Fails on the first field nobody took.
    pub fn finish(self) -> Result<(), ApiError> {
        match self.map.into_keys().next() {
            Some(param) => Err(ApiError::ParameterUnknown {
                param: format!("{}{param}", self.prefix),
            }),
            None => Ok(()),
        }
    }
}

/// A JSON object's members in order, duplicates kept, so a repeated key is refused rather
/// than silently taking the last value (`max_amount` twice must not pick one).
struct Entries(Vec<(String, Box<RawValue>)>);

impl<'de> serde::Deserialize<'de> for Entries {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Entries, A::Error> {
                let mut v = Vec::new();
                while let Some(entry) = m.next_entry::<String, Box<RawValue>>()? {
                    v.push(entry);
                }
                Ok(Entries(v))
            }
        }
        d.deserialize_map(V)
    }
}

impl Entries {
    /// The members by name; 400 `parameter_duplicated` when a name repeats.
    fn into_map(self, prefix: &str) -> Result<BTreeMap<String, Box<RawValue>>, ApiError> {
        let mut map = BTreeMap::new();
        for (k, v) in self.0 {
            if map.contains_key(&k) {
                return Err(ApiError::ParameterDuplicated {
                    param: format!("{prefix}{k}"),
                });
            }
            map.insert(k, v);
        }
        Ok(map)
    }
}

/// What a JSON number's text is as a non-negative integer.
#[derive(Debug, PartialEq, Eq)]
enum Integral {
    /// A whole number that fits in u64.
    Whole(u64),
    /// A whole number above u64.
    TooLarge,
    /// Negative, fractional, or not a number.
    Not,
}

/// Reads a JSON number as JSON Schema does for `"type": "integer"`: `3600`, `3600.0` and
/// `3.6e3` are the integer 3600; `3600.5`, `-1` and strings are not. Exact (no floats).
fn integral(text: &str) -> Integral {
    let (mantissa, exp) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, "0"),
    };
    let Ok(exp) = exp.strip_prefix('+').unwrap_or(exp).parse::<i64>() else {
        return Integral::Not;
    };
    let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits_ok = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty()
        || !digits_ok(whole)
        || !digits_ok(frac)
        || (mantissa.contains('.') && frac.is_empty())
    {
        return Integral::Not;
    }
    // value = whole.frac × 10^exp; integral when the digits left after the point are zeros.
    let digits = format!("{whole}{frac}");
    let point = (whole.len() as i64).saturating_add(exp); // digits before the point
    if point < 0 {
        return if digits.bytes().all(|b| b == b'0') {
            Integral::Whole(0)
        } else {
            Integral::Not
        };
    }
    let point = point as usize;
    let (int_part, rest) = if point >= digits.len() {
        (
            format!("{digits}{}", "0".repeat((point - digits.len()).min(40))),
            String::new(),
        )
    } else {
        (digits[..point].to_string(), digits[point..].to_string())
    };
    if !rest.bytes().all(|b| b == b'0') {
        return Integral::Not;
    }
    let int_part = int_part.trim_start_matches('0');
    if int_part.is_empty() {
        return Integral::Whole(0);
    }
    match int_part.parse::<u64>() {
        Ok(n) => Integral::Whole(n),
        Err(_) => Integral::TooLarge,
    }
}

/// A `parameter_invalid` error.
pub fn invalid(param: &str, detail: &str) -> ApiError {
    ApiError::ParameterInvalid {
        param: param.into(),
        detail: detail.into(),
    }
}

fn amount_invalid(param: &str, e: AmountError) -> ApiError {
    ApiError::AmountInvalid {
        param: param.into(),
        detail: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(json: &str) -> Result<Fields, ApiError> {
        Fields::parse(Bytes::from(json.to_string()))
    }

    /// An amount's text is the number's own text or the string's content, never a
    /// float's rendering ([`crate::types::AmountText`] parses it; tested there too).
    #[test]
    fn amounts_are_exact_from_numbers_and_strings() {
        use openrail_store::{Amount, Currency};
        let mut f = fields(r#"{"a": 12.5, "b": "0.10", "c": 1e3, "d": -1, "e": true, "f": 1.005}"#)
            .unwrap();
        let mut amount = |name: &str| {
            let text = f.amount_text(name).unwrap();
            Amount::parse(&text, Currency::Usd)
        };
        assert_eq!(amount("a").unwrap().minor(), 1250);
        assert_eq!(amount("b").unwrap().minor(), 10);
        for name in ["c", "d", "e", "f"] {
            assert!(amount(name).is_err(), "{name}");
        }
        f.finish().unwrap();
    }

    #[test]
    fn shapes() {
        assert!(matches!(fields("[1]"), Err(ApiError::InvalidJson(_))));
        assert!(matches!(fields("{"), Err(ApiError::InvalidJson(_))));
        assert!(matches!(fields(""), Err(ApiError::InvalidJson(_))));
        let mut f = fields(r#"{"s": 5, "n": "x", "extra": 1, "nothing": null}"#).unwrap();
        assert!(matches!(
            f.string("s"),
            Err(ApiError::ParameterInvalid { .. })
        ));
        assert!(matches!(
            f.integer("n"),
            Err(ApiError::ParameterInvalid { .. })
        ));
        assert!(matches!(
            f.string("missing"),
            Err(ApiError::ParameterMissing { .. })
        ));
        assert_eq!(f.opt_string("nothing").unwrap(), None);
        assert!(
            matches!(f.finish(), Err(ApiError::ParameterUnknown { param }) if param == "extra")
        );
    }
}

#[cfg(test)]
mod integral_tests {
    use super::{Integral, integral};

    #[test]
    fn integral_numbers_are_integers() {
        assert_eq!(integral("3600"), Integral::Whole(3600));
        assert_eq!(integral("3600.0"), Integral::Whole(3600));
        assert_eq!(integral("3600.000"), Integral::Whole(3600));
        assert_eq!(integral("3.6e3"), Integral::Whole(3600));
        assert_eq!(integral("36E+2"), Integral::Whole(3600));
        assert_eq!(integral("360000e-2"), Integral::Whole(3600));
        assert_eq!(integral("0"), Integral::Whole(0));
        assert_eq!(integral("0.0e-5"), Integral::Whole(0));
        assert_eq!(integral("3600.5"), Integral::Not);
        assert_eq!(integral("3.65e3"), Integral::Whole(3650));
        assert_eq!(integral("3.655e2"), Integral::Not);
        assert_eq!(integral("-1"), Integral::Not);
        assert_eq!(integral("\"60\""), Integral::Not);
        assert_eq!(integral("1."), Integral::Not);
        assert_eq!(integral(".5"), Integral::Not);
        assert_eq!(integral("1e400"), Integral::TooLarge);
        assert_eq!(integral("1e9223372036854775807"), Integral::TooLarge);
        assert_eq!(integral("1e-9223372036854775808"), Integral::Not);
        assert_eq!(integral("18446744073709551616"), Integral::TooLarge);
        assert_eq!(integral("18446744073709551615"), Integral::Whole(u64::MAX));
    }
}
