//! Checking the annotated fn's signature and reading the operation's shape
//! from it: input and output type names, the generic parameter of a
//! flow-control operation. Every misuse is an error on the offending tokens.

use braid_support::typename::{TypeName, SCALARS};
use syn::{spanned::Spanned, FnArg, GenericArgument, GenericParam, ItemFn, Pat, PathArguments, ReturnType, Type};

/// An input parameter: `name: &Type`.
#[derive(Debug)]
pub struct Input {
    pub ident: syn::Ident,
    pub name: TypeName,
}

/// What the signature says about the operation.
#[derive(Debug)]
pub struct Signature {
    /// Fixed inputs, or the one element type of a flow-control operation.
    pub inputs: Vec<Input>,
    /// For `&[&T]`: the operation takes any number (at least one) of `T`.
    pub flow_control: bool,
    pub output: TypeName,
    /// Type parameters (each must be `Clone`-able data; used by flow control).
    pub type_params: Vec<syn::Ident>,
}

fn err<T>(span: impl Spanned, msg: impl std::fmt::Display) -> syn::Result<T> {
    Err(syn::Error::new(span.span(), msg))
}

pub fn parse(item: &ItemFn) -> syn::Result<Signature> {
    let sig = &item.sig;
    if sig.asyncness.is_none() {
        return err(sig.fn_token, "operations are `async fn`: write `pub async fn execute`");
    }
    if sig.ident != "execute" {
        return err(&sig.ident, "the operation function must be named `execute`");
    }
    if !matches!(item.vis, syn::Visibility::Public(_)) {
        return err(sig.fn_token, "the operation function must be `pub`");
    }
    if let Some(abi) = &sig.abi {
        return err(abi, "operations use the Rust ABI: remove `extern`");
    }
    if let Some(v) = &sig.variadic {
        return err(v, "C variadics are not supported; take `&[&T]` for a variable number of inputs");
    }
    if let Some(c) = &sig.constness {
        return err(c, "operations cannot be `const fn`");
    }
    let mut type_params = Vec::new();
    for param in &sig.generics.params {
        match param {
            GenericParam::Type(t) => type_params.push(t.ident.clone()),
            GenericParam::Lifetime(_) => {}
            GenericParam::Const(c) => return err(c, "operations cannot have const generics"),
        }
    }

    let params: Vec<&FnArg> = sig.inputs.iter().collect();
    if let Some(FnArg::Receiver(r)) = params.first() {
        return err(r, "operations are free functions: remove `self`");
    }
    let Some((config, inputs)) = params.split_last() else {
        return err(
            &sig.inputs,
            "expected inputs by reference followed by `config: &Config`, e.g. `(input: &Bytes, config: &Config)`",
        );
    };
    check_config_param(config)?;
    if inputs.is_empty() {
        return err(
            &sig.inputs,
            "an operation takes at least one input before `config: &Config`, e.g. `input: &Bytes`",
        );
    }

    let mut out = Vec::new();
    let mut flow_control = false;
    for arg in inputs {
        let FnArg::Typed(pt) = arg else { unreachable!("receiver checked above") };
        let Pat::Ident(pi) = &*pt.pat else {
            return err(&pt.pat, "name each input with a plain identifier");
        };
        let Type::Reference(r) = &*pt.ty else {
            return err(
                &pt.ty,
                "inputs are taken by reference (a memoised value is passed without a clone): write `&` before the type",
            );
        };
        if let Some(m) = r.mutability {
            return err(m, "inputs are shared with other operations: take `&T`, not `&mut T`");
        }
        if let Type::Slice(slice) = &*r.elem {
            let Type::Reference(inner) = &*slice.elem else {
                // `&[u8]` is Bytes; `&[T]` is a `Vec<T>` borrowed as a slice.
                let name = match last_ident(&slice.elem) {
                    Some(i) if i == "u8" => TypeName::Bytes,
                    _ => TypeName::Vec(Box::new(type_name(&slice.elem, &type_params)?)),
                };
                out.push(Input { ident: pi.ident.clone(), name });
                continue;
            };
            // `&[&T]`: a flow-control operation.
            if inputs.len() != 1 {
                return err(arg, "a flow-control operation takes exactly one `&[&T]` before `config`");
            }
            let name = type_name(&inner.elem, &type_params)?;
            flow_control = true;
            out.push(Input { ident: pi.ident.clone(), name });
        } else if last_ident(&r.elem).is_some_and(|i| i == "str") {
            // `&str` is a `String` borrowed as a str.
            out.push(Input { ident: pi.ident.clone(), name: TypeName::String });
        } else {
            out.push(Input { ident: pi.ident.clone(), name: type_name(&r.elem, &type_params)? });
        }
    }

    let output = match &sig.output {
        ReturnType::Default => return err(sig.paren_token.span.close(), "operations return `Result<Output, Error>`"),
        ReturnType::Type(_, ty) => result_ok_type(ty)?,
    };
    let output = type_name(output, &type_params)?;
    for p in &type_params {
        let used = out.iter().any(|i| mentions(&i.name, p)) || mentions(&output, p);
        if !used {
            return err(p, format!("type parameter `{p}` is not used by an input or the output"));
        }
    }
    if !flow_control && out.iter().any(|i| i.name.is_generic()) {
        return err(&sig.inputs, "generic inputs are only for flow-control operations taking `&[&T]`");
    }
    Ok(Signature { inputs: out, flow_control, output, type_params })
}

