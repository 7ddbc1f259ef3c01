//! The component-model face of a generated workflow: its WIT world (`run`
//! over the external inputs, named as the manifest names them, returning
//! the output or a `run-error`; value types as records and enums, in the
//! `types` interface; for a workflow that streams, the `streaming`
//! interface's `stream` resource, `update` with each chunk, then `finish`) and the
//! names wit-bindgen gives its Rust bindings, for the `component` module
//! of `lib.rs`. This is its part of the [`CratePlan`](super::plan::CratePlan);
//! `templates/world.wit.hbs` renders the world.
//!
//! Every WIT name is made here from checked names (ASCII letters, digits,
//! `_`) and written with a `%`, so no name is taken for a WIT keyword.

use std::collections::BTreeMap;

use braid_schema::{FieldType, RunErrorKind, TypeDef, TypeName, RUN_ERROR, RUN_ERROR_KIND};
use serde::Serialize;

use super::literal::{Ident, RustStr, RustType};
use super::parts::ExternalInput;
use crate::manifest::Workflow;

/// The world and what binds it.
#[derive(Debug, Clone, Serialize)]
pub struct ComponentPlan {
    /// The WIT package, named after the crate (`braid:wf-cidv1-from-bytes`):
    /// never a Rust keyword, which wit-bindgen would make a module name
    /// (a workflow may be called `self`).
    pub package: String,
    /// Its path in wit-bindgen's Rust modules (`braid::wf_cidv1_from_bytes`).
    pub package_path: String,
    pub types: Vec<WitTypeDef>,
    pub params: Vec<WitParam>,
    pub output: WitType,
    /// The workflow streams: the world exports `streaming`.
    pub stream: bool,
    /// The workflow's name and signature (`text: String, bytes: Bytes ->
    /// Cid`), as the HTTP handler's `GET` gives them.
    pub workflow_lit: RustStr,
    pub signature_lit: RustStr,
    /// `run-error-kind`'s cases, from their one definition
    /// ([`braid_schema::RunErrorKind`]).
    pub error_kinds: Vec<ErrorKindCase>,
}

/// A case of `run-error-kind`: its WIT name, its Rust name on both sides
/// (wit-bindgen's and braid-support's), what it means.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorKindCase {
    pub wit: &'static str,
    pub rust: &'static str,
    pub doc: &'static str,
}

