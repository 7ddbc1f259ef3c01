//! Service state in SQLite (WAL): workflows (one row per build key), jobs
//! (the persisted queue) and artifacts. Submissions run in an immediate
//! transaction, so identical manifests arriving together get one job.
//! Before every write the database file is checked to still be the one
//! opened: a file deleted or replaced under the server would otherwise take
//! every later write silently into an unlinked inode.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// The database file is no longer the one the server opened.
    #[error("the database file {0} was deleted or replaced while the server ran; it takes no writes until the server is restarted")]
    Gone(String),
}

impl StoreError {
    /// SQLite could not write for lack of space.
    pub fn is_disk_full(&self) -> bool {
        matches!(self, StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::DiskFull)
    }
}

/// How many times a build interrupted by a crash is started again.
pub const MAX_ATTEMPTS: i64 = 2;

pub struct Store {
    conn: Mutex<Connection>,
    path: PathBuf,
    /// Device and inode of the file opened.
    identity: (u64, u64),
    /// Set once the file is found deleted or replaced; never cleared.
    gone: AtomicBool,
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
    /// 1 for the first run, 2 after a restart interrupted it, ...
    pub attempt: i64,
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
        let identity = file_identity(path).map_err(|source| StoreError::Io { path: path.to_path_buf(), source })?;
        Ok(Self { conn: Mutex::new(conn), path: path.to_path_buf(), identity, gone: AtomicBool::new(false) })
    }

    /// The file was deleted or replaced since the server opened it.
    pub fn is_gone(&self) -> bool {
        self.gone.load(Ordering::Relaxed)
    }

    /// Refuses writes once the file on disk is not the one opened (checked
    /// on every write, so the first write after a deletion already fails).
    pub fn check_file(&self) -> Result<(), StoreError> {
        let name = || self.path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        if self.is_gone() {
            return Err(StoreError::Gone(name()));
        }
        if file_identity(&self.path).ok() != Some(self.identity) {
            if !self.gone.swap(true, Ordering::Relaxed) {
                tracing::error!(
                    "{} was deleted or replaced while the server ran: refusing every write from now on; restart the server",
                    self.path.display()
                );
            }
            return Err(StoreError::Gone(name()));
        }
        Ok(())
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent
        // (transactions roll back), so a poisoned lock is still usable.
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The connection, for a write: the file is checked first.
    fn writer(&self) -> Result<std::sync::MutexGuard<'_, Connection>, StoreError> {
        let conn = self.conn();
        self.check_file()?;
        Ok(conn)
    }

    /// After a crash: jobs left `running` were interrupted. They run again,
    /// unless they already had [`MAX_ATTEMPTS`]; then they fail.
    pub fn recover(&self) -> Result<(usize, usize), StoreError> {
        let conn = self.writer()?;
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
        let mut conn = self.writer()?;
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
        let mut conn = self.writer()?;
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
        let attempt: i64 = tx.query_row("SELECT attempts FROM jobs WHERE id = ?1", params![job_id], |r| r.get(0))?;
        tx.commit()?;
        Ok(Some(Claimed {
            job_id,
            workflow_id,
            manifest,
            targets: serde_json::from_str(&targets).unwrap_or_default(),
            attempt,
        }))
    }

    /// Puts a running job back in the queue without counting the attempt
    /// (the server is shutting down; the next start runs it).
    pub fn requeue(&self, job_id: &str) -> Result<(), StoreError> {
        self.writer()?.execute(
            "UPDATE jobs SET state = 'queued', attempts = MAX(attempts - 1, 0), progress = 'requeued: the server shut down'
             WHERE id = ?1 AND state = 'running'",
            params![job_id],
        )?;
        Ok(())
    }

    /// Forgets artifacts found damaged or missing on disk: their rows go, and
    /// every build listing one of them is `missing`, so that the next
    /// identical submission builds again.
    pub fn forget_artifacts(&self, cids: &[String]) -> Result<(), StoreError> {
        let mut conn = self.writer()?;
        let tx = conn.transaction()?;
        for cid in cids {
            tx.execute("DELETE FROM artifacts WHERE cid = ?1", params![cid])?;
            tx.execute(
                "UPDATE workflows SET state = 'missing' WHERE state = 'succeeded' AND instr(artifacts, ?1) > 0",
                params![format!("\"{cid}\"")],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    pub fn progress(&self, job_id: &str, progress: &str, log: &str) -> Result<(), StoreError> {
        self.writer()?.execute(
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
        let mut conn = self.writer()?;
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
        let mut conn = self.writer()?;
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

fn file_identity(path: &Path) -> std::io::Result<(u64, u64)> {
    let meta = std::fs::metadata(path)?;
    Ok((meta.dev(), meta.ino()))
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
    fn a_deleted_database_takes_no_more_writes() {
        let s = store();
        s.submit("w1", "a", "{}", &[]).unwrap();
        std::fs::remove_file(&s.path).unwrap();
        let err = s.submit("w2", "a", "{}", &[]).unwrap_err();
        assert!(matches!(err, StoreError::Gone(_)), "{err}");
        assert!(s.is_gone());
        assert!(matches!(s.claim(), Err(StoreError::Gone(_))));
        // A new file at the same path is not the database either.
        std::fs::write(&s.path, b"").unwrap();
        assert!(matches!(s.submit("w3", "a", "{}", &[]), Err(StoreError::Gone(_))));
        assert!(s.job_counts().is_ok(), "reads still answer");
    }

    #[test]
    fn forgotten_artifacts_make_their_builds_run_again() {
        let s = store();
        let t = vec!["native".to_string()];
        let Submission::Queued { job_id } = s.submit("w1", "a", "{}", &t).unwrap() else { panic!() };
        s.claim().unwrap().unwrap();
        let a = Artifact { name: "x.wasm".into(), cid: "c1".into(), size: 1, media_type: "application/wasm".into() };
        s.succeed(&job_id, "w1", &serde_json::json!({}), std::slice::from_ref(&a)).unwrap();
        s.forget_artifacts(&["c1".into()]).unwrap();
        assert_eq!(s.artifact("c1").unwrap(), None);
        assert_eq!(s.workflow("w1").unwrap().unwrap().state, "missing");
        assert!(matches!(s.submit("w1", "a", "{}", &t).unwrap(), Submission::Queued { .. }));
    }

    #[test]
    fn a_requeued_job_keeps_its_attempts() {
        let s = store();
        let Submission::Queued { job_id } = s.submit("w", "a", "{}", &[]).unwrap() else { panic!() };
        assert_eq!(s.claim().unwrap().unwrap().attempt, 1);
        s.requeue(&job_id).unwrap();
        assert_eq!(s.job(&job_id).unwrap().unwrap().state, "queued");
        assert_eq!(s.claim().unwrap().unwrap().attempt, 1, "a shutdown does not count as an attempt");
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
