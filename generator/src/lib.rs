//! Braid's library: operation manifests and version ids, the registry of
//! operations, and packaging crates as npm packages. The `braid` binary is
//! a thin CLI over it.

pub mod build;
pub mod codegen;
pub mod diagnostic;
pub mod lockfile;
pub mod manifest;
pub mod op_manifest;
pub mod project;
pub mod registry;
pub mod runner;
pub mod service;
pub mod staging;
pub mod vendor;
pub mod wasm_pkg;

pub use op_manifest::{version_id, OperationManifest};
pub use registry::Registry;
