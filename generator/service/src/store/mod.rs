//! The service's state behind the [`Store`] traits (builds, one row per
//! build id, each knowing its workflow id; jobs, the persisted queue;
//! artifacts; publish jobs; the registries' packages), and its embedded
//! backend, [`Sqlite`] (WAL); [`Postgres`] is the shared one. The SQLite
//! schema is versioned ([`migrations`]). Submissions run in an immediate
//! transaction, so identical manifests arriving together get one job.
//! Before every write the database file is checked to still be the one
//! opened: a file deleted or replaced under the server would otherwise take
//! every later write silently into an unlinked inode.

mod columns;
mod migrations;
mod packages;
mod postgres;
mod publishes;
mod state;

pub use migrations::LATEST as SCHEMA_VERSION;
pub use packages::{Ecosystem, Package, Packages};
pub use postgres::Postgres;
pub use publishes::{NewPublish, Publish, PublishSubmission, PublishedOperation, Publishes};
pub use state::{BuildState, JobState};

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use braid::build::Report;
use braid::target::Target;
use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

use crate::ids::{BuildId, ContentId, JobId, WorkflowId};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// The database file is no longer the one the server opened.
    #[error("the database file {0} was deleted or replaced while the server ran; it takes no writes until the server is restarted")]
    Gone(String),
    /// Written by a newer server: this one does not know its schema.
    #[error("the database has schema version {found}, newer than the {supported} this braid knows; run a braid at least as new as the one that wrote it")]
    TooNew { found: i64, supported: i64 },
    #[error("migrating the database to schema version {version}: {source}")]
    Migration { version: i64, source: rusqlite::Error },
    #[error("PostgreSQL: {0}")]
    Postgres(#[from] ::postgres::Error),
    #[error("PostgreSQL: {0}")]
    Pool(#[from] r2d2::Error),
    #[error("migrating the PostgreSQL schema to version {version}: {source}")]
    PgMigration { version: i64, source: ::postgres::Error },
    #[error("the database URL is not valid ({0}); it looks like postgres://USER:PASSWORD@HOST:PORT/DATABASE")]
    Url(String),
    /// A row that does not parse: a damaged database.
    #[error("a damaged row in the database: {0}")]
    Damaged(String),
}

impl StoreError {
    /// SQLite could not write for lack of space.
    pub fn is_disk_full(&self) -> bool {
        match self {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => e.code == rusqlite::ErrorCode::DiskFull,
            StoreError::Postgres(e) => e.code() == Some(&::postgres::error::SqlState::DISK_FULL),
            _ => false,
        }
    }
}

/// How many times a build interrupted by a crash is started again.
pub const MAX_ATTEMPTS: i64 = 2;

/// The embedded backend: one SQLite file (WAL) under the data directory.
pub struct Sqlite {
    conn: Mutex<Connection>,
    path: PathBuf,
    /// Device and inode of the file opened.
    identity: (u64, u64),
    /// Set once the file is found deleted or replaced; never cleared.
    gone: AtomicBool,
}

/// An artifact of a build.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct Artifact {
    /// `crate.tar.gz`, `pkg-node.tgz`, `pkg-web.tgz`, `pkg-bundler.tgz`,
    /// `<crate name>.wasm`, or, for the component target,
    /// `<crate name>.component.wasm` and `world.wit`.
    pub name: String,
    /// CIDv1 (raw, blake3, base32) of the bytes; `GET /v1/artifacts/{cid}`.
    pub cid: ContentId,
    pub size: u64,
    pub media_type: String,
}

/// A build to record: what [`Builds::submit`] takes.
#[derive(Debug, Clone)]
pub struct NewBuild {
    pub id: BuildId,
    pub workflow_id: WorkflowId,
    /// The workflow's name.
    pub name: String,
    /// The manifest's canonical JSON.
    pub manifest: String,
    pub targets: Vec<Target>,
}

/// What a submission led to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Submission {
    /// Already built with the same manifest, operations, targets and toolchain.
    Built { artifacts: Vec<Artifact> },
    /// A build of the same thing is queued or running: this is its job.
    Joined { job_id: JobId, state: JobState },
    /// A new job.
    Queued { job_id: JobId },
}

