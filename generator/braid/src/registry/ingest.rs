//! A crate on its way into the registry: its files read from a directory
//! ([`read_crate`]: the sources, the crates it bundles, nothing reached
//! through a link) and its manifest derived from its code and checked
//! ([`prepare`]).

use std::path::{Path, PathBuf};

use braid_schema::OperationManifest;

use super::{crate_error, RegistryError};
use crate::fsutil;
use crate::vendor::{self, CrateFiles, Workspace};

/// A crate ready to register: its derived manifest (with `source`) and files.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub manifest: OperationManifest,
    pub version_id: String,
    pub files: CrateFiles,
}

/// Derives a crate's manifest from its files (`crate_dir` names it in
/// errors), checks a committed `manifest.json` against it, and sets
/// `source`.
pub fn prepare(files: CrateFiles, crate_dir: &str) -> Result<Prepared, RegistryError> {
    let mut manifest = derive(&files, crate_dir)?;
    // Generated code names the crate in Rust paths and Cargo.toml keys.
    if !crate::ident::is_plain_ident(&manifest.name) {
        return Err(crate_error(
            crate_dir,
            format!(
                "package name `{}`: an operation's crate name must be a Rust identifier (ASCII letters, digits and \
                 `_`, not a keyword), e.g. `{}`",
                manifest.name,
                crate::schema::lib_name(&manifest.name)
            ),
        ));
    }
    if let Some(committed) = files.get("manifest.json") {
        let committed =
            OperationManifest::parse(committed).map_err(|e| crate_error(crate_dir, format!("manifest.json: {e}")))?;
        if committed != manifest {
            return Err(crate_error(
                crate_dir,
                "manifest.json differs from what #[operation] makes of the code: rebuild the crate and commit the \
                 manifest it writes, or delete manifest.json",
            ));
        }
    }
    check_bundled(&files, &manifest.name, crate_dir)?;
    manifest.source = Some(vendor::source_id(&files));
    manifest.check().map_err(|e| crate_error(crate_dir, e.to_string()))?;
    let version_id = manifest.version_id();
    Ok(Prepared { manifest, version_id, files })
}

/// The crates an operation bundles are named after it (`op_x_macro`,
/// `op_x-helper`): every vendored crate of a workflow is a member of its
/// workspace, where two packages may not share a name.
fn check_bundled(files: &CrateFiles, operation: &str, crate_dir: &str) -> Result<(), RegistryError> {
    for dir in vendor::manifests(files)?.iter().filter(|d| !d.is_empty()) {
        let path = format!("{dir}Cargo.toml");
        let (name, _) = vendor::package_id(&files[&path], &path)?;
        let rest = crate::schema::lib_name(&name);
        let ok = rest.strip_prefix(operation).is_some_and(|r| r.starts_with('_'));
        if !ok {
            return Err(crate_error(
                crate_dir,
                format!(
                    "{path}: a crate the operation bundles is named after it, `{operation}_...` (this one is `{name}`): \
                     crates of different operations meet in one workspace, where names must differ"
                ),
            ));
        }
    }
    Ok(())
}

/// The manifest `#[operation]` builds for the crate, from its source.
fn derive(files: &CrateFiles, crate_dir: &str) -> Result<OperationManifest, RegistryError> {
    let cargo_toml = files.get("Cargo.toml").ok_or_else(|| crate_error(crate_dir, "no Cargo.toml"))?;
    braid_macro_support::derive_manifest(cargo_toml, files).map_err(|e| crate_error(crate_dir, format!("\n{e}")))
}

