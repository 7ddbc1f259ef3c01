//! The operation manifest (DESIGN.md, "Operations"): its typed form, parsing
//! with unknown fields rejected, and the version id: the CIDv1 (raw codec,
//! blake3, base32) of its canonical JSON, computed with Braid's own
//! `op_multihash` and `op_cid`.

use std::collections::BTreeMap;

use braid_support::typename::TypeName;
use serde::{Deserialize, Serialize};

/// An operation manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperationManifest {
    pub name: String,
    pub version: String,
    pub description: String,
    /// Input type names; a single `T` for flow-control operations.
    pub inputs: Vec<String>,
    pub output: String,
    /// Config keys with their allowed values, default first.
    pub config: BTreeMap<String, Vec<String>>,
    pub groups: Vec<String>,
    pub features: Vec<String>,
    /// Of `native`, `nostd`, `wasm`.
    pub targets: Vec<String>,
    pub repository: String,
    pub license: String,
}

/// A manifest that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("not a valid operation manifest: {0}")]
    Json(#[from] serde_json::Error),
    #[error("operation manifest `{name}`: {reason}")]
    Invalid { name: String, reason: String },
}

impl OperationManifest {
    /// Parses and checks a manifest (type names, targets, flow control).
    pub fn parse(text: &str) -> Result<Self, ManifestError> {
        let manifest: Self = serde_json::from_str(text)?;
        manifest.check()?;
        Ok(manifest)
    }

    fn check(&self) -> Result<(), ManifestError> {
        let invalid = |reason: String| ManifestError::Invalid { name: self.name.clone(), reason };
        let inputs = self
            .inputs
            .iter()
            .map(|t| TypeName::parse(t).map_err(|e| invalid(e.to_string())))
            .collect::<Result<Vec<_>, _>>()?;
        let output = TypeName::parse(&self.output).map_err(|e| invalid(e.to_string()))?;
        if output.is_generic() && !inputs.iter().any(TypeName::is_generic) {
            return Err(invalid(format!(
                "output `{output}` has a type parameter that no input has; is it a misspelt type?"
            )));
        }
        if inputs.iter().any(TypeName::is_generic) && !self.is_flow_control() {
            return Err(invalid("only FLOWCONTROL operations take generic inputs".into()));
        }
        if self.inputs.is_empty() {
            return Err(invalid("an operation takes at least one input".into()));
        }
        if let Some(t) = self.targets.iter().find(|t| !["native", "nostd", "wasm"].contains(&t.as_str())) {
            return Err(invalid(format!("unknown target `{t}`; expected native, nostd or wasm")));
        }
        if self.is_flow_control() && self.inputs.len() != 1 {
            return Err(invalid("a FLOWCONTROL operation declares one input type".into()));
        }
        if let Some((key, _)) = self.config.iter().find(|(_, v)| v.is_empty()) {
            return Err(invalid(format!("config `{key}` has no allowed values")));
        }
        Ok(())
    }

    /// Whether the operation takes a variable number of inputs.
    pub fn is_flow_control(&self) -> bool {
        self.groups.iter().any(|g| g == "FLOWCONTROL")
    }

    /// Whether the operation runs on `target` (`native`, `nostd`, `wasm`).
    pub fn supports(&self, target: &str) -> bool {
        self.targets.iter().any(|t| t == target)
    }

    /// The canonical JSON text (sorted keys, no whitespace).
    pub fn canonical_json(&self) -> String {
        let value = serde_json::to_value(self).expect("a manifest always serializes");
        braid_support::json::canonical(&value)
    }

    /// The pretty form committed as `operations/<op>/manifest.json`: sorted
    /// keys, two-space indent, trailing newline.
    pub fn pretty_json(&self) -> String {
        let value: serde_json::Value = serde_json::from_str(&self.canonical_json()).expect("canonical JSON parses");
        let mut text = serde_json::to_string_pretty(&value).expect("a value always serializes");
        text.push('\n');
        text
    }

    /// The version id: CIDv1 (raw, blake3, base32) of the canonical JSON.
    pub fn version_id(&self) -> String {
        version_id(self.canonical_json().as_bytes())
    }
}

/// The CIDv1 (raw codec, blake3 multihash, base32) of `bytes`, computed
/// with Braid's own operations. Used for operation version ids and for
/// content ids of artifacts.
pub fn version_id(bytes: &[u8]) -> String {
    let multihash = op_multihash::hash("blake3", bytes).expect("blake3 is a built-in hasher");
    op_cid::cid_v1(0x55, "base32", &multihash).expect("a blake3 multihash always makes a CID").into_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = r#"{"config":{"hasher":["blake3","sha2-256"]},"description":"d","features":["std"],
        "groups":["SYS"],"inputs":["Bytes"],"license":"MIT","name":"op_x","output":"Multihash",
        "repository":"","targets":["native","nostd"],"version":"0.1.0"}"#;

    #[test]
    fn parses_and_canonicalizes() {
        let m = OperationManifest::parse(MANIFEST).unwrap();
        assert!(m.canonical_json().starts_with(r#"{"config":{"hasher":["blake3","sha2-256"]},"description":"d""#));
        assert!(m.supports("nostd") && !m.supports("wasm"));
        assert_eq!(OperationManifest::parse(&m.pretty_json()).unwrap(), m);
    }

    #[test]
    fn version_id_is_a_blake3_raw_cid() {
        let id = OperationManifest::parse(MANIFEST).unwrap().version_id();
        // raw (0x55) + blake3 (0x1e) in base32 always starts like this.
        assert!(id.starts_with("bafkr4i"), "{id}");
        assert_eq!(id.len(), 59);
        // Known answer from multiformats + @noble/hashes: the empty input
        // af1349b9... as a raw CIDv1.
        assert_eq!(version_id(b""), "bafkr4ifpcne3t5pzugtkaqcn5i3nzskjtpfslsnnyejlpte2spfoihzsmi");
    }

    #[test]
    fn rejects_bad_manifests() {
        let err = OperationManifest::parse(&MANIFEST.replace("\"license\"", "\"licence\"")).unwrap_err();
        assert!(err.to_string().contains("unknown field `licence`"), "{err}");
        let err = OperationManifest::parse(&MANIFEST.replace("Multihash", "Vec<Hash")).unwrap_err();
        assert!(err.to_string().contains("`Vec<Hash` is not a Braid type"), "{err}");
        let err = OperationManifest::parse(&MANIFEST.replace("Multihash", "Hash")).unwrap_err();
        assert!(err.to_string().contains("output `Hash` has a type parameter that no input has"), "{err}");
        let err = OperationManifest::parse(&MANIFEST.replace("\"nostd\"", "\"riscv\"")).unwrap_err();
        assert!(err.to_string().contains("unknown target `riscv`"), "{err}");
    }
}