/// A build job, as `GET /v1/jobs/{id}` shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Job {
    pub id: JobId,
    pub state: JobState,
    /// The workflow built: the CID of its manifest.
    pub workflow_id: WorkflowId,
    /// The build this job makes; `GET /v1/builds/{id}`.
    pub build_id: BuildId,
    /// The build step under way, e.g. `[4/7] wasm`.
    pub progress: String,
    /// The last lines of the build log.
    pub log_tail: String,
    pub error: Option<String>,
}

/// A build as stored.
#[derive(Debug, Clone)]
pub struct BuildRow {
    pub id: BuildId,
    pub workflow_id: WorkflowId,
    pub name: String,
    /// The manifest's canonical JSON.
    pub manifest: String,
    pub targets: Vec<Target>,
    pub state: BuildState,
    pub report: Option<Report>,
    pub artifacts: Vec<Artifact>,
}

/// A job a worker took from the queue.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub job_id: JobId,
    pub build_id: BuildId,
    pub manifest: String,
    pub targets: Vec<Target>,
    /// 1 for the first run, 2 after a restart interrupted it, ...
    pub attempt: i64,
}

pub(crate) fn now() -> i64 {
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

/// Records artifacts (their bytes are in the artifact store already).
fn insert_artifacts(tx: &rusqlite::Transaction<'_>, artifacts: &[Artifact]) -> Result<(), StoreError> {
    for a in artifacts {
        tx.execute(
            "INSERT OR IGNORE INTO artifacts (cid, size, media_type) VALUES (?1, ?2, ?3)",
            params![a.cid, a.size as i64, a.media_type],
        )?;
    }
    Ok(())
}

/// A workflow in the list of `GET /v1/workflows`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowRow {
    pub id: WorkflowId,
    pub name: String,
    /// How many builds it has (one per set of targets and toolchain).
    pub builds: u32,
}

const BUILD_COLUMNS: &str = "id, workflow_id, name, manifest, targets, state, report, artifacts";

/// Column `index` of `r`, JSON text parsed into `T`: a row that does not
/// parse is an error, like any other malformed row, never an empty value.
fn json_column<T: serde::de::DeserializeOwned>(r: &rusqlite::Row<'_>, index: usize) -> rusqlite::Result<T> {
    let text: String = r.get(index)?;
    serde_json::from_str(&text)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(index, rusqlite::types::Type::Text, Box::new(e)))
}

/// Like [`json_column`], for a column that may be NULL.
fn optional_json<T: serde::de::DeserializeOwned>(r: &rusqlite::Row<'_>, index: usize) -> rusqlite::Result<Option<T>> {
    match r.get_ref(index)? {
        rusqlite::types::ValueRef::Null => Ok(None),
        _ => json_column(r, index).map(Some),
    }
}

fn build_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<BuildRow> {
    Ok(BuildRow {
        id: r.get(0)?,
        workflow_id: r.get(1)?,
        name: r.get(2)?,
        manifest: r.get(3)?,
        targets: json_column(r, 4)?,
        state: r.get(5)?,
        report: optional_json(r, 6)?,
        artifacts: optional_json(r, 7)?.unwrap_or_default(),
    })
}

/// The service's state, wherever it is kept: [`Sqlite`] (embedded, one
/// process) or [`Postgres`] (shared by any number of API processes and
/// workers). Every method is blocking: call it off the async threads.
pub trait Store: Builds + Publishes + Packages + Send + Sync {}

impl<T: Builds + Publishes + Packages + Send + Sync> Store for T {}

/// Builds, their jobs (the persisted queue) and their artifacts.
pub trait Builds {
    /// The store no longer takes writes and will not again until the
    /// server restarts (the SQLite file was deleted or replaced).
    fn is_gone(&self) -> bool {
        false
    }

    /// Whether the store takes writes now; why not if it does not.
    fn check(&self) -> Result<(), StoreError>;

    /// After a crash: jobs whose runner is gone run again, unless they
    /// already had [`MAX_ATTEMPTS`]; then they fail. Returns how many of
    /// each.
    fn recover(&self) -> Result<(usize, usize), StoreError>;

