//! `#[operation]`: the proc-macro entry point. It only hands tokens to
//! [`expand::operation`]; parsing, checking and building the manifest live
//! in `braid-macro-support` (which Braid also uses to derive a manifest from
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
