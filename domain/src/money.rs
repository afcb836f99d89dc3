//! Money: ISO 4217 currencies and exact decimal amounts.
//!
//! The API speaks decimal major units (`"12.50"`); requests may send a JSON number or a
//! string, and both are parsed from their text, never through a float, into a
//! [`rust_decimal::Decimal`] (the API edge's type for money). Internally and in storage an
//! [`Amount`] is an integer count of the currency's minor units (cents); on chain it is
//! scaled to the token's 6 decimals.

use std::fmt;

pub use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;

/// A supported currency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Currency {
    /// US dollar.
    Usd,
    /// Euro.
    Eur,
}

impl Currency {
    /// Every supported currency.
    pub const ALL: [Currency; 2] = [Currency::Usd, Currency::Eur];

    /// The ISO 4217 code, uppercase.
    pub fn code(self) -> &'static str {
        match self {
            Currency::Usd => "USD",
            Currency::Eur => "EUR",
        }
    }

    /// Parses an ISO 4217 code, case-insensitively.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|c| c.code().eq_ignore_ascii_case(s))
    }

    /// Decimals of the currency's minor unit (ISO 4217).
    pub fn decimals(self) -> u32 {
        MINOR_DECIMALS
    }
}

impl serde::Serialize for Currency {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.code())
    }
}

impl<'de> serde::Deserialize<'de> for Currency {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
        Currency::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown currency {s:?}")))
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// Decimals of every supported currency's minor unit (USD and EUR: cents).
pub const MINOR_DECIMALS: u32 = 2;

/// Decimals of the stablecoins the chains settle in.
pub const TOKEN_DECIMALS: u32 = 6;

/// Largest amount accepted in one request, in major units (one trillion).
pub const MAX_MAJOR_UNITS: u64 = 1_000_000_000_000;

/// A positive amount of money in a currency's minor units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Amount {
    minor: u64,
    currency: Currency,
}

/// Why an amount was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    /// Not a decimal number (letters, exponent notation, several dots, empty).
    #[error("must be a decimal number such as \"12.50\"")]
    NotDecimal,
    /// Zero.
    #[error("must be greater than zero")]
    Zero,
    /// Negative.
    #[error("must be greater than zero")]
    Negative,
    /// More fractional digits than the currency has.
    #[error("has more than {max} decimals, the most {currency} allows")]
    TooManyDecimals {
        /// Decimals the currency allows.
        max: u32,
        /// The currency.
        currency: Currency,
    },
    /// Above [`MAX_MAJOR_UNITS`].
    #[error("is larger than the maximum of {MAX_MAJOR_UNITS}")]
    TooLarge,
}

impl Amount {
    /// An amount from minor units; `None` for zero or above the maximum.
    pub fn from_minor(minor: u64, currency: Currency) -> Option<Self> {
        let max = MAX_MAJOR_UNITS * 10u64.pow(currency.decimals());
        (minor > 0 && minor <= max).then_some(Self { minor, currency })
    }

    /// Parses decimal text in major units (`"12.5"`, `"100"`), exactly: the grammar (digits,
    /// optionally a dot and digits; no sign, exponent, separators or spaces) is checked
    /// here, the arithmetic is [`rust_decimal`]'s (no float anywhere).
    pub fn parse(text: &str, currency: Currency) -> Result<Self, AmountError> {
        if let Some(rest) = text.strip_prefix('-') {
            // A well-formed negative number is "negative"; anything else is not a number.
            return Err(if is_decimal(rest) {
                AmountError::Negative
            } else {
                AmountError::NotDecimal
            });
        }
        // More decimals than the currency has is that error even when there are too many
        // digits for a decimal to hold.
        let max = currency.decimals();
        if is_decimal(text)
            && text
                .split_once('.')
                .is_some_and(|(_, f)| f.trim_end_matches('0').len() > max as usize)
        {
            return Err(AmountError::TooManyDecimals { max, currency });
        }
        Self::from_decimal(parse_decimal(text)?, currency)
    }

    /// The amount of a decimal in major units: positive, at most the currency's decimals,
    /// at most [`MAX_MAJOR_UNITS`].
    pub fn from_decimal(d: Decimal, currency: Currency) -> Result<Self, AmountError> {
        let d = d.normalize();
        if d.is_sign_negative() && !d.is_zero() {
            return Err(AmountError::Negative);
        }
        if d.is_zero() {
            return Err(AmountError::Zero);
        }
        let max = currency.decimals();
        if d.scale() > max {
            return Err(AmountError::TooManyDecimals { max, currency });
        }
        if d > Decimal::from(MAX_MAJOR_UNITS) {
            return Err(AmountError::TooLarge);
        }
        let minor = d
            .checked_mul(Decimal::from(10u64.pow(max)))
            .and_then(|m| m.to_u64())
            .ok_or(AmountError::TooLarge)?;
        Self::from_minor(minor, currency).ok_or(AmountError::TooLarge)
    }

    /// The amount as a decimal in major units, at the currency's scale (`12.50`).
    pub fn to_decimal(self) -> Decimal {
        minor_to_decimal(self.minor, self.currency)
    }

    /// Minor units (cents).
    pub fn minor(self) -> u64 {
        self.minor
    }

    /// The currency.
    pub fn currency(self) -> Currency {
        self.currency
    }

