//! The errors of [`crate::derive_manifest`]: each at a [`Location`] in the
//! crate (file, 1-based line and column), saying what to fix, displayed as
//! `src/lib.rs:12:5: message`.

use std::fmt;

/// A place in one of the crate's files.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    /// Relative to the crate root: `Cargo.toml`, `src/lib.rs`, ...
    pub file: String,
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
}

impl Location {
    pub fn new(file: impl Into<String>, line: usize, column: usize) -> Self {
        Self { file: file.into(), line, column }
    }

    /// Where `span` starts in `file`, a file parsed on this thread with
    /// `span-locations` (proc-macro2 counts columns from 0); `None` for
    /// `Span::call_site()`, which syn gives the end of parsed tokens and
    /// which in a proc-macro is the attribute.
    #[cfg(feature = "derive")]
    pub fn of_span(file: &str, span: proc_macro2::Span) -> Option<Self> {
        if span.byte_range() == (0..0) {
            return None;
        }
        let start = span.start();
        Some(Self::new(file, start.line, start.column + 1))
    }

    /// Where byte `offset` of `text` (the contents of `file`) is.
    pub fn of_offset(file: &str, text: &str, offset: usize) -> Self {
        let mut end = offset.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let before = &text[..end];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Self::new(file, before.matches('\n').count() + 1, before[line_start..].chars().count() + 1)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// One reason an operation's manifest cannot be derived.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeriveError {
    /// No fn of the crate carries `#[operation]`.
    #[error("{at}: the crate has no `#[operation]` fn; add `#[braid_macros::operation]` to the `execute` fn")]
    NoOperation { at: Location },
    /// A second `#[operation]` fn (one per further fn).
    #[error(
        "{at}: a second `#[operation]` fn; the first is at {first}: an operation crate has exactly one, remove the other"
    )]
    SecondOperation { at: Location, first: Location },
    /// A `.rs` file that is not Rust syntax.
    #[error("{at}: cannot parse the file: {message}")]
    Parse { at: Location, message: String },
    /// What `#[operation]` reports: the attribute, the signature, or what the
    /// schema says of the manifest.
    #[error("{at}: {message}")]
    Check { at: Location, message: String },
    /// Cargo.toml is not TOML, or a `[package]` field is missing or not a string.
    #[error("{at}: {message}")]
    CargoToml { at: Location, message: String },
    /// A `[package]` field is inherited from a workspace.
    #[error(
        "{at}: `package.{field}` is inherited from a workspace (`{field}.workspace = true`); \
         the Cargo.toml must be standalone: write the value itself"
    )]
    Inherited { at: Location, field: String },
}

impl DeriveError {
    /// Where the error is.
    pub fn location(&self) -> &Location {
        match self {
            Self::NoOperation { at }
            | Self::SecondOperation { at, .. }
            | Self::Parse { at, .. }
            | Self::Check { at, .. }
            | Self::CargoToml { at, .. }
            | Self::Inherited { at, .. } => at,
        }
    }
}

/// Every error found (at least one), in the order found: Cargo.toml, the
/// files by path, then the operation's checks in the macro's order. Displayed
/// one per line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", lines(.0))]
pub struct DeriveErrors(pub Vec<DeriveError>);

fn lines(errors: &[DeriveError]) -> String {
    errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
}

impl DeriveErrors {
    pub fn iter(&self) -> std::slice::Iter<'_, DeriveError> {
        self.0.iter()
    }
}

impl IntoIterator for DeriveErrors {
    type Item = DeriveError;
    type IntoIter = std::vec::IntoIter<DeriveError>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_become_lines_and_columns() {
        let text = "a\nbc\n\u{e9}x";
        assert_eq!(Location::of_offset("f", text, 0).to_string(), "f:1:1");
        assert_eq!(Location::of_offset("f", text, 3).to_string(), "f:2:2");
        // Columns count characters: `x` follows a two-byte `é`.
        assert_eq!(Location::of_offset("f", text, 7).to_string(), "f:3:2");
        assert_eq!(Location::of_offset("f", text, 99).to_string(), "f:3:3");
    }
}
