//! What the store's tests build on (both backends): a store on a fresh
//! SQLite file, and builds, reports and artifacts made from a seed.

use braid::build::Report;

use super::{Artifact, NewBuild, Sqlite};
use crate::ids::{BuildId, ContentId, WorkflowId};

/// A store on a fresh SQLite file in a temporary directory, which goes
/// with it (tests).
pub(crate) struct TempStore {
    store: Sqlite,
    /// Removed after the store is closed (fields drop in order).
    _dir: tempfile::TempDir,
}

impl TempStore {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        Self { store: Sqlite::open(&dir.path().join("db.sqlite")).expect("a new database"), _dir: dir }
    }
}

impl std::ops::Deref for TempStore {
    type Target = Sqlite;

    fn deref(&self) -> &Sqlite {
        &self.store
    }
}

/// The content id of `seed`.
pub(crate) fn cid(seed: &str) -> ContentId {
    ContentId::of(seed.as_bytes())
}

/// A build named `seed` of the manifest `{}`, for `targets`.
pub(crate) fn new_build(seed: &str, targets: &[&str]) -> NewBuild {
    NewBuild {
        id: BuildId::parse(cid(seed).as_str()).unwrap(),
        workflow_id: WorkflowId::parse(cid("{}").as_str()).unwrap(),
        name: "a".into(),
        manifest: "{}".into(),
        targets: targets.iter().map(|t| t.parse().unwrap()).collect(),
    }
}

/// The report of a native build of that manifest.
pub(crate) fn report() -> Report {
    serde_json::from_value(serde_json::json!({
        "workflow": "a", "id": cid("{}").as_str(), "crate_name": "wf_a", "targets": ["native"],
        "timings_ms": {"generate": 1}, "sizes_bytes": {}, "artifacts": {}
    }))
    .unwrap()
}

/// An artifact whose content id is `seed`'s.
pub(crate) fn artifact(seed: &str) -> Artifact {
    Artifact { name: "x.wasm".into(), cid: cid(seed), size: 1, media_type: "application/wasm".into() }
}
