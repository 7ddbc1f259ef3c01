//! Each committed `operations/<op>/manifest.json` must equal what
//! `#[operation]` generates from the code (the compiled `OPERATION`), and
//! every operation crate must be among the built-ins. `BRAID_BLESS=1 cargo test` (or `make bless`) rewrites
//! the files.

use std::path::PathBuf;

use braid::{OperationManifest, Registry};

mod common;
use common::COMPILED;

fn operations_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../operations")
}

#[test]
fn committed_manifests_match_the_macro() {
    let bless = std::env::var_os("BRAID_BLESS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for op in COMPILED {
        let path = operations_dir().join(op.name).join("manifest.json");
        let expected = OperationManifest::parse(op.manifest_json).unwrap().pretty_json();
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed != expected {
            if bless {
                std::fs::write(&path, &expected).unwrap();
            } else {
                stale.push(path.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "these manifests differ from what #[operation] generates (run `make bless` and review the diff):\n{}",
        stale.join("\n")
    );
}

#[test]
fn every_operation_crate_is_registered() {
    let registry = Registry::builtin();
    for entry in std::fs::read_dir(operations_dir()).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().join("Cargo.toml").is_file() && name.starts_with("op_") {
            assert!(registry.get(&name).is_some(), "{name} is not among the built-in operations");
            assert!(COMPILED.iter().any(|op| op.name == name), "{name} is missing from COMPILED in this test");
        }
    }
}
