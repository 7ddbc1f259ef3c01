//! Canonical JSON of manifests, re-exported from `braid-schema` (its one
//! home) under the path the compiler and the service use.

pub use braid_schema::json::*;
