//! `#[derive(Value)]`'s model of a value type of one's own: a record (a
//! struct with named fields) or a choice (an enum of unit variants), each
//! field's type checked against what can cross the Wasm boundary, and the
//! TypeScript declaration JS users see. The proc-macro generates code from
//! it; Braid can read the same from source.

use syn::spanned::Spanned as _;
use syn::{Data, DeriveInput, Fields, GenericArgument, PathArguments, Type};

/// A value type, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueDef {
    /// The Rust name (`Image`); also its TypeScript name.
    pub name: syn::Ident,
    pub shape: Shape,
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
}

/// A variant of a choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    pub ident: syn::Ident,
    /// Its string in JS: the variant's name in lowerCamelCase (`CatmullRom`:
    /// `"catmullRom"`).
    pub js_name: String,
}

/// The type of a field, as far as JS is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldType {
    /// `Vec<u8>`, `Bytes`, `Multihash`: `Uint8Array`.
    Bytes,
    /// `String`, `Cid`: `string`.
    String,
    /// `u16`, `u32`, `i32`, `f32`, `f64`: `number` (a lone `u8` is not:
    /// `Vec<u8>` is bytes).
    Number,
    /// `u64`, `U64`: `bigint`.
    BigInt,
    /// `bool`, `Bool`: `boolean`.
    Bool,
    /// `Vec<T>`: `Array<T>`.
    List(Box<FieldType>),
    /// `Option<T>`: an optional key.
    Optional(Box<FieldType>),
    /// `BTreeMap<String, T>`: `Record<string, T>`.
    Map(Box<FieldType>),
    /// Another value type (the last segment of its path): its declaration.
    Value(String),
}

impl FieldType {
    /// The TypeScript type (an `Optional` is its inner type: the key is
    /// marked optional instead).
    pub fn ts_type(&self) -> String {
        match self {
            FieldType::Bytes => "Uint8Array".into(),
            FieldType::String => "string".into(),
            FieldType::Number => "number".into(),
            FieldType::BigInt => "bigint".into(),
            FieldType::Bool => "boolean".into(),
            FieldType::List(inner) => format!("Array<{}>", inner.ts_type()),
            FieldType::Optional(inner) => inner.ts_type(),
            FieldType::Map(inner) => format!("Record<string, {}>", inner.ts_type()),
            FieldType::Value(name) => name.clone(),
        }
    }
}

impl ValueDef {
    /// Checks a derive input; every problem is an error on its tokens.
    pub fn parse(input: &DeriveInput) -> syn::Result<Self> {
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
                            let ty = errors.take(field_type(&f.ty))?;
                            Some(Field { js_name: camel(&ident.to_string()), ident, ty })
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
            if let Some((first, _)) = names[..i].iter().find(|(_, other)| other == js) {
                errors.push(syn::Error::new(
                    ident.span(),
                    format!("`{ident}` and `{first}` are both `{js}` in JS; rename one"),
                ));
            }
        }
        errors.finish()
    }

    /// `export interface Image { width: number; ... }` or
    /// `export type Filter = "nearest" | "bilinear";`.
    pub fn ts_declaration(&self) -> String {
        let name = &self.name;
        match &self.shape {
            Shape::Record(fields) => {
                let body: Vec<String> = fields
                    .iter()
                    .map(|f| {
                        let optional = if matches!(f.ty, FieldType::Optional(_)) { "?" } else { "" };
                        format!("  {}{optional}: {};", f.js_name, f.ty.ts_type())
                    })
                    .collect();
                format!("export interface {name} {{\n{}\n}}", body.join("\n"))
            }
            Shape::Choice(variants) => {
                let strings: Vec<String> = variants.iter().map(|v| format!("\"{}\"", v.js_name)).collect();
                format!("export type {name} = {};", strings.join(" | "))
            }
        }
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

fn field_type(ty: &Type) -> syn::Result<FieldType> {
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
        ("Vec", [inner]) => FieldType::List(Box::new(field_type(inner)?)),
        ("Option", [inner]) => match field_type(inner)? {
            FieldType::Optional(_) => {
                return Err(syn::Error::new(inner.span(), "`Option<Option<T>>` has no JS form; use one Option"))
            }
            inner => FieldType::Optional(Box::new(inner)),
        },
        ("BTreeMap", [key, value]) => {
            if field_type(key)? != FieldType::String || !is_named(key, "String") {
                return Err(syn::Error::new(key.span(), "a map's keys are `String` (JS object keys)"));
            }
            FieldType::Map(Box::new(field_type(value)?))
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
        (_, []) if name.starts_with(|c: char| c.is_ascii_uppercase()) => FieldType::Value(name),
        _ => return Err(unsupported()),
    })
}

fn is_named(ty: &Type, name: &str) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == name && s.arguments.is_empty()))
}

/// `pixel_count` and `PixelCount` to `pixelCount` (a raw identifier's
/// `r#` is dropped).
pub fn camel(name: &str) -> String {
    let name = name.strip_prefix("r#").unwrap_or(name);
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for (i, c) in name.chars().enumerate() {
        if c == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else if i == 0 || out.is_empty() {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(src: &str) -> syn::Result<ValueDef> {
        ValueDef::parse(&syn::parse_str(src).unwrap())
    }

    #[test]
    fn names_become_lower_camel_case() {
        assert_eq!(camel("pixel_count"), "pixelCount");
        assert_eq!(camel("width"), "width");
        assert_eq!(camel("CatmullRom"), "catmullRom");
        assert_eq!(camel("r#type"), "type");
        assert_eq!(camel("_private"), "private");
        assert_eq!(camel("file_cid"), "fileCid");
    }

    #[test]
    fn records_and_choices_declare_their_typescript() {
        let image = def("struct Image { width: u32, height: u32, pixels: Vec<u8>, file_cid: Cid, \
                         tags: BTreeMap<String, String>, size: Option<u64>, hashes: Vec<Multihash>, filter: Filter }")
        .unwrap();
        assert_eq!(
            image.ts_declaration(),
            "export interface Image {\n  width: number;\n  height: number;\n  pixels: Uint8Array;\n  fileCid: string;\n  \
             tags: Record<string, string>;\n  size?: bigint;\n  hashes: Array<Uint8Array>;\n  filter: Filter;\n}"
        );
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
