//! Crates as packages of a Cargo registry: a built workflow crate and the
//! crates it vendors (`vendor/<crate>-<id>/`) become `.crate` archives, each
//! with its line of a sparse index, depending on each other by version
//! instead of by path. This is what the publish service's registry serves
//! (`/cargo/index/`), so that one program can depend on several workflows:
//! they share one `braid-support` and the operations they have in common,
//! where standalone crates each vendor their own copy.
//!
//! What `cargo publish` would do, done on files Braid wrote itself: path
//! dependencies lose their path and keep (or, in the workflow crate, gain)
//! a version; `[workspace]`, `[profile]`, `[dev-dependencies]` and
//! `publish = false` go; every other dependency is from crates.io. The
//! archive is deterministic (sorted, fixed times and modes), so the same
//! build gives the same `.crate` and the same checksum.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use sha2::{Digest, Sha256};
use toml::{Table, Value};

use crate::fsutil::{self, FsError};

/// The index URL that names crates.io in another registry's index.
pub const CRATES_IO: &str = "https://github.com/rust-lang/crates.io-index";

#[derive(Debug, thiserror::Error)]
pub enum CargoPackageError {
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error("{path}: {reason}")]
    Manifest { path: String, reason: String },
}

fn bad(path: &str, reason: impl Into<String>) -> CargoPackageError {
    CargoPackageError::Manifest { path: path.to_string(), reason: reason.into() }
}

/// One crate, ready for a registry.
#[derive(Debug, Clone)]
pub struct CratePackage {
    pub name: String,
    pub version: String,
    /// The `.crate` file: a gzip'd tar of `<name>-<version>/...`.
    pub bytes: Vec<u8>,
    /// Its line of the sparse index (JSON, no newline).
    pub index_line: String,
    /// The SHA-256 of `bytes` (hex): the line's `cksum`.
    pub cksum: String,
}

/// A dependency in an index line, as Cargo's registry protocol names it.
#[derive(Debug, Serialize)]
struct IndexDep {
    /// The name the dependent uses (the rename, if any).
    name: String,
    req: String,
    features: Vec<String>,
    optional: bool,
    default_features: bool,
    target: Option<String>,
    kind: &'static str,
    /// `None`: this registry; otherwise the index of the one it is in.
    registry: Option<&'static str>,
    /// The crate's real name when renamed.
    package: Option<String>,
}

#[derive(Debug, Serialize)]
struct IndexLine {
    name: String,
    vers: String,
    deps: Vec<IndexDep>,
    cksum: String,
    features: BTreeMap<String, Vec<String>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    features2: BTreeMap<String, Vec<String>>,
    yanked: bool,
    links: Option<String>,
    v: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    rust_version: Option<String>,
}

/// The packages of a generated crate directory (`DIR/crate`): the
/// workflow's crate first, its dependencies on the vendored crates pinned
/// to their exact versions, then every vendored crate, sorted by name.
pub fn packages(crate_dir: &Path) -> Result<Vec<CratePackage>, CargoPackageError> {
    let mut out = vec![package(crate_dir, true)?];
    let vendor = crate_dir.join("vendor");
    if vendor.is_dir() {
        out.extend(vendored(&vendor)?);
    }
    Ok(out)
}

/// The packages of every crate in a `vendor/` directory, sorted by
/// directory name.
pub fn vendored(vendor: &Path) -> Result<Vec<CratePackage>, CargoPackageError> {
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(vendor).map_err(fsutil::at(vendor))? {
        let path = entry.map_err(fsutil::at(vendor))?.path();
        if path.is_dir() {
            dirs.push(path);
        }
    }
    dirs.sort();
    dirs.iter().map(|dir| package(dir, false)).collect()
}

