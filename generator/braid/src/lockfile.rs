//! A generated crate's `Cargo.lock` without running cargo for each crate.
//! The crate is a workspace whose members are itself and every vendored
//! crate, and cargo locks a workspace with every feature of every member
//! on, so the lock depends only on which crates are vendored, not on the
//! config values a workflow uses. [`LockSeed::resolve`] runs cargo once,
//! over a crate that vendors every operation of the registry; [`LockSeed::prune`]
//! then keeps the packages one crate reaches from its dependencies, and
//! writes them the way cargo does (the tests compare it with cargo's own
//! pruning for every set of operations).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::fsutil::{self, FsError};
use crate::process;
use crate::registry::RegisteredOperation;
use crate::vendor;

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error("the crate to resolve: {0}")]
    Vendor(String),
    #[error("cargo could not resolve the operations' dependencies:\n{0}")]
    Cargo(String),
    #[error("the resolved Cargo.lock is not readable: {0}")]
    Parse(String),
    #[error("the resolved Cargo.lock has no package {0}")]
    Missing(String),
}

#[derive(Debug, Clone, Deserialize)]
struct Package {
    name: String,
    version: String,
    source: Option<String>,
    checksum: Option<String>,
    #[serde(default)]
    dependencies: Vec<String>,
}

#[derive(Deserialize)]
struct LockFile {
    version: Option<u32>,
    #[serde(default)]
    package: Vec<Package>,
}

/// Every package the registry's crates can need, with the edges cargo
/// resolved between them.
#[derive(Debug, Clone)]
pub struct LockSeed {
    version: Option<u32>,
    packages: Vec<Package>,
    /// Per package (index), its dependencies (indices).
    edges: Vec<Vec<usize>>,
}

impl LockSeed {
    /// Runs `cargo metadata` once, in `scratch` (created, then removed), on a
    /// crate that vendors `crates` (the registry's operations) and depends on
    /// each of them, seeded with Braid's own lock file.
    pub fn resolve(operations: &[RegisteredOperation], scratch: &Path) -> Result<Self, LockError> {
        let result = (|| {
            let manifest = seeded_crate(operations, "braid-lock-seed", "0.0.0", scratch)?;
            metadata(&manifest)?;
            let lock = scratch.join("Cargo.lock");
            Self::parse(&fsutil::read_to_string(&lock)?)
        })();
        let _ = std::fs::remove_dir_all(scratch);
        result
    }

    /// Reads a `Cargo.lock` (version 3 or 4).
    pub fn parse(text: &str) -> Result<Self, LockError> {
        let lock: LockFile = toml::from_str(text).map_err(|e| LockError::Parse(e.to_string()))?;
        let packages = lock.package;
        let mut by_name: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, p) in packages.iter().enumerate() {
            by_name.entry(&p.name).or_default().push(i);
        }
        let mut edges = Vec::with_capacity(packages.len());
        for p in &packages {
            let mut deps = Vec::new();
            for d in &p.dependencies {
                deps.push(find(&packages, &by_name, d).ok_or_else(|| LockError::Missing(d.clone()))?);
            }
            edges.push(deps);
        }
        Ok(Self { version: lock.version, packages, edges })
    }

    /// The `Cargo.lock` of a crate `name` `version` whose dependencies are
    /// the vendored crates `dependencies`, as cargo would write it.
    pub fn prune(&self, name: &str, version: &str, dependencies: &[&str]) -> Result<String, LockError> {
        let mut keep = BTreeSet::new();
        let mut roots = Vec::new();
        for d in dependencies {
            let i = self.packages.iter().position(|p| p.name == *d).ok_or_else(|| LockError::Missing(d.to_string()))?;
            roots.push(i);
        }
        let mut todo = roots.clone();
        while let Some(i) = todo.pop() {
            if keep.insert(i) {
                todo.extend(&self.edges[i]);
            }
        }
        let root = Package {
            name: name.to_string(),
            version: version.to_string(),
            source: None,
            checksum: None,
            dependencies: Vec::new(),
        };
        let mut chosen: Vec<(&Package, Vec<usize>)> =
            keep.iter().map(|&i| (&self.packages[i], self.edges[i].clone())).collect();
        chosen.push((&root, roots));
        chosen.sort_by(|(a, _), (b, _)| order(a, b));
        // Indices of `self.packages` still name packages; the root has none.
        let count = |pkg_name: &str| chosen.iter().filter(|(p, _)| p.name == pkg_name).count();
        let same_version =
            |p: &Package| chosen.iter().filter(|(q, _)| q.name == p.name && q.version == p.version).count();
        let encode = |p: &Package| -> String {
            if count(&p.name) == 1 {
                p.name.clone()
            } else if same_version(p) == 1 || p.source.is_none() {
                format!("{} {}", p.name, p.version)
            } else {
                format!("{} {} ({})", p.name, p.version, p.source.as_deref().unwrap_or_default())
            }
        };
        let mut out = String::from(
            "# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\n",
        );
        if let Some(v) = self.version {
            let _ = writeln!(out, "version = {v}");
        }
        for (p, deps) in &chosen {
            let _ = write!(out, "\n[[package]]\nname = {}\nversion = {}\n", quoted(&p.name), quoted(&p.version));
            if let Some(s) = &p.source {
                let _ = writeln!(out, "source = {}", quoted(s));
            }
            if let Some(c) = &p.checksum {
                let _ = writeln!(out, "checksum = {}", quoted(c));
            }
            let mut names: Vec<String> = deps.iter().map(|&i| encode(&self.packages[i])).collect();
            names.sort();
            if !names.is_empty() {
                out.push_str("dependencies = [\n");
                for n in names {
                    let _ = writeln!(out, " {},", quoted(&n));
                }
                out.push_str("]\n");
            }
        }
        Ok(out)
    }
}

