//! `#[derive(Value)]`'s model of a value type of one's own: a record (a
//! struct with named fields) or a choice (an enum of unit variants), each
//! field's type checked against what can cross the Wasm boundary, and the
//! TypeScript declaration JS users see. The proc-macro generates code from
//! it; Braid can read the same from source.

use std::collections::BTreeMap;

use braid_schema::{camel, FieldDef, FieldType, TypeDef, TypeName};
use syn::spanned::Spanned as _;
use syn::{Data, DeriveInput, Fields, GenericArgument, Item, PathArguments, Type};

/// A value type, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueDef {
    /// The Rust name (`Image`); also its TypeScript name.
    pub name: syn::Ident,
    pub shape: Shape,
}

/// Whether an item derives `Value` (`#[derive(Value)]`,
/// `#[derive(braid_macros::Value)]`, among other derives).
pub fn derives_value(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().filter(|a| a.path().is_ident("derive")).any(|a| {
        let mut found = false;
        let _ = a.parse_nested_meta(|meta| {
            found |= meta.path.segments.last().is_some_and(|s| s.ident == "Value");
            Ok(())
        });
        found
    })
}

/// The value types `#[derive(Value)]` defines in `files` (inline modules
/// included), for the manifest's `types`. Types that do not check are left
/// out: the derive reports them where they are.
pub fn collect<'a>(files: impl IntoIterator<Item = &'a syn::File>, krate: &str) -> BTreeMap<String, TypeDef> {
    fn walk(items: &[Item], krate: &str, out: &mut BTreeMap<String, TypeDef>) {
        for item in items {
            let input: DeriveInput = match item {
                Item::Struct(s) if derives_value(&s.attrs) => s.clone().into(),
                Item::Enum(e) if derives_value(&e.attrs) => e.clone().into(),
                Item::Mod(m) => {
                    if let Some((_, items)) = &m.content {
                        walk(items, krate, out);
                    }
                    continue;
                }
                _ => continue,
            };
            if let Ok(def) = ValueDef::parse(&input, krate) {
                out.insert(def.name.to_string(), def.type_def());
            }
        }
    }
    let mut out = BTreeMap::new();
    for file in files {
        walk(&file.items, krate, &mut out);
    }
    out
}

/// What a value type is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// A struct with named fields: a JS object with a key per field.
    Record(Vec<Field>),
    /// An enum of unit variants: a JS string per variant.
    Choice(Vec<Variant>),
}

/// A field of a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub ident: syn::Ident,
    /// Its key in JS: the field's name in lowerCamelCase (`pixel_count`:
    /// `pixelCount`).
    pub js_name: String,
    pub ty: FieldType,
    /// Its Rust type, as written.
    pub rust: syn::Type,
}

/// A variant of a choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    pub ident: syn::Ident,
    /// Its string in JS: the variant's name in lowerCamelCase (`CatmullRom`:
    /// `"catmullRom"`).
    pub js_name: String,
}