/// A value type of the workflow's, as a WIT `record` or `enum`.
#[derive(Debug, Clone, Serialize)]
pub struct WitTypeDef {
    /// The operation crate's type (`::op_image_decode::Image`).
    pub rust: RustType,
    /// Its WIT name (`image`).
    pub wit: String,
    /// wit-bindgen's Rust name for it (`Image`).
    pub binding: Ident,
    /// A record's fields; empty for an enum.
    pub fields: Vec<WitField>,
    /// An enum's cases; empty for a record.
    pub cases: Vec<WitCase>,
    /// The HTTP handler's function giving its shape (`shape_image`), and
    /// the expression it returns.
    pub shape_fn: String,
    pub shape: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct WitField {
    pub wit: String,
    pub binding: Ident,
    pub ty: WitType,
    /// Where a value is, in errors: `field width of Image`.
    pub place_lit: RustStr,
}

#[derive(Debug, Clone, Serialize)]
pub struct WitCase {
    pub wit: String,
    pub binding: Ident,
}

/// A parameter of `run`.
#[derive(Debug, Clone, Serialize)]
pub struct WitParam {
    pub wit: String,
    /// Its WIT name as a Rust string literal (the HTTP handler's).
    pub wit_lit: RustStr,
    pub binding: Ident,
    pub ty: WitType,
    pub place_lit: RustStr,
}

/// Names the world defines besides the workflow's value types, and the
/// WIT names whose Rust bindings would meet the names the generated
/// `component` module uses (`RunError`, `RunErrorKind`, `Component`,
/// `Error`, `Lift`, `Lower`, `Packed`).
const OWN_TYPES: [&str; 8] = [RUN_ERROR, RUN_ERROR_KIND, "stream", "component", "error", "lift", "lower", "packed"];

/// The plan, or why this workflow has no component: two names that WIT
/// spells the same.
pub(super) fn plan(
    w: &Workflow,
    external_inputs: &[ExternalInput],
    boundary: &[&TypeName],
    stream: bool,
) -> Result<ComponentPlan, String> {
    let (workflow, inputs, output) = (w.manifest.name.as_str(), w.external_inputs(), w.output());
    let named = crate::registry::named_types(&w.crates, boundary);
    // A type's WIT name: its own, or qualified by its crate when another
    // crate has a type of that name too.
    let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
    for ty in named.keys() {
        if let TypeName::Named { name, .. } = ty {
            *by_name.entry(wit_name(name)?).or_default() += 1;
        }
    }
    let mut wit_of: BTreeMap<TypeName, String> = BTreeMap::new();
    for ty in named.keys() {
        if let TypeName::Named { krate, name } = ty {
            let own = wit_name(name)?;
            let wit = if by_name[&own] > 1 { format!("{}-{own}", wit_name(krate)?) } else { own };
            if OWN_TYPES.contains(&wit.as_str()) || wit_of.values().any(|w| *w == wit) {
                return Err(format!("value type {ty} is `{wit}` in WIT, a name already taken"));
            }
            wit_of.insert(ty.clone(), wit);
        }
    }
    let mut types = Vec::new();
    for (ty, def) in &named {
        let (TypeName::Named { name, .. }, Some(def)) = (ty, def) else { continue };
        let wit = wit_of[ty].clone();
        let binding = Ident::new(&upper_camel(&wit));
        let (mut fields, mut cases) = (Vec::new(), Vec::new());
        match def {
            TypeDef::Record(defs) => {
                for f in defs {
                    let wit = js_wit_name(&f.name, ty)?;
                    fields.push(WitField {
                        binding: Ident::new(&rust_ident(&wit)),
                        ty: field_type(&f.ty, &wit_of)?,
                        place_lit: RustStr::new(&format!("field {} of {name}", f.name)),
                        wit,
                    });
                }
                unique(fields.iter().map(|f| f.wit.as_str()), ty)?;
            }
            TypeDef::Choice(variants) => {
                for v in variants {
                    let wit = js_wit_name(v, ty)?;
                    cases.push(WitCase { binding: Ident::new(&upper_camel(&wit)), wit });
                }
                unique(cases.iter().map(|c| c.wit.as_str()), ty)?;
            }
        }
        let shape = if cases.is_empty() {
            let fields: Vec<String> =
                fields.iter().map(|f| format!("({}.into(), {})", RustStr::new(&f.wit).as_str(), f.ty.shape)).collect();
            format!("Shape::Record(::alloc::vec![{}])", fields.join(", "))
        } else {
            let cases: Vec<String> =
                cases.iter().map(|c| format!("{}.into()", RustStr::new(&c.wit).as_str())).collect();
            format!("Shape::Enum(::alloc::vec![{}])", cases.join(", "))
        };
        let shape_fn = shape_fn(&wit);
        types.push(WitTypeDef { rust: RustType::new(ty), wit, binding, fields, cases, shape_fn, shape });
    }
    let mut params = Vec::new();
    for (input, ty) in external_inputs.iter().zip(&inputs) {
        let wit = wit_name(input.param.as_str())?;
        params.push(WitParam {
            binding: Ident::new(&rust_ident(&wit)),
            ty: type_name(ty, &wit_of)?,
            place_lit: input.place_lit.clone(),
            wit_lit: RustStr::new(&wit),
            wit,
        });
    }
    unique(params.iter().map(|p| p.wit.as_str()), &"run")?;
    let package = wit_name(&super::crate_name(workflow))?;
    Ok(ComponentPlan {
        package_path: format!("braid::{}", crate::schema::lib_name(&package)),
        package: format!("braid:{package}"),
        types,
        params,
        output: type_name(output, &wit_of)?,
        stream,
        workflow_lit: RustStr::new(workflow),
        signature_lit: RustStr::new(&w.signature()),
        error_kinds: RunErrorKind::ALL
            .map(|kind| ErrorKindCase { wit: kind.wit(), rust: kind.rust(), doc: kind.doc() })
            .into(),
    })
}

fn unique<'a>(names: impl Iterator<Item = &'a str>, of: &dyn std::fmt::Display) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    for name in names {
        if !seen.insert(name) {
            return Err(format!("two members of {of} are both `{name}` in WIT; rename one"));
        }
    }
    Ok(())
}

