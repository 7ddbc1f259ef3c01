//! `op_cid`: `Multihash -> Cid`, a CIDv1 in the multibase of config `base`
//! (base32 by default) with the content codec of config `codec` (raw by
//! default). The CID's bytes are its version and codec as varints
//! (`unsigned-varint`) and the multihash as encoded, which `Multihash`
//! validated when it was made; the text is the multibase prefix and the bytes encoded
//! in base32 here, by `data-encoding` in base64url or by `base-x` in base58btc,
//! each base behind its cargo feature `base-<name>` so that a workflow links
//! only the base it names (the `multibase` crate would link all 24).
//!
//! base32, the default, is written out (one alphabet, no padding, in lower
//! case): `data-encoding` interprets any encoding's description at run time,
//! which took about 2 KB of a workflow's Wasm and was no faster on a CID.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use alloc::string::String;

use braid_support::{Cid, Config, Error, Multihash};

/// Content codecs offered, with their multicodec codes; the first is the default.
pub const CODECS: &[(&str, u64)] = &[("raw", 0x55), ("dag-pb", 0x70), ("dag-cbor", 0x71), ("json", 0x0200)];

/// Multibases offered, with their prefix characters; the first is the default.
pub const BASES: &[(&str, char)] = &[("base32", 'b'), ("base58btc", 'z'), ("base64url", 'u')];

/// Wraps `input` in a CIDv1 and encodes it as text.
#[braid_macros::operation(
    groups = ["SYS"],
    config(base = ["base32", "base58btc", "base64url"], codec = ["raw", "dag-pb", "dag-cbor", "json"])
)]
pub async fn execute(input: &Multihash, config: &Config) -> Result<Cid, Error> {
    let codec = lookup(CODECS, "codec", config)?;
    let base = config.get("base").unwrap_or(BASES[0].0);
    cid_v1(codec, base, input)
}

fn lookup<T: Copy>(table: &[(&str, T)], key: &str, config: &Config) -> Result<T, Error> {
    let value = config.get(key).unwrap_or(table[0].0);
    table.iter().find(|(name, _)| *name == value).map(|(_, v)| *v).ok_or_else(|| OPERATION.config_error(key, value))
}

/// The CIDv1 text of `multihash` with content codec `codec` in multibase
/// `base` (one of [`BASES`]).
pub fn cid_v1(codec: u64, base: &str, multihash: &Multihash) -> Result<Cid, Error> {
    // A CIDv1's bytes are its version and codec as varints, then the
    // multihash as it is encoded: a `Multihash` is validated when made (a
    // digest of at most 64 bytes, minimal varints), so it is copied as is.
    let mut codec_buf = unsigned_varint::encode::u64_buffer();
    let codec = unsigned_varint::encode::u64(codec, &mut codec_buf);
    let mh = multihash.as_bytes();
    let mut bytes = alloc::vec::Vec::with_capacity(1 + codec.len() + mh.len());
    bytes.push(1);
    bytes.extend_from_slice(codec);
    bytes.extend_from_slice(mh);
    Cid::from_text(multibase(base, &bytes)?)
}

fn multibase(base: &str, bytes: &[u8]) -> Result<String, Error> {
    // Unused when no base is compiled in.
    let _ = bytes;
    match base {
        // RFC 4648 base32 without padding, in lower case.
        #[cfg(feature = "base-base32")]
        "base32" => Ok(base32_lower(bytes)),
        #[cfg(feature = "base-base58btc")]
        "base58btc" => {
            let mut text = String::from("z");
            text.push_str(&base_x::encode("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", bytes));
            Ok(text)
        }
        #[cfg(feature = "base-base64url")]
        "base64url" => Ok(base64url(bytes)),
        other => Err(OPERATION.config_error("base", other)),
    }
}

/// `b` then `bytes` in RFC 4648 base32, lower case, without padding: each
/// 5 bytes as 8 symbols of 5 bits, the last bits of a shorter tail padded
/// with zeros to a whole symbol.
#[cfg(feature = "base-base32")]
fn base32_lower(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut text = alloc::vec::Vec::with_capacity(1 + (bytes.len() * 8).div_ceil(5));
    text.push(b'b');
    // Whole blocks apart from the tail: natively 1.6x faster on a CID than
    // one loop over `chunks(5)` that pads each block.
    let mut blocks = bytes.chunks_exact(5);
    for block in &mut blocks {
        let bits = block.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b));
        text.extend((0..8).rev().map(|i| ALPHABET[(bits >> (5 * i)) as usize & 31]));
    }
    let rest = blocks.remainder();
    if !rest.is_empty() {
        let bits = rest.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b)) << (8 * (5 - rest.len()));
        let symbols = (rest.len() * 8).div_ceil(5);
        text.extend((0..symbols).map(|i| ALPHABET[(bits >> (35 - 5 * i)) as usize & 31]));
    }
    // ASCII by construction, so never the default.
    String::from_utf8(text).unwrap_or_default()
}

