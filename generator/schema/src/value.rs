//! Value types of one's own as manifests describe them: a record (named
//! fields) or a choice (named variants), each field's type in the grammar
//! the JS boundary knows, and the TypeScript declaration Braid writes from
//! them. `#[derive(Value)]` builds these from a struct or enum; a manifest
//! lists the ones its crate defines under `types`.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::TypeName;

/// The most fields of a record or variants of a choice.
pub const MAX_MEMBERS: usize = 256;

/// The longest field or variant name (JS side), in bytes.
pub const MAX_MEMBER_NAME: usize = 64;

/// What a value type is made of.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase", deny_unknown_fields))]
pub enum TypeDef {
    /// A JS object with these keys, in order.
    Record(Vec<FieldDef>),
    /// One of these JS strings.
    Choice(Vec<String>),
}

/// A field of a record.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct FieldDef {
    /// Its JS key (lowerCamelCase of the Rust field).
    pub name: String,
    /// Its type.
    #[cfg_attr(feature = "serde", serde(rename = "type"))]
    pub ty: FieldType,
}

/// The type of a field, as far as JS is concerned.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FieldType {
    /// `Vec<u8>`, `Bytes`, `Multihash`: `Uint8Array`.
    Bytes,
    /// `String`, `Cid`: `string`.
    String,
    /// `u16`, `u32`, `i32`, `f32`, `f64`: `number`.
    Number,
    /// `u64`: `bigint`.
    BigInt,
    /// `bool`: `boolean`.
    Bool,
    /// `Vec<T>`: `Array<T>`.
    List(Box<FieldType>),
    /// `Option<T>`: an optional key.
    Optional(Box<FieldType>),
    /// `BTreeMap<String, T>`: `Record<string, T>`.
    Map(Box<FieldType>),
    /// Another value type, by its qualified name (`op_image::Filter`).
    Value(TypeName),
}

/// A field type that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{found}` is not a field type; expected Bytes, String, Number, BigInt, Bool, Vec<T>, Option<T>, Map<T> or a value type such as `op_image::Filter`")]
pub struct ParseFieldTypeError {
    /// The text that did not parse.
    pub found: String,
}

impl FieldType {
    /// Parses the text form (`Vec<Number>`, `op_image::Filter`).
    pub fn parse(text: &str) -> Result<Self, ParseFieldTypeError> {
        let err = || ParseFieldTypeError { found: crate::text::truncate(text, 64) };
        let wrapped = |prefix: &str| text.strip_prefix(prefix).and_then(|t| t.strip_suffix('>'));
        if let Some(inner) = wrapped("Vec<") {
            return Ok(Self::List(Box::new(Self::parse(inner).map_err(|_| err())?)));
        }
        if let Some(inner) = wrapped("Option<") {
            return match Self::parse(inner).map_err(|_| err())? {
                Self::Optional(_) => Err(err()),
                inner => Ok(Self::Optional(Box::new(inner))),
            };
        }
        if let Some(inner) = wrapped("Map<") {
            return Ok(Self::Map(Box::new(Self::parse(inner).map_err(|_| err())?)));
        }
        Ok(match text {
            "Bytes" => Self::Bytes,
            "String" => Self::String,
            "Number" => Self::Number,
            "BigInt" => Self::BigInt,
            "Bool" => Self::Bool,
            _ => match TypeName::parse(text) {
                Ok(named @ TypeName::Named { .. }) => Self::Value(named),
                _ => return Err(err()),
            },
        })
    }

    /// The TypeScript type (an `Optional` is its inner type: the key is
    /// marked optional instead).
    pub fn ts_type(&self) -> String {
        match self {
            Self::Bytes => "Uint8Array".into(),
            Self::String => "string".into(),
            Self::Number => "number".into(),
            Self::BigInt => "bigint".into(),
            Self::Bool => "boolean".into(),
            Self::List(inner) => format!("Array<{}>", inner.ts_type()),
            Self::Optional(inner) => inner.ts_type(),
            Self::Map(inner) => format!("Record<string, {}>", inner.ts_type()),
            Self::Value(name) => name.ts_type(),
        }
    }

    /// Calls `f` with each value type this one names (as
    /// [`TypeName::named`] does).
    pub fn named(&self, f: &mut impl FnMut(&TypeName)) {
        match self {
            Self::List(inner) | Self::Optional(inner) | Self::Map(inner) => inner.named(f),
            Self::Value(name) => f(name),
            _ => {}
        }
    }
}