/// A WIT type, and the Rust type wit-bindgen binds it to (paths that hold
/// in a `no_std` crate). Made of fixed words and names from [`wit_name`].
#[derive(Debug, Clone, Serialize)]
pub struct WitType {
    pub wit: String,
    pub rust: String,
    /// An expression of its `braid_schema::wire::Shape` (as `Shape`), for
    /// the HTTP handler: a value type's is its `shape_<name>()`.
    pub shape: String,
}

impl WitType {
    fn new(wit: &str, rust: &str, shape: &str) -> Self {
        Self { wit: wit.into(), rust: rust.into(), shape: shape.into() }
    }

    fn bytes() -> Self {
        Self::new("list<u8>", "::alloc::vec::Vec<u8>", "Shape::Bytes")
    }

    fn string() -> Self {
        Self::new("string", "::alloc::string::String", "Shape::String")
    }

    fn list(item: Self) -> Self {
        Self {
            wit: format!("list<{}>", item.wit),
            rust: format!("::alloc::vec::Vec<{}>", item.rust),
            shape: format!("Shape::List(::alloc::boxed::Box::new({}))", item.shape),
        }
    }

    fn named(wit: &str) -> Self {
        Self { wit: format!("%{wit}"), rust: upper_camel(wit), shape: format!("{}()", shape_fn(wit)) }
    }
}

/// The HTTP handler's function giving the shape of the value type `wit`.
fn shape_fn(wit: &str) -> String {
    format!("shape_{}", heck::ToSnakeCase::to_snake_case(wit))
}

/// The WIT type of a manifest type.
fn type_name(ty: &TypeName, wit_of: &BTreeMap<TypeName, String>) -> Result<WitType, String> {
    Ok(match ty {
        TypeName::Bytes | TypeName::Multihash => WitType::bytes(),
        TypeName::String | TypeName::Cid => WitType::string(),
        TypeName::U64 => WitType::new("u64", "u64", "Shape::U64"),
        TypeName::Bool => WitType::new("bool", "bool", "Shape::Bool"),
        TypeName::Vec(inner) => WitType::list(type_name(inner, wit_of)?),
        TypeName::Named { .. } | TypeName::Param(_) => match wit_of.get(ty) {
            Some(wit) => WitType::named(wit),
            None => return Err(format!("{ty} has no WIT type")),
        },
    })
}

/// The WIT type of a value type's field.
fn field_type(ty: &FieldType, wit_of: &BTreeMap<TypeName, String>) -> Result<WitType, String> {
    Ok(match ty {
        FieldType::Bytes => WitType::bytes(),
        FieldType::String => WitType::string(),
        FieldType::Number => WitType::new("f64", "f64", "Shape::F64"),
        FieldType::BigInt => WitType::new("u64", "u64", "Shape::U64"),
        FieldType::Bool => WitType::new("bool", "bool", "Shape::Bool"),
        FieldType::List(inner) => WitType::list(field_type(inner, wit_of)?),
        FieldType::Optional(inner) => {
            let inner = field_type(inner, wit_of)?;
            WitType {
                wit: format!("option<{}>", inner.wit),
                rust: format!("::core::option::Option<{}>", inner.rust),
                shape: format!("Shape::Option(::alloc::boxed::Box::new({}))", inner.shape),
            }
        }
        FieldType::Map(inner) => {
            let inner = field_type(inner, wit_of)?;
            WitType {
                wit: format!("list<tuple<string, {}>>", inner.wit),
                rust: format!("::alloc::vec::Vec<(::alloc::string::String, {})>", inner.rust),
                shape: format!(
                    "Shape::List(::alloc::boxed::Box::new(Shape::Tuple(::alloc::vec![Shape::String, {}])))",
                    inner.shape
                ),
            }
        }
        FieldType::Value(name) => match wit_of.get(name) {
            Some(wit) => WitType::named(wit),
            None => return Err(format!("value type {name} is not defined")),
        },
    })
}

