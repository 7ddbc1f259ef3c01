//! `braid-macro-support`: everything `#[operation]` knows about an
//! operation, as a library (as `wasm-bindgen-macro-support` is to
//! `wasm-bindgen-macro`). The proc-macro crate `braid-macros` only expands;
//! the parsing, checks and manifest building live here, so that Braid can
//! derive an operation crate's manifest from its source with the very same
//! code ([`derive_manifest`]) instead of compiling the crate.
//!
//! - [`args`]: the attribute's arguments;
//! - [`signature`]: the fn's signature, its input and output types;
//! - [`crate_info`]: what the crate declares (package, features, `no_std`);
//! - [`manifest`]: the `braid_schema::OperationManifest` built from these,
//!   with the schema's problems on the tokens they came from;
//! - [`ctxt`]: the collector of every error;
//! - [`check`]: the one path from attribute and fn to manifest;
//! - [`value`]: `#[derive(Value)]`'s value types and their TypeScript;
//! - [`derive_manifest`] ([`derive`], [`cargo_toml`], [`error`]): the same
//!   from a crate's files, with errors at file, line and column (the
//!   default feature `derive`, which braid-macros leaves off).

pub mod args;
pub mod cargo_toml;
pub mod check;
pub mod crate_info;
pub mod ctxt;
#[cfg(feature = "derive")]
pub mod derive;
pub mod error;
pub mod manifest;
pub mod signature;
pub mod value;

pub use check::{check, Checked};
#[cfg(feature = "derive")]
pub use derive::derive_manifest;
pub use error::{DeriveError, DeriveErrors, Location};
