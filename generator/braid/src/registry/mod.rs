//! The operation registry: every operation workflows may use, several
//! versions of each, each version's source content-addressed. On disk it is
//! a directory (`$BRAID_HOME/registry`):
//!
//! ```text
//! operations/<name>/<version>.json   the registered manifest and its origin
//! sources/<source id>/               the crate's files (standalone Cargo.toml)
//! builtin/<stamp>                    the built-ins of one braid binary are in
//! lock                               held while the registry is written
//! ```
//!
//! Built-in operations ship inside the binary (`vendor::embedded`) and are
//! registered through the same [`prepare`] + [`Registry::add`] as users'
//! crates. [`prepare`] derives a crate's manifest from its code (the same
//! code `#[operation]` runs), checks a committed `manifest.json` against
//! it, and sets `source` to the content id of the crate's archive, so the
//! version id pins the implementation.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use braid_schema::{OperationManifest, TypeDef, TypeName};
use serde::{Deserialize, Serialize};

mod disk;
mod ingest;

pub use disk::Added;
pub use ingest::{prepare, read_crate, Prepared};

use crate::fsutil::{self, File, FsError};
use crate::vendor::{self, CrateFiles, VendorError};

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error(transparent)]
    Vendor(#[from] VendorError),
    #[error("{crate_dir}: {message}")]
    Crate { crate_dir: String, message: String },
    #[error(
        "{name} {version} is already registered with other sources (source {existing}); bump the version in \
         Cargo.toml, or remove the registered one with `braid ops remove {name}@{version}`"
    )]
    Taken { name: String, version: String, existing: String },
    #[error("no operation {name} {version} in the registry (`braid ops {name}` lists its versions)")]
    NotFound { name: String, version: String },
    #[error("{path}: a damaged registry entry: {reason}")]
    Damaged { path: PathBuf, reason: String },
    #[error("{dependent} depends on {name} {requirement}, but {reason}")]
    Dependency { dependent: String, name: String, requirement: String, reason: String },
    #[error(
        "no operation version {} in the registry{}: the build was asked for exactly these versions (`braid ops` \
         lists the registry's)",
        ids.join(", "),
        dir.as_ref().map_or(String::new(), |d| format!(" in {}", d.display()))
    )]
    MissingVersions { ids: Vec<String>, dir: Option<PathBuf> },
    #[error("two versions of {name} given ({first} and {second}): give one version of each crate")]
    TwoVersions { name: String, first: String, second: String },
}

fn crate_error(dir: &str, message: impl Into<String>) -> RegistryError {
    RegistryError::Crate { crate_dir: dir.to_string(), message: message.into() }
}

/// How an operation came into the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// Shipped inside this `braid`.
    Builtin,
    /// `braid ops add`.
    Added,
    /// `POST /v1/operations` on a service.
    Published,
}

/// Where a registered operation's files are.
#[derive(Debug, Clone)]
enum Source {
    Memory(Arc<CrateFiles>),
    Dir(PathBuf),
}

/// One version of an operation in the registry.
#[derive(Debug, Clone)]
pub struct RegisteredOperation {
    /// The manifest, with `source` set.
    pub manifest: OperationManifest,
    /// The content id of the manifest's canonical JSON.
    pub version_id: String,
    pub origin: Origin,
    version: semver::Version,
    source: Source,
}

impl RegisteredOperation {
    fn new(manifest: OperationManifest, origin: Origin, source: Source) -> Result<Self, String> {
        manifest.check().map_err(|e| e.to_string())?;
        if manifest.source.is_none() {
            return Err("the manifest has no `source`".into());
        }
        let version = semver::Version::parse(&manifest.version).map_err(|e| e.to_string())?;
        Ok(Self { version_id: manifest.version_id(), manifest, origin, version, source })
    }

    pub fn name(&self) -> &str {
        &self.manifest.name
    }

    pub fn version(&self) -> &semver::Version {
        &self.version
    }

    /// The content id of the crate's archive (the manifest's `source`).
    pub fn source_id(&self) -> &str {
        self.manifest.source.as_deref().unwrap_or_default()
    }

