//! Deriving an operation crate's manifest from its source text, without
//! cargo and without compiling the crate: the package from `Cargo.toml`
//! ([`crate::cargo_toml`]), the `#[operation]` fn found by parsing every
//! `.rs` file under `src/`, then the macro's own checks and manifest
//! ([`crate::check`]), so the result is what the macro embeds in
//! `OPERATION.manifest_json`.

use std::collections::BTreeMap;

use braid_schema::{Kind, OperationManifest};
use proc_macro2::TokenStream;
use syn::{Item, ItemFn, Meta};

use crate::cargo_toml::read_package;
use crate::check::check;
use crate::crate_info::{parse_cargo_toml, CargoToml, CrateInfo, Package, DEFAULT_LIB_ROOT};
use crate::ctxt::Ctxt;
use crate::error::{DeriveError, DeriveErrors, Location};

/// Derives the manifest `#[operation]` builds for a crate, from its files.
///
/// `cargo_toml`: the crate's Cargo.toml text, standalone (a `[package]`
/// field inherited with `workspace = true` is an error naming the field).
/// `files`: the crate's files, path relative to the crate root
/// (`"src/lib.rs"`, ...) -> text; every `.rs` file under `src/` (and the
/// `[lib] path`) is parsed, and exactly one fn must carry `#[operation]`
/// or `#[braid_macros::operation]`. The manifest's `source` is `None`
/// (the registry sets it).
///
/// On failure, every problem found, each at its file, line and column: the
/// Cargo.toml, files that do not parse, no or several operations, and all
/// that the macro reports for the attribute and signature.
pub fn derive_manifest(cargo_toml: &str, files: &BTreeMap<String, String>) -> Result<OperationManifest, DeriveErrors> {
    // Outside a proc-macro, proc-macro2 keeps the text of every file parsed
    // on a thread for as long as the thread lives (that is how spans know
    // their line and column). A thread of its own frees it on return, and
    // leaves the caller's spans alone.
    std::thread::scope(|scope| scope.spawn(|| derive(cargo_toml, files)).join())
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// syn's message, but for the lexer's, which says nothing of the cause.
fn parse_message(e: &syn::Error) -> String {
    let message = e.to_string();
    if message == "cannot parse string into token stream" {
        "cannot split it into tokens: look for an unclosed or mismatched `(`, `[`, `{`, string or comment here".into()
    } else {
        message
    }
}

/// An `#[operation]` fn found in the crate.
struct Found<'a> {
    file: &'a str,
    at: Location,
    attr: &'a syn::Attribute,
    func: &'a ItemFn,
}

