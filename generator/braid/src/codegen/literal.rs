//! Making values safe for generated source: every string that reaches a
//! template passes through here first. Rust string literals escape
//! everything outside printable ASCII (no raw newlines, quotes, NULs,
//! bidirectional overrides or `*/` tricks survive), TOML strings use the
//! toml crate's own escaping, identifiers are checked, never built from
//! user text.

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

/// Whether `name` may be used as a Rust identifier as it is: ASCII, not a
/// keyword. Generated identifiers come from the registry (crate names) and
/// from indices, never from manifest text; this checks that invariant.
pub fn is_plain_ident(name: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
        "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self",
        "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "abstract",
        "become", "box", "do", "final", "gen", "macro", "override", "priv", "try", "typeof", "unsized", "virtual",
        "yield", "_",
    ];
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&name)
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
    fn identifiers() {
        assert!(is_plain_ident("op_cid"));
        for bad in ["self", "crate", "Self", "fn", "1a", "a-b", "é", ""] {
            assert!(!is_plain_ident(bad), "{bad}");
        }
    }
}
