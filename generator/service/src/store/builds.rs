//! Builds (one row per build id, each knowing its workflow id), their
//! jobs (the persisted queue) and their artifacts: the [`Builds`] trait
//! and its embedded implementation on [`Sqlite`].

use braid::build::Report;
use braid::target::Target;
use rusqlite::{params, OptionalExtension};
use serde::Serialize;

use super::packages::{self, Package};
use super::{insert_artifacts, now, tail, Artifact, BuildState, JobState, Sqlite, StoreError, MAX_ATTEMPTS};
use crate::ids::{BuildId, ContentId, JobId, WorkflowId};

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
