//! Braid's compiler: workflow manifests (parse, check), the registry of
//! operations, code generation, builds and npm packaging. No server or CLI:
//! `braid-service` and `braid-cli` sit on top of it.

pub mod build;
pub mod codegen;
pub mod diagnostic;
pub mod fsutil;
pub mod lockfile;
pub mod manifest;
pub mod op_manifest;
pub mod process;
pub mod project;
pub mod registry;
pub mod runner;
pub mod staging;
pub mod vendor;
pub mod wasm_pkg;

pub use op_manifest::{version_id, OperationManifest};
pub use registry::Registry;
