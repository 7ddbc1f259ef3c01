//! Crates as standalone sets of files: a member of a cargo workspace made
//! standalone (inheritance resolved, dev-only tables dropped, runtime
//! dependencies by version), the runtime crates this `braid` ships
//! (braid-schema, braid-support, braid-macros and what they use), and
//! vendoring: a generated crate carries the sources of the runtime crates
//! and of the operations it uses under `vendor/<crate>-<id>/` (named by
//! their content, see [`dir_name`]), linked by path, so it builds wherever
//! it is unpacked, without Braid's repository.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use toml::{Table, Value};

use crate::fsutil::{self, File, FsError};

/// A crate's files: path relative to the crate's root -> text.
pub type CrateFiles = BTreeMap<String, String>;

/// The crates every operation and generated crate builds on. An
/// operation names them by version (`braid-support = "0.1"`); vendoring
/// points them at the copies this `braid` ships.
pub const RUNTIME: &[&str] = &["braid-schema", "braid-support", "braid-macros", "braid-macro-support"];

#[derive(Debug, thiserror::Error)]
pub enum VendorError {
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error("{path}: {reason}")]
    Manifest { path: String, reason: String },
    #[error("{path} is not UTF-8 text; an operation crate's files must be text")]
    NotText { path: String },
    #[error("crate `{0}` is not among the crates this braid ships")]
    UnknownCrate(String),
}

/// The fields and dependencies a workspace's members may inherit.
#[derive(Debug, Clone, Default)]
pub struct Workspace {
    package: Table,
    dependencies: Table,
}

impl Workspace {
    /// Reads a workspace's `Cargo.toml`; `None` if it has no `[workspace]`.
    pub fn from_toml(text: &str, path: &str) -> Result<Option<Self>, VendorError> {
        let t: Table = text.parse().map_err(|e| bad(path, format!("{e}")))?;
        let Some(ws) = t.get("workspace").and_then(Value::as_table) else { return Ok(None) };
        let table = |key: &str| ws.get(key).and_then(Value::as_table).cloned().unwrap_or_default();
        Ok(Some(Self { package: table("package"), dependencies: table("dependencies") }))
    }

    /// The workspace enclosing `crate_dir` (its nearest ancestor whose
    /// `Cargo.toml` has `[workspace]`), if any.
    pub fn enclosing(crate_dir: &Path) -> Result<Option<Self>, VendorError> {
        for dir in crate_dir.ancestors().skip(1) {
            let path = dir.join("Cargo.toml");
            if let Ok(text) = std::fs::read_to_string(&path) {
                if let Some(ws) = Self::from_toml(&text, &path.display().to_string())? {
                    return Ok(Some(ws));
                }
            }
        }
        Ok(None)
    }
}

fn bad(path: &str, reason: impl Into<String>) -> VendorError {
    VendorError::Manifest { path: path.to_string(), reason: reason.into() }
}

