//! `braid_macro_support::derive_manifest` reads an operation crate's
//! manifest from its files without compiling it: for every built-in
//! operation it must equal what `#[operation]` embedded in
//! `OPERATION.manifest_json` when the crate was compiled into braid.

use std::collections::BTreeMap;
use std::path::PathBuf;

use braid::registry::read_crate;
use braid_macro_support::derive_manifest;

mod common;
use common::COMPILED;

/// The `op_*` crates of the workspace's `operations/` folder.
fn operation_crates() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../operations");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("op_"))
        .collect();
    names.sort();
    names
}

#[test]
fn derived_manifests_equal_what_the_macro_embeds() {
    let crates = operation_crates();
    assert_eq!(crates.len(), COMPILED.len(), "{crates:?}");
    let operations = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../operations");
    for name in &crates {
        let compiled = COMPILED
            .iter()
            .find(|op| op.name == name)
            .unwrap_or_else(|| panic!("{name} is not among the compiled operations"));
        // What `braid ops add` reads: the crate's files, Cargo.toml standalone.
        let files: BTreeMap<String, String> = read_crate(&operations.join(name)).unwrap();
        let cargo_toml = &files["Cargo.toml"];
        let derived = derive_manifest(cargo_toml, &files).unwrap_or_else(|e| panic!("{name}:\n{e}"));
        assert_eq!(derived.source, None);
        assert_eq!(derived.canonical_json(), compiled.manifest_json, "{name}");
    }
}

#[test]
fn the_workspace_cargo_toml_is_refused_with_the_field_named() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../operations/op_utf8");
    let cargo_toml = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    let files = BTreeMap::from([("src/lib.rs".to_string(), lib)]);
    let errors = derive_manifest(&cargo_toml, &files).unwrap_err();
    let text = errors.to_string();
    assert!(text.contains("`package.license` is inherited from a workspace"), "{text}");
    assert!(errors.iter().all(|e| e.location().file == "Cargo.toml"), "{text}");
}
