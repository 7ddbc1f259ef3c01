//! Service state in SQLite (WAL): workflows (one row per build key), jobs
//! (the persisted queue) and artifacts. Submissions run in an immediate
//! transaction, so identical manifests arriving together get one job.

use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
#[error("database: {0}")]
pub struct StoreError(#[from] rusqlite::Error);

/// How many times a build interrupted by a crash is started again.
pub const MAX_ATTEMPTS: i64 = 2;

pub struct Store {
    conn: Mutex<Connection>,
}

/// An artifact of a built workflow.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct Artifact {
    /// `crate.tar.gz`, `pkg-node.tgz`, `pkg-web.tgz`, `pkg-bundler.tgz` or `<crate name>.wasm`.
    pub name: String,
    /// CIDv1 (raw, blake3, base32) of the bytes; `GET /v1/artifacts/{cid}`.
    pub cid: String,
    pub size: u64,
    pub media_type: String,
}

/// What a submission led to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Submission {
    /// Already built with the same manifest, operations, targets and toolchain.
    Built { artifacts: Vec<Artifact> },
    /// A build of the same thing is queued or running: this is its job.
    Joined { job_id: String, state: String },
    /// A new job.
    Queued { job_id: String },
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Job {
    pub id: String,
    /// `queued`, `running`, `succeeded` or `failed`.
    pub state: String,
    pub workflow_id: String,
    /// The build step under way, e.g. `[4/7] wasm`.
    pub progress: String,
    /// The last lines of the build log.
    pub log_tail: String,
    pub error: Option<String>,
}

#[derive(Debug, Clone)]
pub struct WorkflowRow {
    pub id: String,
    pub name: String,
    pub manifest: String,
    pub targets: Vec<String>,
    pub state: String,
    pub report: Option<serde_json::Value>,
    pub artifacts: Vec<Artifact>,
}

/// A job a worker took from the queue.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub job_id: String,
    pub workflow_id: String,
    pub manifest: String,
    pub targets: Vec<String>,
}

fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// Keeps the end of a log.
pub fn tail(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_string();
    }
    let mut cut = text.len() - max_bytes;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    text[cut..].to_string()
}