    /// The directory holding the crate's files, for a registry on disk.
    pub fn source_dir(&self) -> Option<&Path> {
        match &self.source {
            Source::Dir(dir) => Some(dir),
            Source::Memory(_) => None,
        }
    }

    /// The crate's files (standalone `Cargo.toml`, sources).
    pub fn files(&self) -> Result<Cow<'_, CrateFiles>, RegistryError> {
        match &self.source {
            Source::Memory(files) => Ok(Cow::Borrowed(files)),
            Source::Dir(dir) => {
                let mut files = CrateFiles::new();
                for rel in fsutil::walk(dir)? {
                    let text = fsutil::read_to_string(&dir.join(&rel))?;
                    files.insert(rel.to_string_lossy().replace('\\', "/"), text);
                }
                Ok(Cow::Owned(files))
            }
        }
    }
}

/// The definition of value type `named` (`op_image_decode::Image`) among
/// `operations`: in the manifest of the operation crate that defines it.
pub fn type_def<'a>(operations: &'a [RegisteredOperation], named: &TypeName) -> Option<&'a TypeDef> {
    let TypeName::Named { krate, name } = named else { return None };
    operations
        .iter()
        .filter(|op| crate::schema::lib_name(&op.manifest.name) == *krate)
        .find_map(|op| op.manifest.types.get(name))
}

/// The value types `roots` name, directly or through the fields of their
/// definitions, each once, sorted, with its definition among `operations`
/// (`None` when none of them defines it).
pub fn named_types<'a>(
    operations: &'a [RegisteredOperation],
    roots: &[&TypeName],
) -> BTreeMap<TypeName, Option<&'a TypeDef>> {
    let mut todo: Vec<TypeName> = Vec::new();
    for root in roots {
        root.named(&mut |n| todo.push(n.clone()));
    }
    let mut found = BTreeMap::new();
    while let Some(named) = todo.pop() {
        if found.contains_key(&named) {
            continue;
        }
        let def = type_def(operations, &named);
        if let Some(TypeDef::Record(fields)) = def {
            fields.iter().for_each(|f| f.ty.named(&mut |n| todo.push(n.clone())));
        }
        found.insert(named, def);
    }
    found
}

/// The operations workflows may use, sorted by name, newest version first.
#[derive(Debug, Clone)]
pub struct Registry {
    operations: Vec<RegisteredOperation>,
    /// The registry directory, for one on disk.
    dir: Option<PathBuf>,
}

/// The built-in operations, prepared once per process.
fn builtins() -> Result<&'static [Prepared], String> {
    static PREPARED: OnceLock<Result<Vec<Prepared>, String>> = OnceLock::new();
    PREPARED
        .get_or_init(|| {
            let crates = vendor::embedded().map_err(|e| e.to_string())?;
            crates
                .iter()
                .filter(|c| !vendor::RUNTIME.contains(&c.name.as_str()))
                .map(|c| prepare(c.files.clone(), &format!("built-in {}", c.name)).map_err(|e| e.to_string()))
                .collect()
        })
        .as_deref()
        .map_err(Clone::clone)
}

/// Where Braid's own copies of build tools live (binaryen's wasm-opt, from
/// npm, in `node_modules/.bin`): `$BRAID_TOOLS`, else `<home>/tools`. One
/// place for every command: `braid serve` hands its own on to its builds,
/// whose `BRAID_HOME` is the data directory.
pub fn tools_dir() -> PathBuf {
    std::env::var_os("BRAID_TOOLS").map_or_else(|| default_home().join("tools"), PathBuf::from)
}

/// The registry's home: `$BRAID_HOME`, else `$XDG_DATA_HOME/braid`, else
/// `~/.local/share/braid`.
pub fn default_home() -> PathBuf {
    if let Some(dir) = std::env::var_os("BRAID_HOME") {
        return PathBuf::from(dir);
    }
    std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(std::env::temp_dir)
        .join("braid")
}

impl Registry {
    /// Whether `name` is the name of an operation that ships with Braid.
    pub fn is_builtin_name(name: &str) -> bool {
        builtins().is_ok_and(|ops| ops.iter().any(|p| p.manifest.name == name))
    }

