//! Workflow manifests (DESIGN.md, "Workflow manifest"): the model
//! ([`model`]), reading untrusted JSON into it with every problem reported at
//! once ([`parse`]), and checking it against the registry: operations,
//! versions, config, references and types ([`check`]). The result of a
//! successful check is a [`check::Workflow`], which code generation takes.

pub mod check;
pub mod model;
pub mod parse;

pub use check::{validate, Workflow};
pub use model::WorkflowManifest;

/// Largest manifest accepted, in bytes.
pub const MAX_MANIFEST_BYTES: usize = 1 << 20;
/// Most segments in a workflow.
pub const MAX_SEGMENTS: usize = 128;
/// Most operations in one segment.
pub const MAX_OPERATIONS_PER_SEGMENT: usize = 128;
