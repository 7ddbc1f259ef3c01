//! `op_multihash`: `Bytes -> Multihash`, with the hash function chosen by
//! config `hasher` (blake3 by default). Multicodec codes: blake3 0x1e,
//! sha2-256 0x12, sha2-512 0x13, sha3-256 0x16, keccak-256 0x1b.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use braid_support::{Config, Error, Multihash};

/// The hash functions offered, with their multicodec codes; the first is
/// the default.
pub const HASHERS: &[(&str, u64)] =
    &[("blake3", 0x1e), ("sha2-256", 0x12), ("sha2-512", 0x13), ("sha3-256", 0x16), ("keccak-256", 0x1b)];

/// Hashes `input` with the configured hasher and wraps the digest as a multihash.
#[braid_macros::operation(
    groups = ["SYS"],
    config(hasher = ["blake3", "sha2-256", "sha2-512", "sha3-256", "keccak-256"])
)]
pub async fn execute(input: &[u8], config: &Config) -> Result<Multihash, Error> {
    hash(config.get("hasher").unwrap_or("blake3"), input)
}

/// Hashes `data` with the hasher named `hasher` (one of [`HASHERS`]).
/// Each hasher is compiled in by its cargo feature `hasher-<name>`.
pub fn hash(hasher: &str, data: &[u8]) -> Result<Multihash, Error> {
    // Unused when no hasher is compiled in.
    let _ = data;
    match hasher {
        #[cfg(feature = "hasher-blake3")]
        "blake3" => Multihash::wrap(0x1e, blake3::hash(data).as_bytes()),
        #[cfg(feature = "hasher-sha2-256")]
        "sha2-256" => Multihash::wrap(0x12, &<sha2::Sha256 as sha2::Digest>::digest(data)),
        #[cfg(feature = "hasher-sha2-512")]
        "sha2-512" => Multihash::wrap(0x13, &<sha2::Sha512 as sha2::Digest>::digest(data)),
        #[cfg(feature = "hasher-sha3-256")]
        "sha3-256" => Multihash::wrap(0x16, &<sha3::Sha3_256 as sha3::Digest>::digest(data)),
        #[cfg(feature = "hasher-keccak-256")]
        "keccak-256" => Multihash::wrap(0x1b, &<sha3::Keccak256 as sha3::Digest>::digest(data)),
        other => Err(OPERATION.config_error("hasher", other)),
    }
}

// Tests of every hasher: with the default features.
#[cfg(all(
    test,
    feature = "hasher-blake3",
    feature = "hasher-sha2-256",
    feature = "hasher-sha2-512",
    feature = "hasher-sha3-256",
    feature = "hasher-keccak-256"
))]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec::Vec;

    fn hex(bytes: &[u8]) -> alloc::string::String {
        bytes.iter().map(|b| alloc::format!("{b:02x}")).collect()
    }

    fn digest(hasher: &str, data: &[u8]) -> alloc::string::String {
        let cfg = config([("hasher", hasher)]).unwrap();
        let mh = execute_sync(data, &cfg).unwrap();
        hex(mh.digest())
    }

    // Known answers from the algorithms' published test vectors:
    // FIPS 180-4 examples (sha2), FIPS 202 examples (sha3-256), the Keccak
    // team's reference (keccak-256 of ""), blake3's test_vectors.json.
    #[test]
    fn known_answers() {
        assert_eq!(digest("sha2-256", b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(
            digest("sha2-512", b"abc"),
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        );
        assert_eq!(digest("sha3-256", b"abc"), "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532");
        assert_eq!(digest("keccak-256", b""), "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
        assert_eq!(digest("blake3", b""), "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262");
    }

    #[test]
    fn multihash_prefix_names_the_hasher() {
        for (name, code) in HASHERS {
            let cfg = config([("hasher", *name)]).unwrap();
            let mh = execute_sync(&Vec::from(&b"x"[..]), &cfg).unwrap();
            assert_eq!(mh.code(), *code, "{name}");
            assert_eq!(Multihash::from_bytes(mh.as_bytes()).unwrap(), mh);
        }
    }

    #[test]
    fn default_hasher_is_blake3_and_unknown_ones_are_rejected() {
        let mh = execute_sync(&Vec::new(), &config([]).unwrap()).unwrap();
        assert_eq!(mh.code(), 0x1e);
        let err = config([("hasher", "md5")]).unwrap_err();
        assert!(err.to_string().contains("cannot be `md5`"), "{err}");
    }

    #[test]
    fn manifest_is_generated_from_the_code() {
        assert_eq!(OPERATION.inputs, ["Bytes"]);
        assert_eq!(OPERATION.output, "Multihash");
        assert!(
            OPERATION.manifest_json.contains(r#""targets":["native","nostd","wasm"]"#),
            "{}",
            OPERATION.manifest_json
        );
        assert!(OPERATION
            .manifest_json
            .contains(r#""hasher":["blake3","sha2-256","sha2-512","sha3-256","keccak-256"]"#));
    }
}

// `make test` also runs the tests with blake3 alone, as a workflow that
// names only blake3 builds this crate.
#[cfg(all(test, feature = "hasher-blake3", not(feature = "hasher-sha2-256")))]
mod blake3_only {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn a_hasher_left_out_says_which_feature_compiles_it_in() {
        assert_eq!(execute_sync(b"x", &config([]).unwrap()).unwrap().code(), 0x1e);
        let err = execute_sync(b"x", &config([("hasher", "sha2-256")]).unwrap()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "op_multihash: config `hasher` = `sha2-256` is not compiled in; enable the cargo feature `hasher-sha2-256`"
        );
        // Unknown values are still rejected as such.
        assert!(config([("hasher", "md5")]).is_err());
    }
}
