//! Config keys: the declaration of a key with its allowed values
//! ([`ConfigKey`], as operations carry it at run time), the rules for keys
//! and values in manifests, and the cargo feature that gates a value
//! ([`value_feature`]).

use alloc::string::String;

/// A config key an operation declares, with its allowed values; the first is
/// the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigKey {
    /// The key.
    pub name: &'static str,
    /// The allowed values, default first.
    pub allowed: &'static [&'static str],
}

/// The cargo feature that compiles in config value `value` of `key`:
/// `key-value` (e.g. `hasher-blake3`).
///
/// An operation may put the code of each allowed value of a key behind
/// such a feature (every value or none: [`crate::OperationManifest::problems`]
/// checks). Generated workflows then enable only the values they configure,
/// so a workflow that hashes with blake3 does not link sha2.
pub fn value_feature(key: &str, value: &str) -> String {
    alloc::format!("{key}-{value}")
}

/// Whether `key` may name a config key: an ASCII letter or `_`, then ASCII
/// letters, digits and `_`, at most 64 characters.
pub fn is_key(key: &str) -> bool {
    let mut chars = key.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && key.len() <= 64
}

/// Whether `value` may be an allowed config value: non-empty text without
/// control characters.
pub fn is_value(value: &str) -> bool {
    crate::text::is_text(value, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_features_join_key_and_value() {
        assert_eq!(value_feature("hasher", "sha2-256"), "hasher-sha2-256");
    }

    #[test]
    fn keys_are_identifiers_and_values_text() {
        assert!(is_key("hasher") && is_key("_x1") && is_key("Base"));
        assert!(!is_key("") && !is_key("1a") && !is_key("a-b") && !is_key("r#type"));
        assert!(is_value("sha2-256") && !is_value("") && !is_value("a\nb"));
    }
}
