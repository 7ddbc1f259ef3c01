//! Vendoring: the generated crate carries the sources of Braid's support
//! crate, macro crate and the operations it uses under `vendor/`, with
//! manifests made standalone (workspace inheritance resolved, path
//! dependencies pointing at `../<crate>`, dev-dependencies dropped), so it
//! builds wherever it is unpacked, without the Braid repository.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::{Table, Value};

use crate::codegen::File;
use crate::fsutil::{self, FsError};

#[derive(Debug, thiserror::Error)]
pub enum VendorError {
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error("{path}: {reason}")]
    Manifest { path: PathBuf, reason: String },
    #[error("crate `{0}` is not a member of the Braid workspace")]
    UnknownCrate(String),
    #[error("the Braid sources are not at {0} (no Cargo.toml with [workspace]); set BRAID_ROOT to the repository")]
    NoSource(PathBuf),
}

/// The Braid repository the registry's operations come from.
#[derive(Debug, Clone)]
pub struct Sources {
    root: PathBuf,
    workspace: Table,
    /// Crate name -> directory.
    members: BTreeMap<String, PathBuf>,
}

impl Sources {
    /// `root`, else `$BRAID_ROOT`, else the repository this binary was built from.
    pub fn locate(root: Option<&Path>) -> Result<Self, VendorError> {
        let root = match root {
            Some(r) => r.to_path_buf(),
            None => match std::env::var_os("BRAID_ROOT") {
                Some(r) => PathBuf::from(r),
                None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
            },
        };
        let root = root.canonicalize().map_err(|_| VendorError::NoSource(root.clone()))?;
        let path = root.join("Cargo.toml");
        let text = std::fs::read_to_string(&path).map_err(|_| VendorError::NoSource(root.clone()))?;
        let table: Table =
            text.parse().map_err(|e| VendorError::Manifest { path: path.clone(), reason: format!("{e}") })?;
        let workspace =
            table.get("workspace").and_then(Value::as_table).cloned().ok_or(VendorError::NoSource(root.clone()))?;
        let mut members = BTreeMap::new();
        for member in workspace.get("members").and_then(Value::as_array).into_iter().flatten() {
            let Some(dir) = member.as_str() else { continue };
            let dir = root.join(dir);
            let path = dir.join("Cargo.toml");
            let text = fsutil::read_to_string(&path)?;
            let t: Table =
                text.parse().map_err(|e| VendorError::Manifest { path: path.clone(), reason: format!("{e}") })?;
            if let Some(name) = t.get("package").and_then(|p| p.get("name")).and_then(Value::as_str) {
                members.insert(name.to_string(), dir);
            }
        }
        Ok(Self { root, workspace, members })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Braid's `Cargo.lock`, the seed of every generated crate's lock file.
    pub fn lockfile(&self) -> Result<String, VendorError> {
        let path = self.root.join("Cargo.lock");
        Ok(fsutil::read_to_string(&path)?)
    }

    /// The files of `crates` and of the workspace crates they depend on,
    /// under `vendor/<crate>/`, sorted by path.
    pub fn vendor(&self, crates: &[&str]) -> Result<Vec<File>, VendorError> {
        let mut todo: Vec<String> = crates.iter().map(|c| c.to_string()).collect();
        let mut done: BTreeMap<String, Vec<File>> = BTreeMap::new();
        while let Some(name) = todo.pop() {
            if done.contains_key(&name) {
                continue;
            }
            let dir = self.members.get(&name).ok_or_else(|| VendorError::UnknownCrate(name.clone()))?;
            let (manifest, path_deps) = self.normalize(dir)?;
            todo.extend(path_deps);
            let mut files = vec![File { path: format!("vendor/{name}/Cargo.toml"), contents: manifest }];
            let extra = dir.join("manifest.json");
            if extra.is_file() {
                files.push(File {
                    path: format!("vendor/{name}/manifest.json"),
                    contents: fsutil::read_to_string(&extra)?,
                });
            }
            collect_dir(&dir.join("src"), &format!("vendor/{name}/src"), &mut files)?;
            done.insert(name, files);
        }
        let mut files: Vec<File> = done.into_values().flatten().collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(files)
    }

    /// A member's Cargo.toml made standalone; also returns the workspace
    /// crates it depends on.
    fn normalize(&self, dir: &Path) -> Result<(String, Vec<String>), VendorError> {
        let path = dir.join("Cargo.toml");
        let text = fsutil::read_to_string(&path)?;
        let bad = |reason: String| VendorError::Manifest { path: path.clone(), reason };
        let mut t: Table = text.parse().map_err(|e| bad(format!("{e}")))?;
        let ws_package = self.workspace.get("package").and_then(Value::as_table).cloned().unwrap_or_default();
        let ws_deps = self.workspace.get("dependencies").and_then(Value::as_table).cloned().unwrap_or_default();
        if let Some(Value::Table(package)) = t.get_mut("package") {
            for (key, value) in package.iter_mut() {
                if is_inherited(value) {
                    *value =
                        ws_package.get(key).cloned().ok_or_else(|| bad(format!("workspace has no package.{key}")))?;
                }
            }
        }
        for key in ["dev-dependencies", "bench", "example", "test", "bin", "badges"] {
            t.remove(key);
        }
        let mut path_deps = Vec::new();
        let mut fix = |deps: &mut Table| -> Result<(), VendorError> {
            for (name, dep) in deps.iter_mut() {
                if is_inherited(dep) {
                    let mut merged = match ws_deps.get(name) {
                        Some(Value::String(v)) => {
                            let mut m = Table::new();
                            m.insert("version".into(), Value::String(v.clone()));
                            m
                        }
                        Some(Value::Table(m)) => m.clone(),
                        _ => return Err(bad(format!("workspace has no dependency `{name}`"))),
                    };
                    if let Value::Table(local) = dep {
                        for (k, v) in local.iter() {
                            match k.as_str() {
                                "workspace" => {}
                                "features" => {
                                    let mut all =
                                        merged.get("features").and_then(Value::as_array).cloned().unwrap_or_default();
                                    all.extend(v.as_array().cloned().unwrap_or_default());
                                    merged.insert("features".into(), Value::Array(all));
                                }
                                _ => {
                                    merged.insert(k.clone(), v.clone());
                                }
                            }
                        }
                    }
                    *dep = Value::Table(merged);
                }
                if let Value::Table(d) = dep {
                    if d.contains_key("path") {
                        let crate_name = d.get("package").and_then(Value::as_str).unwrap_or(name).to_string();
                        d.insert("path".into(), Value::String(format!("../{crate_name}")));
                        path_deps.push(crate_name);
                    }
                }
            }
            Ok(())
        };
        if let Some(Value::Table(deps)) = t.get_mut("dependencies") {
            fix(deps)?;
        }
        if let Some(Value::Table(targets)) = t.get_mut("target") {
            for (_, target) in targets.iter_mut() {
                if let Some(Value::Table(deps)) = target.get_mut("dependencies") {
                    fix(deps)?;
                }
                if let Value::Table(target) = target {
                    target.remove("dev-dependencies");
                }
            }
        }
        let header = "# Vendored by braid from the Braid workspace: workspace inheritance resolved.\n";
        Ok((format!("{header}{}", toml::to_string(&t).map_err(|e| bad(format!("{e}")))?), path_deps))
    }
}

fn is_inherited(value: &Value) -> bool {
    value.get("workspace").and_then(Value::as_bool) == Some(true)
}

fn collect_dir(dir: &Path, prefix: &str, out: &mut Vec<File>) -> Result<(), VendorError> {
    for rel in fsutil::walk(dir)? {
        let contents = fsutil::read_to_string(&dir.join(&rel))?;
        out.push(File { path: format!("{prefix}/{}", rel.display()), contents });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendored_manifests_are_standalone() {
        let sources = Sources::locate(None).unwrap();
        let files = sources.vendor(&["op_multihash"]).unwrap();
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert!(paths.contains(&"vendor/op_multihash/src/lib.rs"));
        assert!(paths.contains(&"vendor/braid-support/src/wasm.rs"), "path dependencies come along");
        assert!(paths.contains(&"vendor/braid-macros/src/expand.rs"));
        let manifest = &files.iter().find(|f| f.path == "vendor/op_multihash/Cargo.toml").unwrap().contents;
        assert!(!manifest.contains("workspace = true"), "{manifest}");
        let t: Table = manifest.parse().unwrap();
        assert_eq!(t["package"]["edition"].as_str(), Some("2021"));
        assert_eq!(t["dependencies"]["braid-support"]["path"].as_str(), Some("../braid-support"));
        assert_eq!(t["dependencies"]["blake3"]["default-features"].as_bool(), Some(false));
        let wasm_blake3 = &t["target"]["cfg(target_arch = \"wasm32\")"]["dependencies"]["blake3"];
        assert_eq!(wasm_blake3["features"].as_array().unwrap()[0].as_str(), Some("wasm32_simd"));
        assert!(t.get("dev-dependencies").is_none());
    }
}
