//! The value types that flow between operations.
//!
//! `Bytes`, `U64` and `Bool` are plain aliases so that operations work on
//! ordinary Rust values; `Multihash` and `Cid` are newtypes so that the type
//! checker of the generator (and of rustc) keeps them apart from raw bytes
//! and free text.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::text::{text, Hex};
use crate::Error;

/// A value type of one's own, from `#[derive(braid_macros::Value)]`, which
/// also derives its bincode encoding and (feature `wasm`) its JS
/// conversions.
pub trait Value: crate::codec::Encode + crate::codec::Decode<()> {
    /// The Rust name, also its TypeScript name (`Image`).
    const NAME: &'static str;
    /// Its TypeScript declaration: `export interface Image { ... }` or
    /// `export type Filter = "nearest" | "bilinear";`.
    const TYPESCRIPT: &'static str;
}

/// A record value type's fields, in order, as a tuple: what
/// `#[derive(Value)]` gives a struct, so that generated boundaries (the
/// component model's) can convert it field by field without its Rust
/// field names.
pub trait Record: Sized {
    /// The field types, in declaration order.
    type Fields;
    /// The fields, in order.
    fn into_fields(self) -> Self::Fields;
    /// The record of these fields.
    fn from_fields(fields: Self::Fields) -> Self;
}

/// A choice value type's variants by position: what `#[derive(Value)]`
/// gives an enum (see [`Record`]).
pub trait Choice: Sized {
    /// The variant's position in the declaration.
    fn index(&self) -> u32;
    /// The variant at `index`, if there is one.
    fn from_index(index: u32) -> Option<Self>;
}

/// An owned byte string. JS: `Uint8Array`.
pub type Bytes = Vec<u8>;
/// An unsigned 64-bit integer. JS: `bigint`.
pub type U64 = u64;
/// A boolean. JS: `boolean`.
pub type Bool = bool;

/// A self-describing hash: `varint(code) ++ varint(len) ++ digest`, as in the
/// multiformats multihash spec. JS: `Uint8Array` (the encoded bytes).
///
/// Stored inline (no heap allocation): a multihash is at most
/// [`MAX_ENCODED_LEN`] bytes.
#[derive(Clone)]
pub struct Multihash {
    len: u8,
    bytes: [u8; MAX_ENCODED_LEN],
}

/// Longest encoded multihash: a 9-byte code, a 1-byte length, 64 bytes of digest.
pub const MAX_ENCODED_LEN: usize = 9 + 1 + MAX_DIGEST_LEN;

impl PartialEq for Multihash {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Multihash {}

impl core::hash::Hash for Multihash {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

impl PartialOrd for Multihash {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Multihash {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

/// Largest digest length Braid accepts in a multihash (64 bytes: sha2-512).
pub const MAX_DIGEST_LEN: usize = 64;

impl Multihash {
    /// Wraps a digest computed with the hash function of multicodec `code`.
    pub fn wrap(code: u64, digest: &[u8]) -> Result<Self, Error> {
        if code >= 1 << 63 {
            // Multiformats varints are at most 9 bytes (63 bits).
            return Err(Error::invalid_input("multihash", text!("hash code 0x", Hex(code), " is too large")));
        }
        if digest.len() > MAX_DIGEST_LEN {
            return Err(Error::invalid_input(
                "multihash",
                text!("digest of ", digest.len(), " bytes is longer than the ", MAX_DIGEST_LEN, " bytes supported"),
            ));
        }
        let mut head = [0u8; 10];
        let mut n = write_varint_into(&mut head, code);
        n += write_varint_into(&mut head[n..], digest.len() as u64);
        Ok(Self::inline(&[&head[..n], digest]))
    }

    /// Parses encoded multihash bytes, checking that the length prefix
    /// matches the digest.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let bad = |reason: &str| Error::invalid_input("multihash", reason.into());
        let (_code, rest) = read_varint(bytes).ok_or_else(|| bad("missing or malformed hash code"))?;
        let (len, digest) = read_varint(rest).ok_or_else(|| bad("missing or malformed digest length"))?;
        if len as usize != digest.len() || digest.len() > MAX_DIGEST_LEN {
            return Err(Error::invalid_input(
                "multihash",
                text!(
                    "digest length prefix says ",
                    len,
                    " bytes but ",
                    digest.len(),
                    " follow (at most ",
                    MAX_DIGEST_LEN,
                    " allowed)"
                ),
            ));
        }
        Ok(Self::inline(&[bytes]))
    }

    /// Copies validated parts (at most [`MAX_ENCODED_LEN`] bytes in all).
    fn inline(parts: &[&[u8]]) -> Self {
        let mut bytes = [0u8; MAX_ENCODED_LEN];
        let mut len = 0;
        for part in parts {
            bytes[len..len + part.len()].copy_from_slice(part);
            len += part.len();
        }
        Self { len: len as u8, bytes }
    }

    /// The multicodec code of the hash function.
    pub fn code(&self) -> u64 {
        // Invariant: `bytes` was validated on construction.
        read_varint(self.as_bytes()).map_or(0, |(code, _)| code)
    }

