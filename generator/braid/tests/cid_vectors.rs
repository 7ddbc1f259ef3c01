//! The native operations against the CID vectors that the independent
//! implementation in js/lib/reference.mjs (multiformats + @noble/hashes)
//! computed: every size, hasher, base and codec.

use serde::Deserialize;

#[derive(Deserialize)]
struct Vectors {
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    size: usize,
    hasher: String,
    base: String,
    codec: String,
    cid: String,
}

/// The same inputs as `input()` in js/lib/reference.mjs.
fn input(size: usize) -> Vec<u8> {
    if size == 11 {
        return b"hello world".to_vec();
    }
    (0..size).map(|i| (i.wrapping_mul(31).wrapping_add(7) & 0xff) as u8).collect()
}

#[test]
fn native_operations_match_the_reference_vectors() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../operations/vectors/cid.json");
    let vectors: Vectors = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(vectors.cases.len() >= 75, "expected every size x hasher x base");
    for case in &vectors.cases {
        let bytes = input(case.size);
        let mh = op_multihash::execute_sync(&bytes, &op_multihash::config([("hasher", case.hasher.as_str())]).unwrap())
            .unwrap();
        let config = op_cid::config([("base", case.base.as_str()), ("codec", case.codec.as_str())]).unwrap();
        let cid = op_cid::execute_sync(&mh, &config).unwrap();
        assert_eq!(
            cid.as_str(),
            case.cid,
            "size {} hasher {} base {} codec {}",
            case.size,
            case.hasher,
            case.base,
            case.codec
        );
    }
}
