//! Type names of operation manifests, re-exported from `braid-schema`
//! (their one home) under the path operations and generated code use.

pub use braid_schema::typename::*;