    /// The built-in operations alone, in memory (no directory).
    ///
    /// # Panics
    /// If a built-in crate does not prepare: a bug in this build of Braid.
    pub fn builtin() -> Self {
        let operations = builtins()
            .unwrap_or_else(|e| panic!("the built-in operations: {e}"))
            .iter()
            .map(|p| {
                RegisteredOperation::new(p.manifest.clone(), Origin::Builtin, Source::Memory(Arc::new(p.files.clone())))
                    .expect("a prepared manifest is valid")
            })
            .collect();
        let mut registry = Self { operations, dir: None };
        registry.sort();
        registry
    }

    fn sort(&mut self) {
        self.operations.sort_by(|a, b| a.name().cmp(b.name()).then_with(|| b.version.cmp(&a.version)));
    }

    /// The registry's directory, for one on disk.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Every version of every operation: by name, newest first.
    pub fn iter(&self) -> impl Iterator<Item = &RegisteredOperation> {
        self.operations.iter()
    }

    /// The names of the operations, sorted, each once.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.operations.iter().map(RegisteredOperation::name).collect();
        names.dedup();
        names
    }

    /// The versions of `name`, newest first.
    pub fn versions(&self, name: &str) -> &[RegisteredOperation] {
        let start = self.operations.partition_point(|op| op.name() < name);
        let end = self.operations.partition_point(|op| op.name() <= name);
        &self.operations[start..end]
    }

    /// The newest version of every operation.
    pub fn newest(&self) -> Vec<RegisteredOperation> {
        self.names().into_iter().filter_map(|n| self.get(n)).cloned().collect()
    }

    /// The newest version of `name`.
    pub fn get(&self, name: &str) -> Option<&RegisteredOperation> {
        self.versions(name).first()
    }

    /// The highest version of `name` that `requirement` allows (prereleases
    /// only when the requirement names one, as cargo does).
    pub fn select(&self, name: &str, requirement: &semver::VersionReq) -> Option<&RegisteredOperation> {
        self.versions(name).iter().find(|op| requirement.matches(&op.version))
    }

    /// The registered crates `roots` depend on (through dependencies by
    /// version naming a registered crate, see [`vendor::dependencies`]),
    /// directly or through each other, that are not among `roots`: one
    /// version each, sorted by name. A crate of a root's name is that root;
    /// another is the highest version the first requirement met allows,
    /// and every other requirement on it must allow that version too: a
    /// generated crate links one copy of each crate, so each value type
    /// has one identity.
    pub fn dependencies(
        &self,
        roots: &[(&str, &semver::Version, &CrateFiles)],
    ) -> Result<Vec<RegisteredOperation>, RegistryError> {
        let mut chosen: BTreeMap<String, semver::Version> =
            roots.iter().map(|(name, version, _)| (name.to_string(), (*version).clone())).collect();
        let mut found: Vec<RegisteredOperation> = Vec::new();
        // (dependent, its version, its dependencies by version requirement)
        type Todo = (String, semver::Version, Vec<(String, String)>);
        let mut todo: Vec<Todo> = Vec::new();
        for (name, version, files) in roots {
            todo.push((name.to_string(), (*version).clone(), vendor::dependencies(files)?));
        }
        while let Some((dependent, version, requires)) = todo.pop() {
            for (name, requirement) in requires {
                if self.get(&name).is_none() {
                    continue;
                }
                let problem = |reason: String| RegistryError::Dependency {
                    dependent: format!("{dependent} {version}"),
                    name: name.clone(),
                    requirement: requirement.clone(),
                    reason,
                };
                let req = semver::VersionReq::parse(&requirement)
                    .map_err(|e| problem(format!("that is not a version requirement: {e}")))?;
                if let Some(have) = chosen.get(&name) {
                    if !req.matches(have) {
                        return Err(problem(format!(
                            "{name} {have} is used too; a workflow links one version of each crate: use versions \
                             whose requirements meet"
                        )));
                    }
                    continue;
                }
                let Some(op) = self.select(&name, &req) else {
                    let versions: Vec<String> = self.versions(&name).iter().map(|op| op.version.to_string()).collect();
                    return Err(problem(format!("the registry has {name} {} only", versions.join(", "))));
                };
                chosen.insert(name.clone(), op.version.clone());
                todo.push((name.clone(), op.version.clone(), vendor::dependencies(&*op.files()?)?));
                found.push(op.clone());
            }
        }
        found.sort_by(|a, b| a.name().cmp(b.name()));
        Ok(found)
    }

    /// The operation whose version id is `id`.
    pub fn by_version_id(&self, id: &str) -> Option<&RegisteredOperation> {
        self.operations.iter().find(|op| op.version_id == id)
    }

    /// This registry with the versions `ids` names as the only versions of
    /// their crates (a build resolving exactly what another process
    /// resolved: a requirement on one of them then selects the version
    /// named, whatever was registered since); an error naming those it
    /// lacks.
    pub fn pin(mut self, ids: &[String]) -> Result<Self, RegistryError> {
        let mut pinned: BTreeMap<String, &String> = BTreeMap::new();
        let mut missing = Vec::new();
        for id in ids {
            let Some(op) = self.by_version_id(id) else {
                missing.push(id.clone());
                continue;
            };
            if let Some(first) = pinned.insert(op.name().to_string(), id).filter(|first| *first != id) {
                let (first, second) = (first.clone(), id.clone());
                return Err(RegistryError::TwoVersions { name: op.name().to_string(), first, second });
            }
        }
        if !missing.is_empty() {
            return Err(RegistryError::MissingVersions { ids: missing, dir: self.dir });
        }
        self.operations.retain(|op| pinned.get(op.name()).is_none_or(|id| **id == op.version_id));
        Ok(self)
    }
}