    /// Records a submission: reuses a finished build, joins a pending one,
    /// or queues a new job. Identical submissions arriving together get one
    /// job.
    fn submit(&self, build: &NewBuild) -> Result<Submission, StoreError>;

    /// Takes the oldest queued job, marking it running (and, where several
    /// processes share the store, leased to this one: see
    /// [`Builds::heartbeat`]).
    fn claim(&self) -> Result<Option<Claimed>, StoreError>;

    /// Renews the lease of a running job; `false` once the job is no longer
    /// this process's (its lease ran out and another worker took it): the
    /// build must stop. Stores of a single process hold no leases.
    fn heartbeat(&self, _job_id: &JobId) -> Result<bool, StoreError> {
        Ok(true)
    }

    /// Puts a running job back in the queue without counting the attempt
    /// (this process is shutting down).
    fn requeue(&self, job_id: &JobId) -> Result<(), StoreError>;

    /// Forgets artifacts found damaged or missing: their rows go, and every
    /// build listing one of them is `missing`, so that the next identical
    /// submission builds again.
    fn forget_artifacts(&self, cids: &[ContentId]) -> Result<(), StoreError>;

    /// The step under way and the log so far.
    fn progress(&self, job_id: &JobId, progress: &str, log: &str) -> Result<(), StoreError>;

    /// Ends a job with its build's report, artifacts (already in the
    /// artifact store) and registry packages, in one transaction.
    fn succeed(
        &self,
        job_id: &JobId,
        build_id: &BuildId,
        report: &Report,
        artifacts: &[Artifact],
        packages: &[Package],
    ) -> Result<(), StoreError>;

    fn fail(&self, job_id: &JobId, build_id: &BuildId, error: &str) -> Result<(), StoreError>;

    fn job(&self, id: &JobId) -> Result<Option<Job>, StoreError>;

    fn build(&self, id: &BuildId) -> Result<Option<BuildRow>, StoreError>;

    /// The builds of a workflow, oldest first.
    fn builds_of(&self, workflow: &WorkflowId) -> Result<Vec<BuildRow>, StoreError>;

    /// The media type of a stored artifact, and the name a build gave it
    /// (`pkg-node.tgz`; the same bytes may have several, one is taken).
    fn artifact(&self, cid: &ContentId) -> Result<Option<(String, Option<String>)>, StoreError>;

    /// Workflows with at least one build, by id, `limit` at most, after
    /// `after` (paging), with name `name` only if given.
    fn workflows(
        &self,
        name: Option<&str>,
        after: Option<&WorkflowId>,
        limit: u32,
    ) -> Result<Vec<WorkflowRow>, StoreError>;

    /// Jobs by state, for metrics.
    fn job_counts(&self) -> Result<Vec<(JobState, i64)>, StoreError>;
}

impl Sqlite {
    /// Opens (or creates) the database and brings its schema up to date;
    /// refuses one written by a newer server.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        migrations::migrate(&mut conn)?;
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

    pub(super) fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent
        // (transactions roll back), so a poisoned lock is still usable.
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The connection, for a write: the file is checked first.
    pub(super) fn writer(&self) -> Result<std::sync::MutexGuard<'_, Connection>, StoreError> {
        let conn = self.conn();
        self.check_file()?;
        Ok(conn)
    }
}

impl Builds for Sqlite {
    fn is_gone(&self) -> bool {
        Sqlite::is_gone(self)
    }

    fn check(&self) -> Result<(), StoreError> {
        self.check_file()
    }

