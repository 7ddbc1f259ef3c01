//! The static description of an operation that `#[operation]` emits next to
//! its `execute` fn (`OPERATION`), so registries and generated code can
//! learn an operation's shape without parsing its manifest.

use crate::{ConfigKey, Error};

/// What `#[operation]` knows about an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperationInfo {
    /// The operation name (the crate name), e.g. `op_multihash`.
    pub name: &'static str,
    /// The crate version.
    pub version: &'static str,
    /// Input type names, e.g. `["Bytes"]`; one entry `T` for flow control.
    pub inputs: &'static [&'static str],
    /// Output type name, e.g. `Multihash` or `Vec<T>`.
    pub output: &'static str,
    /// Declared config keys.
    pub config: &'static [ConfigKey],
    /// Whether the operation takes a variable number of inputs (group
    /// `FLOWCONTROL`).
    pub flow_control: bool,
    /// The operation manifest as canonical JSON (sorted keys, no
    /// whitespace); its blake3 CIDv1 is the operation's version id.
    pub manifest_json: &'static str,
}

impl OperationInfo {
    /// The error for config `key` = `value` that the operation's code does
    /// not handle: [`Error::NotCompiledIn`] when the value is declared (its
    /// cargo feature is off), else [`Error::InvalidConfigValue`] listing the
    /// declared values. For the fallback arm of an operation's `match`.
    ///
    /// Inlined, so that only the fields it reads of the operation's
    /// `OPERATION` constant are kept in a build, not the whole constant
    /// (its manifest JSON is half a kilobyte a Wasm module has no use for).
    #[inline(always)]
    pub fn config_error(&self, key: &str, value: &str) -> Error {
        config_error(self.name, self.config, key, value)
    }
}

#[inline(never)]
fn config_error(operation: &str, config: &[ConfigKey], key: &str, value: &str) -> Error {
    let allowed = config.iter().find(|k| k.name == key).map_or(&[][..], |k| k.allowed);
    if allowed.contains(&value) {
        Error::not_compiled_in(operation, key, value)
    } else {
        Error::InvalidConfigValue {
            operation: operation.into(),
            key: key.into(),
            found: value.into(),
            expected: crate::config::join(allowed.iter().copied()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    const OP: OperationInfo = OperationInfo {
        name: "op",
        version: "0.1.0",
        inputs: &["Bytes"],
        output: "Bytes",
        config: &[ConfigKey { name: "hasher", allowed: &["blake3", "sha2-256"] }],
        flow_control: false,
        manifest_json: "{}",
    };

    #[test]
    fn config_errors_tell_a_value_left_out_from_an_unknown_one() {
        assert_eq!(
            OP.config_error("hasher", "sha2-256").to_string(),
            "op: config `hasher` = `sha2-256` is not compiled in; enable the cargo feature `hasher-sha2-256`"
        );
        assert_eq!(
            OP.config_error("hasher", "md5").to_string(),
            "op: config `hasher` cannot be `md5`; expected one of: blake3, sha2-256"
        );
    }
}
