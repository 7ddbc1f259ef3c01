//! Making values safe for generated source: every string that reaches a
//! template passes through here first, as one of the types below, whose
//! only constructors escape or check. Rust string literals escape
//! everything outside printable ASCII (no raw newlines, quotes, NULs,
//! bidirectional overrides or `*/` tricks survive), TOML strings use the
//! toml crate's own escaping, identifiers and plain words are checked,
//! never built from user text, and type spellings come from the one table
//! of `braid_support::typename`.

use braid_support::typename::TypeName;
use serde::Serialize;

use crate::ident::is_plain_ident;

/// A Rust string literal, quotes included, in printable ASCII.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct RustStr(String);

impl RustStr {
    pub fn new(text: &str) -> Self {
        Self(rust_str(text))
    }

    /// The literal, as source.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A TOML basic string, quotes included.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct TomlStr(String);

impl TomlStr {
    pub fn new(text: &str) -> Self {
        Self(toml_str(text))
    }
}

/// A Rust identifier that is not a keyword (also a valid TOML bare key and
/// cargo package name).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Ident(String);

impl Ident {
    /// `name`, which must be a plain identifier: identifiers come from the
    /// registry (crate names), from type names and from the manifest's
    /// input names once the validator accepted them, so one that is not is
    /// a bug in Braid.
    pub fn new(name: &str) -> Self {
        assert!(is_plain_ident(name), "`{name}` is not a plain identifier");
        Self(name.to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Text made of ASCII letters, digits and `_ - . < >` only: safe in
/// comments of any of the generated languages and inside their string
/// literals (a validated workflow name, a type name, a version).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Plain(String);

impl Plain {
    /// `text`, if it is plain.
    pub fn new(text: &str) -> Option<Self> {
        text.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.<>:".contains(&b)).then(|| Self(text.to_string()))
    }
}

/// The Rust spelling of a value type, with absolute paths
/// ([`TypeName::rust_type`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct RustType(String);

impl RustType {
    pub fn new(ty: &TypeName) -> Self {
        Self(ty.rust_type())
    }
}

/// The TypeScript spelling of a value type ([`TypeName::ts_type`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct TsType(String);

impl TsType {
    pub fn new(ty: &TypeName) -> Self {
        Self(ty.ts_type())
    }

    /// A tuple of `n` elements of type `item`: `[string, string]`.
    pub fn tuple(item: &TsType, n: usize) -> Self {
        Self(format!("[{}]", vec![item.0.as_str(); n].join(", ")))
    }

    /// A labelled tuple element: `photo: Uint8Array`.
    pub fn labelled(label: &Ident, ty: &TsType) -> Self {
        Self(format!("{}: {}", label.0, ty.0))
    }
}

/// A Rust string literal whose value is `text`, in printable ASCII only.
pub fn rust_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            other => out.push_str(&format!("\\u{{{:x}}}", other as u32)),
        }
    }
    out.push('"');
    out
}

/// A TOML basic string whose value is `text`.
pub fn toml_str(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_strings_escape_everything_dangerous() {
        assert_eq!(rust_str("plain"), "\"plain\"");
        assert_eq!(rust_str("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(rust_str("line\nbreak\0"), r#""line\nbreak\u{0}""#);
        assert_eq!(rust_str("*/ \"# }"), r##""*/ \"# }""##);
        assert_eq!(rust_str("café \u{202e}"), r#""caf\u{e9} \u{202e}""#);
        // The literal parses back to the same value.
        for text in ["a\"b", "x\ny\r\t", "\u{0}\u{7f}", "é漢字🦀", "\\u{41}", "r#\"raw\"#"] {
            let lit: syn::LitStr = syn::parse_str(&rust_str(text)).unwrap();
            assert_eq!(lit.value(), text);
        }
    }

    #[test]
    fn toml_strings_round_trip() {
        for text in ["a\"b", "x\ny", "é", "'''", "\u{0}"] {
            let doc: toml::Table = format!("k = {}", toml_str(text)).parse().unwrap();
            assert_eq!(doc["k"].as_str(), Some(text));
        }
    }

    #[test]
    fn plain_text_is_checked() {
        assert!(Plain::new("Vec<Cid>").is_some() && Plain::new("wf-1.0_x").is_some());
        for bad in ["a b", "*/", "\"", "{", "é", "a\n"] {
            assert!(Plain::new(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    #[should_panic(expected = "not a plain identifier")]
    fn an_identifier_from_elsewhere_is_a_bug() {
        Ident::new("self");
    }
}