    fn recover(&self) -> Result<(usize, usize), StoreError> {
        let conn = self.writer()?;
        let retried = conn.execute(
            "UPDATE jobs SET state = ?1, progress = 'requeued after a restart' WHERE state = ?2 AND attempts < ?3",
            params![JobState::Queued, JobState::Running, MAX_ATTEMPTS],
        )?;
        let failed: Vec<(JobId, BuildId)> = conn
            .prepare("SELECT id, build_id FROM jobs WHERE state = ?1")?
            .query_map([JobState::Running], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        for (job, build) in &failed {
            conn.execute(
                "UPDATE jobs SET state = ?2, error = 'the build was interrupted (server restart) too many times', finished_at = ?3 WHERE id = ?1",
                params![job, JobState::Failed, now()],
            )?;
            conn.execute("UPDATE builds SET state = ?2 WHERE id = ?1", params![build, BuildState::Failed])?;
        }
        Ok((retried, failed.len()))
    }

    /// Records a submission: reuses a finished build, joins a pending one,
    /// or queues a new job.
    fn submit(&self, build: &NewBuild) -> Result<Submission, StoreError> {
        let mut conn = self.writer()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let existing: Option<(BuildState, Option<String>)> = tx
            .query_row("SELECT state, artifacts FROM builds WHERE id = ?1", params![build.id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        if let Some((state, artifacts)) = &existing {
            if *state == BuildState::Succeeded {
                let artifacts = artifacts.as_deref().and_then(|a| serde_json::from_str(a).ok()).unwrap_or_default();
                return Ok(Submission::Built { artifacts });
            }
            let pending: Option<(JobId, JobState)> = tx
                .query_row(
                    "SELECT id, state FROM jobs WHERE build_id = ?1 AND state IN (?2, ?3) ORDER BY seq LIMIT 1",
                    params![build.id, JobState::Queued, JobState::Running],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            if let Some((job_id, state)) = pending {
                return Ok(Submission::Joined { job_id, state });
            }
        }
        let targets_json = serde_json::to_string(&build.targets).expect("targets serialize");
        tx.execute(
            "INSERT INTO builds (id, workflow_id, name, manifest, targets, state, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT(id) DO UPDATE SET state = ?6",
            params![build.id, build.workflow_id, build.name, build.manifest, targets_json, BuildState::Building, now()],
        )?;
        let job_id = JobId::new_random();
        let seq: i64 = tx.query_row("SELECT COALESCE(MAX(seq), 0) + 1 FROM jobs", [], |r| r.get(0))?;
        tx.execute(
            "INSERT INTO jobs (id, build_id, state, created_at, seq) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![job_id, build.id, JobState::Queued, now(), seq],
        )?;
        tx.commit()?;
        Ok(Submission::Queued { job_id })
    }

    /// Takes the oldest queued job, marking it running.
    fn claim(&self) -> Result<Option<Claimed>, StoreError> {
        let mut conn = self.writer()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let next: Option<(JobId, BuildId)> = tx
            .query_row("SELECT id, build_id FROM jobs WHERE state = ?1 ORDER BY seq LIMIT 1", [JobState::Queued], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        let Some((job_id, build_id)) = next else { return Ok(None) };
        tx.execute(
            "UPDATE jobs SET state = ?3, attempts = attempts + 1, started_at = ?2, progress = 'starting' WHERE id = ?1",
            params![job_id, now(), JobState::Running],
        )?;
        let (manifest, targets): (String, Vec<Target>) =
            tx.query_row("SELECT manifest, targets FROM builds WHERE id = ?1", params![build_id], |r| {
                Ok((r.get(0)?, json_column(r, 1)?))
            })?;
        let attempt: i64 = tx.query_row("SELECT attempts FROM jobs WHERE id = ?1", params![job_id], |r| r.get(0))?;
        tx.commit()?;
        Ok(Some(Claimed { job_id, build_id, manifest, targets, attempt }))
    }

    /// Puts a running job back in the queue without counting the attempt
    /// (the server is shutting down; the next start runs it).
    fn requeue(&self, job_id: &JobId) -> Result<(), StoreError> {
        self.writer()?.execute(
            "UPDATE jobs SET state = ?2, attempts = MAX(attempts - 1, 0), progress = 'requeued: the server shut down'
             WHERE id = ?1 AND state = ?3",
            params![job_id, JobState::Queued, JobState::Running],
        )?;
        Ok(())
    }

    /// Forgets artifacts found damaged or missing on disk: their rows go, and
    /// every build listing one of them is `missing`, so that the next
    /// identical submission builds again.
    fn forget_artifacts(&self, cids: &[ContentId]) -> Result<(), StoreError> {
        let mut conn = self.writer()?;
        let tx = conn.transaction()?;
        for cid in cids {
            tx.execute("DELETE FROM artifacts WHERE cid = ?1", params![cid])?;
            tx.execute("DELETE FROM packages WHERE cid = ?1", params![cid])?;
            tx.execute(
                "UPDATE builds SET state = ?2 WHERE state = ?3 AND instr(artifacts, ?1) > 0",
                params![format!("\"{cid}\""), BuildState::Missing, BuildState::Succeeded],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    fn progress(&self, job_id: &JobId, progress: &str, log: &str) -> Result<(), StoreError> {
        self.writer()?.execute(
            "UPDATE jobs SET progress = ?2, log = ?3 WHERE id = ?1",
            params![job_id, progress, tail(log, 64 * 1024)],
        )?;
        Ok(())
    }

    fn succeed(
        &self,
        job_id: &JobId,
        build_id: &BuildId,
        report: &Report,
        artifacts: &[Artifact],
        packages: &[Package],
    ) -> Result<(), StoreError> {
        let mut conn = self.writer()?;
        let tx = conn.transaction()?;
        packages::record_build(build_id.as_str(), packages, |of| packages::record(&tx, build_id.as_str(), of))?;
        insert_artifacts(&tx, artifacts)?;
        tx.execute(
            "UPDATE builds SET state = ?2, report = ?3, artifacts = ?4 WHERE id = ?1",
            params![
                build_id,
                BuildState::Succeeded,
                serde_json::to_string(report).expect("a report serializes"),
                serde_json::to_string(artifacts).expect("artifacts serialize")
            ],
        )?;
        tx.execute(
            "UPDATE jobs SET state = ?3, progress = 'done', finished_at = ?2 WHERE id = ?1",
            params![job_id, now(), JobState::Succeeded],
        )?;
        tx.commit()?;
        Ok(())
    }

    fn fail(&self, job_id: &JobId, build_id: &BuildId, error: &str) -> Result<(), StoreError> {
        let mut conn = self.writer()?;
        let tx = conn.transaction()?;
        tx.execute(
            "UPDATE jobs SET state = ?4, error = ?2, finished_at = ?3 WHERE id = ?1",
            params![job_id, tail(error, 8 * 1024), now(), JobState::Failed],
        )?;
        tx.execute("UPDATE builds SET state = ?2 WHERE id = ?1", params![build_id, BuildState::Failed])?;
        tx.commit()?;
        Ok(())
    }

    fn job(&self, id: &JobId) -> Result<Option<Job>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT jobs.id, jobs.state, builds.workflow_id, jobs.build_id, jobs.progress, jobs.log, jobs.error
                 FROM jobs JOIN builds ON builds.id = jobs.build_id WHERE jobs.id = ?1",
                params![id],
                |r| {
                    let log: String = r.get(5)?;
                    Ok(Job {
                        id: r.get(0)?,
                        state: r.get(1)?,
                        workflow_id: r.get(2)?,
                        build_id: r.get(3)?,
                        progress: r.get(4)?,
                        log_tail: tail(&log, 4096),
                        error: r.get(6)?,
                    })
                },
            )
            .optional()?)
    }

    fn build(&self, id: &BuildId) -> Result<Option<BuildRow>, StoreError> {
        Ok(self
            .conn()
            .query_row(&format!("SELECT {BUILD_COLUMNS} FROM builds WHERE id = ?1"), params![id], build_row)
            .optional()?)
    }

    /// The builds of a workflow, oldest first.
    fn builds_of(&self, workflow: &WorkflowId) -> Result<Vec<BuildRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(&format!("SELECT {BUILD_COLUMNS} FROM builds WHERE workflow_id = ?1 ORDER BY created_at, id"))?;
        let rows = stmt.query_map(params![workflow], build_row)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// The media type of a stored artifact, and the name a build gave it
    /// (`pkg-node.tgz`; the same bytes may have several, one is taken).
    fn artifact(&self, cid: &ContentId) -> Result<Option<(String, Option<String>)>, StoreError> {
        let conn = self.conn();
        let Some(media_type) = conn
            .query_row("SELECT media_type FROM artifacts WHERE cid = ?1", params![cid], |r| r.get::<_, String>(0))
            .optional()?
        else {
            return Ok(None);
        };
        // A CID is 59 characters of [a-z2-7]: found in a build's artifact
        // list only where that list names it.
        let lists: Option<String> = conn
            .query_row(
                "SELECT artifacts FROM builds WHERE artifacts LIKE '%' || ?1 || '%' ORDER BY created_at, id LIMIT 1",
                params![cid],
                |r| r.get(0),
            )
            .optional()?;
        let name = lists
            .and_then(|text| serde_json::from_str::<Vec<Artifact>>(&text).ok())
            .and_then(|list| list.into_iter().find(|a| &a.cid == cid).map(|a| a.name));
        Ok(Some((media_type, name)))
    }

    /// Workflows with at least one build, by id, `limit` at most, after
    /// `after` (paging), with name `name` only if given.
    fn workflows(
        &self,
        name: Option<&str>,
        after: Option<&WorkflowId>,
        limit: u32,
    ) -> Result<Vec<WorkflowRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT workflow_id, MIN(name), COUNT(*) FROM builds
             WHERE (?1 IS NULL OR name = ?1) AND (?2 IS NULL OR workflow_id > ?2)
             GROUP BY workflow_id ORDER BY workflow_id LIMIT ?3",
        )?;
        let rows = stmt
            .query_map(params![name, after, limit], |r| {
                Ok(WorkflowRow { id: r.get(0)?, name: r.get(1)?, builds: r.get(2)? })
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Jobs by state, for metrics.
    fn job_counts(&self) -> Result<Vec<(JobState, i64)>, StoreError> {
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

    fn store() -> Sqlite {
        let dir = std::env::temp_dir().join(format!("braid-store-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        Sqlite::open(&dir.join("db.sqlite")).unwrap()
    }

    fn cid(seed: &str) -> ContentId {
        ContentId::of(seed.as_bytes())
    }

    /// A build named `seed` of the manifest `{}`.
    fn new_build(seed: &str, targets: &[&str]) -> NewBuild {
        NewBuild {
            id: BuildId::parse(cid(seed).as_str()).unwrap(),
            workflow_id: WorkflowId::parse(cid("{}").as_str()).unwrap(),
            name: "a".into(),
            manifest: "{}".into(),
            targets: targets.iter().map(|t| t.parse().unwrap()).collect(),
        }
    }

    fn report() -> Report {
        serde_json::from_value(serde_json::json!({
            "workflow": "a", "id": cid("{}").as_str(), "crate_name": "wf_a", "targets": ["native"],
            "timings_ms": {"generate": 1}, "sizes_bytes": {}, "artifacts": {}
        }))
        .unwrap()
    }

    fn artifact(seed: &str) -> Artifact {
        Artifact { name: "x.wasm".into(), cid: cid(seed), size: 1, media_type: "application/wasm".into() }
    }

    #[test]
    fn a_deleted_database_takes_no_more_writes() {
        let s = store();
        s.submit(&new_build("w1", &[])).unwrap();
        std::fs::remove_file(&s.path).unwrap();
        let err = s.submit(&new_build("w2", &[])).unwrap_err();
        assert!(matches!(err, StoreError::Gone(_)), "{err}");
        assert!(s.is_gone());
        assert!(matches!(s.claim(), Err(StoreError::Gone(_))));
        // A new file at the same path is not the database either.
        std::fs::write(&s.path, b"").unwrap();
        assert!(matches!(s.submit(&new_build("w3", &[])), Err(StoreError::Gone(_))));
        assert!(s.job_counts().is_ok(), "reads still answer");
    }

    #[test]
    fn forgotten_artifacts_make_their_builds_run_again() {
        let s = store();
        let b = new_build("w1", &["native"]);
        let Submission::Queued { job_id } = s.submit(&b).unwrap() else { panic!() };
        s.claim().unwrap().unwrap();
        let a = artifact("c1");
        s.succeed(&job_id, &b.id, &report(), std::slice::from_ref(&a), &[]).unwrap();
        assert_eq!(s.build(&b.id).unwrap().unwrap().report, Some(report()));
        s.forget_artifacts(std::slice::from_ref(&a.cid)).unwrap();
        assert_eq!(s.artifact(&a.cid).unwrap(), None);
        assert_eq!(s.build(&b.id).unwrap().unwrap().state, BuildState::Missing);
        assert!(matches!(s.submit(&b).unwrap(), Submission::Queued { .. }));
    }

    #[test]
    fn a_damaged_row_is_an_error_not_an_empty_value() {
        let s = store();
        let b = new_build("w1", &["native"]);
        let Submission::Queued { .. } = s.submit(&b).unwrap() else { panic!() };
        s.conn.lock().unwrap().execute("UPDATE builds SET targets = 'not json'", []).unwrap();
        assert!(s.build(&b.id).is_err(), "a build row whose targets do not parse was read");
        assert!(s.claim().is_err(), "a job was claimed with targets that do not parse");
    }

    #[test]
    fn a_requeued_job_keeps_its_attempts() {
        let s = store();
        let Submission::Queued { job_id } = s.submit(&new_build("w", &[])).unwrap() else { panic!() };
        assert_eq!(s.claim().unwrap().unwrap().attempt, 1);
        s.requeue(&job_id).unwrap();
        assert_eq!(s.job(&job_id).unwrap().unwrap().state, JobState::Queued);
        assert_eq!(s.claim().unwrap().unwrap().attempt, 1, "a shutdown does not count as an attempt");
    }

    #[test]
    fn identical_submissions_share_a_job_and_reuse_a_build() {
        let s = store();
        let b = new_build("w1", &["native"]);
        let Submission::Queued { job_id } = s.submit(&b).unwrap() else { panic!() };
        assert_eq!(s.submit(&b).unwrap(), Submission::Joined { job_id: job_id.clone(), state: JobState::Queued });
        let claimed = s.claim().unwrap().unwrap();
        assert_eq!((&claimed.job_id, &claimed.build_id), (&job_id, &b.id));
        assert!(s.claim().unwrap().is_none());
        assert_eq!(s.submit(&b).unwrap(), Submission::Joined { job_id: job_id.clone(), state: JobState::Running });
        let a = artifact("c");
        s.succeed(&job_id, &b.id, &report(), std::slice::from_ref(&a), &[]).unwrap();
        assert_eq!(s.submit(&b).unwrap(), Submission::Built { artifacts: vec![a] });
        let job = s.job(&job_id).unwrap().unwrap();
        assert_eq!((job.state, &job.build_id, &job.workflow_id), (JobState::Succeeded, &b.id, &b.workflow_id));
        // Another build of the same workflow.
        let other = new_build("w2", &["nostd"]);
        s.submit(&other).unwrap();
        let builds: Vec<BuildId> = s.builds_of(&b.workflow_id).unwrap().into_iter().map(|r| r.id).collect();
        assert_eq!(builds.len(), 2);
        assert!(builds.contains(&b.id) && builds.contains(&other.id));
    }

    #[test]
    fn interrupted_jobs_are_retried_then_failed() {
        let s = store();
        let b = new_build("w", &[]);
        let Submission::Queued { job_id } = s.submit(&b).unwrap() else { panic!() };
        for attempt in 1..=MAX_ATTEMPTS {
            s.claim().unwrap().unwrap();
            let (retried, failed) = s.recover().unwrap();
            if attempt < MAX_ATTEMPTS {
                assert_eq!((retried, failed), (1, 0));
                assert_eq!(s.job(&job_id).unwrap().unwrap().state, JobState::Queued);
            } else {
                assert_eq!((retried, failed), (0, 1));
                let job = s.job(&job_id).unwrap().unwrap();
                assert_eq!(job.state, JobState::Failed);
                assert!(job.error.unwrap().contains("interrupted"));
                assert_eq!(s.build(&b.id).unwrap().unwrap().state, BuildState::Failed);
            }
        }
        // A failed build can be submitted again.
        assert!(matches!(s.submit(&b).unwrap(), Submission::Queued { .. }));
    }

    /// A database written before schema versions (version 0: `workflows`
    /// keyed by the build key, `jobs.workflow_id`) opens migrated: its
    /// builds keep their ids and learn their workflow id, its queue and
    /// artifacts are kept, and the same submission is answered from them.
    #[test]
    fn a_database_from_before_versions_is_migrated() {
        let dir = std::env::temp_dir().join(format!("braid-store-old-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("db.sqlite");
        let manifest = r#"{"name":"a","segments":[],"version":"0.1.0"}"#;
        let (built, pending, c) = (cid("k1"), cid("k2"), cid("c"));
        let queued_job = JobId::new_random();
        {
            let old = Connection::open(&path).unwrap();
            old.execute_batch(
                "CREATE TABLE workflows (
                    id TEXT PRIMARY KEY, name TEXT NOT NULL, manifest TEXT NOT NULL, targets TEXT NOT NULL,
                    state TEXT NOT NULL, report TEXT, artifacts TEXT, created_at INTEGER NOT NULL);
                 CREATE TABLE jobs (
                    id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL, state TEXT NOT NULL,
                    progress TEXT NOT NULL DEFAULT '', log TEXT NOT NULL DEFAULT '', error TEXT,
                    attempts INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,
                    started_at INTEGER, finished_at INTEGER, seq INTEGER NOT NULL);
                 CREATE INDEX jobs_state ON jobs(state, seq);
                 CREATE TABLE artifacts (cid TEXT PRIMARY KEY, size INTEGER NOT NULL, media_type TEXT NOT NULL);",
            )
            .unwrap();
            let artifacts = serde_json::to_string(&[artifact("c")]).unwrap();
            let report = serde_json::to_string(&report()).unwrap();
            old.execute(
                "INSERT INTO workflows VALUES (?1, 'a', ?2, '[\"native\"]', 'succeeded', ?3, ?4, 1),
                                              (?5, 'a', ?2, '[\"node\"]', 'building', NULL, NULL, 2)",
                params![built.as_str(), manifest, report, artifacts, pending.as_str()],
            )
            .unwrap();
            old.execute(
                "INSERT INTO jobs (id, workflow_id, state, created_at, seq) VALUES (?1, ?2, 'queued', 2, 1)",
                params![queued_job.as_str(), pending.as_str()],
            )
            .unwrap();
            old.execute("INSERT INTO artifacts VALUES (?1, 1, 'application/wasm')", params![c.as_str()]).unwrap();
            assert_eq!(old.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0)).unwrap(), 0);
        }
        let s = Sqlite::open(&path).unwrap();
        let version: i64 = s.conn().pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let workflow_id = WorkflowId::parse(&braid::content_id(manifest.as_bytes())).unwrap();
        let row = s.build(&BuildId::parse(built.as_str()).unwrap()).unwrap().unwrap();
        assert_eq!((row.state, &row.workflow_id, row.report), (BuildState::Succeeded, &workflow_id, Some(report())));
        assert_eq!(s.builds_of(&workflow_id).unwrap().len(), 2);
        let job = s.job(&queued_job).unwrap().unwrap();
        assert_eq!(
            (job.state, job.build_id.as_str(), &job.workflow_id),
            (JobState::Queued, pending.as_str(), &workflow_id)
        );
        assert_eq!(s.artifact(&c).unwrap(), Some(("application/wasm".to_string(), Some(artifact("c").name))));
        let again = NewBuild {
            id: row.id.clone(),
            workflow_id: workflow_id.clone(),
            name: "a".into(),
            manifest: manifest.into(),
            targets: vec![Target::Native],
        };
        assert_eq!(s.submit(&again).unwrap(), Submission::Built { artifacts: vec![artifact("c")] });
        assert_eq!(s.claim().unwrap().unwrap().job_id, queued_job, "the queue survived");
        drop(s);
        // Opening it again changes nothing.
        let s = Sqlite::open(&path).unwrap();
        assert_eq!(s.builds_of(&workflow_id).unwrap().len(), 2);
        drop(s);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_database_from_a_newer_server_is_refused() {
        let dir = std::env::temp_dir().join(format!("braid-store-new-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("db.sqlite");
        Connection::open(&path).unwrap().pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
        let err = Sqlite::open(&path).err().expect("refused");
        assert!(matches!(err, StoreError::TooNew { .. }), "{err}");
        assert!(err.to_string().contains("newer than"), "{err}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