fn derive(cargo_toml: &str, files: &BTreeMap<String, String>) -> Result<OperationManifest, DeriveErrors> {
    let mut errors = Vec::new();
    let package = read_package(cargo_toml).map_err(|e| errors.extend(e)).ok();
    // On failure `read_package` has reported that the text is not TOML.
    let cargo = match parse_cargo_toml(cargo_toml) {
        Ok(cargo) => cargo,
        Err(message) => {
            // Text that is not TOML was reported by `read_package`.
            if package.is_some() {
                errors.push(DeriveError::CargoToml { at: Location::new("Cargo.toml", 1, 1), message });
            }
            Default::default()
        }
    };
    let kind = cargo.kind;
    let lib_root =
        cargo.lib_path.as_deref().map_or(DEFAULT_LIB_ROOT, |p| p.strip_prefix("./").unwrap_or(p)).to_string();

    let mut parsed: Vec<(&str, syn::File)> = Vec::new();
    let mut unparsed = false;
    for (path, text) in files {
        if !(path.ends_with(".rs") && (path.starts_with("src/") || *path == lib_root)) {
            continue;
        }
        match syn::parse_file(text) {
            Ok(file) => parsed.push((path, file)),
            Err(e) => {
                unparsed = true;
                // The end of the file when the tokens ended too early.
                let end = Location::of_offset(path, text, text.len());
                errors.extend(e.into_iter().map(|e| DeriveError::Parse {
                    at: Location::of_span(path, e.span()).unwrap_or_else(|| end.clone()),
                    message: parse_message(&e),
                }));
            }
        }
    }

    let mut found = Vec::new();
    let mut executes = Vec::new();
    for (path, file) in &parsed {
        find(path, &file.items, &mut found, &mut executes);
    }
    match found.as_slice() {
        // The operation may be in a file that did not parse.
        [] if unparsed => {}
        // An operation in it is the macro's error ([`crate::manifest`]'s `TYPES_ONLY`).
        [] if kind == Kind::Types => {}
        [] => {
            let at = executes.into_iter().next().unwrap_or_else(|| Location::new(lib_root.as_str(), 1, 1));
            errors.push(DeriveError::NoOperation { at });
        }
        [first, rest @ ..] => errors
            .extend(rest.iter().map(|op| DeriveError::SecondOperation { at: op.at.clone(), first: first.at.clone() })),
    }
    if kind == Kind::Types && found.is_empty() && !unparsed && errors.is_empty() {
        return types_only(package, cargo, &parsed, &lib_root);
    }
    let [op] = found.as_slice() else {
        return Err(DeriveErrors(errors));
    };

    // Without the package or the library root there is no manifest to
    // check, but the attribute and signature are still checked.
    let root = if files.contains_key(&lib_root) {
        parsed.iter().find(|(path, _)| *path == lib_root).map(|(_, file)| Some(file))
    } else {
        // No library root: not `no_std`, as for the macro.
        Some(None)
    };
    let info = match (package, root) {
        (Some(package), Some(root)) => {
            let types =
                crate::value::collect(parsed.iter().map(|(_, file)| file), &braid_schema::lib_name(&package.name));
            Some(CrateInfo::new(package, cargo, root, types))
        }
        _ => None,
    };
    let cx = Ctxt::new();
    let manifest = match attr_args(op.attr) {
        Ok(attr) => check(&cx, attr, op.func, info.as_ref()).manifest,
        Err(message) => {
            errors.push(DeriveError::Check { at: op.at.clone(), message });
            None
        }
    };
    if let Err(e) = cx.check() {
        // The attribute where the macro's errors are at its call site (the
        // end of the attribute's arguments).
        errors.extend(e.into_iter().map(|e| DeriveError::Check {
            at: Location::of_span(op.file, e.span()).unwrap_or_else(|| op.at.clone()),
            message: e.to_string(),
        }));
    }
    match manifest {
        Some(manifest) if errors.is_empty() => Ok(manifest),
        _ => Err(DeriveErrors(errors)),
    }
}

/// The manifest of a crate of value types only: its package, features,
/// targets and `#[derive(Value)]` types, no inputs, output or config.
fn types_only(
    package: Option<Package>,
    cargo: CargoToml,
    parsed: &[(&str, syn::File)],
    lib_root: &str,
) -> Result<OperationManifest, DeriveErrors> {
    let at = || Location::new(lib_root, 1, 1);
    let Some(package) = package else { return Err(DeriveErrors(Vec::new())) };
    let root = parsed.iter().find(|(path, _)| *path == lib_root).map(|(_, file)| file);
    let types = crate::value::collect(parsed.iter().map(|(_, file)| file), &braid_schema::lib_name(&package.name));
    let info = CrateInfo::new(package, cargo, root, types);
    let manifest = OperationManifest {
        name: info.name.clone(),
        kind: Kind::Types,
        version: info.version.clone(),
        description: info.description.clone(),
        inputs: Vec::new(),
        input_names: Vec::new(),
        output: None,
        borrows: false,
        stream: false,
        config: Default::default(),
        groups: Vec::new(),
        features: info.features.clone(),
        targets: info.targets(),
        repository: info.repository.clone(),
        license: info.license.clone(),
        source: None,
        types: info.types,
    };
    let problems = manifest.problems();
    if problems.is_empty() {
        Ok(manifest)
    } else {
        Err(DeriveErrors(problems.iter().map(|p| DeriveError::Check { at: at(), message: p.to_string() }).collect()))
    }
}

