//! Checking the annotated fn's signature and reading the operation's shape
//! from it: input and output type names, the generic parameter of a
//! flow-control operation. Every misuse of the Rust signature is an error on
//! the offending tokens, all of them recorded; what the manifest then says
//! (at least one input, generic inputs only for flow control, ...) is
//! checked by the schema (`manifest.rs`).

use braid_schema::typename::{TypeName, SCALARS};
use proc_macro2::Span;
use syn::{spanned::Spanned, FnArg, GenericArgument, GenericParam, ItemFn, Pat, PathArguments, ReturnType, Type};

use crate::ctxt::Ctxt;

/// An input parameter: `name: &Type`.
#[derive(Debug)]
pub struct Input {
    pub ident: syn::Ident,
    pub name: TypeName,
    /// The parameter's tokens.
    pub span: Span,
}

/// What the signature says about the operation.
#[derive(Debug)]
pub struct Signature {
    /// Fixed inputs, or the one element type of a flow-control operation.
    pub inputs: Vec<Input>,
    /// The parameter list's tokens.
    pub inputs_span: Span,
    /// For `&[&T]`: the operation takes any number (at least one) of `T`.
    pub flow_control: bool,
    pub output: TypeName,
    /// `Result<&'a T, Error>`: the output is borrowed from an input.
    pub borrowed: bool,
    /// The return type's tokens.
    pub output_span: Span,
    /// Type parameters (each must be `Clone`-able data; used by flow control).
    pub type_params: Vec<syn::Ident>,
}

/// Reads the signature of an operation of crate `krate` (its library name,
/// for its own value types), recording every misuse in `cx`; `None` if
/// there was any.
pub fn parse(cx: &Ctxt, item: &ItemFn, krate: &str) -> Option<Signature> {
    let errors = cx.count();
    let sig = &item.sig;
    if sig.asyncness.is_none() {
        cx.error(sig.fn_token.span, "operations are `async fn`: write `pub async fn execute`");
    }
    if sig.ident != "execute" {
        cx.error(sig.ident.span(), "the operation function must be named `execute`");
    }
    if !matches!(item.vis, syn::Visibility::Public(_)) {
        cx.error(sig.fn_token.span, "the operation function must be `pub`");
    }
    if let Some(abi) = &sig.abi {
        cx.error(abi.span(), "operations use the Rust ABI: remove `extern`");
    }
    if let Some(v) = &sig.variadic {
        cx.error(v.span(), "C variadics are not supported; take `&[&T]` for a variable number of inputs");
    }
    if let Some(c) = &sig.constness {
        cx.error(c.span, "operations cannot be `const fn`");
    }
    let mut type_params = Vec::new();
    for param in &sig.generics.params {
        match param {
            GenericParam::Type(t) => type_params.push(t.ident.clone()),
            GenericParam::Lifetime(_) => {}
            GenericParam::Const(c) => cx.error(c.span(), "operations cannot have const generics"),
        }
    }

    let params: Vec<&FnArg> = sig.inputs.iter().collect();
    let inputs: &[&FnArg] = match params.split_last() {
        None => {
            cx.error(
                sig.paren_token.span.join(),
                "expected inputs by reference followed by `config: &Config`, e.g. `(input: &Bytes, config: &Config)`",
            );
            &[]
        }
        Some((config, inputs)) => {
            check_config_param(cx, config);
            inputs
        }
    };

    let mut out = Vec::new();
    let mut flow_control = false;
    for arg in inputs {
        let pt = match arg {
            FnArg::Typed(pt) => pt,
            FnArg::Receiver(r) => {
                cx.error(r.span(), "operations are free functions: remove `self`");
                continue;
            }
        };
        let Pat::Ident(pi) = &*pt.pat else {
            cx.error(pt.pat.span(), "name each input with a plain identifier");
            continue;
        };
        let Type::Reference(r) = &*pt.ty else {
            cx.error(
                pt.ty.span(),
                "inputs are taken by reference (a memoised value is passed without a clone): write `&` before the type",
            );
            continue;
        };
        if let Some(m) = r.mutability {
            cx.error(m.span, "inputs are shared with other operations: take `&T`, not `&mut T`");
            continue;
        }
        let name = if let Type::Slice(slice) = &*r.elem {
            if let Type::Reference(inner) = &*slice.elem {
                // `&[&T]`: a flow-control operation.
                flow_control = true;
                type_name(&inner.elem, &type_params, krate)
            } else {
                // `&[u8]` is Bytes; `&[T]` is a `Vec<T>` borrowed as a slice.
                match last_ident(&slice.elem) {
                    Some(i) if i == "u8" => Ok(TypeName::Bytes),
                    _ => type_name(&slice.elem, &type_params, krate).map(|t| TypeName::Vec(Box::new(t))),
                }
            }
        } else if last_ident(&r.elem).is_some_and(|i| i == "str") {
            // `&str` is a `String` borrowed as a str.
            Ok(TypeName::String)
        } else {
            type_name(&r.elem, &type_params, krate)
        };
        match name {
            Ok(name) => out.push(Input { ident: pi.ident.clone(), name, span: arg.span() }),
            Err(e) => cx.syn_error(e),
        }
    }

    let output = match &sig.output {
        ReturnType::Default => {
            cx.error(sig.paren_token.span.close(), "operations return `Result<Output, Error>`");
            None
        }
        ReturnType::Type(_, ty) => match result_ok_type(ty).and_then(|t| output_type(t, &type_params, krate)) {
            Ok((t, borrowed)) => Some((t, borrowed, ty.span())),
            Err(e) => {
                cx.syn_error(e);
                None
            }
        },
    };
    if cx.count() > errors {
        return None;
    }
    let (output, borrowed, output_span) = output?;
    for p in &type_params {
        let used = out.iter().any(|i| mentions(&i.name, p)) || mentions(&output, p);
        if !used {
            cx.error(p.span(), format!("type parameter `{p}` is not used by an input or the output"));
        }
    }
    if cx.count() > errors {
        return None;
    }
    let inputs_span = if sig.inputs.is_empty() { sig.paren_token.span.join() } else { sig.inputs.span() };
    Some(Signature { inputs: out, inputs_span, flow_control, output, borrowed, output_span, type_params })
}