/// The packages of every version of every operation in `registry`, with
/// the crates each depends on (the runtime crates, and registered crates
/// of value types), each name and version once. Each operation is
/// vendored into `scratch/<version id>/` first (removed afterwards). An
/// operation that cannot be packaged (it bundles crates inside its own
/// directory, which a registry cannot serve as one `.crate`) is left out
/// and named in the second list, with why.
pub fn registry_packages(
    registry: &crate::Registry,
    scratch: &Path,
) -> (Vec<CratePackage>, Vec<(String, CargoPackageError)>) {
    let mut found: Vec<CratePackage> = Vec::new();
    let mut skipped = Vec::new();
    for op in registry.iter() {
        let dir = scratch.join(&op.version_id);
        let packaged = operation_packages(registry, op, &dir);
        let _ = std::fs::remove_dir_all(&dir);
        match packaged {
            Ok(packages) => {
                for p in packages {
                    if !found.iter().any(|f| f.name == p.name && f.version == p.version) {
                        found.push(p);
                    }
                }
            }
            Err(e) => skipped.push((format!("{} {}", op.name(), op.version()), e)),
        }
    }
    (found, skipped)
}

fn operation_packages(
    registry: &crate::Registry,
    op: &crate::registry::RegisteredOperation,
    dir: &Path,
) -> Result<Vec<CratePackage>, CargoPackageError> {
    let shown = format!("{} {}", op.name(), op.version());
    let registry_error = |e: crate::registry::RegistryError| bad(&shown, e.to_string());
    let files = op.files().map_err(registry_error)?;
    let mut crates = vec![op.clone()];
    crates.extend(registry.dependencies(&[(op.name(), op.version(), &files)]).map_err(registry_error)?);
    let vendored_files = crate::registry::vendor_files(&crates).map_err(|e| bad(&shown, e.to_string()))?;
    for file in &vendored_files {
        fsutil::write(&dir.join(&file.path), file.contents.as_bytes())?;
    }
    vendored(&dir.join("vendor"))
}

/// Packages the crate in `dir`. `top`: the generated crate, whose
/// `Cargo.lock` and `vendor/` are not part of it, and whose path
/// dependencies have no version of their own (the vendored crate's is
/// pinned with `=`).
fn package(dir: &Path, top: bool) -> Result<CratePackage, CargoPackageError> {
    let manifest_path = dir.join("Cargo.toml");
    let shown = manifest_path.display().to_string();
    let text = fsutil::read_to_string(&manifest_path)?;
    let mut manifest: Table = text.parse().map_err(|e| bad(&shown, format!("{e}")))?;
    let package =
        manifest.get_mut("package").and_then(Value::as_table_mut).ok_or_else(|| bad(&shown, "no [package]"))?;
    package.remove("publish");
    package.remove("workspace");
    let field = |key: &str| package.get(key).and_then(Value::as_str).map(str::to_string);
    let name = field("name").ok_or_else(|| bad(&shown, "no package.name"))?;
    let version = field("version").ok_or_else(|| bad(&shown, "no package.version"))?;
    let links = field("links");
    let rust_version = field("rust-version");
    for key in ["workspace", "profile", "dev-dependencies", "patch", "replace"] {
        manifest.remove(key);
    }

    let mut deps = Vec::new();
    for_each_dependency_table(&mut manifest, &shown, |deps_table, kind, target| {
        for (dep_name, spec) in deps_table.iter_mut() {
            deps.push(index_dep(dir, &shown, dep_name, spec, kind, target, top)?);
        }
        Ok(())
    })?;
    deps.sort_by(|a, b| (&a.name, a.kind, &a.target).cmp(&(&b.name, b.kind, &b.target)));

    let (features, features2) = features(&manifest);
    let cargo_toml = format!(
        "# A Braid crate made for a Cargo registry (dependencies by version, not by path).\n{}",
        toml::to_string(&manifest).map_err(|e| bad(&shown, format!("{e}")))?
    );

    let files = crate_files(dir, top)?;
    let prefix = format!("{name}-{version}");
    let mut entries: Vec<(String, Vec<u8>)> = files
        .into_iter()
        .filter(|(rel, _)| rel != "Cargo.toml")
        .map(|(rel, bytes)| (format!("{prefix}/{rel}"), bytes))
        .collect();
    entries.push((format!("{prefix}/Cargo.toml"), cargo_toml.into_bytes()));
    let bytes = crate::archive::pack_gz(&entries);
    let cksum = hex(&Sha256::digest(&bytes));
    let v = if features2.is_empty() { 1 } else { 2 };
    let line = IndexLine {
        name: name.clone(),
        vers: version.clone(),
        deps,
        cksum: cksum.clone(),
        features,
        features2,
        yanked: false,
        links,
        v,
        rust_version,
    };
    let index_line = serde_json::to_string(&line).expect("an index line serializes");
    Ok(CratePackage { name, version, bytes, index_line, cksum })
}

