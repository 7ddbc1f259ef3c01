//! `#[operation]` and `#[derive(Value)]`: the proc-macro entry points.
//! They only hand tokens to [`expand::operation`] and [`value::derive`];
//! parsing, checking and building the manifest live in
//! `braid-macro-support` (which Braid also uses to derive a manifest from
//! source), code generation in the modules below.
//!
//! ```ignore
//! /// Hashes bytes into a multihash.
//! #[braid_macros::operation(config(hasher = ["blake3", "sha2-256"]))]
//! pub async fn execute(input: &Bytes, config: &Config) -> Result<Multihash, Error> { ... }
//! ```
//!
//! Next to `execute` it emits `OPERATION` (an `OperationInfo` with the
//! manifest as canonical JSON), `config(...)` to resolve config pairs,
//! `execute_sync`, and with the crate's `wasm` feature a wasm-bindgen
//! interface (`execute`, `executeSync`, `manifest`) with exact TypeScript
//! declarations.

mod expand;
mod local_type;
mod value;
mod wasm;

use proc_macro::TokenStream;

/// Turns `pub async fn execute(inputs by reference.., config: &Config) ->
/// Result<Output, Error>` into a Braid operation. See the crate docs.
#[proc_macro_attribute]
pub fn operation(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    match expand::operation(attr.into(), item.clone()) {
        Ok(tokens) => tokens.into(),
        // Keep the item so the only errors shown are ours, not follow-ups
        // such as unused imports or a missing `execute`.
        Err(error) => {
            let mut tokens = error.into_compile_error();
            tokens.extend(item);
            tokens.into()
        }
    }
}

/// A value type of one's own, for operations' inputs and outputs: a struct
/// with named fields (a record; a JS object keyed by the fields in
/// lowerCamelCase) or an enum of unit variants (a choice; a JS string per
/// variant, in lowerCamelCase). Fields are bytes, strings, numbers, `u64`,
/// `bool`, `Vec`, `Option`, `BTreeMap<String, _>` or other value types.
///
/// ```ignore
/// #[derive(Clone, Debug, PartialEq, braid_macros::Value)]
/// pub struct Image { pub width: u32, pub height: u32, pub pixels: Vec<u8> }
/// ```
///
/// Emits `braid_support::Value` (its TypeScript declaration), bincode's
/// `Encode` and `Decode` through `braid_support::codec`, and where
/// `braid-support`'s `wasm` feature is on `FromJs` and `IntoJs`.
#[proc_macro_derive(Value)]
pub fn derive_value(item: TokenStream) -> TokenStream {
    value::derive(item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}
