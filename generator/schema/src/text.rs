//! Small text rules shared by the checks: message truncation, what counts
//! as manifest text, and crate names: how Rust code spells one
//! ([`lib_name`]) and when two are the same name ([`name_key`]), written
//! once for the macro, the compiler and the service.

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
    fn text_is_non_empty_without_control_characters() {
        assert!(is_text("a b", &[]));
        assert!(!is_text(" \t", &['\t']));
        assert!(!is_text("a\nb", &[]));
        assert!(is_text("a\nb", &['\n']));
    }
}
