//! Identifiers and secrets: a prefix and base62 characters (random; an object id's first
//! eight tell its creation time), the macro that makes one type per kind of object (each
//! object's module declares its own: `MandateId` in `mandate`, …), and the [`Mode`] (test
//! or live money) every object belongs to. Making an id reads the clock and the OS RNG; no
//! database, chain or network.

use rand::Rng;
use sha2::{Digest, Sha256};

const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// `prefix` followed by `len` random base62 characters from the OS-seeded CSPRNG.
pub fn random_id(prefix: &str, len: usize) -> String {
    let mut rng = rand::thread_rng();
    let mut s = String::with_capacity(prefix.len() + len);
    s.push_str(prefix);
    for _ in 0..len {
        s.push(ALPHABET[rng.gen_range(0..ALPHABET.len())] as char);
    }
    s
}

/// Characters of an id that tell its creation time.
const TIME_CHARS: usize = 8;

/// An object id such as `pull_0PdQ1x2A…`: 24 base62 characters, the first eight the
/// creation time in milliseconds (fixed width, so ids of one kind made in different
/// milliseconds sort by creation), the other sixteen random (~95 bits). Time first makes
/// every index keyed by an id — a table's primary key, the events of an object, the outbox
/// and journal rows of an intent — grow at its end: a group of new rows dirties the same
/// few pages instead of one page at random per row, however large the table (with random
/// ids the group writer's cost per pull grew with `n`; README, "Throughput").
///
/// Within one process ids also sort by creation inside a millisecond: an id made in the
/// same millisecond as the one before it takes that one's random part plus a random step
/// of up to 2^64 (so a neighbour still cannot be guessed). Lists are "newest first" by
/// creation time, then id: two objects a client created one after the other within a
/// millisecond were listed in either order (a browser test caught it on a fast machine).
pub fn new_id(prefix: &str) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let (millis, random) = next_stamp(now);
    let mut s = String::with_capacity(prefix.len() + TIME_CHARS + RANDOM_CHARS);
    s.push_str(prefix);
    s.push_str(&base62_fixed(millis, TIME_CHARS));
    s.push_str(&base62_fixed(random, RANDOM_CHARS));
    s
}

/// Characters of an id that are random.
const RANDOM_CHARS: usize = 16;

/// The (milliseconds, random part) of the next id of this process: never below the last
/// one's, the random part stepped up by a random amount within a millisecond.
fn next_stamp(now: u128) -> (u128, u128) {
    static LAST: std::sync::Mutex<(u128, u128)> = std::sync::Mutex::new((0, 0));
    let space = 62u128.pow(RANDOM_CHARS as u32);
    let mut rng = rand::thread_rng();
    let (fresh, increment) = (
        rng.gen_range(0..space),
        u128::from(rng.gen_range(1..=u64::MAX)),
    );
    let mut last = LAST
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *last = step(*last, now, space, fresh, increment);
    *last
}

/// The stamp after `last` at clock `now` (a clock that went back counts as `last`'s
/// millisecond); past the random part's `space`, the next millisecond.
fn step(last: (u128, u128), now: u128, space: u128, fresh: u128, increment: u128) -> (u128, u128) {
    if now > last.0 {
        return (now, fresh);
    }
    let random = last.1 + increment;
    if random < space {
        (last.0, random)
    } else {
        (last.0 + 1, fresh)
    }
}

/// `v` in base62, exactly `width` characters (leading zeros; the alphabet is in ASCII
/// order, so text order is number order; 62^8 ms is about 6,900 years).
fn base62_fixed(mut v: u128, width: usize) -> String {
    let mut out = vec![b'0'; width];
    for c in out.iter_mut().rev() {
        *c = ALPHABET[(v % 62) as usize];
        v /= 62;
    }
    out.iter().map(|&b| b as char).collect()
}