impl fmt::Display for FieldType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bytes => f.write_str("Bytes"),
            Self::String => f.write_str("String"),
            Self::Number => f.write_str("Number"),
            Self::BigInt => f.write_str("BigInt"),
            Self::Bool => f.write_str("Bool"),
            Self::List(inner) => write!(f, "Vec<{inner}>"),
            Self::Optional(inner) => write!(f, "Option<{inner}>"),
            Self::Map(inner) => write!(f, "Map<{inner}>"),
            Self::Value(name) => write!(f, "{name}"),
        }
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for FieldType {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for FieldType {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = FieldType;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field type such as \"Bytes\" or \"Vec<Number>\"")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<FieldType, E> {
                FieldType::parse(text).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

impl TypeDef {
    /// Its TypeScript declaration under `name` (the type's own name, e.g.
    /// `Image`): `export interface Image { ... }` or `export type Filter =
    /// "nearest" | "bilinear";`. Names were checked by [`TypeDef::problem`],
    /// so they are plain identifiers.
    pub fn ts_declaration(&self, name: &str) -> String {
        match self {
            Self::Record(fields) => {
                let mut out = format!("export interface {name} {{\n");
                for field in fields {
                    let optional = if matches!(field.ty, FieldType::Optional(_)) { "?" } else { "" };
                    out.push_str(&format!("  {}{optional}: {};\n", field.name, field.ty.ts_type()));
                }
                out.push('}');
                out
            }
            Self::Choice(variants) => {
                let strings: Vec<String> = variants.iter().map(|v| format!("\"{v}\"")).collect();
                format!("export type {name} = {};", strings.join(" | "))
            }
        }
    }

    /// The names of its members (fields or variants).
    pub fn members(&self) -> Vec<&str> {
        match self {
            Self::Record(fields) => fields.iter().map(|f| f.name.as_str()).collect(),
            Self::Choice(variants) => variants.iter().map(String::as_str).collect(),
        }
    }

    /// What is wrong with it, if anything: no members, too many, a name
    /// that is not a plain identifier, or a name twice.
    pub fn problem(&self) -> Option<String> {
        let members = self.members();
        if members.is_empty() || members.len() > MAX_MEMBERS {
            return Some(format!("has {} members; a value type has 1 to {MAX_MEMBERS}", members.len()));
        }
        for (i, name) in members.iter().enumerate() {
            if !is_member_name(name) {
                return Some(format!(
                    "member `{}` is not an identifier of ASCII letters, digits and `_` (at most {MAX_MEMBER_NAME} bytes, not starting with a digit)",
                    crate::text::truncate(name, 64)
                ));
            }
            if members[..i].contains(name) {
                return Some(format!("member `{name}` appears twice"));
            }
        }
        None
    }
}

/// A field or variant name: what JS can use as a bare key and TypeScript
/// as a property or string literal without escaping.
pub fn is_member_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_MEMBER_NAME
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl fmt::Display for TypeDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Record(fields) => {
                let fields: Vec<String> = fields.iter().map(|f| format!("{}: {}", f.name, f.ty)).collect();
                write!(f, "{{ {} }}", fields.join(", "))
            }
            Self::Choice(variants) => f.write_str(&variants.join(" | ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    #[test]
    fn field_types_parse_and_print() {
        for text in ["Bytes", "Vec<Number>", "Option<Map<Vec<BigInt>>>", "op_image::Filter", "Vec<op_a::B>", "Bool"] {
            assert_eq!(FieldType::parse(text).unwrap().to_string(), text);
        }
        for text in ["", "u32", "Option<Option<Bool>>", "Vec<>", "Image", "T", "Map<String"] {
            assert!(FieldType::parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn declarations_and_checks() {
        let record = TypeDef::Record(vec![
            FieldDef { name: "width".into(), ty: FieldType::Number },
            FieldDef { name: "exif".into(), ty: FieldType::parse("Option<Map<String>>").unwrap() },
        ]);
        assert_eq!(
            record.ts_declaration("Image"),
            "export interface Image {\n  width: number;\n  exif?: Record<string, string>;\n}"
        );
        assert_eq!(record.problem(), None);
        let choice = TypeDef::Choice(vec!["nearest".into(), "bilinear".into()]);
        assert_eq!(choice.ts_declaration("Filter"), "export type Filter = \"nearest\" | \"bilinear\";");
        for bad in [
            TypeDef::Choice(vec![]),
            TypeDef::Choice(vec!["a\"; x".into()]),
            TypeDef::Choice(vec!["a".into(), "a".into()]),
            TypeDef::Choice(vec!["1a".into()]),
            TypeDef::Record(vec![FieldDef { name: "a-b".into(), ty: FieldType::Bool }]),
        ] {
            assert!(bad.problem().is_some(), "{bad:?}");
        }
    }
}
