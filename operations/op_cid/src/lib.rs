//! `op_cid`: `Multihash -> Cid`, a CIDv1 in the multibase of config `base`
//! (base32 by default) with the content codec of config `codec` (raw by
//! default). Encoding is done by the `cid` crate (multiformats' Rust
//! implementation); this crate only maps config names to codes.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use braid_support::{Cid, Config, Error, Multihash};

/// Content codecs offered, with their multicodec codes; the first is the default.
pub const CODECS: &[(&str, u64)] = &[("raw", 0x55), ("dag-pb", 0x70), ("dag-cbor", 0x71), ("json", 0x0200)];

/// Multibases offered; the first is the default.
pub const BASES: &[(&str, multibase::Base)] = &[
    ("base32", multibase::Base::Base32Lower),
    ("base58btc", multibase::Base::Base58Btc),
    ("base64url", multibase::Base::Base64Url),
];

use cid::multibase;

/// Wraps `input` in a CIDv1 and encodes it as text.
#[braid_macros::operation(
    groups = ["SYS"],
    config(base = ["base32", "base58btc", "base64url"], codec = ["raw", "dag-pb", "dag-cbor", "json"])
)]
pub async fn execute(input: &Multihash, config: &Config) -> Result<Cid, Error> {
    let codec = lookup(CODECS, "codec", config)?;
    let base = lookup(BASES, "base", config)?;
    cid_v1(codec, base, input)
}

fn lookup<T: Copy>(table: &[(&str, T)], key: &str, config: &Config) -> Result<T, Error> {
    let value = config.get(key).unwrap_or(table[0].0);
    table.iter().find(|(name, _)| *name == value).map(|(_, v)| *v).ok_or_else(|| Error::InvalidConfigValue {
        operation: OPERATION.name.into(),
        key: key.into(),
        found: value.into(),
        expected: table.iter().map(|(n, _)| *n).collect::<alloc::vec::Vec<_>>().join(", "),
    })
}

/// The CIDv1 text of `multihash` with content codec `codec` in `base`.
pub fn cid_v1(codec: u64, base: multibase::Base, multihash: &Multihash) -> Result<Cid, Error> {
    let mh = multihash::Multihash::<64>::from_bytes(multihash.as_bytes())
        .map_err(|e| Error::invalid_input(OPERATION.name, alloc::format!("not a multihash: {e}")))?;
    let cid = cid::Cid::new_v1(codec, mh);
    let text = cid
        .to_string_of_base(base)
        .map_err(|e| Error::invalid_input(OPERATION.name, alloc::format!("cannot encode the CID: {e}")))?;
    Cid::from_text(text)
}

#[cfg(test)]
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
