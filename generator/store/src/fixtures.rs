//! What the store's tests build on: a fresh database of either backend
//! ([`TempDb`]; PostgreSQL's comes from `cargo xtask test-postgres`, which
//! starts one and names it in `BRAID_TEST_POSTGRES`), the stores of any
//! number of processes on it, and builds, reports and artifacts made from
//! a seed.

use std::path::PathBuf;
use std::time::Duration;

use braid::build::Report;

use super::{Artifact, Location, NewBuild, Store};
use crate::ids::{BuildId, ContentId, WorkflowId};

/// Which database a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Db {
    Sqlite,
    Postgres,
}

/// A fresh, empty database, gone with the value (SQLite; a PostgreSQL
/// database is left to the throwaway server).
pub(crate) struct TempDb {
    pub(crate) location: Location,
    /// Holds the SQLite file.
    _dir: Option<tempfile::TempDir>,
}

impl TempDb {
    pub(crate) async fn new(db: Db) -> Self {
        match db {
            Db::Sqlite => {
                let dir = tempfile::tempdir().expect("a temporary directory");
                Self { location: Location::File(dir.path().join("db.sqlite")), _dir: Some(dir) }
            }
            Db::Postgres => {
                let admin = std::env::var("BRAID_TEST_POSTGRES")
                    .expect("BRAID_TEST_POSTGRES: run these through `cargo xtask test-postgres`");
                let name = format!("braid_test_{}", uuid::Uuid::new_v4().simple());
                sqlx::any::install_default_drivers();
                let mut admin_conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&admin).await.unwrap();
                sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                    .execute(&mut admin_conn)
                    .await
                    .unwrap();
                let (base, _) = admin.rsplit_once('/').unwrap();
                Self { location: Location::Postgres(format!("{base}/{name}")), _dir: None }
            }
        }
    }

    /// The SQLite file.
    pub(crate) fn path(&self) -> PathBuf {
        match &self.location {
            Location::File(path) => path.clone(),
            Location::Postgres(_) => panic!("not a SQLite database"),
        }
    }

    /// A process's store on it, leasing the jobs it claims for `lease_secs`.
    pub(crate) async fn process(&self, lease_secs: u64) -> Store {
        Store::open(&self.location, Duration::from_secs(lease_secs), Duration::from_secs(10)).await.unwrap()
    }

    /// Runs `sql` on the database, outside any store (making an old one,
    /// damaging one).
    pub(crate) async fn execute(&self, sql: &str) {
        let url = match &self.location {
            Location::File(path) => super::sqlite_url(path).unwrap(),
            Location::Postgres(url) => url.clone(),
        };
        sqlx::any::install_default_drivers();
        let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&url).await.unwrap();
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string())).execute(&mut conn).await.unwrap();
        sqlx::Connection::close(conn).await.unwrap();
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
        third_party: Vec::new(),
        operations: [("op_x".to_string(), cid("op_x").as_str().to_string())].into(),
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
