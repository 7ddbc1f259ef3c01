//! Small text rules shared by the checks: message truncation and what
//! counts as manifest text.

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