impl ValueDef {
    /// Checks a derive input of crate `krate` (its library name, e.g.
    /// `op_image`); every problem is an error on its tokens.
    pub fn parse(input: &DeriveInput, krate: &str) -> syn::Result<Self> {
        let mut errors = Errors::default();
        if !input.generics.params.is_empty() {
            errors.push(syn::Error::new(
                input.generics.span(),
                "a Braid value type cannot be generic; name a type per use (`Vec<T>` fields are fine)",
            ));
        }
        let shape = match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) if !named.named.is_empty() => Shape::Record(
                    named
                        .named
                        .iter()
                        .filter_map(|f| {
                            let ident = f.ident.clone().expect("named");
                            let ty = errors.take(field_type(&f.ty, krate))?;
                            Some(Field { js_name: camel(&ident.to_string()), ident, ty, rust: f.ty.clone() })
                        })
                        .collect(),
                ),
                other => {
                    errors.push(syn::Error::new(
                        other.span(),
                        "a Braid record needs named fields (`struct Image { width: u32, .. }`): they become its JS keys",
                    ));
                    Shape::Record(Vec::new())
                }
            },
            Data::Enum(data) if !data.variants.is_empty() => Shape::Choice(
                data.variants
                    .iter()
                    .filter_map(|v| {
                        if !matches!(v.fields, Fields::Unit) {
                            errors.push(syn::Error::new(
                                v.fields.span(),
                                "a Braid choice has unit variants only (each becomes a JS string); \
                                 put data in a record with a choice field",
                            ));
                            return None;
                        }
                        Some(Variant { js_name: camel(&v.ident.to_string()), ident: v.ident.clone() })
                    })
                    .collect(),
            ),
            Data::Enum(_) => {
                errors.push(syn::Error::new(input.ident.span(), "a Braid choice needs at least one variant"));
                Shape::Choice(Vec::new())
            }
            Data::Union(u) => {
                errors.push(syn::Error::new(
                    u.union_token.span,
                    "a Braid value type is a struct with named fields or an enum",
                ));
                Shape::Record(Vec::new())
            }
        };
        errors.finish()?;
        let def = Self { name: input.ident.clone(), shape };
        def.check_names()?;
        Ok(def)
    }

    /// Two fields or variants must not meet under one JS name.
    fn check_names(&self) -> syn::Result<()> {
        let names: Vec<(&syn::Ident, &str)> = match &self.shape {
            Shape::Record(fields) => fields.iter().map(|f| (&f.ident, f.js_name.as_str())).collect(),
            Shape::Choice(variants) => variants.iter().map(|v| (&v.ident, v.js_name.as_str())).collect(),
        };
        let mut errors = Errors::default();
        for (i, (ident, js)) in names.iter().enumerate() {
            if !braid_schema::value::is_member_name(js) {
                errors.push(syn::Error::new(
                    ident.span(),
                    format!(
                        "`{ident}` must be ASCII letters, digits and `_`, at most {} bytes: it is a JS key or string",
                        braid_schema::value::MAX_MEMBER_NAME
                    ),
                ));
            }
            if let Some((first, _)) = names[..i].iter().find(|(_, other)| other == js) {
                errors.push(syn::Error::new(
                    ident.span(),
                    format!("`{ident}` and `{first}` are both `{js}` in JS; rename one"),
                ));
            }
        }
        errors.finish()
    }

    /// The manifest's definition.
    pub fn type_def(&self) -> TypeDef {
        match &self.shape {
            Shape::Record(fields) => {
                TypeDef::Record(fields.iter().map(|f| FieldDef { name: f.js_name.clone(), ty: f.ty.clone() }).collect())
            }
            Shape::Choice(variants) => TypeDef::Choice(variants.iter().map(|v| v.js_name.clone()).collect()),
        }
    }

    /// `export interface Image { width: number; ... }` or
    /// `export type Filter = "nearest" | "bilinear";`.
    pub fn ts_declaration(&self) -> String {
        self.type_def().ts_declaration(&self.name.to_string())
    }
}

/// Every error found, reported together.
#[derive(Default)]
struct Errors(Option<syn::Error>);

impl Errors {
    fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(first) => first.combine(error),
            None => self.0 = Some(error),
        }
    }

    fn take<T>(&mut self, result: syn::Result<T>) -> Option<T> {
        result.map_err(|e| self.push(e)).ok()
    }

    fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// The field types a value type may hold.
const ALLOWED: &str = "Bytes (Vec<u8>), String, Multihash, Cid, u16, u32, i32, f32, f64, u64, bool, \
                       Vec<T>, Option<T>, BTreeMap<String, T> or another value type";