/// The files of the crate in `dir` that make its source: `Cargo.toml`
/// (made standalone, see [`vendor::standalone`]), `build.rs`,
/// `manifest.json`, README and LICENSE files, everything under `src/`, the
/// library and build-script paths `Cargo.toml` names, and the same of each
/// crate it bundles (a path dependency inside its directory), under that
/// crate's directory. Symbolic links and files that are not UTF-8 text are
/// refused.
pub fn read_crate(dir: &Path) -> Result<CrateFiles, RegistryError> {
    let shown = dir.display().to_string();
    let root = dir.canonicalize().map_err(fsutil::at(dir))?;
    let mut files = CrateFiles::new();
    let mut todo = vec![(String::new(), 0)];
    while let Some((prefix, depth)) = todo.pop() {
        if files.contains_key(&format!("{prefix}Cargo.toml")) {
            continue;
        }
        for sub in read_one(&root, &prefix, &shown, &mut files)? {
            if depth == vendor::MAX_BUNDLE_DEPTH {
                return Err(crate_error(
                    &shown,
                    format!("{prefix}Cargo.toml: crates bundled more than {} levels deep", vendor::MAX_BUNDLE_DEPTH),
                ));
            }
            todo.push((format!("{prefix}{sub}/"), depth + 1));
        }
    }
    Ok(files)
}

/// Reads the crate in `root/prefix` into `files` (paths under `prefix`);
/// returns the directories of the crates it bundles, relative to it.
fn read_one(root: &Path, prefix: &str, shown: &str, files: &mut CrateFiles) -> Result<Vec<String>, RegistryError> {
    let dir = root.join(prefix);
    // A bundled directory reached through a symbolic link could be anywhere.
    let real = dir.canonicalize().map_err(|e| crate_error(shown, format!("{prefix}: {e}")))?;
    if real != dir.components().collect::<PathBuf>() {
        return Err(crate_error(
            shown,
            format!("{prefix} is reached through a symbolic link; a crate's source must be plain files"),
        ));
    }
    let cargo_toml = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&cargo_toml)
        .map_err(|e| crate_error(shown, format!("no readable {prefix}Cargo.toml ({e}): is this a crate directory?")))?;
    let manifest_path = format!("{shown}/{prefix}Cargo.toml");
    let workspace = Workspace::enclosing(&real)?;
    let manifest = vendor::standalone(&text, workspace.as_ref(), &manifest_path)?;
    let bundled = vendor::bundled(&manifest, &manifest_path)?;
    let table: toml::Table = manifest.parse().map_err(|e| crate_error(shown, format!("{prefix}Cargo.toml: {e}")))?;
    let mut wanted: Vec<String> = Vec::new();
    let named = |v: Option<&toml::Value>| v.and_then(toml::Value::as_str).map(str::to_string);
    wanted.extend(named(table.get("lib").and_then(|l| l.get("path"))));
    wanted.extend(named(table.get("package").and_then(|p| p.get("build"))));
    files.insert(format!("{prefix}Cargo.toml"), manifest);
    let add = |files: &mut CrateFiles, rel: &str| -> Result<(), RegistryError> {
        let path = dir.join(rel);
        let meta = std::fs::symlink_metadata(&path).map_err(fsutil::at(&path))?;
        if meta.file_type().is_symlink() {
            return Err(crate_error(
                shown,
                format!("{prefix}{rel} is a symbolic link; a crate's source must be plain files"),
            ));
        }
        let bytes = fsutil::read(&path)?;
        let text =
            String::from_utf8(bytes).map_err(|_| crate_error(shown, format!("{prefix}{rel} is not UTF-8 text")))?;
        files.insert(format!("{prefix}{}", rel.replace('\\', "/")), text);
        Ok(())
    };
    for entry in std::fs::read_dir(&dir).map_err(fsutil::at(&dir))? {
        let name = entry.map_err(fsutil::at(&dir))?.file_name().to_string_lossy().into_owned();
        let top = ["build.rs", "manifest.json"].contains(&name.as_str())
            || name.starts_with("README")
            || name.starts_with("LICENSE");
        if top {
            add(files, &name)?;
        }
    }
    if dir.join("src").is_dir() {
        for rel in fsutil::walk(&dir.join("src"))? {
            add(files, &format!("src/{}", rel.to_string_lossy()))?;
        }
    }
    for rel in wanted {
        let rel = rel.trim_start_matches("./").to_string();
        if !files.contains_key(&format!("{prefix}{rel}")) {
            if rel.starts_with('/') || rel.split('/').any(|c| c == "..") {
                return Err(crate_error(shown, format!("{prefix}Cargo.toml names `{rel}`, outside the crate")));
            }
            add(files, &rel)?;
        }
    }
    Ok(bundled)
}
