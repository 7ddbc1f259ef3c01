//! What may be written as a Rust identifier in generated code as it is:
//! crate names from the registry, checked when a crate is registered
//! ([`crate::registry`]) and again when code names them ([`crate::codegen`]).

/// Whether `name` may be used as a Rust identifier as it is: ASCII, not a
/// keyword. Generated identifiers come from the registry (crate names) and
/// from indices, never from manifest text; this checks that invariant.
pub fn is_plain_ident(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name != "_"
        && !crate::schema::RUST_KEYWORDS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        assert!(is_plain_ident("op_cid"));
        for bad in ["self", "crate", "Self", "fn", "1a", "a-b", "é", ""] {
            assert!(!is_plain_ident(bad), "{bad}");
        }
    }
}