/// One dependency: its index entry, and its manifest entry rewritten in
/// place (no path; a version where it had none).
fn index_dep(
    dir: &Path,
    shown: &str,
    dep_name: &str,
    spec: &mut Value,
    kind: &'static str,
    target: Option<&str>,
    top: bool,
) -> Result<IndexDep, CargoPackageError> {
    if let Value::String(req) = spec {
        let req = normalize_req(req).map_err(|e| bad(shown, format!("dependency `{dep_name}`: {e}")))?;
        return Ok(IndexDep {
            name: dep_name.to_string(),
            req,
            features: vec![],
            optional: false,
            default_features: true,
            target: target.map(str::to_string),
            kind,
            registry: Some(CRATES_IO),
            package: None,
        });
    }
    let table = spec
        .as_table_mut()
        .ok_or_else(|| bad(shown, format!("dependency `{dep_name}` is neither a version nor a table")))?;
    for key in ["git", "registry", "registry-index"] {
        if table.contains_key(key) {
            return Err(bad(shown, format!("dependency `{dep_name}` has `{key}`: a registry crate depends on crates.io or on this registry only")));
        }
    }
    let ours = match table.remove("path") {
        Some(path) => {
            let path =
                path.as_str().ok_or_else(|| bad(shown, format!("dependency `{dep_name}`: `path` is not a string")))?;
            if !top && !path.starts_with("../") {
                return Err(bad(
                    shown,
                    format!(
                        "dependency `{dep_name}` is a crate bundled inside this one (`{path}`): a registry serves \
                         each crate as a package of its own"
                    ),
                ));
            }
            let dep_dir = dir.join(path);
            // A path dependency is a crate of this registry: another
            // vendored crate, of the version its manifest says.
            let dep_manifest = dep_dir.join("Cargo.toml");
            let dep_text = fsutil::read_to_string(&dep_manifest)?;
            let (_, dep_version) = crate::vendor::package_id(&dep_text, &dep_manifest.display().to_string())
                .map_err(|e| bad(shown, format!("dependency `{dep_name}`: {e}")))?;
            if top || !table.contains_key("version") {
                table.insert("version".into(), Value::String(format!("={dep_version}")));
            }
            true
        }
        None => false,
    };
    let req = table
        .get("version")
        .and_then(Value::as_str)
        .ok_or_else(|| bad(shown, format!("dependency `{dep_name}` has no version")))?;
    let req = normalize_req(req).map_err(|e| bad(shown, format!("dependency `{dep_name}`: {e}")))?;
    let strings = |key: &str| -> Vec<String> {
        table
            .get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default()
    };
    let flag = |keys: &[&str], default: bool| {
        keys.iter().find_map(|k| table.get(*k).and_then(Value::as_bool)).unwrap_or(default)
    };
    let package = table.get("package").and_then(Value::as_str).map(str::to_string);
    Ok(IndexDep {
        name: dep_name.to_string(),
        req,
        features: strings("features"),
        optional: flag(&["optional"], false),
        default_features: flag(&["default-features", "default_features"], true),
        target: target.map(str::to_string),
        kind,
        registry: (!ours).then_some(CRATES_IO),
        package,
    })
}