/// Registered manifests by name, for listings.
pub fn by_name(registry: &Registry) -> BTreeMap<&str, Vec<&RegisteredOperation>> {
    let mut out: BTreeMap<&str, Vec<&RegisteredOperation>> = BTreeMap::new();
    for op in registry.iter() {
        out.entry(op.name()).or_default().push(op);
    }
    out
}

/// The `vendor/` files of a crate using registered `crates` (operations and
/// the crates they depend on): their sources from the registry and the
/// runtime crates they build on.
pub fn vendor_files(crates: &[RegisteredOperation]) -> Result<Vec<File>, RegistryError> {
    vendor_files_with(&[], crates)
}

/// [`vendor_files`] with `extra` crates that are not in the registry
/// (one `braid ops add` checks before registering it), linked alike.
pub fn vendor_files_with(
    extra: &[vendor::ToVendor<'_>],
    crates: &[RegisteredOperation],
) -> Result<Vec<File>, RegistryError> {
    let sources = crates
        .iter()
        .map(|op| Ok((op.name(), vendor::dir_name(op.name(), op.source_id()), op.files()?)))
        .collect::<Result<Vec<_>, RegistryError>>()?;
    let mut named: Vec<vendor::ToVendor<'_>> = extra.to_vec();
    named.extend(sources.iter().map(|(name, dir, files)| vendor::ToVendor { name, dir, files: files.as_ref() }));
    Ok(vendor::vendor(&named)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(what: &str) -> PathBuf {
        std::env::temp_dir().join(format!("braid-registry-{what}-{}", uuid::Uuid::new_v4().simple()))
    }

    #[test]
    fn builtin_operations_are_consistent() {
        let registry = Registry::builtin();
        assert_eq!(registry.names().len(), 18, "{:?}", registry.names());
        for op in registry.iter() {
            assert_eq!(registry.by_version_id(&op.version_id).unwrap().name(), op.name());
            assert!(braid_schema::is_content_id(op.source_id()), "{}", op.source_id());
            assert_eq!(op.origin, Origin::Builtin);
        }
        let file = registry.get("op_file").unwrap();
        assert_eq!(file.manifest.targets, [braid_schema::Platform::Native]);
        assert!(registry.get("op_nope").is_none());
    }

    #[test]
    fn dependencies_between_registered_crates_resolve_to_one_version_each() {
        let registry = Registry::builtin();
        let phash = registry.get("op_image_phash").unwrap();
        let files = phash.files().unwrap();
        let found = registry.dependencies(&[(phash.name(), phash.version(), &files)]).unwrap();
        let names: Vec<&str> = found.iter().map(RegisteredOperation::name).collect();
        assert_eq!(names, ["op_image_decode", "op_image_gray", "op_image_resize"]);
        // A root of a dependency's name is that dependency.
        let decode = registry.get("op_image_decode").unwrap();
        let decode_files = decode.files().unwrap();
        let roots = [(phash.name(), phash.version(), &*files), (decode.name(), decode.version(), &*decode_files)];
        let names: Vec<String> =
            registry.dependencies(&roots).unwrap().iter().map(|op| op.name().to_string()).collect();
        assert_eq!(names, ["op_image_gray", "op_image_resize"]);
        // Another version of it than the requirement allows: refused, saying which.
        let newer = semver::Version::new(0, 2, 0);
        let roots = [(phash.name(), phash.version(), &*files), (decode.name(), &newer, &*decode_files)];
        let e = registry.dependencies(&roots).unwrap_err().to_string();
        assert!(e.contains("depends on op_image_decode 0.1.0, but op_image_decode 0.2.0 is used too"), "{e}");
    }

    #[test]
    fn a_registry_on_disk_keeps_versions_and_refuses_other_sources_under_one_version() {
        let home = scratch("disk");
        let mut registry = Registry::open(&home).unwrap();
        assert_eq!(registry.names(), Registry::builtin().names());
        let utf8 = registry.get("op_utf8").unwrap().clone();
        let files = utf8.files().unwrap().into_owned();
        // The same sources again: nothing changes.
        let again = prepare(files.clone(), "op_utf8").unwrap();
        assert_eq!(again.version_id, utf8.version_id);
        assert_eq!(registry.add(again, Origin::Added).unwrap(), Added::Unchanged);
        // Other code under the same version: refused.
        let mut changed = files.clone();
        changed.get_mut("src/lib.rs").unwrap().push_str("\n// changed\n");
        let e = registry.add(prepare(changed.clone(), "op_utf8").unwrap(), Origin::Added).unwrap_err();
        assert!(matches!(e, RegistryError::Taken { .. }), "{e}");
        // A new version coexists; requirements pick, version ids pin.
        let toml = changed["Cargo.toml"].replace("version = \"0.1.0\"", "version = \"0.2.0\"");
        changed.insert("Cargo.toml".into(), toml);
        changed.remove("manifest.json");
        let v2 = prepare(changed, "op_utf8").unwrap();
        assert_ne!(v2.manifest.source, utf8.manifest.source);
        assert_eq!(registry.add(v2.clone(), Origin::Added).unwrap(), Added::New);
        let reopened = Registry::open(&home).unwrap();
        assert_eq!(reopened.versions("op_utf8").len(), 2);
        assert_eq!(reopened.get("op_utf8").unwrap().version_id, v2.version_id);
        let req = semver::VersionReq::parse("^0.1").unwrap();
        assert_eq!(reopened.select("op_utf8", &req).unwrap().version_id, utf8.version_id);
        assert_eq!(reopened.by_version_id(&utf8.version_id).unwrap().manifest.version, "0.1.0");
        // Removing a version takes its source along.
        let mut reopened = reopened;
        let gone = reopened.remove("op_utf8", "0.2.0").unwrap();
        assert!(!gone.source_dir().unwrap().exists());
        assert_eq!(Registry::open(&home).unwrap().versions("op_utf8").len(), 1);
        std::fs::remove_dir_all(&home).unwrap();
    }

    /// Pinned versions: requirements on their crates select them alone,
    /// other crates keep every version, and a version it lacks is named.
    #[test]
    fn a_pinned_version_is_the_only_one_of_its_crate() {
        let home = scratch("only");
        let mut registry = Registry::open(&home).unwrap();
        let old = registry.get("op_utf8").unwrap().clone();
        let mut files = old.files().unwrap().into_owned();
        let toml = files["Cargo.toml"].replace("version = \"0.1.0\"", "version = \"0.1.1\"");
        files.insert("Cargo.toml".into(), toml);
        files.remove("manifest.json");
        registry.add(prepare(files, "op_utf8").unwrap(), Origin::Added).unwrap();
        let any = semver::VersionReq::parse("^0.1").unwrap();
        assert_eq!(registry.select("op_utf8", &any).unwrap().manifest.version, "0.1.1");
        let cid = registry.get("op_cid").unwrap().version_id.clone();
        let pinned = Registry::open(&home).unwrap().pin(&[old.version_id.clone(), cid.clone()]).unwrap();
        assert_eq!(pinned.select("op_utf8", &any).unwrap().version_id, old.version_id);
        assert_eq!(pinned.versions("op_utf8").len(), 1);
        assert_eq!(pinned.names(), registry.names(), "no crate left out");
        let newer = registry.get("op_utf8").unwrap().version_id.clone();
        let e = Registry::open(&home).unwrap().pin(&[old.version_id.clone(), newer.clone()]).unwrap_err().to_string();
        assert_eq!(
            e,
            format!("two versions of op_utf8 given ({} and {newer}): give one version of each crate", old.version_id)
        );
        let unknown = "bafkr4iaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".to_string();
        let e = Registry::open(&home).unwrap().pin(&[cid, unknown.clone()]).unwrap_err().to_string();
        assert!(e.starts_with(&format!("no operation version {unknown} in the registry in {}", home.display())), "{e}");
        std::fs::remove_dir_all(&home).unwrap();
    }

    #[test]
    fn a_damaged_entry_is_an_error_naming_it() {
        let home = scratch("damaged");
        Registry::open(&home).unwrap();
        let path = home.join("registry/operations/op_cid/0.1.0.json");
        std::fs::write(&path, "{ not json").unwrap();
        let e = Registry::open(&home).unwrap_err().to_string();
        assert!(e.contains("op_cid/0.1.0.json"), "{e}");
        std::fs::remove_dir_all(&home).unwrap();
    }

    #[test]
    fn crates_bundled_in_an_operation_are_part_of_its_source() {
        let dir = scratch("bundled");
        let utf8 = Registry::builtin().get("op_utf8").unwrap().files().unwrap().into_owned();
        for (rel, text) in &utf8 {
            fsutil::write(&dir.join(rel), text.as_bytes()).unwrap();
        }
        let op_toml = format!("{}\n[dependencies.op_utf8_helper]\npath = \"helper\"\n", utf8["Cargo.toml"]);
        fsutil::write(&dir.join("Cargo.toml"), op_toml.as_bytes()).unwrap();
        std::fs::remove_file(dir.join("manifest.json")).unwrap();
        let helper = |name: &str| format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
        fsutil::write(&dir.join("helper/Cargo.toml"), helper("op_utf8_helper").as_bytes()).unwrap();
        fsutil::write(&dir.join("helper/src/lib.rs"), b"pub fn two() -> u8 { 2 }\n").unwrap();
        fsutil::write(&dir.join("helper/target/junk"), b"not source").unwrap();

        let files = read_crate(&dir).unwrap();
        assert!(
            files.contains_key("helper/Cargo.toml") && files.contains_key("helper/src/lib.rs"),
            "{:?}",
            files.keys()
        );
        assert!(!files.keys().any(|k| k.contains("target")), "{:?}", files.keys());
        let prepared = prepare(files.clone(), "op_utf8").unwrap();
        assert_eq!(prepared.manifest.name, "op_utf8");
        // The helper's code is part of the source id.
        let mut changed = files.clone();
        changed.insert("helper/src/lib.rs".into(), "pub fn two() -> u8 { 3 }\n".into());
        assert_ne!(prepare(changed, "op_utf8").unwrap().manifest.source, prepared.manifest.source);

        // Named after the operation, or refused.
        fsutil::write(&dir.join("helper/Cargo.toml"), helper("helper").as_bytes()).unwrap();
        let e = prepare(read_crate(&dir).unwrap(), "op_utf8").unwrap_err().to_string();
        assert!(e.contains("helper/Cargo.toml") && e.contains("`op_utf8_...`"), "{e}");
        // A bundled directory reached through a link is refused.
        std::fs::rename(dir.join("helper"), dir.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(dir.join("elsewhere"), dir.join("helper")).unwrap();
        let e = read_crate(&dir).unwrap_err().to_string();
        assert!(e.contains("helper/ is reached through a symbolic link"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
