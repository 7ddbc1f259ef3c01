//! Embeds the sources `braid` ships: the runtime crates every operation and
//! generated crate builds on (braid-schema, braid-support, braid-macros and
//! what they use) and the built-in operations, with the workspace's
//! `Cargo.toml` (for inherited fields) and `Cargo.lock` (the seed of every
//! generated crate's lock). At run time they are registered like any
//! user's operation (`registry`), so the binary needs no source checkout.
//!
//! Members come from the workspace's `members` list; the tools themselves
//! (`generator/braid`, `generator/engine`, `generator/service`,
//! `generator/cli`) and the repository's own checks (`xtask`) are left out.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const TOOLS: &[&str] = &["generator/braid", "generator/engine", "generator/service", "generator/cli", "xtask"];

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest_dir.join("../..").canonicalize().expect("the workspace root");
    let root_toml = std::fs::read_to_string(root.join("Cargo.toml")).expect("the workspace Cargo.toml");
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for name in ["Cargo.toml", "Cargo.lock"] {
        files.push((name.to_string(), root.join(name)));
    }
    for member in members(&root_toml) {
        if TOOLS.contains(&member.as_str()) {
            continue;
        }
        let dir = root.join(&member);
        println!("cargo:rerun-if-changed={}", dir.display());
        for top in ["Cargo.toml", "build.rs", "manifest.json", "README.md"] {
            if dir.join(top).is_file() {
                files.push((format!("{member}/{top}"), dir.join(top)));
            }
        }
        walk(&dir.join("src"), &format!("{member}/src"), &mut files);
    }
    println!("cargo:rerun-if-changed={}", root.join("Cargo.toml").display());
    println!("cargo:rerun-if-changed={}", root.join("Cargo.lock").display());
    files.sort();
    let mut out = String::from("/// The embedded workspace files: path relative to the workspace root, bytes.\n");
    out.push_str("pub static FILES: &[(&str, &[u8])] = &[\n");
    for (rel, path) in &files {
        let _ = writeln!(out, "    ({rel:?}, include_bytes!({:?})),", path.display().to_string());
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").unwrap()).join("embedded.rs");
    std::fs::write(dest, out).expect("write embedded.rs");
}

/// The quoted strings of the workspace's `members = [...]` list.
fn members(toml: &str) -> Vec<String> {
    let start = toml.find("members = [").expect("a members list") + "members = [".len();
    let end = start + toml[start..].find(']').expect("the end of the members list");
    toml[start..end]
        .split(',')
        .map(|s| s.trim().trim_matches('"').to_string())
        .filter(|s| !s.is_empty() && !s.starts_with('#'))
        .collect()
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