/// A crate's `Cargo.toml` made standalone: fields and dependencies it
/// inherits from `workspace` filled in, `[dev-dependencies]`, targets other
/// than the library and `[badges]` dropped, dependencies on the runtime
/// crates by version only. A registered crate builds from its own files,
/// the registry and crates.io: a path dependency names a directory inside
/// the crate (a crate it *bundles*, see [`bundled`]), or has a `version`,
/// which it keeps without the path, as `cargo publish` does (it resolves to
/// the registered crate of that name, see [`dependencies`], or else to
/// crates.io). A git dependency, or a path out of the crate without a
/// version, is an error. `path` names the file in errors.
pub fn standalone(text: &str, workspace: Option<&Workspace>, path: &str) -> Result<String, VendorError> {
    let mut t: Table = text.parse().map_err(|e| bad(path, format!("{e}")))?;
    if t.contains_key("workspace") {
        t.remove("workspace");
    }
    let empty = Workspace::default();
    let ws = workspace.unwrap_or(&empty);
    if let Some(Value::Table(package)) = t.get_mut("package") {
        for (key, value) in package.iter_mut() {
            if is_inherited(value) {
                *value = ws.package.get(key).cloned().ok_or_else(|| {
                    bad(path, format!("`package.{key}` is inherited from a workspace that does not set it"))
                })?;
            }
        }
    }
    for key in ["dev-dependencies", "bench", "example", "test", "bin", "badges", "patch", "replace", "profile"] {
        t.remove(key);
    }
    let fix = |deps: &mut Table| -> Result<(), VendorError> {
        for (name, dep) in deps.iter_mut() {
            // A path the workspace declares is relative to the workspace,
            // so never one of this crate's directories.
            let inherited = is_inherited(dep);
            if inherited {
                *dep = Value::Table(inherit(ws, name, dep).map_err(|r| bad(path, r))?);
            }
            let Value::Table(d) = dep else { continue };
            let krate = d.get("package").and_then(Value::as_str).unwrap_or(name).to_string();
            let runtime = RUNTIME.contains(&krate.as_str());
            if runtime {
                // The runtime crates are this braid's copies, wherever the
                // crate found them.
                d.remove("git");
            }
            if d.contains_key("git") {
                return Err(bad(
                    path,
                    format!(
                        "dependency `{name}` is a git dependency; an operation builds from its own files, the \
                         registry and crates.io: depend on a version, or move the crate into this one's \
                         directory (`path = \"{name}\"`)"
                    ),
                ));
            }
            let Some(dep_path) = d.get("path").and_then(Value::as_str) else {
                if runtime && !d.contains_key("version") {
                    return Err(bad(path, format!("dependency `{name}` needs a version, such as \"0.1\"")));
                }
                continue;
            };
            if !runtime && !inherited {
                if let Some(dir) = bundled_dir(dep_path) {
                    d.insert("path".into(), Value::String(dir));
                    continue;
                }
            }
            if !d.contains_key("version") {
                return Err(bad(
                    path,
                    format!(
                        "dependency `{name}` is a path out of the crate without a version; an operation builds \
                         from its own files, the registry and crates.io: add the `version` it resolves to there \
                         (such as \"0.1\"), or move the crate into this one's directory (`path = \"{name}\"`)"
                    ),
                ));
            }
            d.remove("path");
        }
        Ok(())
    };
    for_each_dependency_table(&mut t, fix)?;
    toml::to_string(&t).map_err(|e| bad(path, format!("{e}")))
}

/// The dependencies by version (`name = "0.1"`, no path) of a standalone
/// crate's `files`, its bundled crates' included: each crate's name (its
/// `package` if renamed) and version requirement, sorted, without repeats.
/// Those naming a registered crate resolve to it (see
/// `Registry::dependencies`).
pub fn dependencies(files: &CrateFiles) -> Result<Vec<(String, String)>, VendorError> {
    let mut out = std::collections::BTreeSet::new();
    for dir in manifests(files)? {
        let path = format!("{dir}Cargo.toml");
        let mut t: Table = files[&path].parse().map_err(|e| bad(&path, format!("{e}")))?;
        for_each_dependency_table(&mut t, |deps| {
            for (name, dep) in deps.iter() {
                let (krate, version) = match dep {
                    Value::String(v) => (name.as_str(), v.as_str()),
                    Value::Table(d) if !d.contains_key("path") => (
                        d.get("package").and_then(Value::as_str).unwrap_or(name),
                        d.get("version").and_then(Value::as_str).unwrap_or("*"),
                    ),
                    _ => continue,
                };
                out.insert((krate.to_string(), version.to_string()));
            }
            Ok(())
        })?;
    }
    Ok(out.into_iter().collect())
}

/// Most levels of crates bundled in crates bundled in an operation.
pub const MAX_BUNDLE_DEPTH: usize = 4;

/// A path dependency's directory if it is inside the crate: relative, made
/// of plain names (no `.`, `..`, empty or hidden components), normalised
/// to `a/b`.
fn bundled_dir(path: &str) -> Option<String> {
    let parts: Vec<&str> = path.trim_start_matches("./").trim_end_matches('/').split('/').collect();
    let plain = |c: &&str| {
        !c.is_empty() && !c.starts_with('.') && c.chars().all(|ch| ch.is_ascii_alphanumeric() || "-_".contains(ch))
    };
    (!parts.is_empty() && parts.iter().all(plain)).then(|| parts.join("/"))
}

