//! The repository's own checks, in Rust rather than in the Makefile:
//! [`modules`] (import cycles between a crate's modules) and files over a
//! size limit, both run by `cargo xtask modules` and by this crate's test;
//! [`tasks`], the Makefile's steps that are more than one command; and
//! [`package`], the crates users install, packaged and installed from
//! their packages.

pub mod modules;
pub mod package;
pub mod tasks;

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

/// The crates whose files stay under [`MAX_LINES`]: the compiler library
/// and the service with its store and worker, where a newcomer reads most.
pub const SIZED: &[&str] = &["generator/braid", "generator/service", "generator/store", "generator/worker"];
pub const MAX_LINES: usize = 600;

/// The workspace's root: the directory above this crate.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}

/// The workspace's member directories, from its `Cargo.toml`.
pub fn members(root: &Path) -> Result<Vec<PathBuf>> {
    let text = std::fs::read_to_string(root.join("Cargo.toml")).context("reading the workspace's Cargo.toml")?;
    let manifest: toml::Table = text.parse().context("parsing the workspace's Cargo.toml")?;
    let members = manifest
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .context("the workspace's Cargo.toml has no workspace.members")?;
    Ok(members.iter().filter_map(|m| m.as_str()).map(|m| root.join(m)).collect())
}

/// Every cycle in every crate of the workspace, and every oversized file.
pub fn check_modules(root: &Path) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    for dir in members(root)? {
        for crate_root in ["src/lib.rs", "src/main.rs"].map(|f| dir.join(f)).into_iter().filter(|f| f.is_file()) {
            let krate =
                modules::read_crate(&crate_root).with_context(|| format!("reading {}", crate_root.display()))?;
            for cycle in modules::cycles(&krate) {
                problems.push(describe(root, &crate_root, &cycle));
            }
            let rel = dir.strip_prefix(root).unwrap_or(&dir);
            if SIZED.iter().any(|s| Path::new(s) == rel) {
                for file in krate.modules.values().collect::<std::collections::BTreeSet<_>>() {
                    let lines = std::fs::read_to_string(file)?.lines().count();
                    if lines > MAX_LINES {
                        problems.push(format!(
                            "{}: {lines} lines (at most {MAX_LINES}): split it by concept",
                            file.strip_prefix(root).unwrap_or(file).display()
                        ));
                    }
                }
            }
        }
    }
    Ok(problems)
}

fn describe(root: &Path, crate_root: &Path, cycle: &modules::Cycle) -> String {
    let within = if cycle.parent.is_empty() { "the crate root".to_string() } else { cycle.parent.join("::") };
    let mut text = format!(
        "{}: modules {} (in {within}) import each other:",
        crate_root.strip_prefix(root).unwrap_or(crate_root).display(),
        cycle.members.join(", "),
    );
    for r in &cycle.evidence {
        text.push_str(&format!(
            "\n  {} -> {}: {} writes {}",
            r.from.join("::"),
            r.to.join("::"),
            r.file.strip_prefix(root).unwrap_or(&r.file).display(),
            r.written
        ));
    }
    text
}
