//! Fuzzing the manifest front end with proptest, for a bounded number of
//! cases (`BRAID_FUZZ_CASES`, default 1000 per property): the scanner,
//! parser, checker, diagnostic renderer and code generator are total over
//! arbitrary bytes, mutated example manifests and grammar-generated ones.
//! Invariants: no panic; a rejection has 1 to MAX_DIAGNOSTICS (+1) located
//! diagnostics; an accepted manifest generates Rust that parses.

use braid::codegen::Generator;
use braid::diagnostic::Locations;
use braid::manifest::{self, validate_bytes};
use braid::Registry;
use proptest::prelude::*;
use serde_json::{json, Value};

fn cases() -> u32 {
    std::env::var("BRAID_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(1000)
}

fn config() -> ProptestConfig {
    ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() }
}

/// Everything a user of the CLI or the service would see, checked.
fn check(bytes: &[u8]) {
    let registry = Registry::builtin();
    match validate_bytes(bytes, &registry) {
        Ok(workflow) => {
            let files = Generator::new().render(&workflow).expect("a valid manifest renders");
            let lib = files.iter().find(|f| f.path == "src/lib.rs").expect("lib.rs");
            syn::parse_file(&lib.contents).expect("generated Rust parses");
        }
        Err(diagnostics) => {
            assert!(!diagnostics.is_empty() && diagnostics.len() <= manifest::MAX_DIAGNOSTICS + 1);
            let source = std::str::from_utf8(bytes).ok();
            let lines = bytes.split(|&b| b == b'\n').count();
            for (i, d) in diagnostics.iter().enumerate() {
                let summary = i == manifest::MAX_DIAGNOSTICS;
                if !summary {
                    let line = d.line.unwrap_or_else(|| panic!("{d:?} has no line"));
                    assert!(line >= 1 && line <= lines, "{d:?}: line out of range (text has {lines})");
                    assert!(d.column.is_some_and(|c| c >= 1), "{d:?}");
                }
                let rendered = d.render("fuzz.json", source);
                assert!(rendered.contains("error:"));
            }
        }
    }
}

fn examples() -> Vec<Vec<u8>> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut out: Vec<Vec<u8>> = ["cidv1_from_bytes", "dual_cid_of_text", "salted_cid", "cid_of_file", "cidv1_sha2_256"]
        .iter()
        .map(|n| std::fs::read(format!("{root}/workflows/{n}.json")).unwrap())
        .collect();
    out.push(std::fs::read(format!("{root}/generator/braid/tests/data/nasty.json")).unwrap());
    out
}

/// Pieces that make JSON and manifests interesting when spliced in.
const TOKENS: &[&str] = &[
    "\"",
    "\\",
    "\\u",
    "\\ud800",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    " ",
    "\n",
    "-1",
    "0",
    "1",
    "127",
    "128",
    "-2",
    "1e999",
    "99999999999999999999",
    "null",
    "true",
    "\"op_collect\"",
    "\"op_multihash\"",
    "\"versionId\"",
    "\"version\"",
    "\"^0.1\"",
    "\"config\"",
    "\"inputs\"",
    "\"sequence\"",
    "\"segments\"",
    "\u{0}",
    "é",
    "🦀",
    "~1",
    "/",
    "*/",
    "\"#",
    "{{x}}",
];

#[derive(Debug, Clone)]
enum Mutation {
    Insert { at: usize, token: usize },
    InsertByte { at: usize, byte: u8 },
    Delete { at: usize, len: usize },
    Duplicate { at: usize, len: usize },
    Truncate { at: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(at, token)| Mutation::Insert { at, token }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::InsertByte { at, byte }),
        (any::<usize>(), 1..64usize).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), 1..256usize).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
    ]
}

fn apply(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let n = bytes.len().max(1);
        match *m {
            Mutation::Insert { at, token } => {
                let at = at % n.min(bytes.len() + 1);
                bytes.splice(at..at, TOKENS[token].bytes());
            }
            Mutation::InsertByte { at, byte } => bytes.insert(at % (bytes.len() + 1), byte),
            Mutation::Delete { at, len } => {
                let at = at % n.min(bytes.len() + 1);
                let end = (at + len).min(bytes.len());
                bytes.drain(at..end);
            }
            Mutation::Duplicate { at, len } => {
                let at = at % n.min(bytes.len() + 1);
                let piece = bytes[at..(at + len).min(bytes.len())].to_vec();
                bytes.splice(at..at, piece);
            }
            Mutation::Truncate { at } => bytes.truncate(at % n),
        }
    }
    bytes
}

