//! Braid's compiler: workflow manifests (parse, check), the registry of
//! operations, code generation, builds and npm packaging. No server or CLI:
//! the service's crates (`braid-store`, `braid-worker`, `braid-service`) and
//! `braid-cli` sit on top of it.

pub mod archive;
pub mod build;
pub mod codegen;
pub mod compile_cache;
pub mod diagnostic;
pub mod fsutil;
pub mod ident;
pub mod lockfile;
pub mod manifest;
pub mod opcheck;
pub mod package;
pub mod process;
pub mod project;
pub mod registry;
pub mod runner;
pub mod sandbox;
pub mod scaffold;
pub mod sources;
pub mod staging;
pub mod target;
pub mod vendor;

/// The operation-manifest schema: type names, platforms, the typed
/// [`OperationManifest`] and its checks, canonical JSON, content ids.
pub use braid_schema as schema;
pub use braid_schema::{content_id, OperationManifest};
pub use registry::Registry;

/// `items` shown one after another with `sep` between them (targets, type
/// names, platforms in messages and listings).
pub fn join<T: std::fmt::Display>(items: &[T], sep: &str) -> String {
    items.iter().map(ToString::to_string).collect::<Vec<_>>().join(sep)
}