fn mentions(t: &TypeName, p: &syn::Ident) -> bool {
    match t {
        TypeName::Param(name) => p == name,
        TypeName::Vec(inner) => mentions(inner, p),
        _ => false,
    }
}

fn check_config_param(cx: &Ctxt, arg: &FnArg) {
    let ok = match arg {
        FnArg::Typed(pt) => match &*pt.ty {
            Type::Reference(r) if r.mutability.is_none() => last_ident(&r.elem).is_some_and(|i| i == "Config"),
            _ => false,
        },
        FnArg::Receiver(_) => false,
    };
    if !ok {
        cx.error(arg.span(), "the last parameter is the operation's config: `config: &Config`");
    }
}

/// `Result<T, Error>` -> `T`.
pub fn result_ok_type(ty: &Type) -> syn::Result<&Type> {
    let bad = || syn::Error::new(ty.span(), "operations return `Result<Output, Error>` (braid_support::Error)");
    let Type::Path(tp) = ty else {
        return Err(bad());
    };
    let seg = tp.path.segments.last().ok_or_else(bad)?;
    if seg.ident != "Result" {
        return Err(bad());
    }
    let PathArguments::AngleBracketed(args) = &seg.arguments else {
        return Err(bad());
    };
    let types: Vec<&Type> = args
        .args
        .iter()
        .filter_map(|a| match a {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect();
    match types.as_slice() {
        [ok, e] if last_ident(e).is_some_and(|i| i == "Error") => Ok(ok),
        _ => Err(bad()),
    }
}

/// The output's type name, and whether it is borrowed (`&'a T`, `T` a
/// value type as a step takes it: `&'a Bytes`, not `&'a [u8]`).
fn output_type(ty: &Type, params: &[syn::Ident], krate: &str) -> syn::Result<(TypeName, bool)> {
    let Type::Reference(r) = ty else {
        return type_name(ty, params, krate).map(|t| (t, false));
    };
    if let Some(m) = r.mutability {
        return Err(syn::Error::new(m.span, "a borrowed output is shared: return `&'a T`, not `&'a mut T`"));
    }
    if matches!(&*r.elem, Type::Slice(_)) || last_ident(&r.elem).is_some_and(|i| i == "str") {
        return Err(syn::Error::new(
            r.elem.span(),
            "a borrowed output is a reference to a whole value (`&'a Bytes`, `&'a String`, `&'a Vec<T>`), \
             not a slice or `str`, so that the next operation takes it as it takes the value",
        ));
    }
    type_name(&r.elem, params, krate).map(|t| (t, true))
}

fn last_ident(ty: &Type) -> Option<&syn::Ident> {
    match ty {
        Type::Path(tp) if tp.qself.is_none() => tp.path.segments.last().map(|s| &s.ident),
        _ => None,
    }
}

/// Maps a Rust type to its manifest type name; `Image` and `crate::Image`
/// are value types of `krate`, `op_image::Image` one of crate `op_image`.
pub fn type_name(ty: &Type, params: &[syn::Ident], krate: &str) -> syn::Result<TypeName> {
    let unknown = || {
        syn::Error::new(
            ty.span(),
            format!(
                "not a Braid value type; expected one of {}, `Vec<_>` of one of them, a type parameter, \
                 or a type with `#[derive(braid_macros::Value)]`",
                SCALARS.join(", ")
            ),
        )
    };
    let Type::Path(tp) = ty else {
        return Err(unknown());
    };
    if tp.qself.is_some() {
        return Err(unknown());
    }
    let seg = tp.path.segments.last().ok_or_else(unknown)?;
    let ident = seg.ident.to_string();
    if let PathArguments::AngleBracketed(args) = &seg.arguments {
        if ident != "Vec" || args.args.len() != 1 {
            return Err(unknown());
        }
        let Some(GenericArgument::Type(inner)) = args.args.first() else {
            return Err(unknown());
        };
        if last_ident(inner).is_some_and(|i| i == "u8") {
            return Ok(TypeName::Bytes);
        }
        return Ok(TypeName::Vec(Box::new(type_name(inner, params, krate)?)));
    }
    if !seg.arguments.is_empty() {
        return Err(unknown());
    }
    if tp.path.segments.len() == 1 && params.iter().any(|p| p == &seg.ident) {
        return Ok(TypeName::Param(ident));
    }
    Ok(match ident.as_str() {
        "Bytes" => TypeName::Bytes,
        "String" => TypeName::String,
        "Multihash" => TypeName::Multihash,
        "Cid" => TypeName::Cid,
        "U64" | "u64" => TypeName::U64,
        "Bool" | "bool" => TypeName::Bool,
        _ => crate::value::value_type(&tp.path, krate).ok_or_else(unknown)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    /// The signature, or every error message recorded.
    fn sig(item: ItemFn) -> Result<Signature, Vec<String>> {
        let cx = Ctxt::new();
        let sig = parse(&cx, &item, "op");
        match cx.check() {
            Ok(()) => Ok(sig.expect("no errors, so a signature")),
            Err(e) => {
                assert!(sig.is_none());
                Err(e.into_iter().map(|e| e.to_string()).collect())
            }
        }
    }

    #[test]
    fn reads_a_plain_operation() {
        let s = sig(parse_quote! {
            pub async fn execute(input: &Bytes, config: &Config) -> Result<Multihash, Error> { todo!() }
        })
        .unwrap();
        assert_eq!(s.inputs.len(), 1);
        assert_eq!(s.inputs[0].name, TypeName::Bytes);
        assert_eq!(s.output, TypeName::Multihash);
        assert!(!s.borrowed);
        assert!(!s.flow_control);
    }

    #[test]
    fn reads_a_borrowed_output() {
        let s = sig(parse_quote! {
            pub async fn execute<'a>(image: &'a Image, config: &Config) -> Result<&'a Bytes, Error> { todo!() }
        })
        .unwrap();
        assert_eq!(s.output, TypeName::Bytes);
        assert!(s.borrowed);
        let slice = sig(parse_quote! {
            pub async fn execute<'a>(image: &'a Image, config: &Config) -> Result<&'a [u8], Error> { todo!() }
        })
        .unwrap_err();
        assert!(slice[0].starts_with("a borrowed output is a reference to a whole value (`&'a Bytes`"), "{slice:?}");
        let mutable = sig(parse_quote! {
            pub async fn execute<'a>(image: &'a Image, config: &Config) -> Result<&'a mut Bytes, Error> { todo!() }
        })
        .unwrap_err();
        assert!(mutable[0].contains("not `&'a mut T`"), "{mutable:?}");
    }

    #[test]
    fn reads_a_flow_control_operation() {
        let s = sig(parse_quote! {
            pub async fn execute<T: Clone>(inputs: &[&T], config: &Config) -> Result<Vec<T>, Error> { todo!() }
        })
        .unwrap();
        assert!(s.flow_control);
        assert_eq!(s.inputs[0].name.to_string(), "T");
        assert_eq!(s.output.to_string(), "Vec<T>");
    }

    #[test]
    fn borrowed_forms_map_to_owned_type_names() {
        let s = sig(parse_quote! {
            pub async fn execute(a: &str, b: &[u8], c: &[Bytes], config: &Config) -> Result<Bytes, Error> { todo!() }
        })
        .unwrap();
        let names: Vec<String> = s.inputs.iter().map(|i| i.name.to_string()).collect();
        assert_eq!(names, ["String", "Bytes", "Vec<Bytes>"]);
        assert!(!s.flow_control);
    }

    #[test]
    fn maps_rust_spellings() {
        let t: Type = parse_quote!(Vec<u8>);
        assert_eq!(type_name(&t, &[], "op").unwrap(), TypeName::Bytes);
        let t: Type = parse_quote!(::alloc::vec::Vec<braid_support::Cid>);
        assert_eq!(type_name(&t, &[], "op").unwrap().to_string(), "Vec<Cid>");
        let t: Type = parse_quote!(u64);
        assert_eq!(type_name(&t, &[], "op").unwrap(), TypeName::U64);
        let t: Type = parse_quote!(HashMap<u8, u8>);
        assert!(type_name(&t, &[], "op").is_err());
    }

    #[test]
    fn rejects_misuse_with_a_reason() {
        let cases: Vec<(ItemFn, &str)> = vec![
            (
                parse_quote!(
                    pub fn execute(i: &Bytes, c: &Config) -> Result<Bytes, Error> {}
                ),
                "are `async fn`",
            ),
            (
                parse_quote!(
                    pub async fn run(i: &Bytes, c: &Config) -> Result<Bytes, Error> {}
                ),
                "named `execute`",
            ),
            (
                parse_quote!(
                    async fn execute(i: &Bytes, c: &Config) -> Result<Bytes, Error> {}
                ),
                "must be `pub`",
            ),
            (
                parse_quote!(
                    pub async fn execute(i: Bytes, c: &Config) -> Result<Bytes, Error> {}
                ),
                "by reference",
            ),
            (
                parse_quote!(
                    pub async fn execute(i: &mut Bytes, c: &Config) -> Result<Bytes, Error> {}
                ),
                "not `&mut T`",
            ),
            (
                parse_quote!(
                    pub async fn execute(i: &Bytes) -> Result<Bytes, Error> {}
                ),
                "config: &Config",
            ),
            (
                parse_quote!(
                    pub async fn execute(i: &Bytes, c: &Config) -> Bytes {}
                ),
                "Result<Output, Error>",
            ),
            (
                parse_quote!(
                    pub async fn execute(i: &Bytes, c: &Config) {}
                ),
                "Result<Output, Error>",
            ),
            (
                parse_quote!(
                    pub async fn execute(i: &f32, c: &Config) -> Result<Bytes, Error> {}
                ),
                "not a Braid value type",
            ),
            (
                parse_quote!(
                    pub async fn execute<T, U>(i: &[&T], c: &Config) -> Result<Vec<T>, Error> {}
                ),
                "`U` is not used",
            ),
        ];
        for (item, expected) in cases {
            let msg = sig(item).unwrap_err();
            assert_eq!(msg.len(), 1, "{msg:?}");
            assert!(msg[0].contains(expected), "expected {expected:?} in {msg:?}");
        }
    }

    #[test]
    fn reports_every_misuse_at_once() {
        let msgs = sig(parse_quote!(
            fn run(a: Bytes, b: &mut Bytes, c: &f32, d: &Bytes) -> Bytes {}
        ))
        .unwrap_err();
        let expected = [
            "are `async fn`",
            "named `execute`",
            "must be `pub`",
            "config: &Config",
            "by reference",
            "not `&mut T`",
            "not a Braid value type",
            "Result<Output, Error>",
        ];
        assert_eq!(msgs.len(), expected.len(), "{msgs:?}");
        for (msg, expected) in msgs.iter().zip(expected) {
            assert!(msg.contains(expected), "expected {expected:?} in {msg:?}");
        }
    }

    #[test]
    fn leaves_manifest_rules_to_the_schema() {
        // Read as written; `manifest.rs` reports what the schema says of them.
        let s = sig(parse_quote!(
            pub async fn execute(c: &Config) -> Result<Bytes, Error> {}
        ))
        .unwrap();
        assert!(s.inputs.is_empty());
        let s = sig(parse_quote!(
            pub async fn execute<T>(a: &Bytes, i: &[&T], c: &Config) -> Result<Vec<T>, Error> {}
        ))
        .unwrap();
        assert!(s.flow_control && s.inputs.len() == 2);
    }
}
