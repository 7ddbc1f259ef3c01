//! The operation-manifest schema, typed and checked in one place: what the
//! `#[operation]` macro writes, what the compiler reads and what the runtime
//! names. `no_std` + `alloc`.
//!
//! - [`TypeName`]: value types in manifests (`Bytes`, `Vec<Cid>`, `T`,
//!   `op_image::Image`);
//! - [`TypeDef`]: value types of one's own (records, choices), their
//!   fields and TypeScript declarations;
//! - [`Platform`]: where an operation runs (`native`, `nostd`, `wasm`);
//! - [`ConfigKey`] and [`value_feature`]: config keys and the cargo features
//!   that gate their values;
//! - [`OperationManifest`]: the manifest with its checks
//!   ([`OperationManifest::problems`]), each [`Problem`] naming its [`Field`];
//! - [`json::canonical`] (feature `json`): the canonical JSON manifests are
//!   hashed in;
//! - [`RunErrorKind`]: how a workflow component's run fails (`run-error`);
//! - [`wire`] (feature `wire`): a run's values as JSON and packed, and a
//!   request's inputs, the same for every host;
//! - [`content_id`] (feature `content-id`): CIDv1 (raw, blake3, base32) of
//!   bytes, operation version ids among them.
//!
//! [`SCHEMA_VERSION`] changes whenever the manifest's shape or its checks
//! change; `tests/schema_version.rs` fails until it does.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod config;
mod content;
#[cfg(feature = "json")]
pub mod json;
mod json_text;
pub mod manifest;
pub mod platform;
mod run_error;
mod text;
pub mod typename;
pub mod value;
#[cfg(feature = "wire")]
pub mod wire;

pub use config::{value_feature, ConfigKey};
#[cfg(feature = "content-id")]
pub use content::content_id;
pub use content::is_content_id;
pub use json_text::{write_json_float, write_json_string};
pub use manifest::{Field, Kind, ManifestError, OperationManifest, Problem, FLOWCONTROL};
pub use platform::Platform;
pub use run_error::{RunErrorKind, RUN_ERROR, RUN_ERROR_KIND};
pub use text::{camel, is_crate_name, is_lower_identifier, lib_name, name_key, RUST_KEYWORDS};
pub use typename::{ParseTypeError, TypeName};
pub use value::{FieldDef, FieldType, TypeDef};

/// The version of the operation-manifest schema: bumped whenever a field,
/// its JSON form, the canonical form or a check changes. The committed
/// snapshot `tests/schema/v<N>.txt` records what version N is.
pub const SCHEMA_VERSION: u32 = 5;