/// Declares an object id type: a prefix and [`new_id`]'s random characters, one type per
/// kind of object, so that crates pass a `MandateId` where a mandate is meant and the
/// compiler refuses a pull's id there. Stored and serialized as the plain string; `parse`
/// checks the prefix and the characters (what a request names), reading rows trusts the
/// database (`from_trusted`). No `Deref` to `str`: an id is not a `&str`, so a function
/// that takes a `&str` never silently accepts any kind of id; `as_str()` says so where
/// text is meant. With the `sqlx` feature each id is also a `sqlx::Any` text column.
macro_rules! typed_id {
    ($(#[$m:meta])* $name:ident = $prefix:literal) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The prefix every id of this kind starts with.
            pub const PREFIX: &'static str = $prefix;

            /// A new random id.
            #[allow(clippy::new_without_default)]
            pub fn new() -> Self {
                Self($crate::ids::new_id($prefix))
            }

            /// `s` when it is an id of this kind: the prefix, then up to 64 letters, digits
            /// or `_` (new ids are base62; `_` is allowed for readable fixed ids in tests).
            pub fn parse(s: &str) -> Option<Self> {
                let rest = s.strip_prefix($prefix)?;
                (!rest.is_empty()
                    && rest.len() <= 64
                    && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
                    .then(|| Self(s.to_string()))
            }

            /// `s` as an id of this kind, unchecked: for rows the store reads (the database
            /// is trusted, as by the `sqlx` `Decode`). What a request names goes through
            /// [`Self::parse`].
            pub fn from_trusted(s: String) -> Self {
                Self(s)
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        #[cfg(feature = "sqlx")]
        impl sqlx::Type<sqlx::Any> for $name {
            fn type_info() -> sqlx::any::AnyTypeInfo {
                <String as sqlx::Type<sqlx::Any>>::type_info()
            }
        }

        #[cfg(feature = "sqlx")]
        impl<'q> sqlx::Encode<'q, sqlx::Any> for $name {
            fn encode_by_ref(
                &self,
                buf: &mut <sqlx::Any as sqlx::Database>::ArgumentBuffer<'q>,
            ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                <String as sqlx::Encode<'q, sqlx::Any>>::encode_by_ref(&self.0, buf)
            }
        }

        #[cfg(feature = "sqlx")]
        impl<'r> sqlx::Decode<'r, sqlx::Any> for $name {
            fn decode(
                value: <sqlx::Any as sqlx::Database>::ValueRef<'r>,
            ) -> Result<Self, sqlx::error::BoxDynError> {
                Ok(Self(<String as sqlx::Decode<'r, sqlx::Any>>::decode(value)?))
            }
        }
    };
}
pub(crate) use typed_id;

/// SHA-256 of a secret, hex. Secrets are random with ≥ 190 bits, so a plain hash is
/// enough; only the hash is stored.
pub fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// Test or live money. The API key decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Local or public test chains, simulated bank.
    Testnet,
    /// Real chains and bank connectors.
    Mainnet,
}

impl Mode {
    /// `testnet` or `mainnet`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Testnet => "testnet",
            Mode::Mainnet => "mainnet",
        }
    }

    /// Parses `testnet` / `mainnet`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "testnet" => Some(Mode::Testnet),
            "mainnet" => Some(Mode::Mainnet),
            _ => None,
        }
    }

    /// Whether objects of this mode are live (`livemode` in responses).
    pub fn livemode(self) -> bool {
        self == Mode::Mainnet
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_prefix_and_length() {
        let id = new_id("man_");
        assert!(id.starts_with("man_"));
        assert_eq!(id.len(), 4 + 24);
        assert!(id[4..].bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_ne!(new_id("man_"), new_id("man_"));
    }

    #[test]
    fn ids_sort_by_creation_time() {
        let a = new_id("pull_");
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = new_id("pull_");
        assert!(a < b, "{a} < {b}");
        let f = |v| base62_fixed(v, TIME_CHARS);
        assert_eq!(f(0), "00000000");
        assert_eq!(f(61), "0000000z");
        assert_eq!(f(62), "00000010");
        assert!(f(1_800_000_000_000) < f(1_800_000_000_001));
        assert!(f(61) < f(62));
        // The random part differs within one millisecond.
        assert_ne!(new_id("pull_")[13..], new_id("pull_")[13..]);
    }

    #[test]
    fn ids_made_one_after_another_sort_in_that_order_within_a_millisecond() {
        let ids: Vec<String> = (0..20_000).map(|_| new_id("ba_")).collect();
        for w in ids.windows(2) {
            assert!(w[0] < w[1], "{} then {}", w[0], w[1]);
        }
        // Many share a millisecond (20,000 ids take a few), so the order is not the
        // clock's alone.
        let millis: std::collections::BTreeSet<&str> = ids.iter().map(|i| &i[3..11]).collect();
        assert!(
            millis.len() < ids.len() / 2,
            "{} milliseconds",
            millis.len()
        );
    }

    #[test]
    fn a_stamp_steps_up_within_a_millisecond_and_never_goes_back() {
        let space = 1_000;
        // A new millisecond: a fresh random part.
        assert_eq!(step((5, 900), 6, space, 7, 1), (6, 7));
        // The same millisecond: the last random part and a step.
        assert_eq!(step((5, 900), 5, space, 7, 40), (5, 940));
        // The clock went back: still after the last.
        assert_eq!(step((5, 900), 3, space, 7, 40), (5, 940));
        // The random part full: the next millisecond, fresh.
        assert_eq!(step((5, 990), 5, space, 7, 40), (6, 7));
    }

    #[test]
    fn hash_is_stable_hex() {
        assert_eq!(
            hash_secret("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