/// A version requirement as the index writes it (`1.8` -> `^1.8`).
fn normalize_req(req: &str) -> Result<String, semver::Error> {
    Ok(semver::VersionReq::parse(req)?.to_string())
}

/// Calls `f` on every dependency table with its kind and target.
fn for_each_dependency_table(
    manifest: &mut Table,
    shown: &str,
    mut f: impl FnMut(&mut Table, &'static str, Option<&str>) -> Result<(), CargoPackageError>,
) -> Result<(), CargoPackageError> {
    const KINDS: [(&str, &str); 2] = [("dependencies", "normal"), ("build-dependencies", "build")];
    for (key, kind) in KINDS {
        if let Some(Value::Table(deps)) = manifest.get_mut(key) {
            f(deps, kind, None)?;
        }
    }
    if let Some(Value::Table(targets)) = manifest.get_mut("target") {
        for (cfg, target) in targets.iter_mut() {
            let target = target.as_table_mut().ok_or_else(|| bad(shown, format!("[target.{cfg}] is not a table")))?;
            target.remove("dev-dependencies");
            for (key, kind) in KINDS {
                if let Some(Value::Table(deps)) = target.get_mut(key) {
                    f(deps, kind, Some(cfg))?;
                }
            }
        }
    }
    Ok(())
}

/// `[features]`, split as the index wants it: those using `dep:` or
/// `name?/feature` (which older cargo cannot read) in `features2`.
fn features(manifest: &Table) -> (BTreeMap<String, Vec<String>>, BTreeMap<String, Vec<String>>) {
    let (mut plain, mut new) = (BTreeMap::new(), BTreeMap::new());
    for (name, list) in manifest.get("features").and_then(Value::as_table).into_iter().flatten() {
        let list: Vec<String> =
            list.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect();
        let uses_new_syntax = list.iter().any(|f| f.starts_with("dep:") || f.contains("?/"));
        if uses_new_syntax { &mut new } else { &mut plain }.insert(name.clone(), list);
    }
    (plain, new)
}

/// The crate's files, as (path relative to `dir`, bytes), sorted: not
/// `target/` or hidden files, and for the generated crate not `vendor/`
/// or `Cargo.lock` (its lock names the vendored paths).
fn crate_files(dir: &Path, top: bool) -> Result<Vec<(String, Vec<u8>)>, CargoPackageError> {
    let mut out = Vec::new();
    for rel in fsutil::walk(dir)? {
        let rel = rel.to_string_lossy().replace('\\', "/");
        let first = rel.split('/').next().unwrap_or_default();
        let skipped = rel.split('/').any(|part| part.starts_with('.'))
            || first == "target"
            || (top && (first == "vendor" || rel == "Cargo.lock"));
        if !skipped {
            out.push((rel.clone(), fsutil::read(&dir.join(&rel))?));
        }
    }
    Ok(out)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Where a crate's index file is in a sparse index: `1/a`, `2/ab`,
/// `3/a/abc`, `ab/cd/abcd...`, lowercased. `None` for a name Cargo would
/// not ask for.
pub fn index_path(name: &str) -> Option<String> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !valid {
        return None;
    }
    let name = name.to_ascii_lowercase();
    Some(match name.len() {
        1 => format!("1/{name}"),
        2 => format!("2/{name}"),
        3 => format!("3/{}/{name}", &name[..1]),
        _ => format!("{}/{}/{name}", &name[..2], &name[2..4]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_paths_follow_cargo() {
        assert_eq!(index_path("a").as_deref(), Some("1/a"));
        assert_eq!(index_path("ab").as_deref(), Some("2/ab"));
        assert_eq!(index_path("abc").as_deref(), Some("3/a/abc"));
        assert_eq!(index_path("Braid-Support").as_deref(), Some("br/ai/braid-support"));
        assert_eq!(index_path("../etc"), None);
        assert_eq!(index_path(""), None);
    }
}
