//! The crates this `braid` ships, embedded in its binary by `build.rs`:
//! the runtime crates (braid-schema, braid-support, braid-macros and what
//! they use) and the built-in operations, each made standalone.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::sources;

use super::standalone::{package_id, standalone, Workspace};
use super::{bad, dir_name, source_id, CrateFiles, VendorError, RUNTIME};

/// A crate of the embedded workspace (see `build.rs`): its name, version,
/// standalone files and the directory it is vendored in.
#[derive(Debug, Clone)]
pub struct Embedded {
    pub name: String,
    pub version: String,
    pub files: CrateFiles,
    pub dir: String,
}

/// Every crate `braid` ships, standalone, sorted by name: the runtime
/// crates and the built-in operations.
pub fn embedded() -> Result<&'static [Embedded], VendorError> {
    static CRATES: OnceLock<Result<Vec<Embedded>, String>> = OnceLock::new();
    CRATES
        .get_or_init(|| load_embedded().map_err(|e| e.to_string()))
        .as_deref()
        .map_err(|e| bad("the crates built into braid", e.clone()))
}

/// The content id of everything embedded (runtime crates, built-ins,
/// Braid's lock): names this build of braid's sources.
pub fn embedded_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let archive: Vec<(String, Vec<u8>)> = sources::FILES.iter().map(|(p, b)| (p.to_string(), b.to_vec())).collect();
        crate::archive::source_id(&archive)
    })
}

/// Braid's own `Cargo.lock`, the seed of every generated crate's lock.
pub fn seed_lockfile() -> &'static str {
    std::str::from_utf8(sources::file("Cargo.lock").unwrap_or_default()).unwrap_or_default()
}

fn load_embedded() -> Result<Vec<Embedded>, VendorError> {
    let text = |rel: &str, bytes: &[u8]| {
        String::from_utf8(bytes.to_vec()).map_err(|_| VendorError::NotText { path: rel.to_string() })
    };
    let root = text("Cargo.toml", sources::file("Cargo.toml").unwrap_or_default())?;
    let ws = Workspace::from_toml(&root, "Cargo.toml")?;
    // Members: directories holding a Cargo.toml.
    let mut members: BTreeMap<&str, CrateFiles> = BTreeMap::new();
    for (rel, _) in sources::FILES {
        if let Some(dir) = rel.strip_suffix("/Cargo.toml") {
            members.insert(dir, CrateFiles::new());
        }
    }
    for (rel, bytes) in sources::FILES {
        // The deepest member containing the file (macros/support/src/.. is
        // in macros/support, not macros).
        let owner = members.keys().filter(|dir| rel.starts_with(&format!("{dir}/"))).max_by_key(|d| d.len()).copied();
        if let Some(dir) = owner {
            let inner = &rel[dir.len() + 1..];
            members.get_mut(dir).expect("a member").insert(inner.to_string(), text(rel, bytes)?);
        }
    }
    let mut out = Vec::new();
    for (dir, mut files) in members {
        let path = format!("{dir}/Cargo.toml");
        let manifest = standalone(&files["Cargo.toml"], ws.as_ref(), &path)?;
        let (name, version) = package_id(&manifest, &path)?;
        files.insert("Cargo.toml".into(), manifest);
        let dir = dir_name(&name, &source_id(&files));
        out.push(Embedded { name, version, files, dir });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The runtime crate `name` this braid ships.
pub fn runtime_crate(name: &str) -> Result<&'static Embedded, VendorError> {
    embedded()?
        .iter()
        .find(|c| c.name == name && RUNTIME.contains(&name))
        .ok_or_else(|| VendorError::UnknownCrate(name.to_string()))
}

#[cfg(test)]
mod tests {
    use toml::Table;

    use super::*;

    #[test]
    fn the_embedded_crates_are_standalone() {
        let names: Vec<&str> = embedded().unwrap().iter().map(|c| c.name.as_str()).collect();
        for name in RUNTIME.iter().chain(&["op_multihash", "op_cid", "op_utf8"]) {
            assert!(names.contains(name), "{name} is not embedded: {names:?}");
        }
        assert!(!names.contains(&"braid") && !names.contains(&"braid-cli"), "{names:?}");
        let op = embedded().unwrap().iter().find(|c| c.name == "op_multihash").unwrap();
        let t: Table = op.files["Cargo.toml"].parse().unwrap();
        assert!(!op.files["Cargo.toml"].contains("workspace"), "{}", op.files["Cargo.toml"]);
        assert_eq!(t["package"]["edition"].as_str(), Some("2021"));
        assert!(t["dependencies"]["braid-support"].get("path").is_none());
        assert_eq!(t["dependencies"]["braid-support"]["version"].as_str(), Some("0.1.0"));
        assert_eq!(t["dependencies"]["blake3"]["default-features"].as_bool(), Some(false));
        let simd = "cfg(all(target_arch = \"wasm32\", target_feature = \"simd128\"))";
        let wasm_blake3 = &t["target"][simd]["dependencies"]["blake3"];
        assert_eq!(wasm_blake3["features"].as_array().unwrap()[0].as_str(), Some("wasm32_simd"));
        assert!(t.get("dev-dependencies").is_none());
        assert!(op.files.contains_key("src/lib.rs") && op.files.contains_key("manifest.json"));
    }
}