    /// The raw digest.
    pub fn digest(&self) -> &[u8] {
        let rest = read_varint(self.as_bytes()).map_or(&[][..], |(_, rest)| rest);
        read_varint(rest).map_or(&[][..], |(_, digest)| digest)
    }

    /// The encoded multihash.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// The encoded multihash, by value.
    pub fn into_bytes(self) -> Vec<u8> {
        self.as_bytes().to_vec()
    }
}

impl fmt::Debug for Multihash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Multihash(0x{:x}, ", self.code())?;
        for b in self.digest() {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

/// A content identifier in its multibase text form (e.g. `bafkr4i...`).
/// JS: `string`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cid(String);

impl Cid {
    /// Wraps the text form of a CID. Checks only that it is non-empty ASCII
    /// with a multibase prefix Braid emits (`b`, `z`, `u`) or a CIDv0 (`Qm`).
    pub fn from_text(text: String) -> Result<Self, Error> {
        let ok = text.is_ascii() && text.len() > 1 && (text.starts_with(['b', 'z', 'u']) || text.starts_with("Qm"));
        if ok {
            Ok(Self(text))
        } else {
            Err(Error::invalid_input(
                "cid",
                text!(
                    "`",
                    crate::error::truncate(&text, 64),
                    "` is not a CID in base32 (b...), base58btc (z...) or base64url (u...)"
                ),
            ))
        }
    }

    /// The text form.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text form, by value.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for Cid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Cid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cid({})", self.0)
    }
}

/// Writes `value` as an unsigned varint at the start of `out` (which holds
/// at least 10 bytes); returns how many bytes it took.
fn write_varint_into(out: &mut [u8], mut value: u64) -> usize {
    let mut i = 0;
    while value >= 0x80 {
        out[i] = (value as u8) | 0x80;
        value >>= 7;
        i += 1;
    }
    out[i] = value as u8;
    i + 1
}

/// Reads an unsigned varint of at most 9 bytes (the multiformats limit) and
/// returns it with the rest of the input; `None` if malformed or truncated.
pub(crate) fn read_varint(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let mut value: u64 = 0;
    for (i, &b) in bytes.iter().enumerate().take(9) {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            // Minimal encoding only: a trailing zero byte is not allowed.
            if b == 0 && i > 0 {
                return None;
            }
            return Some((value, &bytes[i + 1..]));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn varint_round_trips() {
        for v in [0u64, 1, 127, 128, 255, 300, 0x1e, 0x1b, 16384, u64::from(u32::MAX), (1 << 63) - 1] {
            let mut buf = [0u8; 10];
            let n = write_varint_into(&mut buf, v);
            assert_eq!(read_varint(&buf[..n]), Some((v, &[][..])), "value {v}");
        }
        // Spec examples: 300 = ac 02, 16384 = 80 80 01.
        let mut buf = [0u8; 10];
        let n = write_varint_into(&mut buf, 300);
        assert_eq!(&buf[..n], [0xac, 0x02]);
    }

    #[test]
    fn varint_rejects_malformed() {
        assert_eq!(read_varint(&[]), None);
        assert_eq!(read_varint(&[0x80]), None);
        assert_eq!(read_varint(&[0x81, 0x00]), None, "non-minimal");
        assert_eq!(read_varint(&[0xff; 10]), None, "too long");
    }

    #[test]
    fn multihash_wraps_and_parses() {
        let mh = Multihash::wrap(0x12, &[0xab; 32]).unwrap();
        assert_eq!(&mh.as_bytes()[..2], &[0x12, 0x20]);
        assert_eq!(mh.code(), 0x12);
        assert_eq!(mh.digest(), &[0xab; 32]);
        assert_eq!(Multihash::from_bytes(mh.as_bytes()).unwrap(), mh);
    }

    #[test]
    fn multihash_rejects_bad_lengths() {
        let err = Multihash::from_bytes(&[0x12, 0x20, 1, 2, 3]).unwrap_err();
        assert!(err.to_string().contains("says 32 bytes but 3 follow"), "{err}");
        assert!(Multihash::wrap(0x12, &[0; 65]).is_err());
        assert!(Multihash::wrap(u64::MAX, &[0; 64]).is_err());
        let big = Multihash::wrap((1 << 63) - 1, &[7; 64]).unwrap();
        assert_eq!(big.as_bytes().len(), MAX_ENCODED_LEN);
        assert_eq!(Multihash::from_bytes(big.as_bytes()).unwrap(), big);
        assert!(Multihash::from_bytes(&[]).is_err());
    }

    #[test]
    fn cid_text_is_checked() {
        assert!(Cid::from_text("bafkqaaa".into()).is_ok());
        assert!(Cid::from_text("zb2rh".into()).is_ok());
        let err = Cid::from_text("hello".into()).unwrap_err();
        assert!(err.to_string().contains("`hello` is not a CID"), "{err}");
        assert!(Cid::from_text(String::new()).is_err());
    }
}
