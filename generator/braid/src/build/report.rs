//! `report.json`: what a build made, how long each step took, the sizes
//! of its binaries and the CID of every artifact.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::fsutil::{self, FsError};
use crate::target::Target;

/// `report.json`, and the [`Event::Report`] of `braid build --events json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Report {
    /// The workflow's name.
    pub workflow: String,
    /// The workflow id: CIDv1 of the manifest's canonical JSON.
    pub id: String,
    pub crate_name: String,
    pub targets: Vec<Target>,
    /// The version id of every crate it was built on (its operations and
    /// the registered crates they depend on), by crate name.
    #[serde(default)]
    pub operations: BTreeMap<String, String>,
    pub timings_ms: BTreeMap<String, u64>,
    pub sizes_bytes: BTreeMap<String, u64>,
    /// Every file under `pkg/` and the crate's own files, by path relative
    /// to the output directory, with its CIDv1 (raw, blake3, base32).
    pub artifacts: BTreeMap<String, String>,
    /// With `--dist`: the distribution under `dist/`, every file the
    /// publish service serves of the build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dist: Option<crate::package::dist::Dist>,
    /// With the `http` target: the largest request body its HTTP function
    /// reads, in bytes (`--http-input-limit`, else the default), compiled
    /// into it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_input_limit_bytes: Option<u64>,
}

impl Report {
    /// The CIDs of a build's artifacts in `out`: the crate's own files,
    /// then every file under `pkg/`, `component/`, `http/` and `steps/`.
    pub fn artifacts_in(out: &Path) -> Result<BTreeMap<String, String>, FsError> {
        let mut artifacts = BTreeMap::new();
        for rel in ["crate/Cargo.toml", "crate/Cargo.lock", "crate/src/lib.rs"] {
            artifacts.insert(rel.to_string(), braid_schema::content_id(&fsutil::read(&out.join(rel))?));
        }
        for dir in ["pkg", "component", "http", crate::target::STEPS_DIR] {
            let path = out.join(dir);
            if path.is_dir() {
                for rel in fsutil::walk(&path)? {
                    let name = Path::new(dir).join(&rel).to_string_lossy().replace('\\', "/");
                    artifacts.insert(name, braid_schema::content_id(&fsutil::read(&path.join(&rel))?));
                }
            }
        }
        Ok(artifacts)
    }

    /// Writes the report as `out/report.json`.
    pub fn write(&self, out: &Path) -> Result<(), FsError> {
        let text = serde_json::to_string_pretty(self).expect("a report serializes") + "\n";
        fsutil::write(&out.join("report.json"), text.as_bytes())
    }
}