/// The directories of the crates a standalone `Cargo.toml` bundles (its
/// path dependencies, all inside the crate once [`standalone`] accepted
/// it), relative to the crate, sorted, without duplicates.
pub fn bundled(text: &str, path: &str) -> Result<Vec<String>, VendorError> {
    let mut t: Table = text.parse().map_err(|e| bad(path, format!("{e}")))?;
    let mut dirs = std::collections::BTreeSet::new();
    for_each_dependency_table(&mut t, |deps| {
        for (name, dep) in deps.iter() {
            if let Some(p) = dep.get("path").and_then(Value::as_str) {
                dirs.insert(
                    bundled_dir(p)
                        .ok_or_else(|| bad(path, format!("dependency `{name}`: `{p}` is outside the crate")))?,
                );
            }
        }
        Ok(())
    })?;
    Ok(dirs.into_iter().collect())
}

/// The `Cargo.toml` files among a standalone crate's `files`: its own,
/// then those of the crates it bundles, recursively (at most
/// [`MAX_BUNDLE_DEPTH`] levels), each with its directory (`""`, `"a/"`).
pub fn manifests(files: &CrateFiles) -> Result<Vec<String>, VendorError> {
    let mut out = Vec::new();
    let mut todo = vec![(String::new(), 0)];
    while let Some((dir, depth)) = todo.pop() {
        let path = format!("{dir}Cargo.toml");
        let text = files.get(&path).ok_or_else(|| bad(&path, "missing: the crate bundles a directory without one"))?;
        if !out.contains(&dir) {
            for sub in bundled(text, &path)? {
                if depth == MAX_BUNDLE_DEPTH {
                    return Err(bad(&path, format!("crates bundled more than {MAX_BUNDLE_DEPTH} levels deep")));
                }
                todo.push((format!("{dir}{sub}/"), depth + 1));
            }
            out.push(dir);
        }
    }
    out.sort();
    Ok(out)
}

/// The workspace's entry for `name`, merged with the member's own keys
/// (`features` added, others override).
fn inherit(ws: &Workspace, name: &str, local: &Value) -> Result<Table, String> {
    let mut merged = match ws.dependencies.get(name) {
        Some(Value::String(v)) => Table::from_iter([("version".to_string(), Value::String(v.clone()))]),
        Some(Value::Table(m)) => m.clone(),
        _ => return Err(format!("dependency `{name}` is inherited from a workspace that does not declare it")),
    };
    if let Value::Table(local) = local {
        for (k, v) in local {
            match k.as_str() {
                "workspace" => {}
                "features" => {
                    let mut all = merged.get("features").and_then(Value::as_array).cloned().unwrap_or_default();
                    all.extend(v.as_array().cloned().unwrap_or_default());
                    merged.insert("features".into(), Value::Array(all));
                }
                _ => {
                    merged.insert(k.clone(), v.clone());
                }
            }
        }
    }
    Ok(merged)
}

/// Runs `f` on `[dependencies]`, `[build-dependencies]` and their
/// `[target.*]` forms.
fn for_each_dependency_table(
    t: &mut Table,
    mut f: impl FnMut(&mut Table) -> Result<(), VendorError>,
) -> Result<(), VendorError> {
    for key in ["dependencies", "build-dependencies"] {
        if let Some(Value::Table(deps)) = t.get_mut(key) {
            f(deps)?;
        }
    }
    if let Some(Value::Table(targets)) = t.get_mut("target") {
        for (_, target) in targets.iter_mut() {
            if let Value::Table(target) = target {
                target.remove("dev-dependencies");
                for key in ["dependencies", "build-dependencies"] {
                    if let Some(Value::Table(deps)) = target.get_mut(key) {
                        f(deps)?;
                    }
                }
            }
        }
    }
    Ok(())
}

