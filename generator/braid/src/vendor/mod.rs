//! Crates as standalone sets of files, and vendoring: a generated crate
//! carries the sources of the runtime crates and of the operations it uses
//! under `vendor/<crate>-<id>/` (named by their content, see [`dir_name`]),
//! linked by path, so it builds wherever it is unpacked, without Braid's
//! repository. [`standalone`] makes a workspace member standalone,
//! [`embedded`] holds the crates this `braid` ships, and `link` points
//! their dependencies at each other's copies.

mod embedded;
mod link;
mod standalone;

use std::collections::BTreeMap;

pub use self::embedded::{embedded, embedded_id, runtime_crate, seed_lockfile, Embedded};
pub use self::link::{install_runtime, vendor, ToVendor};
pub use self::standalone::{bundled, dependencies, manifests, package_id, standalone, Workspace, MAX_BUNDLE_DEPTH};
use crate::fsutil::FsError;

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

fn bad(path: &str, reason: impl Into<String>) -> VendorError {
    VendorError::Manifest { path: path.to_string(), reason: reason.into() }
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
