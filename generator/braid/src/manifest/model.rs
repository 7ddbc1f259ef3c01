//! The workflow manifest as data, after parsing and before checking.

use std::collections::BTreeMap;

use serde::Serialize;

/// A workflow manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkflowManifest {
    pub name: String,
    pub version: String,
    pub description: String,
    pub groups: Vec<String>,
    /// Names of the external inputs, in the order `run` takes them: of the
    /// `-1`s in order, or those segments name ([`InputRef::Name`]); empty:
    /// unnamed. Not in the JSON when empty, so a manifest without names
    /// keeps its id.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    pub segments: Vec<Segment>,
}

/// A segment: inputs for its first operation, then a chain of operations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Segment {
    pub inputs: Vec<InputRef>,
    pub sequence: Vec<OperationRef>,
}

/// An operation named by `operation` + semver `version`, or by `versionId`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OperationRef {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(rename = "versionId", skip_serializing_if = "Option::is_none")]
    pub version_id: Option<String>,
    pub config: BTreeMap<String, String>,
}

/// One of a segment's inputs, as the manifest writes it.
///
/// Untagged, so a manifest of numbers serializes (and is identified) as it
/// always was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum InputRef {
    /// [`EXTERNAL`] (`-1`): the next external input, in order; `n >= 0`:
    /// the output of segment `n`.
    Index(i64),
    /// The external input of this name (from the manifest's `inputs`): the
    /// same name is the same value wherever it appears.
    Name(String),
}

/// The value of an input reference meaning "from outside the workflow".
pub const EXTERNAL: i64 = -1;