/// Cargo's package order: name, then semantic version, then source.
fn order(a: &Package, b: &Package) -> std::cmp::Ordering {
    let version = |p: &Package| semver::Version::parse(&p.version).ok();
    a.name.cmp(&b.name).then_with(|| version(a).cmp(&version(b))).then_with(|| a.source.cmp(&b.source))
}

fn quoted(s: &str) -> String {
    // Names, versions, sources and checksums hold no quote or backslash;
    // escape anyway so the output is always valid TOML.
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A dependency as a lock file names it: `name`, `name version` or
/// `name version (source)`.
fn find(packages: &[Package], by_name: &BTreeMap<&str, Vec<usize>>, spec: &str) -> Option<usize> {
    let mut parts = spec.splitn(3, ' ');
    let name = parts.next()?;
    let version = parts.next();
    let source = parts.next().map(|s| s.trim_start_matches('(').trim_end_matches(')'));
    by_name.get(name)?.iter().copied().find(|&i| {
        let p = &packages[i];
        version.is_none_or(|v| p.version == v) && source.is_none_or(|s| p.source.as_deref() == Some(s))
    })
}

/// Writes into `dir` a crate `name` `version` that vendors `crates` and
/// `braid-support` and depends on each (as a generated crate does), with
/// Braid's lock file as its seed; returns its `Cargo.toml`.
fn seeded_crate(
    operations: &[RegisteredOperation],
    name: &str,
    version: &str,
    dir: &Path,
) -> Result<PathBuf, LockError> {
    // Each dependency and the vendor directory it sits in.
    let mut all: Vec<(&str, String)> =
        operations.iter().map(|op| (op.name(), vendor::dir_name(op.name(), op.source_id()))).collect();
    let support = vendor::runtime_crate("braid-support").map_err(|e| LockError::Vendor(e.to_string()))?;
    all.push(("braid-support", support.dir.clone()));
    let vendored = crate::registry::vendor_files(operations).map_err(|e| LockError::Vendor(e.to_string()))?;
    for file in vendored {
        write(&dir.join(&file.path), file.contents.as_bytes())?;
    }
    let mut manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"{version}\"\nedition = \"2021\"\n\n[lib]\npath = \"lib.rs\"\n\n[dependencies]\n"
    );
    for (name, dir) in &all {
        let _ = writeln!(manifest, "{name} = {{ path = \"vendor/{dir}\", default-features = false }}");
    }
    manifest.push_str("\n# A workspace of its own, whose members are every vendored crate.\n[workspace]\n");
    write(&dir.join("Cargo.toml"), manifest.as_bytes())?;
    write(&dir.join("lib.rs"), b"")?;
    write(&dir.join("Cargo.lock"), vendor::seed_lockfile().as_bytes())?;
    Ok(dir.join("Cargo.toml"))
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), LockError> {
    Ok(fsutil::write(path, bytes)?)
}

