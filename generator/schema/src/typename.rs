//! Type names as they appear in operation manifests (`Bytes`, `Vec<Cid>`,
//! `T`): parsing, printing, their JSON form (a string) and their Rust and
//! TypeScript spellings. The macro, the compiler and the Wasm helpers all
//! use this one table.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use core::fmt;

/// A value type an operation takes or returns.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TypeName {
    /// Raw bytes (`Vec<u8>`); JS `Uint8Array`.
    Bytes,
    /// UTF-8 text; JS `string`.
    String,
    /// An encoded multihash; JS `Uint8Array`.
    Multihash,
    /// A CID in text form; JS `string`.
    Cid,
    /// `u64`; JS `bigint`.
    U64,
    /// `bool`; JS `boolean`.
    Bool,
    /// A list; JS `Array`.
    Vec(Box<TypeName>),
    /// A type parameter of a generic (flow-control) operation, e.g. `T`.
    Param(String),
    /// A value type of one's own (`#[derive(Value)]`), qualified by the
    /// crate that defines it: `op_image::Image`. JS: its declaration.
    Named {
        /// The defining crate (`op_image`).
        krate: String,
        /// The type (`Image`).
        name: String,
    },
}

/// The scalar type names, for messages.
pub const SCALARS: &[&str] = &["Bytes", "String", "Multihash", "Cid", "U64", "Bool"];

/// A type name that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{found}` is not a Braid type; expected one of {expected}, `Vec<T>` of one of them, a value type qualified by its crate such as `op_image::Image`, or a type parameter such as `T`", expected = SCALARS.join(", "))]
pub struct ParseTypeError {
    /// The text that did not parse.
    pub found: String,
}

impl TypeName {
    /// Parses a manifest type name. Whitespace is not allowed.
    pub fn parse(text: &str) -> Result<Self, ParseTypeError> {
        let err = || ParseTypeError { found: crate::text::truncate(text, 64) };
        if let Some(inner) = text.strip_prefix("Vec<").and_then(|t| t.strip_suffix('>')) {
            return Self::parse(inner).map(|t| Self::Vec(Box::new(t))).map_err(|_| err());
        }
        Ok(match text {
            "Bytes" => Self::Bytes,
            "String" => Self::String,
            "Multihash" => Self::Multihash,
            "Cid" => Self::Cid,
            "U64" => Self::U64,
            "Bool" => Self::Bool,
            _ if is_param(text) => Self::Param(text.to_string()),
            _ => match text.split_once("::") {
                Some((krate, name)) if is_crate(krate) && is_type(name) => {
                    Self::Named { krate: krate.to_string(), name: name.to_string() }
                }
                _ => return Err(err()),
            },
        })
    }

    /// The Rust type, with absolute paths so it resolves in any module.
    pub fn rust_type(&self) -> String {
        match self {
            Self::Bytes => "::braid_support::Bytes".into(),
            Self::String => "::braid_support::__private::String".into(),
            Self::Multihash => "::braid_support::Multihash".into(),
            Self::Cid => "::braid_support::Cid".into(),
            Self::U64 => "::braid_support::U64".into(),
            Self::Bool => "::braid_support::Bool".into(),
            Self::Vec(inner) => format!("::braid_support::__private::Vec<{}>", inner.rust_type()),
            Self::Param(name) => name.clone(),
            Self::Named { krate, name } => format!("::{krate}::{name}"),
        }
    }

    /// The TypeScript type of the value on the JS side of the boundary.
    pub fn ts_type(&self) -> String {
        match self {
            Self::Bytes | Self::Multihash => "Uint8Array".into(),
            Self::String | Self::Cid => "string".into(),
            Self::U64 => "bigint".into(),
            Self::Bool => "boolean".into(),
            Self::Vec(inner) => format!("Array<{}>", inner.ts_type()),
            Self::Param(_) => "unknown".into(),
            Self::Named { name, .. } => name.clone(),
        }
    }

    /// Calls `f` with each value type of one's own it mentions
    /// (`op_image::Image` in `Vec<op_image::Image>`).
    pub fn named(&self, f: &mut impl FnMut(&TypeName)) {
        match self {
            Self::Vec(inner) => inner.named(f),
            Self::Named { .. } => f(self),
            _ => {}
        }
    }

    /// Whether the type mentions a type parameter.
    pub fn is_generic(&self) -> bool {
        match self {
            Self::Vec(inner) => inner.is_generic(),
            Self::Param(_) => true,
            _ => false,
        }
    }

