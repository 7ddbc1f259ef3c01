//! Workflow manifests: the model
//! ([`model`]), reading untrusted JSON into it with every problem reported at
//! once ([`parse`]), and checking it against the registry: operations,
//! versions, config, references and types ([`check`]). The result of a
//! successful check is a [`check::Workflow`], which code generation takes.
//! [`schema`] is their JSON Schema, for editors.

pub mod check;
mod json;
pub mod model;
pub mod parse;
pub mod schema;
pub mod workflow;

pub use check::{validate, validate_bytes};
pub use json::{text, utf8};
pub use model::WorkflowManifest;
pub use schema::json_schema;
pub use workflow::Workflow;

// The limits. Each one keeps validation linear in the manifest's size and
// every valid manifest buildable on every target its operations allow within
// rustc's budget (README, "Limits"); exceeding one is a diagnostic at the
// pointer of the offending value.

/// Largest manifest accepted, in bytes.
pub const MAX_MANIFEST_BYTES: usize = 1 << 20;
/// Most segments in a workflow.
pub const MAX_SEGMENTS: usize = 128;
/// Most operations in one segment.
pub const MAX_OPERATIONS_PER_SEGMENT: usize = 128;
/// Most operations in the whole workflow.
pub const MAX_OPERATIONS: usize = 1024;
/// Most inputs of one segment (that is, of its first operation).
pub const MAX_SEGMENT_INPUTS: usize = 64;
/// Most external inputs (`-1`) of the whole workflow.
pub const MAX_EXTERNAL_INPUTS: usize = 64;
/// Deepest nesting of `Vec` in a value type (`Vec<Vec<Bytes>>` is 2).
pub const MAX_TYPE_NESTING: usize = 8;
/// Most diagnostics reported for one manifest; one more says how many
/// were left out.
pub const MAX_DIAGNOSTICS: usize = 100;