impl Store {
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS workflows (
                id TEXT PRIMARY KEY, name TEXT NOT NULL, manifest TEXT NOT NULL, targets TEXT NOT NULL,
                state TEXT NOT NULL, report TEXT, artifacts TEXT, created_at INTEGER NOT NULL);
             CREATE TABLE IF NOT EXISTS jobs (
                id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL, state TEXT NOT NULL,
                progress TEXT NOT NULL DEFAULT '', log TEXT NOT NULL DEFAULT '', error TEXT,
                attempts INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,
                started_at INTEGER, finished_at INTEGER, seq INTEGER NOT NULL);
             CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, seq);
             CREATE TABLE IF NOT EXISTS artifacts (cid TEXT PRIMARY KEY, size INTEGER NOT NULL, media_type TEXT NOT NULL);",
        )?;
        Ok(Self { conn: Mutex::new(conn) })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent
        // (transactions roll back), so a poisoned lock is still usable.
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// After a crash: jobs left `running` were interrupted. They run again,
    /// unless they already had [`MAX_ATTEMPTS`]; then they fail.
    pub fn recover(&self) -> Result<(usize, usize), StoreError> {
        let conn = self.conn();
        let retried = conn.execute(
            "UPDATE jobs SET state = 'queued', progress = 'requeued after a restart' WHERE state = 'running' AND attempts < ?1",
            params![MAX_ATTEMPTS],
        )?;
        let failed: Vec<(String, String)> = conn
            .prepare("SELECT id, workflow_id FROM jobs WHERE state = 'running'")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        for (job, workflow) in &failed {
            conn.execute(
                "UPDATE jobs SET state = 'failed', error = 'the build was interrupted (server restart) too many times', finished_at = ?2 WHERE id = ?1",
                params![job, now()],
            )?;
            conn.execute("UPDATE workflows SET state = 'failed' WHERE id = ?1", params![workflow])?;
        }
        Ok((retried, failed.len()))
    }

    /// Records a submission: reuses a finished build, joins a pending one,
    /// or queues a new job.
    pub fn submit(&self, id: &str, name: &str, manifest: &str, targets: &[String]) -> Result<Submission, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let existing: Option<(String, Option<String>)> = tx
            .query_row("SELECT state, artifacts FROM workflows WHERE id = ?1", params![id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        if let Some((state, artifacts)) = &existing {
            if state == "succeeded" {
                let artifacts = artifacts.as_deref().and_then(|a| serde_json::from_str(a).ok()).unwrap_or_default();
                return Ok(Submission::Built { artifacts });
            }
            let pending: Option<(String, String)> = tx
                .query_row(
                    "SELECT id, state FROM jobs WHERE workflow_id = ?1 AND state IN ('queued', 'running') ORDER BY seq LIMIT 1",
                    params![id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            if let Some((job_id, state)) = pending {
                return Ok(Submission::Joined { job_id, state });
            }
        }
        let targets_json = serde_json::to_string(targets).expect("strings serialize");
        tx.execute(
            "INSERT INTO workflows (id, name, manifest, targets, state, created_at) VALUES (?1, ?2, ?3, ?4, 'building', ?5)
             ON CONFLICT(id) DO UPDATE SET state = 'building'",
            params![id, name, manifest, targets_json, now()],
        )?;
        let job_id = uuid::Uuid::new_v4().simple().to_string();
        let seq: i64 = tx.query_row("SELECT COALESCE(MAX(seq), 0) + 1 FROM jobs", [], |r| r.get(0))?;
        tx.execute(
            "INSERT INTO jobs (id, workflow_id, state, created_at, seq) VALUES (?1, ?2, 'queued', ?3, ?4)",
            params![job_id, id, now(), seq],
        )?;
        tx.commit()?;
        Ok(Submission::Queued { job_id })
    }

    /// Takes the oldest queued job, marking it running.
    pub fn claim(&self) -> Result<Option<Claimed>, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let next: Option<(String, String)> = tx
            .query_row("SELECT id, workflow_id FROM jobs WHERE state = 'queued' ORDER BY seq LIMIT 1", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        let Some((job_id, workflow_id)) = next else { return Ok(None) };
        tx.execute(
            "UPDATE jobs SET state = 'running', attempts = attempts + 1, started_at = ?2, progress = 'starting' WHERE id = ?1",
            params![job_id, now()],
        )?;
        let (manifest, targets): (String, String) =
            tx.query_row("SELECT manifest, targets FROM workflows WHERE id = ?1", params![workflow_id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        tx.commit()?;
        Ok(Some(Claimed { job_id, workflow_id, manifest, targets: serde_json::from_str(&targets).unwrap_or_default() }))
    }

    pub fn progress(&self, job_id: &str, progress: &str, log: &str) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE jobs SET progress = ?2, log = ?3 WHERE id = ?1",
            params![job_id, progress, tail(log, 64 * 1024)],
        )?;
        Ok(())
    }

    pub fn succeed(
        &self,
        job_id: &str,
        workflow_id: &str,
        report: &serde_json::Value,
        artifacts: &[Artifact],
    ) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        for a in artifacts {
            tx.execute(
                "INSERT OR IGNORE INTO artifacts (cid, size, media_type) VALUES (?1, ?2, ?3)",
                params![a.cid, a.size as i64, a.media_type],
            )?;
        }
        tx.execute(
            "UPDATE workflows SET state = 'succeeded', report = ?2, artifacts = ?3 WHERE id = ?1",
            params![workflow_id, report.to_string(), serde_json::to_string(artifacts).expect("artifacts serialize")],
        )?;
        tx.execute(
            "UPDATE jobs SET state = 'succeeded', progress = 'done', finished_at = ?2 WHERE id = ?1",
            params![job_id, now()],
        )?;
        tx.commit()?;
        Ok(())
    }

    pub fn fail(&self, job_id: &str, workflow_id: &str, error: &str) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute(
            "UPDATE jobs SET state = 'failed', error = ?2, finished_at = ?3 WHERE id = ?1",
            params![job_id, tail(error, 8 * 1024), now()],
        )?;
        tx.execute("UPDATE workflows SET state = 'failed' WHERE id = ?1", params![workflow_id])?;
        tx.commit()?;
        Ok(())
    }

    pub fn job(&self, id: &str) -> Result<Option<Job>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT id, state, workflow_id, progress, log, error FROM jobs WHERE id = ?1",
                params![id],
                |r| {
                    let log: String = r.get(4)?;
                    Ok(Job {
                        id: r.get(0)?,
                        state: r.get(1)?,
                        workflow_id: r.get(2)?,
                        progress: r.get(3)?,
                        log_tail: tail(&log, 4096),
                        error: r.get(5)?,
                    })
                },
            )
            .optional()?)
    }

    pub fn workflow(&self, id: &str) -> Result<Option<WorkflowRow>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT id, name, manifest, targets, state, report, artifacts FROM workflows WHERE id = ?1",
                params![id],
                |r| {
                    let targets: String = r.get(3)?;
                    let report: Option<String> = r.get(5)?;
                    let artifacts: Option<String> = r.get(6)?;
                    Ok(WorkflowRow {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        manifest: r.get(2)?,
                        targets: serde_json::from_str(&targets).unwrap_or_default(),
                        state: r.get(4)?,
                        report: report.and_then(|r| serde_json::from_str(&r).ok()),
                        artifacts: artifacts.and_then(|a| serde_json::from_str(&a).ok()).unwrap_or_default(),
                    })
                },
            )
            .optional()?)
    }

    pub fn artifact(&self, cid: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn()
            .query_row("SELECT media_type FROM artifacts WHERE cid = ?1", params![cid], |r| r.get(0))
            .optional()?)
    }

    /// Jobs by state, for metrics.
    pub fn job_counts(&self) -> Result<Vec<(String, i64)>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT state, COUNT(*) FROM jobs GROUP BY state ORDER BY state")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> Store {
        let dir = std::env::temp_dir().join(format!("braid-store-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        Store::open(&dir.join("db.sqlite")).unwrap()
    }

    #[test]
    fn identical_submissions_share_a_job_and_reuse_a_build() {
        let s = store();
        let t = vec!["native".to_string()];
        let Submission::Queued { job_id } = s.submit("w1", "a", "{}", &t).unwrap() else { panic!() };
        assert_eq!(
            s.submit("w1", "a", "{}", &t).unwrap(),
            Submission::Joined { job_id: job_id.clone(), state: "queued".into() }
        );
        let claimed = s.claim().unwrap().unwrap();
        assert_eq!(claimed.job_id, job_id);
        assert!(s.claim().unwrap().is_none());
        assert_eq!(
            s.submit("w1", "a", "{}", &t).unwrap(),
            Submission::Joined { job_id: job_id.clone(), state: "running".into() }
        );
        let a = Artifact { name: "x.wasm".into(), cid: "c".into(), size: 1, media_type: "application/wasm".into() };
        s.succeed(&job_id, "w1", &serde_json::json!({}), std::slice::from_ref(&a)).unwrap();
        assert_eq!(s.submit("w1", "a", "{}", &t).unwrap(), Submission::Built { artifacts: vec![a] });
        assert_eq!(s.job(&job_id).unwrap().unwrap().state, "succeeded");
    }

    #[test]
    fn interrupted_jobs_are_retried_then_failed() {
        let s = store();
        let Submission::Queued { job_id } = s.submit("w", "a", "{}", &[]).unwrap() else { panic!() };
        for attempt in 1..=MAX_ATTEMPTS {
            s.claim().unwrap().unwrap();
            let (retried, failed) = s.recover().unwrap();
            if attempt < MAX_ATTEMPTS {
                assert_eq!((retried, failed), (1, 0));
                assert_eq!(s.job(&job_id).unwrap().unwrap().state, "queued");
            } else {
                assert_eq!((retried, failed), (0, 1));
                let job = s.job(&job_id).unwrap().unwrap();
                assert_eq!(job.state, "failed");
                assert!(job.error.unwrap().contains("interrupted"));
            }
        }
        // A failed workflow can be submitted again.
        assert!(matches!(s.submit("w", "a", "{}", &[]).unwrap(), Submission::Queued { .. }));
    }
}
