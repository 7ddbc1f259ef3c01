//! How a manifest type is written in Rust inside an operation's own crate,
//! for the code [`crate::expand`] and [`crate::wasm`] generate there.

use braid_schema::TypeName;
use proc_macro2::TokenStream;
use quote::quote;

/// A manifest type as Rust names it inside crate `own`: its own value types
/// are `crate::Name` there (`::own::Name` elsewhere: a crate cannot name
/// itself), type parameters are `param`. Value types must be reachable from
/// the crate root, where generated workflows look for them.
pub fn local_type(t: &TypeName, own: &str, param: &str) -> TokenStream {
    fn text(t: &TypeName, own: &str, param: &str) -> String {
        match t {
            TypeName::Vec(inner) => format!("::braid_support::__private::Vec<{}>", text(inner, own, param)),
            TypeName::Param(_) => param.into(),
            TypeName::Named { krate, name } if krate == own => format!("crate::{name}"),
            other => other.rust_type(),
        }
    }
    syn::parse_str::<syn::Type>(&text(t, own, param)).map(|t| quote!(#t)).unwrap_or_else(|e| e.to_compile_error())
}