    /// The amount in the smallest unit of a token with `token_decimals` decimals.
    pub fn to_token_units(self, token_decimals: u32) -> u128 {
        u128::from(self.minor) * 10u128.pow(token_decimals - self.currency.decimals())
    }
}

/// Minor units as a decimal in major units, at the currency's scale (`1250` → `12.50`).
pub fn minor_to_decimal(minor: u64, currency: Currency) -> Decimal {
    Decimal::from_i128_with_scale(i128::from(minor), currency.decimals())
}

/// Formats minor units as a decimal string in major units (`1250` → `"12.50"`).
pub fn format_minor(minor: u64, currency: Currency) -> String {
    minor_to_decimal(minor, currency).to_string()
}

/// Non-negative decimal text (the grammar of [`is_decimal`]) as an exact [`Decimal`];
/// more digits than a decimal holds (28–29) is [`AmountError::TooLarge`].
pub fn parse_decimal(text: &str) -> Result<Decimal, AmountError> {
    if !is_decimal(text) {
        return Err(AmountError::NotDecimal);
    }
    // Leading zeros and trailing fractional zeros carry nothing and would count against
    // the 28 digits a decimal holds.
    let text = match text.split_once('.') {
        Some((int, frac)) if frac.trim_end_matches('0').is_empty() => int,
        Some(_) => text.trim_end_matches('0'),
        None => text,
    };
    let trimmed = text.trim_start_matches('0');
    let text = if trimmed.is_empty() || trimmed.starts_with('.') {
        &text[text.len() - trimmed.len() - 1..]
    } else {
        trimmed
    };
    Decimal::from_str_exact(text).map_err(|_| AmountError::TooLarge)
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_minor(self.minor, self.currency))
    }
}

/// Digits, optionally one dot with digits on both sides (`12`, `12.50`; not `.5`, `5.`,
/// `+5`, `1e3`, `1_000` or ` 5`, all of which [`Decimal`]'s own parser would take).
fn is_decimal(s: &str) -> bool {
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s, None),
    };
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    digits(int) && frac.is_none_or(digits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const USD: Currency = Currency::Usd;

    #[test]
    fn parses_exactly() {
        assert_eq!(Amount::parse("12.50", USD).unwrap().minor(), 1250);
        assert_eq!(Amount::parse("12.5", USD).unwrap().minor(), 1250);
        assert_eq!(Amount::parse("100", USD).unwrap().minor(), 10_000);
        assert_eq!(Amount::parse("0.01", USD).unwrap().minor(), 1);
        assert_eq!(Amount::parse("1.10000", USD).unwrap().minor(), 110);
        assert_eq!(Amount::parse("007.5", USD).unwrap().minor(), 750);
        assert_eq!(
            Amount::parse("1.000000000000000000000000000000000", USD)
                .unwrap()
                .minor(),
            100
        );
        assert_eq!(
            Amount::parse("1000000000000", USD).unwrap().minor(),
            100_000_000_000_000
        );
        assert_eq!(
            Amount::parse("12.50", USD).unwrap().to_token_units(6),
            12_500_000
        );
    }

    #[test]
    fn rejects_bad_input() {
        use AmountError::*;
        for (text, err) in [
            ("0", Zero),
            ("0.00", Zero),
            ("-1", Negative),
            ("-0.5", Negative),
            (
                "1.001",
                TooManyDecimals {
                    max: 2,
                    currency: USD,
                },
            ),
            ("1e3", NotDecimal),
            ("1E3", NotDecimal),
            ("abc", NotDecimal),
            ("", NotDecimal),
            (".5", NotDecimal),
            ("5.", NotDecimal),
            ("1.2.3", NotDecimal),
            ("+5", NotDecimal),
            ("0x10", NotDecimal),
            ("NaN", NotDecimal),
            ("--1", NotDecimal),
            ("1000000000000.01", TooLarge),
            ("99999999999999999999999999", TooLarge),
            ("9999999999999999999999999999999999999999", TooLarge),
            (
                "1.0000000000000000000000000000000001",
                TooManyDecimals {
                    max: 2,
                    currency: USD,
                },
            ),
            (" 5", NotDecimal),
            ("1_000", NotDecimal),
        ] {
            assert_eq!(Amount::parse(text, USD), Err(err), "{text:?}");
        }
    }

    /// Why the grammar is checked before `Decimal` parses: its parser takes more.
    #[test]
    fn decimal_alone_would_take_more_than_the_api() {
        for text in ["+5", ".5", "1_000", "5."] {
            assert!(Decimal::from_str_exact(text).is_ok(), "{text}");
            assert_eq!(
                Amount::parse(text, USD),
                Err(AmountError::NotDecimal),
                "{text}"
            );
        }
    }

    #[test]
    fn currencies() {
        assert_eq!(Currency::parse("usd"), Some(Currency::Usd));
        assert_eq!(Currency::parse("EuR"), Some(Currency::Eur));
        assert_eq!(Currency::parse("GBP"), None);
        assert_eq!(format_minor(5, USD), "0.05");
    }

    proptest! {
        #[test]
        fn display_round_trips(minor in 1u64..=100_000_000_000_000) {
            let a = Amount::from_minor(minor, USD).unwrap();
            prop_assert_eq!(Amount::parse(&a.to_string(), USD), Ok(a));
        }
    }
}