fn mentions(t: &TypeName, p: &syn::Ident) -> bool {
    match t {
        TypeName::Param(name) => p == name,
        TypeName::Vec(inner) => mentions(inner, p),
        _ => false,
    }
}

fn check_config_param(arg: &FnArg) -> syn::Result<()> {
    let ok = match arg {
        FnArg::Typed(pt) => match &*pt.ty {
            Type::Reference(r) if r.mutability.is_none() => last_ident(&r.elem).is_some_and(|i| i == "Config"),
            _ => false,
        },
        FnArg::Receiver(_) => false,
    };
    if ok {
        Ok(())
    } else {
        err(arg, "the last parameter is the operation's config: `config: &Config`")
    }
}

/// `Result<T, Error>` -> `T`.
fn result_ok_type(ty: &Type) -> syn::Result<&Type> {
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

fn last_ident(ty: &Type) -> Option<&syn::Ident> {
    match ty {
        Type::Path(tp) if tp.qself.is_none() => tp.path.segments.last().map(|s| &s.ident),
        _ => None,
    }
}

/// Maps a Rust type to its manifest type name.
pub fn type_name(ty: &Type, params: &[syn::Ident]) -> syn::Result<TypeName> {
    let unknown = || {
        syn::Error::new(
            ty.span(),
            format!(
                "not a Braid value type; expected one of {}, `Vec<_>` of one of them, or a type parameter",
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
        return Ok(TypeName::Vec(Box::new(type_name(inner, params)?)));
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
        _ => return Err(unknown()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn sig(item: ItemFn) -> syn::Result<Signature> {
        parse(&item)
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
        assert!(!s.flow_control);
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
        assert_eq!(type_name(&t, &[]).unwrap(), TypeName::Bytes);
        let t: Type = parse_quote!(::alloc::vec::Vec<braid_support::Cid>);
        assert_eq!(type_name(&t, &[]).unwrap().to_string(), "Vec<Cid>");
        let t: Type = parse_quote!(u64);
        assert_eq!(type_name(&t, &[]).unwrap(), TypeName::U64);
        let t: Type = parse_quote!(HashMap<u8, u8>);
        assert!(type_name(&t, &[]).is_err());
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
                    pub async fn execute(c: &Config) -> Result<Bytes, Error> {}
                ),
                "at least one input",
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
                    pub async fn execute<T>(i: &T, c: &Config) -> Result<T, Error> {}
                ),
                "only for flow-control",
            ),
            (
                parse_quote!(
                    pub async fn execute<T, U>(i: &[&T], c: &Config) -> Result<Vec<T>, Error> {}
                ),
                "`U` is not used",
            ),
            (
                parse_quote!(
                    pub async fn execute<T>(a: &Bytes, i: &[&T], c: &Config) -> Result<Vec<T>, Error> {}
                ),
                "exactly one",
            ),
        ];
        for (item, expected) in cases {
            let msg = sig(item).unwrap_err().to_string();
            assert!(msg.contains(expected), "expected {expected:?} in {msg:?}");
        }
    }
}