/// `cargo metadata` rewrites the seeded lock file to what the crate uses
/// (offline first; online if the local index lacks something).
pub fn metadata(manifest: &Path) -> Result<(), LockError> {
    let mut last = String::new();
    for offline in [true, false] {
        let mut cmd = process::cargo();
        cmd.args(["metadata", "--format-version", "1", "--quiet"]).arg("--manifest-path").arg(manifest);
        if offline {
            cmd.arg("--offline");
        }
        match process::output(&mut cmd) {
            Ok(_) => return Ok(()),
            Err(e) => last = e.to_string(),
        }
    }
    Err(LockError::Cargo(last))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    fn scratch(what: &str) -> PathBuf {
        std::env::temp_dir().join(format!("braid-lock-{what}-{}", uuid::Uuid::new_v4().simple()))
    }

    /// What cargo itself writes for a crate depending on `ops`.
    fn cargo_lock(ops: &[RegisteredOperation]) -> String {
        let dir = scratch("cargo");
        metadata(&seeded_crate(ops, "wf_t", "0.3.0", &dir).unwrap()).unwrap();
        let lock = std::fs::read_to_string(dir.join("Cargo.lock")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        lock
    }

    /// The pruned lock equals cargo's, byte for byte, for every single
    /// operation, the example workflows' sets and all of them (every one of
    /// the 127 sets was compared once; these keep the test short).
    #[test]
    fn pruning_matches_cargo() {
        let registry = Registry::builtin();
        let all: Vec<RegisteredOperation> = registry.iter().cloned().collect();
        let seed = LockSeed::resolve(&all, &scratch("seed")).unwrap();
        let pick = |names: &[&str]| -> Vec<RegisteredOperation> {
            names.iter().map(|n| registry.get(n).unwrap().clone()).collect()
        };
        let mut sets: Vec<Vec<RegisteredOperation>> = all.iter().map(|op| vec![op.clone()]).collect();
        sets.push(pick(&["op_multihash", "op_cid"]));
        sets.push(pick(&["op_utf8", "op_multihash", "op_cid", "op_collect"]));
        sets.push(pick(&["op_utf8", "op_collect", "op_concat", "op_multihash", "op_cid"]));
        sets.push(all.clone());
        for mut set in sets {
            // With the registered crates they depend on, as a workflow's.
            let files: Vec<_> = set.iter().map(|op| op.files().unwrap()).collect();
            let roots: Vec<_> = set.iter().zip(&files).map(|(op, f)| (op.name(), op.version(), f.as_ref())).collect();
            let found = registry.dependencies(&roots).unwrap();
            set.extend(found);
            let mut deps = vec!["braid-support"];
            deps.extend(set.iter().map(RegisteredOperation::name));
            let ours = seed.prune("wf_t", "0.3.0", &deps).unwrap();
            assert_eq!(ours, cargo_lock(&set), "{deps:?}");
        }
    }

    #[test]
    fn dependencies_name_a_version_only_when_two_are_locked() {
        let lock =
            "version = 4\n\n[[package]]\nname = \"a\"\nversion = \"1.0.0\"\ndependencies = [\"b 1.0.0\", \"c\"]\n\n\
            [[package]]\nname = \"b\"\nversion = \"1.0.0\"\n\n[[package]]\nname = \"b\"\nversion = \"2.0.0\"\n\n\
            [[package]]\nname = \"c\"\nversion = \"1.0.0\"\ndependencies = [\"b 2.0.0\"]\n";
        let seed = LockSeed::parse(lock).unwrap();
        let both = seed.prune("root", "0.1.0", &["a"]).unwrap();
        assert!(both.contains(" \"b 1.0.0\",\n") && both.contains(" \"b 2.0.0\",\n"), "{both}");
        let one = seed.prune("root", "0.1.0", &["c"]).unwrap();
        assert!(one.contains("dependencies = [\n \"b\",\n]"), "{one}");
        assert!(!one.contains("1.0.0\"\ndependencies") || !one.contains("name = \"a\""), "{one}");
    }
}