/// Collects the `#[operation]` fns of `items` (and of inline modules), and
/// where fns named `execute` are, in source order.
fn find<'a>(file: &'a str, items: &'a [Item], found: &mut Vec<Found<'a>>, executes: &mut Vec<Location>) {
    for item in items {
        match item {
            Item::Fn(func) => {
                if let Some(attr) = func.attrs.iter().find(|a| is_operation(a.path())) {
                    let at = Location::of_span(file, attr.pound_token.span).expect("a parsed token");
                    found.push(Found { file, at, attr, func });
                } else if func.sig.ident == "execute" {
                    executes.extend(Location::of_span(file, func.sig.ident.span()));
                }
            }
            Item::Mod(module) => {
                if let Some((_, items)) = &module.content {
                    find(file, items, found, executes);
                }
            }
            _ => {}
        }
    }
}

/// `operation` or `braid_macros::operation` (with or without a leading `::`).
fn is_operation(path: &syn::Path) -> bool {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    matches!(
        segments.iter().map(String::as_str).collect::<Vec<_>>().as_slice(),
        ["operation"] | ["braid_macros", "operation"]
    )
}

/// The tokens the macro receives as its attribute.
fn attr_args(attr: &syn::Attribute) -> Result<TokenStream, String> {
    match &attr.meta {
        Meta::Path(_) => Ok(TokenStream::new()),
        Meta::List(list) => Ok(list.tokens.clone()),
        Meta::NameValue(_) => Err("write `#[braid_macros::operation(...)]`, not `#[operation = ...]`".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CARGO_TOML: &str = "[package]\nname = \"op_x\"\nversion = \"0.1.0\"\ndescription = \"Does x\"\n\n\
                              [features]\ndefault = [\"std\"]\nstd = []\nwasm = []\n";

    const LIB: &str = "//! op_x\n#![cfg_attr(not(feature = \"std\"), no_std)]\n\nuse braid_support::{Bytes, Config, Error};\n\n\
                       /// Copies.\n#[braid_macros::operation(groups = [\"SYS\"], config(mode = [\"a\", \"b\"]))]\n\
                       pub async fn execute(input: &Bytes, config: &Config) -> Result<Bytes, Error> {\n    Ok(input.clone())\n}\n";

    fn files(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect()
    }

    fn errors(cargo_toml: &str, entries: &[(&str, &str)]) -> Vec<String> {
        derive_manifest(cargo_toml, &files(entries)).unwrap_err().iter().map(ToString::to_string).collect()
    }

    #[test]
    fn derives_what_the_macro_builds() {
        let m = derive_manifest(CARGO_TOML, &files(&[("src/lib.rs", LIB), ("README.md", "# x")])).unwrap();
        assert_eq!(
            m.canonical_json(),
            r#"{"config":{"mode":["a","b"]},"description":"Does x","features":["std","wasm"],"groups":["SYS"],"input_names":["input"],"inputs":["Bytes"],"license":"","name":"op_x","output":"Bytes","repository":"","targets":["native","nostd","wasm"],"version":"0.1.0"}"#
        );
        assert_eq!(m.source, None);
    }

    #[test]
    fn a_crate_of_value_types_only_says_so_in_its_cargo_toml() {
        let cargo = format!("{CARGO_TOML}\n[package.metadata.braid]\nkind = \"types\"\n");
        let lib = "#![no_std]\n//! Shapes.\n#[derive(Clone, braid_macros::Value)]\npub struct Point { pub x: f64, pub y: f64 }\n";
        let m = derive_manifest(&cargo, &files(&[("src/lib.rs", lib)])).unwrap();
        assert_eq!(m.kind, Kind::Types);
        assert!(m.inputs.is_empty() && m.output.is_none() && m.config.is_empty());
        assert_eq!(m.types.keys().collect::<Vec<_>>(), ["Point"]);
        assert_eq!(m.targets, braid_schema::Platform::ALL);
        assert!(m.canonical_json().contains(r#""kind":"types""#), "{}", m.canonical_json());
        // Without a type: what to add.
        let found = errors(&cargo, &[("src/lib.rs", "#![no_std]\n")]);
        assert!(
            found[0].contains("src/lib.rs:1:1: a crate of value types only (kind \"types\") defines at least one"),
            "{found:?}"
        );
        // With an operation: where to put it.
        let found = errors(&cargo, &[("src/lib.rs", LIB)]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("put the operation in a crate of its own"), "{found:?}");
        // Without the kind, a crate without an operation is still refused.
        let found = errors(CARGO_TOML, &[("src/lib.rs", lib)]);
        assert!(found[0].contains("the crate has no `#[operation]` fn"), "{found:?}");
    }

    #[test]
    fn value_types_of_the_crate_are_in_the_manifest_and_named_with_it() {
        let lib = LIB
            .replace("input: &Bytes", "input: &Image, other: &op_other::Thing")
            .replace("Result<Bytes, Error>", "Result<Vec<crate::Filter>, Error>")
            .replace("use braid_support::", "mod image;\npub use image::*;\nuse braid_support::");
        let image = "#[derive(Clone, braid_macros::Value)]\npub struct Image { pub width: u32, pub pixels: Vec<u8>, pub filter: Option<Filter> }\n\n\
                     mod inner {\n    #[derive(Clone, Debug, Value)]\n    pub enum Filter { Nearest, CatmullRom }\n}\npub use inner::Filter;\n\n\
                     #[derive(Clone)]\npub struct NotAValue { pub a: u32 }\n";
        let m = derive_manifest(CARGO_TOML, &files(&[("src/lib.rs", &lib), ("src/image.rs", image)])).unwrap();
        assert_eq!(m.inputs[0].to_string(), "op_x::Image");
        assert_eq!(m.inputs[1].to_string(), "op_other::Thing");
        assert_eq!(m.output.as_ref().unwrap().to_string(), "Vec<op_x::Filter>");
        let json = m.canonical_json();
        assert!(
            json.contains(r#""types":{"Filter":{"choice":["nearest","catmullRom"]},"Image":{"record":[{"name":"width","type":"Number"},{"name":"pixels","type":"Bytes"},{"name":"filter","type":"Option<op_x::Filter>"}]}}"#),
            "{json}"
        );
        // A type of the crate that is not a value type is named, and refused.
        let lib = LIB.replace("input: &Bytes", "input: &NotAValue");
        let found = errors(CARGO_TOML, &[("src/lib.rs", &lib), ("src/image.rs", image)]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].contains(
                "`op_x::NotAValue` is a value type of this crate, but `types` does not define `NotAValue`; derive it"
            ),
            "{found:?}"
        );
    }

    #[test]
    fn finds_the_operation_in_any_module_file_and_under_lib_path() {
        let lib = "#![no_std]\nmod op;\n";
        let op = LIB
            .replace("#![cfg_attr(not(feature = \"std\"), no_std)]\n", "")
            .replace("braid_macros::operation", "operation");
        let m = derive_manifest(CARGO_TOML, &files(&[("src/lib.rs", lib), ("src/op.rs", &op)])).unwrap();
        assert_eq!(m.targets.len(), 3, "no_std comes from the library root");
        let toml = format!("{CARGO_TOML}\n[lib]\npath = \"lib.rs\"\n");
        let inline = "mod inner {\n    use super::*;\n    #[::braid_macros::operation]\n    pub async fn execute(i: &Bytes, c: &Config) -> Result<Bytes, Error> { todo!() }\n}\n";
        let m = derive_manifest(&toml, &files(&[("lib.rs", inline)])).unwrap();
        assert_eq!(m.targets.len(), 2, "not no_std, wasm feature: {m:?}");
    }

    #[test]
    fn no_operation_points_at_execute_or_the_root() {
        let without =
            LIB.replace("#[braid_macros::operation(groups = [\"SYS\"], config(mode = [\"a\", \"b\"]))]\n", "");
        assert_eq!(
            errors(CARGO_TOML, &[("src/lib.rs", &without)]),
            ["src/lib.rs:7:14: the crate has no `#[operation]` fn; add `#[braid_macros::operation]` to the `execute` fn"]
        );
        assert_eq!(
            errors(CARGO_TOML, &[("src/lib.rs", "pub fn f() {}\n")]),
            ["src/lib.rs:1:1: the crate has no `#[operation]` fn; add `#[braid_macros::operation]` to the `execute` fn"]
        );
    }

    #[test]
    fn two_operations_name_both_places() {
        let second = "use braid_support::*;\n\n  #[operation]\npub async fn execute(i: &Bytes, c: &Config) -> Result<Bytes, Error> { todo!() }\n";
        assert_eq!(
            errors(CARGO_TOML, &[("src/lib.rs", LIB), ("src/other/more.rs", second)]),
            ["src/other/more.rs:3:3: a second `#[operation]` fn; the first is at src/lib.rs:7:1: \
              an operation crate has exactly one, remove the other"]
        );
    }

    #[test]
    fn reports_every_check_the_macro_makes() {
        let bad = "use braid_support::*;\n\
                   #[braid_macros::operation(colour = \"red\", config(a = [1]))]\n\
                   fn run(a: Bytes, c: &Config) -> Bytes {}\n";
        assert_eq!(
            errors(CARGO_TOML, &[("src/lib.rs", bad)]),
            [
                "src/lib.rs:2:27: unknown key `colour`; expected one of `description`, `groups`, `config`, `stream`",
                "src/lib.rs:2:55: expected a string literal",
                "src/lib.rs:3:1: operations are `async fn`: write `pub async fn execute`",
                "src/lib.rs:3:4: the operation function must be named `execute`",
                "src/lib.rs:3:1: the operation function must be `pub`",
                "src/lib.rs:3:11: inputs are taken by reference (a memoised value is passed without a clone): \
                 write `&` before the type",
                "src/lib.rs:3:33: operations return `Result<Output, Error>` (braid_support::Error)",
            ]
        );
        // What the schema says of the manifest, on the tokens it came from.
        let groups = LIB.replace("[\"SYS\"]", "[\"sys\"]");
        assert_eq!(
            errors(CARGO_TOML, &[("src/lib.rs", &groups)]),
            ["src/lib.rs:7:37: group \"sys\" is not an UPPER_CASE word such as \"SYS\""]
        );
    }

    #[test]
    fn errors_at_the_end_of_the_arguments_are_on_the_attribute() {
        let lib = LIB.replace("groups = [\"SYS\"], config(mode = [\"a\", \"b\"])", "description");
        assert_eq!(errors(CARGO_TOML, &[("src/lib.rs", &lib)]), ["src/lib.rs:7:1: expected `=`"]);
    }

    #[test]
    fn reports_files_that_do_not_parse() {
        let found = errors(CARGO_TOML, &[("src/lib.rs", LIB), ("src/broken.rs", "fn f() {\n    let = 1;\n}\n")]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("src/broken.rs:2:9: cannot parse the file: expected one of: identifier"),
            "{found:?}"
        );
        // Not knowing what the broken file holds, no "no operation" error.
        assert_eq!(
            errors(CARGO_TOML, &[("src/lib.rs", "pub fn f() {}\npub fn g()\n")]),
            ["src/lib.rs:3:1: cannot parse the file: unexpected end of input, expected curly braces"]
        );
        assert_eq!(
            errors(CARGO_TOML, &[("src/lib.rs", "pub fn f( {}\n")]),
            ["src/lib.rs:1:9: cannot parse the file: cannot split it into tokens: \
              look for an unclosed or mismatched `(`, `[`, `{`, string or comment here"]
        );
    }

    #[test]
    fn reports_the_cargo_toml_with_the_checks() {
        let inherited = CARGO_TOML.replace("description = \"Does x\"", "description.workspace = true");
        let bad_sig = LIB.replace("pub async fn", "pub fn");
        assert_eq!(
            errors(&inherited, &[("src/lib.rs", &bad_sig)]),
            [
                "Cargo.toml:4:1: `package.description` is inherited from a workspace (`description.workspace = true`); \
                 the Cargo.toml must be standalone: write the value itself",
                "src/lib.rs:8:5: operations are `async fn`: write `pub async fn execute`",
            ]
        );
    }
}
