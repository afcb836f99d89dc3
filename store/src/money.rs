//! Money: ISO 4217 currencies and exact decimal amounts.
//!
//! The API speaks decimal major units (`"12.50"`); requests may send a JSON number or a
//! string, and both are parsed from their text, never through a float. Internally an
//! [`Amount`] is an integer count of the currency's minor units (cents); on chain it is
//! scaled to the token's 6 decimals.

use std::fmt;

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

    /// Parses decimal text in major units (`"12.5"`, `"100"`), exactly.
    pub fn parse(text: &str, currency: Currency) -> Result<Self, AmountError> {
        let text = text.trim();
        if let Some(rest) = text.strip_prefix('-') {
            // A well-formed negative number is "negative"; anything else is not a number.
            return Err(if is_decimal(rest) {
                AmountError::Negative
            } else {
                AmountError::NotDecimal
            });
        }
        if !is_decimal(text) {
            return Err(AmountError::NotDecimal);
        }
        let (int, frac) = text.split_once('.').unwrap_or((text, ""));
        let max = currency.decimals();
        let frac = frac.trim_end_matches('0');
        if frac.len() > max as usize {
            return Err(AmountError::TooManyDecimals { max, currency });
        }
        let int = int.trim_start_matches('0');
        if int.len() > 13 {
            return Err(AmountError::TooLarge);
        }
        let int: u64 = if int.is_empty() {
            0
        } else {
            int.parse().map_err(|_| AmountError::TooLarge)?
        };
        let frac_val: u64 = if frac.is_empty() {
            0
        } else {
            frac.parse().map_err(|_| AmountError::NotDecimal)?
        };
        let scale = 10u64.pow(max);
        let minor = int
            .checked_mul(scale)
            .and_then(|v| v.checked_add(frac_val * 10u64.pow(max - frac.len() as u32)))
            .ok_or(AmountError::TooLarge)?;
        if minor == 0 {
            return Err(AmountError::Zero);
        }
        Self::from_minor(minor, currency).ok_or(AmountError::TooLarge)
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

/// Formats minor units as a decimal string in major units (`1250` → `"12.50"`).
pub fn format_minor(minor: u64, currency: Currency) -> String {
    let scale = 10u64.pow(currency.decimals());
    format!(
        "{}.{:0width$}",
        minor / scale,
        minor % scale,
        width = currency.decimals() as usize
    )
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_minor(self.minor, self.currency))
    }
}

/// Digits, optionally one dot with digits on both sides… or a leading dot-less integer.
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
        ] {
            assert_eq!(Amount::parse(text, USD), Err(err), "{text:?}");
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