/// Manifests from the grammar: real and made-up operations, references
/// forward and back, configs, and sizes around the limits.
fn operation() -> impl Strategy<Value = Value> {
    let names = prop::sample::select(vec![
        "op_multihash",
        "op_cid",
        "op_collect",
        "op_utf8",
        "op_encode",
        "op_concat",
        "op_decode",
        "op_multihash_digest",
        "op_file",
        "op_image_decode",
        "op_exif",
        "op_image_gray",
        "op_image_resize",
        "op_image_phash",
        "op_image_pixels",
        "op_hamming",
        "op_photo_proof",
        "op_share",
        "op_nope",
        "",
    ]);
    let versions = prop::sample::select(vec!["^0.1", "*", "=0.1.0", "^9", "not a requirement", ""]);
    let configs = prop::sample::select(vec![
        json!({}),
        json!({ "hasher": "sha2-256" }),
        json!({ "base": "base58btc", "codec": "dag-pb" }),
        json!({ "encoding": "hex" }),
        json!({ "hasher": "md5" }),
        json!({ "nope": "x" }),
        json!({ "hasher": 1 }),
    ]);
    (names, prop::option::of(versions), prop::option::of(configs)).prop_map(|(name, version, config)| {
        let mut op = json!({ "operation": name });
        if let Some(v) = version {
            op["version"] = json!(v);
        }
        if let Some(c) = config {
            op["config"] = c;
        }
        op
    })
}

fn grammar_manifest() -> impl Strategy<Value = Value> {
    // Segment inputs: -1, segment indices (some out of range) and names
    // (some not in the manifest's `inputs`).
    let input = prop_oneof![
        3 => (-2i64..6).prop_map(|n| json!(n)),
        1 => prop::sample::select(vec!["a", "b", "nope"]).prop_map(|name| json!(name)),
    ];
    let segment = (prop::collection::vec(input, 0..5), prop::collection::vec(operation(), 0..6))
        .prop_map(|(inputs, sequence)| json!({ "inputs": inputs, "sequence": sequence }));
    let names = prop::option::of(prop::sample::select(vec![vec!["a"], vec!["a", "b"], vec!["b", "a", "c"]]));
    (
        prop::sample::select(vec!["wf", "a-b_c", "1bad", "", "self"]),
        prop::sample::select(vec!["0.1.0", "1.0.0-rc.1", "x", "9007199254740993.0.0"]),
        names,
        prop::collection::vec(segment, 0..6),
    )
        .prop_map(|(name, version, names, segments)| {
            let mut manifest = json!({ "name": name, "version": version, "segments": segments });
            if let Some(names) = names {
                manifest["inputs"] = json!(names);
            }
            manifest
        })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        check(&bytes);
    }

    /// The locator alone, over any text (it also runs on text that is too
    /// large or not JSON) and any pointers: total, and in range.
    #[test]
    fn locator_over_any_text(
        which in 0..6usize,
        mutations in prop::collection::vec(mutation(), 0..8),
        pointers in prop::collection::vec(prop::sample::select(vec![
            "", "/name", "/segments", "/segments/0", "/segments/0/inputs/0", "/segments/0/sequence/1/config/hasher",
            "/a~1b", "/~0", "/segments/99", "/\\", "/\"",
        ]), 0..6),
    ) {
        let bytes = apply(examples()[which].clone(), &mutations);
        let text = String::from_utf8_lossy(&bytes);
        let lines = text.split('\n').count();
        let locations = Locations::scan(&text, pointers.iter().copied());
        for p in &pointers {
            if let Some((line, column)) = locations.find(p) {
                prop_assert!(line >= 1 && line <= lines && column >= 1);
            }
        }
    }

    #[test]
    fn mutated_examples(which in 0..6usize, mutations in prop::collection::vec(mutation(), 1..8)) {
        check(&apply(examples()[which].clone(), &mutations));
    }

    #[test]
    fn grammar_generated(manifest in grammar_manifest(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&manifest) } else { serde_json::to_string(&manifest) };
        check(text.unwrap().as_bytes());
    }
}
