//! Bitstring Status List v1.0: the bitstring, its `encodedList` form (multibase base64url
//! without padding, `u` prefix, of the GZIP-compressed bits) and the reading of a
//! `BitstringStatusListEntry`. Bit order: index 0 is the left-most (most significant) bit of
//! the first byte.

use std::io::{Read, Write};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;

/// The spec's minimum length: 16 KiB of bits, for herd privacy.
pub const MIN_STATUS_LIST_BITS: usize = 131_072;

/// Upper bound on a decoded list (16 MiB of bits), against decompression bombs.
const MAX_DECODED_BYTES: u64 = 2 * 1024 * 1024;

/// Why a status list could not be built or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatusListError {
    /// Fewer bits than the spec's minimum of 131,072.
    #[error("a status list holds at least {MIN_STATUS_LIST_BITS} bits, not {0}")]
    TooShort(usize),
    /// An index past the end of the list.
    #[error("index {index} is outside a list of {len} bits")]
    OutOfRange {
        /// The index asked for.
        index: u64,
        /// The list's length in bits.
        len: usize,
    },
    /// `encodedList` is not multibase base64url (`u…`).
    #[error("encodedList is not multibase base64url: {0}")]
    Encoding(String),
    /// The decoded bytes are not GZIP, or too large.
    #[error("encodedList does not decompress: {0}")]
    Compression(String),
}

/// A status bitstring: set a bit to revoke (or suspend) the credential holding that index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusList {
    bytes: Vec<u8>,
}

impl StatusList {
    /// A list of `len` bits, all clear. `len` must be at least [`MIN_STATUS_LIST_BITS`];
    /// it is rounded up to whole bytes.
    pub fn new(len: usize) -> Result<Self, StatusListError> {
        if len < MIN_STATUS_LIST_BITS {
            return Err(StatusListError::TooShort(len));
        }
        Ok(Self {
            bytes: vec![0; len.div_ceil(8)],
        })
    }

    /// The number of bits.
    pub fn len(&self) -> usize {
        self.bytes.len() * 8
    }

    /// Always false: a list has at least [`MIN_STATUS_LIST_BITS`] bits.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn locate(&self, index: u64) -> Result<(usize, u8), StatusListError> {
        let len = self.len();
        let i = usize::try_from(index).ok().filter(|i| *i < len);
        let i = i.ok_or(StatusListError::OutOfRange { index, len })?;
        Ok((i / 8, 0x80 >> (i % 8)))
    }

    /// Sets or clears bit `index`.
    pub fn set(&mut self, index: u64, value: bool) -> Result<(), StatusListError> {
        let (byte, mask) = self.locate(index)?;
        if value {
            self.bytes[byte] |= mask;
        } else {
            self.bytes[byte] &= !mask;
        }
        Ok(())
    }

    /// Reads bit `index`.
    pub fn get(&self, index: u64) -> Result<bool, StatusListError> {
        let (byte, mask) = self.locate(index)?;
        Ok(self.bytes[byte] & mask != 0)
    }

    /// The `encodedList` value: `u` + base64url (no padding) of the GZIP of the bits.
    pub fn encode(&self) -> String {
        let mut gz = GzEncoder::new(Vec::new(), Compression::default());
        // Writing to a Vec cannot fail.
        gz.write_all(&self.bytes).expect("in-memory write");
        let compressed = gz.finish().expect("in-memory write");
        format!("u{}", URL_SAFE_NO_PAD.encode(compressed))
    }

    /// Reads an `encodedList`. The multibase `u` prefix is required by the spec; a value
    /// without it (the older StatusList2021 form) is read as plain base64url too.
    pub fn decode(encoded: &str) -> Result<Self, StatusListError> {
        let body = encoded.strip_prefix('u').unwrap_or(encoded);
        let compressed = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|e| StatusListError::Encoding(e.to_string()))?;
        let mut bytes = Vec::new();
        GzDecoder::new(compressed.as_slice())
            .take(MAX_DECODED_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| StatusListError::Compression(e.to_string()))?;
        if bytes.len() as u64 > MAX_DECODED_BYTES {
            return Err(StatusListError::Compression("larger than 2 MiB".into()));
        }
        if bytes.len() * 8 < MIN_STATUS_LIST_BITS {
            return Err(StatusListError::TooShort(bytes.len() * 8));
        }
        Ok(Self { bytes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn too_short_lists_are_refused() {
        assert_eq!(StatusList::new(1000), Err(StatusListError::TooShort(1000)));
        assert!(StatusList::new(MIN_STATUS_LIST_BITS).is_ok());
    }

    #[test]
    fn index_zero_is_the_leftmost_bit_of_the_first_byte() {
        let mut l = StatusList::new(MIN_STATUS_LIST_BITS).unwrap();
        l.set(0, true).unwrap();
        l.set(9, true).unwrap();
        assert_eq!(l.bytes[0], 0b1000_0000);
        assert_eq!(l.bytes[1], 0b0100_0000);
    }

    #[test]
    fn the_encoding_is_multibase_base64url_gzip() {
        let l = StatusList::new(MIN_STATUS_LIST_BITS).unwrap();
        let e = l.encode();
        assert!(e.starts_with('u'));
        assert!(!e.contains('=') && !e.contains('+') && !e.contains('/'));
        let raw = URL_SAFE_NO_PAD.decode(&e[1..]).unwrap();
        assert_eq!(&raw[..2], &[0x1f, 0x8b], "gzip magic");
    }

    #[test]
    fn out_of_range_and_garbage_are_errors() {
        let l = StatusList::new(MIN_STATUS_LIST_BITS).unwrap();
        assert!(matches!(
            l.get(MIN_STATUS_LIST_BITS as u64),
            Err(StatusListError::OutOfRange { .. })
        ));
        assert!(matches!(
            StatusList::decode("u!!!"),
            Err(StatusListError::Encoding(_))
        ));
        assert!(matches!(
            StatusList::decode("uAAAA"),
            Err(StatusListError::Compression(_))
        ));
    }

    proptest! {
        #[test]
        fn encode_decode_round_trips(indices in proptest::collection::vec(0u64..MIN_STATUS_LIST_BITS as u64, 0..20)) {
            let mut l = StatusList::new(MIN_STATUS_LIST_BITS).unwrap();
            for i in &indices { l.set(*i, true).unwrap(); }
            let d = StatusList::decode(&l.encode()).unwrap();
            for i in &indices { prop_assert!(d.get(*i).unwrap()); }
            let ones: u32 = d.bytes.iter().map(|b| b.count_ones()).sum();
            let distinct: std::collections::BTreeSet<_> = indices.iter().collect();
            prop_assert_eq!(ones as usize, distinct.len());
        }
    }
}