/// `u` then `bytes` in RFC 4648 base64url without padding, in one allocation.
#[cfg(feature = "base-base64url")]
fn base64url(bytes: &[u8]) -> String {
    let encoding = &data_encoding::BASE64URL_NOPAD;
    let mut text = String::with_capacity(1 + encoding.encode_len(bytes.len()));
    text.push('u');
    encoding.encode_append(bytes, &mut text);
    text
}

// Tests of every base: with the default features.
#[cfg(all(test, feature = "base-base32", feature = "base-base58btc", feature = "base-base64url"))]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn cid_of(data: &[u8], hasher: &str, base: &str, codec: &str) -> alloc::string::String {
        let mh =
            op_multihash::execute_sync(&Vec::from(data), &op_multihash::config([("hasher", hasher)]).unwrap()).unwrap();
        execute_sync(&mh, &config([("base", base), ("codec", codec)]).unwrap()).unwrap().into_string()
    }

    // Known answers from the multiformats CID spec and the IPFS ecosystem:
    // the raw-codec sha2-256 CID of "hello world" (no newline) as `ipfs add
    // --raw-leaves --cid-version 1` prints it, and the identity of empty data.
    #[test]
    fn known_answers() {
        assert_eq!(
            cid_of(b"hello world", "sha2-256", "base32", "raw"),
            "bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e"
        );
        // The well-known CID of the empty block (raw, sha2-256).
        assert_eq!(
            cid_of(b"", "sha2-256", "base32", "raw"),
            "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku"
        );
    }

    #[test]
    fn bases_use_their_multibase_prefix() {
        assert!(cid_of(b"x", "blake3", "base32", "raw").starts_with("bafkr4i"));
        assert!(cid_of(b"x", "blake3", "base58btc", "raw").starts_with('z'));
        assert!(cid_of(b"x", "blake3", "base64url", "raw").starts_with('u'));
        assert!(cid_of(b"x", "sha2-256", "base32", "dag-pb").starts_with("bafybei"));
        assert!(cid_of(b"x", "sha2-256", "base32", "dag-cbor").starts_with("bafyrei"));
        assert!(cid_of(b"x", "sha2-256", "base32", "json").starts_with("bagaaiera"));
    }

    #[test]
    fn defaults_are_base32_raw() {
        let mh = op_multihash::execute_sync(&Vec::from(&b"x"[..]), &op_multihash::config([]).unwrap()).unwrap();
        let cid = execute_sync(&mh, &config([]).unwrap()).unwrap();
        assert_eq!(cid.as_str(), cid_of(b"x", "blake3", "base32", "raw"));
    }
}

// RFC 4648's base32 test vectors (section 10), in lower case and without
// padding: every length of tail, from none to four bytes.
#[cfg(all(test, feature = "base-base32"))]
#[test]
fn base32_gives_the_rfc_4648_vectors() {
    for (data, encoded) in [
        ("", ""),
        ("f", "my"),
        ("fo", "mzxq"),
        ("foo", "mzxw6"),
        ("foob", "mzxw6yq"),
        ("fooba", "mzxw6ytb"),
        ("foobar", "mzxw6ytboi"),
    ] {
        assert_eq!(base32_lower(data.as_bytes()), alloc::format!("b{encoded}"), "{data:?}");
    }
}

// `make test` also runs the tests with base32 alone.
#[cfg(all(test, feature = "base-base32", not(feature = "base-base58btc")))]
mod base32_only {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn a_base_left_out_says_which_feature_compiles_it_in() {
        let mh = Multihash::wrap(0x1e, &[7; 32]).unwrap();
        assert!(execute_sync(&mh, &config([]).unwrap()).unwrap().as_str().starts_with("bafkr4i"));
        let err = execute_sync(&mh, &config([("base", "base58btc")]).unwrap()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "op_cid: config `base` = `base58btc` is not compiled in; enable the cargo feature `base-base58btc`"
        );
    }
}