fn field_type(ty: &Type, krate: &str) -> syn::Result<FieldType> {
    let unsupported = || syn::Error::new(ty.span(), format!("a field of a Braid value type is one of {ALLOWED}"));
    let Type::Path(path) = ty else { return Err(unsupported()) };
    if path.qself.is_some() {
        return Err(unsupported());
    }
    let last = path.path.segments.last().ok_or_else(unsupported)?;
    let args: Vec<&Type> = match &last.arguments {
        PathArguments::None => Vec::new(),
        PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .map(|arg| match arg {
                GenericArgument::Type(t) => Ok(t),
                _ => Err(unsupported()),
            })
            .collect::<syn::Result<_>>()?,
        PathArguments::Parenthesized(_) => return Err(unsupported()),
    };
    let name = last.ident.to_string();
    Ok(match (name.as_str(), args.as_slice()) {
        ("Vec", [inner]) if is_named(inner, "u8") => FieldType::Bytes,
        ("Vec", [inner]) => FieldType::List(Box::new(field_type(inner, krate)?)),
        ("Option", [inner]) => match field_type(inner, krate)? {
            FieldType::Optional(_) => {
                return Err(syn::Error::new(inner.span(), "`Option<Option<T>>` has no JS form; use one Option"))
            }
            inner => FieldType::Optional(Box::new(inner)),
        },
        ("BTreeMap", [key, value]) => {
            if !is_named(key, "String") {
                return Err(syn::Error::new(key.span(), "a map's keys are `String` (JS object keys)"));
            }
            FieldType::Map(Box::new(field_type(value, krate)?))
        }
        ("Bytes" | "Multihash", []) => FieldType::Bytes,
        ("String" | "Cid", []) => FieldType::String,
        ("u16" | "u32" | "i32" | "f32" | "f64", []) => FieldType::Number,
        ("u64" | "U64", []) => FieldType::BigInt,
        ("bool" | "Bool", []) => FieldType::Bool,
        (
            "u8" | "usize" | "isize" | "i8" | "i16" | "i64" | "u128" | "i128" | "char" | "str" | "Box" | "Rc" | "Arc"
            | "HashMap" | "Vec" | "Option" | "BTreeMap",
            _,
        ) => return Err(unsupported()),
        (_, []) => FieldType::Value(value_type(&path.path, krate).ok_or_else(unsupported)?),
        _ => return Err(unsupported()),
    })
}

/// A value type named by `path`: `Image` or `crate::Image` (of `krate`),
/// `op_image::Image` (of the crate `op_image`).
pub fn value_type(path: &syn::Path, krate: &str) -> Option<TypeName> {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let text = match segments.as_slice() {
        [name] => format!("{krate}::{name}"),
        [first, name] if first == "crate" => format!("{krate}::{name}"),
        [first, name] if first != "self" && first != "super" => format!("{first}::{name}"),
        _ => return None,
    };
    match TypeName::parse(&text) {
        Ok(named @ TypeName::Named { .. }) => Some(named),
        _ => None,
    }
}

fn is_named(ty: &Type, name: &str) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == name && s.arguments.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(src: &str) -> syn::Result<ValueDef> {
        ValueDef::parse(&syn::parse_str(src).unwrap(), "op_image")
    }

    #[test]
    fn records_and_choices_declare_their_typescript() {
        let image = def("struct Image { width: u32, height: u32, pixels: Vec<u8>, file_cid: Cid, \
                         tags: BTreeMap<String, String>, size: Option<u64>, hashes: Vec<Multihash>, filter: Filter, \
                         other: op_other::Thing }")
        .unwrap();
        assert_eq!(
            image.ts_declaration(),
            "export interface Image {\n  width: number;\n  height: number;\n  pixels: Uint8Array;\n  fileCid: string;\n  \
             tags: Record<string, string>;\n  size?: bigint;\n  hashes: Array<Uint8Array>;\n  filter: Filter;\n  other: Thing;\n}"
        );
        let TypeDef::Record(fields) = image.type_def() else { panic!("a record") };
        assert_eq!(fields[7].ty.to_string(), "op_image::Filter");
        assert_eq!(fields[8].ty.to_string(), "op_other::Thing");
        let filter = def("enum Filter { Nearest, CatmullRom }").unwrap();
        assert_eq!(filter.ts_declaration(), "export type Filter = \"nearest\" | \"catmullRom\";");
    }

    #[test]
    fn what_has_no_js_form_is_refused_with_every_reason() {
        let err = def("struct A<T> { a: usize, b: (u8, u8), c: Option<Option<u32>>, d: BTreeMap<u32, u32>, e: T }")
            .unwrap_err();
        let messages: Vec<String> = err.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(messages.len(), 5, "{messages:#?}");
        assert!(messages[0].contains("cannot be generic"));
        assert!(messages[1].contains("a field of a Braid value type is one of"));
        assert!(messages[3].contains("Option<Option<T>>"));
        assert!(messages[4].contains("keys are `String`"));
        for src in [
            "struct A(u32);",
            "struct A { a: u8 }",
            "struct A;",
            "struct A {}",
            "enum A {}",
            "enum A { B(u32) }",
            "union A { a: u32 }",
        ] {
            assert!(def(src).is_err(), "{src}");
        }
        let clash = def("struct A { a_b: u32, aB: u32 }").unwrap_err();
        assert!(clash.to_string().contains("`aB` and `a_b` are both `aB` in JS"), "{clash}");
    }
}
