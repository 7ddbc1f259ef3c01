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

/// `braid_schema::content_id` (version ids, workflow ids, artifact ids)
/// gives what the operations give for blake3 + raw + base32, and what the
/// reference implementation gives.
#[test]
fn content_ids_match_the_operations_and_the_reference() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../operations/vectors/cid.json");
    let vectors: Vectors = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases: Vec<&Case> =
        vectors.cases.iter().filter(|c| c.hasher == "blake3" && c.base == "base32" && c.codec == "raw").collect();
    assert!(cases.len() >= 5, "expected every size");
    for case in cases {
        assert_eq!(braid::content_id(&input(case.size)), case.cid, "size {}", case.size);
    }
    for size in [1, 2, 3, 4, 5, 63, 64, 65, 1025] {
        let bytes = input(size);
        let mh = op_multihash::hash("blake3", &bytes).unwrap();
        let cid = op_cid::cid_v1(0x55, "base32", &mh).unwrap().into_string();
        assert_eq!(braid::content_id(&bytes), cid, "size {size}");
    }
}