fn is_inherited(value: &Value) -> bool {
    value.get("workspace").and_then(Value::as_bool) == Some(true)
}

/// The directory a crate is vendored in: its name and the start of its
/// source id (the content id of its files' archive). Crates that differ
/// under one name and version (another braid's runtime, another registry's
/// operation) get other directories, so in a shared cargo target directory
/// each stays compiled instead of evicting the other.
pub fn dir_name(name: &str, source_id: &str) -> String {
    // Every content id starts with the same `bafkr4i`.
    let id: String = source_id.get("bafkr4i".len()..).unwrap_or(source_id).chars().take(10).collect();
    format!("{name}-{id}")
}

/// The source id of `files`: the content id of their archive.
pub fn source_id(files: &CrateFiles) -> String {
    let archive: Vec<(String, Vec<u8>)> = files.iter().map(|(p, t)| (p.clone(), t.as_bytes().to_vec())).collect();
    crate::archive::source_id(&archive)
}

/// A standalone `Cargo.toml` linked for vendoring: its dependencies on
/// runtime crates, and on the crates of `linked` (name -> vendored
/// directory), point at `../<dir>` (from a crate bundled `depth` levels
/// down, `../../..`). Also returns the runtime crates it names.
fn link(
    text: &str,
    path: &str,
    depth: usize,
    linked: &BTreeMap<&str, &str>,
) -> Result<(String, Vec<String>), VendorError> {
    let mut t: Table = text.parse().map_err(|e| bad(path, format!("{e}")))?;
    let mut runtime = Vec::new();
    for_each_dependency_table(&mut t, |deps| {
        for (name, dep) in deps.iter_mut() {
            let krate = match dep {
                Value::Table(d) if d.contains_key("path") => continue,
                Value::Table(d) => d.get("package").and_then(Value::as_str).unwrap_or(name).to_string(),
                _ => name.clone(),
            };
            let dir = if RUNTIME.contains(&krate.as_str()) {
                runtime.push(krate.clone());
                runtime_crate(&krate).map_err(|e| bad(path, e.to_string()))?.dir.as_str()
            } else if let Some(dir) = linked.get(krate.as_str()) {
                dir
            } else {
                continue;
            };
            let mut d = match dep {
                Value::String(v) => Table::from_iter([("version".to_string(), Value::String(v.clone()))]),
                Value::Table(d) => d.clone(),
                _ => return Err(bad(path, format!("dependency `{name}` is neither a version nor a table"))),
            };
            d.insert("path".into(), Value::String(format!("{}{dir}", "../".repeat(depth + 1))));
            *dep = Value::Table(d);
        }
        Ok(())
    })?;
    let header = "# Vendored by braid: dependencies on Braid's runtime crates and on registered crates point at \
                  their copies here.\n";
    Ok((format!("{header}{}", toml::to_string(&t).map_err(|e| bad(path, format!("{e}")))?), runtime))
}

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

mod files {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

/// The embedded workspace's file `rel`.
fn embedded_file(rel: &str) -> Option<&'static [u8]> {
    files::FILES.iter().find(|(p, _)| *p == rel).map(|(_, b)| *b)
}

/// The content id of everything embedded (runtime crates, built-ins,
/// Braid's lock): names this build of braid's sources.
pub fn embedded_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let archive: Vec<(String, Vec<u8>)> = files::FILES.iter().map(|(p, b)| (p.to_string(), b.to_vec())).collect();
        crate::archive::source_id(&archive)
    })
}

/// Braid's own `Cargo.lock`, the seed of every generated crate's lock.
pub fn seed_lockfile() -> &'static str {
    std::str::from_utf8(embedded_file("Cargo.lock").unwrap_or_default()).unwrap_or_default()
}

