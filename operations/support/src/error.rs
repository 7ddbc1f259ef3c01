//! The one error type of operations and generated workflows. Every message
//! names the operation (or value) it is about, what was expected and what
//! was found, so a user can act on it without reading source.

use alloc::string::String;
use core::fmt;

use braid_schema::RunErrorKind;

use crate::text::text;

/// An error raised by an operation, by config resolution, by the codec or at
/// the Wasm boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A config key the operation does not declare.
    UnknownConfigKey {
        /// The operation.
        operation: String,
        /// The key given.
        key: String,
        /// The declared keys, comma-separated.
        expected: String,
    },
    /// A config value outside the declared set.
    InvalidConfigValue {
        /// The operation.
        operation: String,
        /// The key.
        key: String,
        /// The value given.
        found: String,
        /// The allowed values, comma-separated.
        expected: String,
    },
    /// An allowed config value whose code this build left out: the
    /// operation gates it behind a cargo feature that is not enabled.
    NotCompiledIn {
        /// The operation.
        operation: String,
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// The feature that compiles it in.
        feature: String,
    },
    /// The wrong number of inputs.
    Arity {
        /// The operation (or workflow).
        operation: String,
        /// What was expected, e.g. `1` or `at least 1`.
        expected: String,
        /// How many were given.
        found: usize,
    },
    /// A value of the wrong type (typically at the Wasm boundary).
    Type {
        /// Where the value was, e.g. `op_cid input 0`.
        context: String,
        /// The expected type.
        expected: String,
        /// What was found.
        found: String,
    },
    /// An input of the right type but an unusable value.
    InvalidInput {
        /// The operation (or value type).
        operation: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A file could not be read.
    Io {
        /// The path as given.
        path: String,
        /// The system's reason.
        reason: String,
    },
    /// Encoding or decoding with the codec failed.
    Codec(String),
    /// `next` was called on a workflow that is already done.
    Done {
        /// The workflow.
        workflow: String,
    },
    /// A stream was fed or finished after it had been finished.
    Finished {
        /// The workflow.
        workflow: String,
    },
    /// A suspended state that does not belong to this workflow or is
    /// inconsistent.
    BadState {
        /// The workflow.
        workflow: String,
        /// What is wrong with the state.
        reason: String,
    },
    /// An operation's future did not complete when polled once, where no
    /// executor is available to drive it.
    Pending {
        /// The operation.
        operation: String,
    },
}

/// The messages are put together with `text!` rather than `format!`
/// (thiserror's `#[error]` writes through `core::fmt`): see `text.rs`.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl core::error::Error for Error {}

impl Error {
    /// What kind of failure it is, as a workflow component's `run-error`
    /// gives it.
    pub fn kind(&self) -> RunErrorKind {
        match self {
            Self::InvalidInput { .. } | Self::Type { .. } | Self::Arity { .. } => RunErrorKind::InvalidInput,
            Self::UnknownConfigKey { .. } | Self::InvalidConfigValue { .. } | Self::NotCompiledIn { .. } => {
                RunErrorKind::Config
            }
            _ => RunErrorKind::Failed,
        }
    }

    /// The message, as `to_string` gives it.
    pub fn message(&self) -> String {
        match self {
            Self::UnknownConfigKey { operation, key, expected } => {
                text!(operation, ": unknown config key `", key, "`; expected one of: ", expected)
            }
            Self::InvalidConfigValue { operation, key, found, expected } => {
                text!(operation, ": config `", key, "` cannot be `", found, "`; expected one of: ", expected)
            }
            Self::NotCompiledIn { operation, key, value, feature } => text!(
                operation,
                ": config `",
                key,
                "` = `",
                value,
                "` is not compiled in; enable the cargo feature `",
                feature,
                "`"
            ),
            Self::Arity { operation, expected, found } => {
                text!(operation, ": expected ", expected, " input(s), found ", found)
            }
            Self::Type { context, expected, found } => text!(context, ": expected ", expected, ", found ", found),
            Self::InvalidInput { operation, reason } => text!(operation, ": invalid input: ", reason),
            Self::Io { path, reason } => text!("cannot read `", path, "`: ", reason),
            Self::Codec(reason) => text!("codec: ", reason),
            Self::Done { workflow } => {
                text!(workflow, ": the workflow is done; create a new Workflow to run it again")
            }
            Self::Finished { workflow } => {
                text!(workflow, ": this stream is finished; call stream() again for another input")
            }
            Self::BadState { workflow, reason } => text!(workflow, ": cannot resume: ", reason),
            Self::Pending { operation } => {
                text!(operation, ": did not complete synchronously; call the async API instead")
            }
        }
    }

    /// An [`Error::InvalidInput`].
    pub fn invalid_input(operation: &str, reason: String) -> Self {
        Self::InvalidInput { operation: operation.into(), reason }
    }

    /// An [`Error::NotCompiledIn`] for value `value` of config `key`.
    pub fn not_compiled_in(operation: &str, key: &str, value: &str) -> Self {
        Self::NotCompiledIn {
            operation: operation.into(),
            key: key.into(),
            value: value.into(),
            feature: crate::value_feature(key, value),
        }
    }

    /// An [`Error::Type`].
    pub fn type_mismatch(context: &str, expected: &str, found: String) -> Self {
        Self::Type { context: context.into(), expected: expected.into(), found }
    }
}

/// Shortens `text` to at most `max` characters for an error message,
/// marking the cut with `...`.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        // `get` rather than indexing: `cut` is a char boundary, and the
        // panicking path would link core's char-escaping tables into Wasm.
        Some((cut, _)) => text!(text.get(..cut).unwrap_or(text), "..."),
        None => text.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn messages_say_what_to_fix() {
        let e = Error::InvalidConfigValue {
            operation: "op_multihash".into(),
            key: "hasher".into(),
            found: "md5".into(),
            expected: "blake3, sha2-256".into(),
        };
        assert_eq!(e.to_string(), "op_multihash: config `hasher` cannot be `md5`; expected one of: blake3, sha2-256");
        let e = Error::Arity { operation: "op_collect".into(), expected: "at least 1".into(), found: 0 };
        assert_eq!(e.to_string(), "op_collect: expected at least 1 input(s), found 0");
    }

    #[test]
    fn truncate_cuts_on_char_boundaries() {
        assert_eq!(truncate("héllo", 2), "hé...");
        assert_eq!(truncate("hi", 5), "hi");
    }
}
