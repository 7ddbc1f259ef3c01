//! Embeds the sources `braid` ships: its templates (`templates/`), the
//! runtime crates every operation and generated crate builds on
//! (braid-schema, braid-support, braid-macros and what they use) and the
//! built-in operations, with the workspace's `Cargo.toml` (for inherited
//! fields) and `Cargo.lock` (the seed of every generated crate's lock). At
//! run time the crates are registered like any user's operation
//! (`registry`), so the binary needs no source checkout.
//!
//! Two places to take them from, one result (`$OUT_DIR/embedded.rs`):
//! - **the workspace**, when this crate is built in it: its members come
//!   from the root `Cargo.toml`'s `workspace.members` (parsed as TOML),
//!   less the tools themselves (`generator/braid`, `generator/engine`,
//!   `generator/store`, `generator/worker`, `generator/service`,
//!   `generator/cli`) and the repository's checks
//!   (`xtask`);
//! - **`embedded.tar`** beside this file, when it is built from its
//!   package (`cargo package`, a registry): the same files, written by
//!   `cargo xtask package` from a workspace build (the `embedded_tar`
//!   example), since a package holds no file outside its own directory.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const TOOLS: &[&str] = &[
    "generator/braid",
    "generator/engine",
    "generator/store",
    "generator/worker",
    "generator/service",
    "generator/cli",
    "xtask",
];

/// The templates' directory, in the workspace and in `embedded.tar`.
const TEMPLATES: &str = "templates";

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    let files = match workspace_root(&manifest_dir) {
        Some((root, members)) => workspace_files(&root, &members),
        None => packaged_files(&manifest_dir.join("embedded.tar"), &out_dir.join("embedded")),
    };
    let mut out = String::new();
    let (templates, crates): (Vec<_>, Vec<_>) =
        files.iter().partition(|(rel, _)| rel.starts_with(&format!("{TEMPLATES}/")));
    for (name, doc, list) in [
        ("FILES", "The embedded workspace files: path relative to the workspace root, bytes.", crates),
        ("TEMPLATES", "Braid's templates: path relative to the workspace root, bytes.", templates),
    ] {
        let _ = writeln!(out, "/// {doc}\npub static {name}: &[(&str, &[u8])] = &[");
        for (rel, path) in list {
            let _ = writeln!(out, "    ({rel:?}, include_bytes!({:?})),", path.display().to_string());
        }
        out.push_str("];\n");
    }
    std::fs::write(out_dir.join("embedded.rs"), out).expect("write embedded.rs");
}

/// The workspace this crate is a member of, with its members, when it is
/// built there (two levels up, `generator/braid` among the members).
fn workspace_root(manifest_dir: &Path) -> Option<(PathBuf, Vec<String>)> {
    let root = manifest_dir.join("../..").canonicalize().ok()?;
    let toml = std::fs::read_to_string(root.join("Cargo.toml")).ok()?;
    let table: toml::Table = toml.parse().expect("the workspace's Cargo.toml is TOML");
    let members = table.get("workspace")?.get("members")?.as_array()?;
    let members: Vec<String> = members.iter().filter_map(|m| m.as_str().map(str::to_string)).collect();
    members.iter().any(|m| m == "generator/braid").then_some((root, members))
}

/// The files to embed from the workspace at `root`, sorted by path.
fn workspace_files(root: &Path, members: &[String]) -> Vec<(String, PathBuf)> {
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for name in ["Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", root.join(name).display());
        files.push((name.to_string(), root.join(name)));
    }
    println!("cargo:rerun-if-changed={}", root.join(TEMPLATES).display());
    walk(&root.join(TEMPLATES), TEMPLATES, &mut files);
    for member in members.iter().filter(|m| !TOOLS.contains(&m.as_str())) {
        let dir = root.join(member);
        println!("cargo:rerun-if-changed={}", dir.display());
        for top in ["Cargo.toml", "build.rs", "manifest.json", "README.md"] {
            if dir.join(top).is_file() {
                files.push((format!("{member}/{top}"), dir.join(top)));
            }
        }
        walk(&dir.join("src"), &format!("{member}/src"), &mut files);
    }
    files.sort();
    files
}

/// The files of `tar` (written by `cargo xtask package`), unpacked under
/// `into`, sorted by path.
fn packaged_files(tar: &Path, into: &Path) -> Vec<(String, PathBuf)> {
    println!("cargo:rerun-if-changed={}", tar.display());
    let archive = std::fs::File::open(tar).unwrap_or_else(|e| {
        panic!(
            "{}: {e}. braid embeds its templates, runtime crates and built-in operations: build it in \
             Braid's workspace, or from a package made by `cargo xtask package`",
            tar.display()
        )
    });
    let _ = std::fs::remove_dir_all(into);
    let mut files = Vec::new();
    for entry in tar::Archive::new(archive).entries().expect("embedded.tar is a tar archive") {
        let mut entry = entry.expect("an entry of embedded.tar");
        let rel = entry.path().expect("a path in embedded.tar").to_string_lossy().into_owned();
        assert!(
            !rel.split('/').any(|part| part == ".." || part.is_empty()) && !rel.starts_with('/'),
            "embedded.tar: `{rel}` is not a plain relative path"
        );
        let path = into.join(&rel);
        std::fs::create_dir_all(path.parent().unwrap()).expect("a directory under OUT_DIR");
        entry.unpack(&path).expect("unpacking embedded.tar");
        files.push((rel, path));
    }
    files.sort();
    files
}

/// Every file under `dir`, sorted, as (`prefix/` and its path relative to
/// `dir`, its path); none when `dir` does not exist.
fn walk(dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>) {
    if !dir.is_dir() {
        return;
    }
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.expect("a readable workspace file");
        if !entry.file_type().is_dir() {
            let rel = entry.path().strip_prefix(dir).expect("under dir").to_string_lossy().replace('\\', "/");
            out.push((format!("{prefix}/{rel}"), entry.path().to_path_buf()));
        }
    }
}