    /// The Rust type with every type parameter replaced by the Rust type
    /// `with`.
    pub fn substitute_all_params(&self, with: &str) -> String {
        match self {
            Self::Vec(inner) => format!("::braid_support::__private::Vec<{}>", inner.substitute_all_params(with)),
            Self::Param(_) => with.into(),
            other => other.rust_type(),
        }
    }

    /// Replaces type parameter `param` with `with`.
    pub fn substitute(&self, param: &str, with: &TypeName) -> TypeName {
        match self {
            Self::Vec(inner) => Self::Vec(Box::new(inner.substitute(param, with))),
            Self::Param(name) if name == param => with.clone(),
            other => other.clone(),
        }
    }
}

/// A crate that defines value types: a lowercase ASCII identifier (`op_image`),
/// at most 64 characters, as crate names in manifests are.
fn is_crate(text: &str) -> bool {
    crate::is_lower_identifier(text)
}

/// A value type's own name: an ASCII identifier starting with an uppercase
/// letter, at most 64 characters.
pub(crate) fn is_type(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_uppercase())
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && text.len() <= 64
}

/// A type parameter: an ASCII identifier starting with an uppercase letter
/// that is not a scalar name, at most 32 characters.
fn is_param(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && text.len() <= 32
        && !SCALARS.contains(&text)
        && text != "Vec"
}

impl fmt::Display for TypeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bytes => f.write_str("Bytes"),
            Self::String => f.write_str("String"),
            Self::Multihash => f.write_str("Multihash"),
            Self::Cid => f.write_str("Cid"),
            Self::U64 => f.write_str("U64"),
            Self::Bool => f.write_str("Bool"),
            Self::Vec(inner) => write!(f, "Vec<{inner}>"),
            Self::Param(name) => f.write_str(name),
            Self::Named { krate, name } => write!(f, "{krate}::{name}"),
        }
    }
}

/// In JSON a type name is its text (`"Vec<Cid>"`).
#[cfg(feature = "serde")]
impl serde::Serialize for TypeName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for TypeName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = TypeName;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Braid type name such as \"Bytes\" or \"Vec<Cid>\"")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<TypeName, E> {
                TypeName::parse(text).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        for text in [
            "Bytes",
            "String",
            "Multihash",
            "Cid",
            "U64",
            "Bool",
            "Vec<Bytes>",
            "Vec<Vec<T>>",
            "T",
            "Vec<op_image::Image>",
        ] {
            assert_eq!(TypeName::parse(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn rejects_what_is_not_a_type() {
        for text in [
            "",
            "bytes",
            "Vec<>",
            "Vec<Bytes",
            "Vec< Bytes>",
            "u8",
            "T-1",
            "Vec",
            "op_image::image",
            "Op::Image",
            "::Image",
            "op_image::",
            "a::b::C",
            "op-image::Image",
        ] {
            let err = TypeName::parse(text).unwrap_err();
            assert!(err.to_string().contains("is not a Braid type"), "{text}: {err}");
        }
    }

    #[test]
    fn maps_to_rust_and_typescript() {
        let t = TypeName::parse("Vec<Multihash>").unwrap();
        assert_eq!(t.ts_type(), "Array<Uint8Array>");
        assert_eq!(t.rust_type(), "::braid_support::__private::Vec<::braid_support::Multihash>");
        assert_eq!(TypeName::U64.ts_type(), "bigint");
        let named = TypeName::parse("op_image::Image").unwrap();
        assert_eq!(named.rust_type(), "::op_image::Image");
        assert_eq!(named.ts_type(), "Image");
    }

    #[test]
    fn substitutes_parameters() {
        let t = TypeName::parse("Vec<T>").unwrap();
        assert!(t.is_generic());
        let s = t.substitute("T", &TypeName::Cid);
        assert_eq!(s.to_string(), "Vec<Cid>");
        assert!(!s.is_generic());
    }

    #[cfg(feature = "json")]
    #[test]
    fn json_form_is_the_text() {
        let t: TypeName = serde_json::from_str("\"Vec<Cid>\"").unwrap();
        assert_eq!(t, TypeName::Vec(Box::new(TypeName::Cid)));
        assert_eq!(serde_json::to_string(&t).unwrap(), "\"Vec<Cid>\"");
        let err = serde_json::from_str::<TypeName>("\"Vec<Hash\"").unwrap_err();
        assert!(err.to_string().contains("`Vec<Hash` is not a Braid type"), "{err}");
    }
}
