//! Small text rules shared by the checks: message truncation, what counts
//! as manifest text, crate names (how Rust code spells one, [`lib_name`],
//! and when two are the same name, [`name_key`]), the JS name of a Rust or
//! WIT one ([`camel`]) and the words Rust reserves ([`RUST_KEYWORDS`]),
//! written once for the macro, the compiler, the executor and the service.

use alloc::format;
use alloc::string::String;

/// Shortens `text` to at most `max` characters for an error message,
/// marking the cut with `...`.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}...", text.get(..cut).unwrap_or(text)),
        None => text.into(),
    }
}

/// A lower-case ASCII identifier of at most 64 characters (`op_image`,
/// `file_cid`): how crate names, operation input names and workflow input
/// names are spelt.
pub fn is_lower_identifier(text: &str) -> bool {
    text.len() <= 64
        && text.starts_with(|c: char| c.is_ascii_lowercase())
        && text.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The name Rust code uses for the crate of package `name`: `-` as `_`,
/// as cargo makes it (`op-x` is `op_x`).
pub fn lib_name(name: &str) -> String {
    name.replace('-', "_")
}

/// The form that crate names cargo and crates.io take for the same name
/// share: ASCII lower case, `-` as `_` (`Op-Cid`, `op_cid`). Names are
/// compared in this form wherever one could pass for another: owners,
/// reserved names. Only meaningful for names [`is_crate_name`] accepts.
pub fn name_key(name: &str) -> String {
    lib_name(&name.to_ascii_lowercase())
}

/// Whether `name` is made of what a crate name may be: an ASCII letter,
/// then ASCII letters, digits, `-` and `_`, at most 64 of them.
pub fn is_crate_name(name: &str) -> bool {
    name.len() <= 64
        && name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The name JS gives a Rust field or variant, or a WIT name: its words
/// (split at `_` and `-`) in lowerCamelCase. `pixel_count`, `PixelCount`
/// and `pixel-count` are `pixelCount`; a raw identifier's `r#` is dropped.
/// Only ASCII letters change case: the names given are ASCII (the checks
/// refuse others), and Unicode's case tables (24 KiB) would otherwise be
/// in every Wasm build, mapped by each fresh instance of an HTTP function.
pub fn camel(name: &str) -> String {
    let name = name.strip_prefix("r#").unwrap_or(name);
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' || c == '-' {
            upper = !out.is_empty();
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else if out.is_empty() {
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Rust's keywords, strict, reserved and of the 2018 and 2024 editions:
/// words a generated identifier must not be as it is.
pub const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
    "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self",
    "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "abstract",
    "become", "box", "do", "final", "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// Non-empty (not only whitespace) and without control characters other
/// than those in `allowed`.
pub(crate) fn is_text(text: &str, allowed: &[char]) -> bool {
    !text.trim().is_empty() && !text.chars().any(|c| c.is_control() && !allowed.contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_cuts_on_char_boundaries() {
        assert_eq!(truncate("héllo", 2), "hé...");
        assert_eq!(truncate("hi", 5), "hi");
    }

    #[test]
    fn js_names_are_lower_camel_case_words() {
        for (name, js) in [
            ("pixel_count", "pixelCount"),
            ("width", "width"),
            ("CatmullRom", "catmullRom"),
            ("r#type", "type"),
            ("_private", "private"),
            ("file-cid", "fileCid"),
            ("a-b-c", "aBC"),
            ("sha2_256", "sha2256"),
        ] {
            assert_eq!(camel(name), js, "{name}");
        }
    }

    #[test]
    fn text_is_non_empty_without_control_characters() {
        assert!(is_text("a b", &[]));
        assert!(!is_text(" \t", &['\t']));
        assert!(!is_text("a\nb", &[]));
        assert!(is_text("a\nb", &['\n']));
    }
}
