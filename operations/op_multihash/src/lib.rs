//! `op_multihash`: `Bytes -> Multihash`, with the hash function chosen by
//! config `hasher` (blake3 by default). Multicodec codes: blake3 0x1e,
//! sha2-256 0x12, sha2-512 0x13, sha3-256 0x16, keccak-256 0x1b.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use braid_support::{Config, Error, Incremental, Multihash};

/// The hash functions offered, with their multicodec codes; the first is
/// the default.
pub const HASHERS: &[(&str, u64)] =
    &[("blake3", 0x1e), ("sha2-256", 0x12), ("sha2-512", 0x13), ("sha3-256", 0x16), ("keccak-256", 0x1b)];

/// Hashes `input` with the configured hasher and wraps the digest as a multihash.
#[braid_macros::operation(
    groups = ["SYS"],
    config(hasher = ["blake3", "sha2-256", "sha2-512", "sha3-256", "keccak-256"]),
    stream = Hasher
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

/// The incremental form: the configured hasher fed chunk by chunk; the
/// multihash of all chunks equals [`execute`]'s of their concatenation.
pub struct Hasher(State);

/// One hasher's running state (only those compiled in).
enum State {
    #[cfg(feature = "hasher-blake3")]
    Blake3(alloc::boxed::Box<blake3::Hasher>),
    #[cfg(feature = "hasher-sha2-256")]
    Sha2_256(sha2::Sha256),
    #[cfg(feature = "hasher-sha2-512")]
    Sha2_512(sha2::Sha512),
    #[cfg(feature = "hasher-sha3-256")]
    Sha3_256(sha3::Sha3_256),
    #[cfg(feature = "hasher-keccak-256")]
    Keccak256(sha3::Keccak256),
}

impl Incremental for Hasher {
    type Output = Multihash;

    // With no hasher compiled in, every arm returns.
    #[allow(unreachable_code)]
    fn start(config: &Config) -> Result<Self, Error> {
        Ok(Hasher(match config.get("hasher").unwrap_or("blake3") {
            #[cfg(feature = "hasher-blake3")]
            "blake3" => State::Blake3(alloc::boxed::Box::new(blake3::Hasher::new())),
            #[cfg(feature = "hasher-sha2-256")]
            "sha2-256" => State::Sha2_256(<sha2::Sha256 as sha2::Digest>::new()),
            #[cfg(feature = "hasher-sha2-512")]
            "sha2-512" => State::Sha2_512(<sha2::Sha512 as sha2::Digest>::new()),
            #[cfg(feature = "hasher-sha3-256")]
            "sha3-256" => State::Sha3_256(<sha3::Sha3_256 as sha3::Digest>::new()),
            #[cfg(feature = "hasher-keccak-256")]
            "keccak-256" => State::Keccak256(<sha3::Keccak256 as sha3::Digest>::new()),
            other => return Err(OPERATION.config_error("hasher", other)),
        }))
    }

    fn update(&mut self, chunk: &[u8]) {
        // Unused when no hasher is compiled in.
        let _ = chunk;
        match &mut self.0 {
            #[cfg(feature = "hasher-blake3")]
            State::Blake3(h) => {
                h.update(chunk);
            }
            #[cfg(feature = "hasher-sha2-256")]
            State::Sha2_256(h) => sha2::Digest::update(h, chunk),
            #[cfg(feature = "hasher-sha2-512")]
            State::Sha2_512(h) => sha2::Digest::update(h, chunk),
            #[cfg(feature = "hasher-sha3-256")]
            State::Sha3_256(h) => sha3::Digest::update(h, chunk),
            #[cfg(feature = "hasher-keccak-256")]
            State::Keccak256(h) => sha3::Digest::update(h, chunk),
            // No hasher compiled in: no state to update.
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }

    fn finish(self) -> Result<Multihash, Error> {
        match self.0 {
            #[cfg(feature = "hasher-blake3")]
            State::Blake3(h) => Multihash::wrap(0x1e, h.finalize().as_bytes()),
            #[cfg(feature = "hasher-sha2-256")]
            State::Sha2_256(h) => Multihash::wrap(0x12, &sha2::Digest::finalize(h)),
            #[cfg(feature = "hasher-sha2-512")]
            State::Sha2_512(h) => Multihash::wrap(0x13, &sha2::Digest::finalize(h)),
            #[cfg(feature = "hasher-sha3-256")]
            State::Sha3_256(h) => Multihash::wrap(0x16, &sha3::Digest::finalize(h)),
            #[cfg(feature = "hasher-keccak-256")]
            State::Keccak256(h) => Multihash::wrap(0x1b, &sha3::Digest::finalize(h)),
        }
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

    /// `data` fed to the incremental form in chunks of `size` (none for
    /// the empty input).
    fn streamed(hasher: &str, data: &[u8], size: usize) -> Multihash {
        let mut stream = OperationStream::start(&config([("hasher", hasher)]).unwrap()).unwrap();
        data.chunks(size).for_each(|chunk| stream.update(chunk));
        stream.finish().unwrap()
    }

    #[test]
    fn the_incremental_form_equals_execute_however_the_input_is_cut() {
        // 2.5 MiB: several blake3 chunks and 1 MiB pieces, a short last one.
        let data: Vec<u8> = (0..(5usize << 19)).map(|i| (i.wrapping_mul(31) >> 3) as u8).collect();
        for (name, _) in HASHERS {
            let cfg = config([("hasher", *name)]).unwrap();
            let whole = execute_sync(&data, &cfg).unwrap();
            for size in [1 << 20, 4099] {
                assert_eq!(streamed(name, &data, size), whole, "{name} in chunks of {size}");
            }
            let part = &data[..70_000];
            assert_eq!(streamed(name, part, 7), execute_sync(part, &cfg).unwrap(), "{name} in chunks of 7");
            assert_eq!(streamed(name, &data[..1000], 1), execute_sync(&data[..1000], &cfg).unwrap(), "{name}, 1 B");
            assert_eq!(streamed(name, &[], 1), execute_sync(&[], &cfg).unwrap(), "{name}, empty");
            // Empty chunks between others change nothing.
            let mut stream = OperationStream::start(&cfg).unwrap();
            for chunk in data[..5000].chunks(999) {
                stream.update(&[]);
                stream.update(chunk);
            }
            assert_eq!(stream.finish().unwrap(), execute_sync(&data[..5000], &cfg).unwrap(), "{name}, empty chunks");
        }
        assert!(OPERATION.manifest_json.contains(r#""stream":true"#), "{}", OPERATION.manifest_json);
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
        // The incremental form says the same.
        let err = OperationStream::start(&config([("hasher", "sha2-256")]).unwrap()).err().unwrap();
        assert!(err.to_string().contains("enable the cargo feature `hasher-sha2-256`"), "{err}");
    }
}
