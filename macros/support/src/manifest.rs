//! The operation manifest built from the crate, the attribute and the
//! signature as `braid_schema::OperationManifest` (the one schema the
//! compiler reads too), with every problem the schema finds reported on the
//! tokens it came from. Its canonical JSON (`braid_schema::json`) is what
//! `OPERATION.manifest_json` holds and what the version id hashes.

use braid_schema::{Field, Kind, OperationManifest, Problem, TypeName, FLOWCONTROL};
use proc_macro2::Span;

use crate::{args::Args, crate_info::CrateInfo, ctxt::Ctxt, signature::Signature};

/// What an `#[operation]` in a types-only crate is told.
pub(crate) const TYPES_ONLY: &str = "this crate's Cargo.toml says `[package.metadata.braid] kind = \"types\"`, \
     a crate of value types only: put the operation in a crate of its own that depends on this one";

/// The manifest's name of input `k`: its parameter's name without a
/// leading `_` or `r#`, or `input<k>` when that is no lower-case ASCII
/// identifier (Rust allows other names, the manifest's readers expect these).
fn input_name(k: usize, ident: &syn::Ident) -> String {
    use syn::ext::IdentExt as _;
    let name = ident.unraw().to_string();
    let name = name.trim_start_matches('_');
    if braid_schema::is_lower_identifier(name) {
        name.to_string()
    } else {
        format!("input{k}")
    }
}

/// Builds the manifest and records in `cx` every problem the schema finds.
/// `sig` is `None` when the signature had errors (already recorded): the
/// manifest then has placeholder types and problems about them are not
/// reported. `item` is the span of the fn's name, for what comes from
/// Cargo.toml rather than from tokens.
pub fn build(cx: &Ctxt, info: &CrateInfo, args: &Args, sig: Option<&Signature>, item: Span) -> OperationManifest {
    let flow_control = sig.is_some_and(|s| s.flow_control);
    // Groups sorted (stably, so a repeated group's second occurrence stays
    // second), each with the span it came from.
    let mut groups: Vec<(String, Span)> = args.groups.iter().map(|g| (g.value(), g.span())).collect();
    if flow_control {
        groups.push((FLOWCONTROL.into(), item));
    }
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    let manifest = OperationManifest {
        name: info.name.clone(),
        kind: Kind::Operation,
        version: info.version.clone(),
        description: args.description.as_ref().map_or_else(|| info.description.clone(), |d| d.value()),
        inputs: sig.map_or_else(|| vec![TypeName::Bytes], |s| s.inputs.iter().map(|i| i.name.clone()).collect()),
        input_names: sig
            .map_or_else(Vec::new, |s| s.inputs.iter().enumerate().map(|(k, i)| input_name(k, &i.ident)).collect()),
        output: Some(sig.map_or(TypeName::Bytes, |s| s.output.clone())),
        borrows: sig.is_some_and(|s| s.borrowed),
        stream: args.stream.is_some(),
        config: args
            .config
            .iter()
            .map(|c| (c.key.to_string(), c.allowed.iter().map(|v| v.value()).collect()))
            .collect(),
        groups: groups.iter().map(|(g, _)| g.clone()).collect(),
        features: info.features.clone(),
        targets: info.targets(),
        repository: info.repository.clone(),
        license: info.license.clone(),
        source: None,
        types: info.types.clone(),
    };
    if info.kind == Kind::Types {
        cx.error(item, TYPES_ONLY);
    }
    for problem in manifest.problems() {
        let span = match problem.field() {
            Field::Name | Field::Kind | Field::Version | Field::Feature(_) | Field::Target(_) => Some(item),
            Field::Description => Some(args.description.as_ref().map_or(item, |d| d.span())),
            // A signature that failed to parse was reported already, and
            // its placeholder types would only add noise.
            Field::Inputs => sig.map(|s| s.inputs_span),
            Field::Input(i) => sig.map(|s| s.inputs[i].span),
            Field::Output => sig.map(|s| s.output_span),
            // No values: the empty list; a bad key: the key. A key the
            // attribute does not have (never expected) falls back to the fn.
            Field::ConfigKey(key) => Some(decl(args, &key).map_or(item, |d| {
                if matches!(problem, Problem::NoConfigValues { .. }) {
                    d.list
                } else {
                    d.key.span()
                }
            })),
            Field::ConfigValue(key, i) => Some(decl(args, &key).map_or(item, |d| d.allowed[i].span())),
            Field::Group(i) => Some(groups[i].1),
            // The macro never sets a source; a type's own problems are
            // reported by its derive, where it is.
            Field::Source | Field::Type(_) => Some(item),
        };
        if let Some(span) = span {
            cx.error(span, message(&problem, args));
        }
    }
    manifest
}