fn load_embedded() -> Result<Vec<Embedded>, VendorError> {
    let text = |rel: &str, bytes: &[u8]| {
        String::from_utf8(bytes.to_vec()).map_err(|_| VendorError::NotText { path: rel.to_string() })
    };
    let root = text("Cargo.toml", embedded_file("Cargo.toml").unwrap_or_default())?;
    let ws = Workspace::from_toml(&root, "Cargo.toml")?;
    // Members: directories holding a Cargo.toml.
    let mut members: BTreeMap<&str, CrateFiles> = BTreeMap::new();
    for (rel, _) in files::FILES {
        if let Some(dir) = rel.strip_suffix("/Cargo.toml") {
            members.insert(dir, CrateFiles::new());
        }
    }
    for (rel, bytes) in files::FILES {
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

/// `package.name` and `package.version` of a standalone `Cargo.toml`.
pub fn package_id(text: &str, path: &str) -> Result<(String, String), VendorError> {
    let t: Table = text.parse().map_err(|e| bad(path, format!("{e}")))?;
    let field = |key: &str| {
        t.get("package")
            .and_then(|p| p.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| bad(path, format!("no `package.{key}`")))
    };
    Ok((field("name")?, field("version")?))
}

/// The runtime crate `name` this braid ships.
pub fn runtime_crate(name: &str) -> Result<&'static Embedded, VendorError> {
    embedded()?
        .iter()
        .find(|c| c.name == name && RUNTIME.contains(&name))
        .ok_or_else(|| VendorError::UnknownCrate(name.to_string()))
}

/// Writes the runtime crates under `dir/<crate>-<id>/`, linked to each
/// other, and returns the directory of each (for `[patch]` tables of
/// operation crates built outside a workflow).
pub fn install_runtime(dir: &Path) -> Result<BTreeMap<String, std::path::PathBuf>, VendorError> {
    let mut installed = BTreeMap::new();
    for krate in embedded()?.iter().filter(|c| RUNTIME.contains(&c.name.as_str())) {
        for (rel, text) in &krate.files {
            let text = if rel == "Cargo.toml" { link(text, rel, 0, &BTreeMap::new())?.0 } else { text.clone() };
            fsutil::write_if_changed(&dir.join(&krate.dir).join(rel), text.as_bytes())?;
        }
        installed.insert(krate.name.clone(), dir.join(&krate.dir));
    }
    Ok(installed)
}

/// A crate to vendor: its name, the directory it goes in ([`dir_name`])
/// and its standalone files.
#[derive(Debug, Clone, Copy)]
pub struct ToVendor<'a> {
    pub name: &'a str,
    pub dir: &'a str,
    pub files: &'a CrateFiles,
}

