//! Identifiers and secrets: a prefix and random base62 characters.

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

/// An object id such as `acct_3kTm…` (24 random characters, ~143 bits).
pub fn new_id(prefix: &str) -> String {
    random_id(prefix, 24)
}

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
    fn hash_is_stable_hex() {
        assert_eq!(
            hash_secret("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