fn decl<'a>(args: &'a Args, key: &str) -> Option<&'a crate::args::ConfigDecl> {
    args.config.iter().find(|c| c.key == key)
}

/// The schema's message, with what to write in Rust where that helps.
fn message(problem: &Problem, args: &Args) -> String {
    let hint = match problem {
        Problem::Description if args.description.is_none() => {
            "; add a `description = \"...\"` argument or a package description in Cargo.toml"
        }
        Problem::NoInputs => ", e.g. `input: &Bytes` before `config: &Config`",
        Problem::FlowControlInputs { .. } => "; a flow-control operation takes one `&[&T]` before `config`",
        Problem::GenericInput { .. } => "; a flow-control operation takes `inputs: &[&T]`",
        Problem::UndefinedType { .. } => {
            "; derive it (`#[derive(braid_macros::Value)]`) in this crate, name another crate's type by its path \
             (`op_image::Image`: the macro does not see `use` items), or name a Braid type such as Bytes"
        }
        _ => "",
    };
    format!("{problem}{hint}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn info(features: &[&str]) -> CrateInfo {
        CrateInfo {
            name: "op".into(),
            version: "0.1.0".into(),
            description: "d".into(),
            repository: String::new(),
            license: String::new(),
            features: features.iter().map(|f| f.to_string()).collect(),
            no_std: true,
            types: Default::default(),
            kind: Kind::Operation,
        }
    }

    /// The manifest and every message recorded.
    fn build_with(info: &CrateInfo, attr: proc_macro2::TokenStream) -> (OperationManifest, Vec<String>) {
        let cx = Ctxt::new();
        let args = crate::args::parse(&cx, attr);
        let item: syn::ItemFn = syn::parse_quote!(
            pub async fn execute(i: &Bytes, c: &Config) -> Result<Cid, Error> {}
        );
        let sig = crate::signature::parse(&cx, &item, "op");
        let manifest = build(&cx, info, &args, sig.as_ref(), Span::call_site());
        let errors = cx.check().err().map(|e| e.into_iter().map(|e| e.to_string()).collect()).unwrap_or_default();
        (manifest, errors)
    }

    #[test]
    fn input_names_are_the_parameters_plain_names() {
        let ident = |s: &str| syn::Ident::new_raw(s, Span::call_site());
        assert_eq!(input_name(0, &syn::Ident::new("_photo", Span::call_site())), "photo");
        assert_eq!(input_name(1, &ident("type")), "type");
        assert_eq!(input_name(2, &syn::Ident::new("Photo", Span::call_site())), "input2");
        assert_eq!(input_name(3, &syn::Ident::new("_", Span::call_site())), "input3");
    }

    #[test]
    fn builds_the_typed_manifest() {
        let (m, errors) =
            build_with(&info(&["std"]), quote!(groups = ["SYS"], config(hasher = ["blake3", "sha2-256"])));
        assert_eq!(errors, Vec::<String>::new());
        assert_eq!(
            m.canonical_json(),
            r#"{"config":{"hasher":["blake3","sha2-256"]},"description":"d","features":["std"],"groups":["SYS"],"input_names":["i"],"inputs":["Bytes"],"license":"","name":"op","output":"Cid","repository":"","targets":["native","nostd"],"version":"0.1.0"}"#
        );
    }

    #[test]
    fn reports_every_schema_problem() {
        let (_, errors) = build_with(
            &info(&["hasher-blake3"]),
            quote!(groups = ["sys", "A", "A"], config(hasher = ["blake3", "sha2-256"], base = [], codec = ["x", "x"])),
        );
        assert_eq!(
            errors,
            [
                "config `base` needs at least one allowed value; the first is the default",
                "config `codec` lists \"x\" twice",
                "config `hasher` gates values behind cargo features, but the crate declares no `hasher-sha2-256`; \
                 declare one feature per allowed value, or none",
                "group \"A\" is listed twice",
                "group \"sys\" is not an UPPER_CASE word such as \"SYS\"",
            ]
        );
        let mut no_description = info(&[]);
        no_description.description.clear();
        let (_, errors) = build_with(&no_description, quote!());
        assert_eq!(
            errors,
            ["the description must be non-empty text without control characters other than newline and tab; \
              add a `description = \"...\"` argument or a package description in Cargo.toml"]
        );
    }
}
