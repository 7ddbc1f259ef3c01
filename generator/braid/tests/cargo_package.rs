//! The Cargo registry form of a generated crate (`braid::package::cargo`):
//! one package per crate, dependencies by version, index lines that say
//! where each dependency is from, deterministic archives.

use std::io::Read;
use std::path::Path;

use braid::codegen::Generator;
use braid::manifest::validate;
use braid::package::cargo::{packages, CRATES_IO};
use braid::Registry;
use sha2::Digest as _;

/// The crate generated for `workflow`, in a temporary directory (gone with it).
fn generated(workflow: &str) -> tempfile::TempDir {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workflows").join(workflow)).unwrap();
    let workflow = validate(&text, &Registry::builtin()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    braid::project::write(&workflow, &Generator::new(), dir.path()).unwrap();
    dir
}

fn files_of(dot_crate: &[u8]) -> Vec<(String, String)> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(dot_crate));
    let mut out = Vec::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().to_string_lossy().into_owned();
        let mut text = String::new();
        entry.read_to_string(&mut text).unwrap();
        out.push((path, text));
    }
    out
}

#[test]
fn a_generated_crate_and_what_it_vendors_become_registry_packages() {
    let dir = generated("cidv1_from_bytes.json");
    let packages = packages(dir.path()).unwrap();
    let names: Vec<&str> = packages.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "wf_cidv1_from_bytes",
            "braid-macro-support",
            "braid-macros",
            "braid-schema",
            "braid-support",
            "op_cid",
            "op_multihash"
        ]
    );
    assert_eq!(packages.len(), std::fs::read_dir(dir.path().join("vendor")).unwrap().count() + 1);

    let workflow = &packages[0];
    let line: serde_json::Value = serde_json::from_str(&workflow.index_line).unwrap();
    assert_eq!(line["name"], "wf_cidv1_from_bytes");
    assert_eq!(line["vers"], "0.1.0");
    let sha = sha2::Sha256::digest(&workflow.bytes);
    let hex: String = sha.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(line["cksum"], hex.as_str(), "cksum is the .crate's SHA-256");
    let deps = line["deps"].as_array().unwrap();
    let support = deps.iter().find(|d| d["name"] == "braid-support").unwrap();
    assert_eq!(support["req"], "=0.1.0", "the vendored version, pinned");
    assert!(support["registry"].is_null(), "from this registry: {support}");
    assert_eq!(support["default_features"], false);

    let files = files_of(&workflow.bytes);
    let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    assert!(paths.iter().all(|p| p.starts_with("wf_cidv1_from_bytes-0.1.0/")), "{paths:?}");
    assert!(paths.contains(&"wf_cidv1_from_bytes-0.1.0/src/lib.rs"), "{paths:?}");
    assert!(!paths.iter().any(|p| p.contains("/vendor/") || p.ends_with("Cargo.lock")), "{paths:?}");
    let cargo_toml = &files.iter().find(|(p, _)| p.ends_with("/Cargo.toml")).unwrap().1;
    assert!(!cargo_toml.contains("path =") || cargo_toml.contains("path = \"src/lib.rs\""), "{cargo_toml}");
    assert!(!cargo_toml.contains("vendor/") && !cargo_toml.contains("[workspace]") && !cargo_toml.contains("publish"));

    // A vendored crate: crates.io dependencies say so, ours do not.
    let support = packages.iter().find(|p| p.name == "braid-support").unwrap();
    let line: serde_json::Value = serde_json::from_str(&support.index_line).unwrap();
    let deps = line["deps"].as_array().unwrap();
    let dep = |name: &str| deps.iter().find(|d| d["name"] == name).unwrap_or_else(|| panic!("{name} in {deps:?}"));
    assert_eq!(dep("bincode")["registry"], CRATES_IO);
    assert_eq!(dep("wasm-bindgen")["req"], "=0.2.130");
    assert_eq!(dep("wasm-bindgen")["optional"], true);
    assert!(dep("braid-schema")["registry"].is_null());
    assert_eq!(line["v"], 2, "`dep:` features are in features2");
    assert!(line["features2"]["wasm"].is_array(), "{line}");

    // The same crate gives the same bytes.
    let again = generated("cidv1_from_bytes.json");
    let second = braid::package::cargo::packages(again.path()).unwrap();
    for (a, b) in packages.iter().zip(&second) {
        assert!(a.bytes == b.bytes && a.index_line == b.index_line, "{} differs between two generations", a.name);
    }
}