/// A checked name (ASCII letters, digits, `_`) in WIT's kebab case:
/// `pixelCount` and `pixel_count` are `pixel-count`; a word cannot start
/// with a digit in WIT, so a digit joins the word before it (`v2` stays
/// `v2`, `sha2_256` is `sha2256`).
pub(super) fn wit_name(name: &str) -> Result<String, String> {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if c != '_' {
                return Err(format!("`{name}` cannot be a WIT name"));
            }
            words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        word.push(c.to_ascii_lowercase());
    }
    words.extend((!word.is_empty()).then_some(word));
    let mut out = String::new();
    for w in words {
        if !out.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()) {
            out.push('-');
        }
        out.push_str(&w);
    }
    if !out.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err(format!("`{name}` cannot be a WIT name: it must start with a letter"));
    }
    Ok(out)
}

/// The WIT name of a field or case that JS names `js`: one that the
/// executor (and jco, for fields) turn back into `js`, the lowerCamelCase
/// of its words; a name with a run of capitals (`RGBA`, JS's `rGBA`)
/// would not come back the same, so it is refused with the name to use.
fn js_wit_name(js: &str, ty: &TypeName) -> Result<String, String> {
    let wit = wit_name(js)?;
    let back = crate::schema::camel(&wit);
    if back != js {
        return Err(format!(
            "`{js}` of value type {ty} is `{wit}` in WIT, which comes back as `{back}`: name it so that JS \
             calls it `{back}` (in Rust, no run of capitals: `Rgba`, not `RGBA`)"
        ));
    }
    Ok(wit)
}

/// wit-bindgen's Rust name of a kebab-case WIT function, parameter or
/// field name (snake case, a Rust keyword with `_` after it): its own
/// function, so the names the template writes are the ones it generates.
fn rust_ident(wit: &str) -> String {
    wit_bindgen_rust::to_rust_ident(wit)
}

/// wit-bindgen's Rust name of a WIT type or case: upper camel case by
/// `heck`, as wit-bindgen makes it (its function is private), and `guest`
/// is `Guest_` (`Guest` names the trait of its exports). The tests build
/// every example's component with wit-bindgen, which would not compile if
/// these differed.
fn upper_camel(wit: &str) -> String {
    use heck::ToUpperCamelCase as _;
    match wit {
        "guest" => "Guest_".into(),
        wit => wit.to_upper_camel_case(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_kebab_case_words_that_start_with_a_letter() {
        assert_eq!(wit_name("pixelCount").unwrap(), "pixel-count");
        assert_eq!(wit_name("pixel_count").unwrap(), "pixel-count");
        assert_eq!(wit_name("cidv1_from_bytes").unwrap(), "cidv1-from-bytes");
        assert_eq!(wit_name("sha2_256").unwrap(), "sha2256");
        assert_eq!(wit_name("PhotoProof").unwrap(), "photo-proof");
        assert_eq!(wit_name("URL").unwrap(), "url");
        assert!(wit_name("_1").is_err());
        assert!(wit_name("a-b").is_err());
        assert_eq!(rust_ident("type"), "type_");
        assert_eq!(upper_camel("photo-proof"), "PhotoProof");
    }

    #[test]
    fn js_names_must_come_back_from_wit_unchanged() {
        let ty = TypeName::Named { krate: "op_x".into(), name: "Shade".into() };
        assert_eq!(js_wit_name("northEast", &ty).unwrap(), "north-east");
        assert_eq!(js_wit_name("fileCid", &ty).unwrap(), "file-cid");
        assert_eq!(js_wit_name("sha2256", &ty).unwrap(), "sha2256");
        let err = js_wit_name("rGBA", &ty).unwrap_err();
        assert!(err.contains("`rGBA` of value type") && err.contains("comes back as `rGba`"), "{err}");
    }
}