/// The `vendor/` files of a generated crate: each of `crates` (the
/// operations and the registered crates they depend on) and the runtime
/// crates they reach (braid-support always), linked to each other.
pub fn vendor(crates: &[ToVendor<'_>]) -> Result<Vec<File>, VendorError> {
    let support = runtime_crate("braid-support")?;
    let linked: BTreeMap<&str, &str> = crates.iter().map(|c| (c.name, c.dir)).collect();
    let mut todo: Vec<ToVendor<'_>> = crates.to_vec();
    todo.push(ToVendor { name: &support.name, dir: &support.dir, files: &support.files });
    let mut done: BTreeMap<String, Vec<File>> = BTreeMap::new();
    while let Some(ToVendor { dir, files, .. }) = todo.pop() {
        if done.contains_key(dir) {
            continue;
        }
        let manifests = manifests(files)?;
        let mut out = Vec::new();
        for (rel, text) in files {
            let path = format!("vendor/{dir}/{rel}");
            let bundled = rel.strip_suffix("Cargo.toml").filter(|d| manifests.iter().any(|m| m == d));
            let contents = if let Some(bundled) = bundled {
                let (linked, runtime) = link(text, &path, bundled.matches('/').count(), &linked)?;
                for dep in runtime {
                    let krate = runtime_crate(&dep)?;
                    todo.push(ToVendor { name: &krate.name, dir: &krate.dir, files: &krate.files });
                }
                linked
            } else {
                text.clone()
            };
            out.push(File { path, contents });
        }
        done.insert(dir.to_string(), out);
    }
    let mut files: Vec<File> = done.into_values().flatten().collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

#[cfg(test)]
mod tests {
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
        let wasm_blake3 = &t["target"]["cfg(target_arch = \"wasm32\")"]["dependencies"]["blake3"];
        assert_eq!(wasm_blake3["features"].as_array().unwrap()[0].as_str(), Some("wasm32_simd"));
        assert!(t.get("dev-dependencies").is_none());
        assert!(op.files.contains_key("src/lib.rs") && op.files.contains_key("manifest.json"));
    }

    #[test]
    fn vendoring_links_the_runtime_crates() {
        let op = embedded().unwrap().iter().find(|c| c.name == "op_multihash").unwrap();
        let files = vendor(&[ToVendor { name: &op.name, dir: &op.dir, files: &op.files }]).unwrap();
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        let support = &runtime_crate("braid-support").unwrap().dir;
        assert!(paths.contains(&format!("vendor/{}/src/lib.rs", op.dir).as_str()));
        assert!(paths.contains(&format!("vendor/{support}/src/wasm.rs").as_str()), "runtime crates come along");
        for name in ["braid-macros", "braid-schema"] {
            let dir = &runtime_crate(name).unwrap().dir;
            assert!(paths.contains(&format!("vendor/{dir}/Cargo.toml").as_str()), "{name}");
        }
        let manifest = &files.iter().find(|f| f.path == format!("vendor/{}/Cargo.toml", op.dir)).unwrap().contents;
        let t: Table = manifest.parse().unwrap();
        assert_eq!(t["dependencies"]["braid-support"]["path"].as_str(), Some(format!("../{support}").as_str()));
        assert!(op.dir.starts_with("op_multihash-") && op.dir.len() == "op_multihash-".len() + 10, "{}", op.dir);
    }

    #[test]
    fn path_dependencies_out_of_the_crate_are_refused_without_a_version() {
        for dep in [
            "{ path = \"../mine\" }",
            "{ path = \"/abs/mine\" }",
            "{ path = \"a/../../mine\" }",
            "{ path = \".hidden\" }",
            "{ path = \"a//b\" }",
            "{ path = \"mine\", git = \"https://example.com/mine\" }",
            "{ git = \"https://example.com/mine\" }",
        ] {
            let text = format!("[package]\nname = \"op_x\"\nversion = \"0.1.0\"\n[dependencies]\nmine = {dep}\n");
            let e = standalone(&text, None, "op_x/Cargo.toml").unwrap_err().to_string();
            assert!(e.contains("op_x/Cargo.toml") && e.contains("`mine`"), "{dep}: {e}");
        }
        for dep in ["{ path = \"../mine\", version = \"0.2\" }", "{ path = \"/abs/mine\", version = \"0.2\" }"] {
            let text = format!("[package]\nname = \"op_x\"\nversion = \"0.1.0\"\n[dependencies]\nmine = {dep}\n");
            let t: Table = standalone(&text, None, "op_x/Cargo.toml").unwrap().parse().unwrap();
            assert!(t["dependencies"]["mine"].get("path").is_none(), "{dep}: kept by version, as cargo publish does");
            assert_eq!(t["dependencies"]["mine"]["version"].as_str(), Some("0.2"));
        }
        let inherited = "[package]\nname = \"op_x\"\nversion.workspace = true\n";
        let e = standalone(inherited, None, "Cargo.toml").unwrap_err().to_string();
        assert!(e.contains("package.version"), "{e}");
    }

    #[test]
    fn bundled_crates_are_kept_and_linked_from_their_depth() {
        let op = "[package]\nname = \"op_x\"\nversion = \"0.1.0\"\n[dependencies]\nbraid-support = \"0.1\"\n\
                  op_x_macro = { path = \"./macro/\" }\n[build-dependencies]\nop_x_gen = { path = \"tools/gen\" }\n";
        let op = standalone(op, None, "Cargo.toml").unwrap();
        assert_eq!(bundled(&op, "Cargo.toml").unwrap(), ["macro", "tools/gen"]);
        let helper = |name: &str| {
            format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\n[dependencies]\nbraid-support = \"0.1\"\n")
        };
        let files = CrateFiles::from([
            ("Cargo.toml".to_string(), op),
            ("src/lib.rs".to_string(), String::new()),
            ("macro/Cargo.toml".to_string(), helper("op_x_macro")),
            ("macro/src/lib.rs".to_string(), String::new()),
            ("tools/gen/Cargo.toml".to_string(), helper("op_x_gen")),
            ("tools/gen/src/lib.rs".to_string(), String::new()),
            ("src/fixture/Cargo.toml".to_string(), "not a manifest [".to_string()),
        ]);
        assert_eq!(manifests(&files).unwrap(), ["", "macro/", "tools/gen/"]);
        let out = vendor(&[ToVendor { name: "op_x", dir: "op_x-abc", files: &files }]).unwrap();
        let support = &runtime_crate("braid-support").unwrap().dir;
        let linked = |rel: &str| -> Table {
            out.iter().find(|f| f.path == format!("vendor/op_x-abc/{rel}")).unwrap().contents.parse().unwrap()
        };
        let support_path = |t: &Table| t["dependencies"]["braid-support"]["path"].as_str().unwrap().to_string();
        assert_eq!(support_path(&linked("Cargo.toml")), format!("../{support}"));
        assert_eq!(support_path(&linked("macro/Cargo.toml")), format!("../../{support}"));
        assert_eq!(support_path(&linked("tools/gen/Cargo.toml")), format!("../../../{support}"));
        assert_eq!(linked("Cargo.toml")["dependencies"]["op_x_macro"]["path"].as_str(), Some("macro"));

        let mut missing = files.clone();
        missing.remove("tools/gen/Cargo.toml");
        assert!(manifests(&missing).unwrap_err().to_string().contains("tools/gen/Cargo.toml"));
    }

    #[test]
    fn dependencies_on_registered_crates_are_linked_to_their_copies() {
        let op = "[package]\nname = \"op_y\"\nversion = \"0.1.0\"\n[dependencies]\nbraid-support = \"0.1\"\n\
                  images = { package = \"op_img\", version = \"0.3\", default-features = false }\nblake3 = \"1\"\n\
                  helper = { path = \"helper\" }\n";
        let helper = "[package]\nname = \"helper\"\nversion = \"0.1.0\"\n[target.'cfg(unix)'.dependencies]\n\
                      op_img = \"0.3.1\"\n";
        let files = CrateFiles::from([
            ("Cargo.toml".to_string(), op.to_string()),
            ("helper/Cargo.toml".to_string(), helper.to_string()),
        ]);
        let want: Vec<(String, String)> =
            [("blake3", "1"), ("braid-support", "0.1"), ("op_img", "0.3"), ("op_img", "0.3.1")]
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
        assert_eq!(dependencies(&files).unwrap(), want);
        let img = CrateFiles::from([(
            "Cargo.toml".to_string(),
            "[package]\nname = \"op_img\"\nversion = \"0.3.2\"\n".to_string(),
        )]);
        let out = vendor(&[
            ToVendor { name: "op_y", dir: "op_y-abc", files: &files },
            ToVendor { name: "op_img", dir: "op_img-def", files: &img },
        ])
        .unwrap();
        let linked = |rel: &str| -> Table {
            out.iter().find(|f| f.path == format!("vendor/{rel}")).unwrap().contents.parse().unwrap()
        };
        let top = linked("op_y-abc/Cargo.toml");
        assert_eq!(top["dependencies"]["images"]["path"].as_str(), Some("../op_img-def"));
        assert_eq!(top["dependencies"]["images"]["default-features"].as_bool(), Some(false));
        assert!(top["dependencies"]["blake3"].as_str().is_some(), "crates.io stays by version");
        let inner = linked("op_y-abc/helper/Cargo.toml");
        assert_eq!(inner["target"]["cfg(unix)"]["dependencies"]["op_img"]["path"].as_str(), Some("../../op_img-def"));
        assert!(out.iter().any(|f| f.path == "vendor/op_img-def/Cargo.toml"));
    }
}
