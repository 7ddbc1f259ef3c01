//! The static description of an operation that `#[operation]` emits next to
//! its `execute` fn (`OPERATION`), so registries and generated code can
//! learn an operation's shape without parsing its manifest.

use crate::ConfigKey;

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
