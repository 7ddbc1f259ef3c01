//! Builds (one row per build id, each knowing its workflow id), the build
//! jobs of the queue ([`Kind::BUILD`], about a build id) and the
//! artifacts builds made. A build is `building` exactly while a job of it
//! is queued or running.

use std::collections::BTreeMap;

use braid::build::Report;
use braid::target::Target;
use serde::Serialize;
use sqlx::any::AnyRow;
use sqlx::{Any, Transaction};

use super::packages::{self, Package};
use super::queue::{Claim, Kind};
use super::rows::{int, json, optional_json, optional_text, parsed, text};
use super::{insert_artifacts, now, now_ms, tail, Artifact, BuildState, JobState, Lock, Store, StoreError};
use crate::ids::{BuildId, ContentId, JobId, WorkflowId};

/// A build to record: what [`Store::submit`] takes.
#[derive(Debug, Clone)]
pub struct NewBuild {
    pub id: BuildId,
    pub workflow_id: WorkflowId,
    /// The workflow's name.
    pub name: String,
    /// The manifest's canonical JSON.
    pub manifest: String,
    pub targets: Vec<Target>,
    /// Version ids of the crates it builds on that did not ship with
    /// braid, as the submission resolved them.
    pub third_party: Vec<String>,
    /// The version id of every crate it builds on (its operations and the
    /// registered crates they depend on), by crate name, as the submission
    /// resolved them and its id names them: what the build is made of.
    pub operations: BTreeMap<String, String>,
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

/// A build job a worker took from the queue.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub job_id: JobId,
    pub build_id: BuildId,
    pub manifest: String,
    pub targets: Vec<Target>,
    /// As [`NewBuild::third_party`]; `None` for a build submitted before
    /// braid kept it.
    pub third_party: Option<Vec<String>>,
    /// As [`NewBuild::operations`]; `None` for a build submitted before
    /// braid kept them (it then resolves them again).
    pub operations: Option<BTreeMap<String, String>>,
    /// 1 for the first run, 2 after an interruption, ...
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

/// A build's state and artifacts, for [`built`].
const BUILT: &str = "SELECT state, artifacts FROM builds WHERE id = $1";

/// What a submission of the build in `row` ([`BUILT`]) gets if it was made.
fn built(row: &AnyRow) -> Result<Option<Submission>, StoreError> {
    if parsed::<BuildState>(row, 0)? != BuildState::Succeeded {
        return Ok(None);
    }
    Ok(Some(Submission::Built { artifacts: optional_json(row, 1)?.unwrap_or_default() }))
}

fn build_row(r: &AnyRow) -> Result<BuildRow, StoreError> {
    Ok(BuildRow {
        id: parsed(r, 0)?,
        workflow_id: parsed(r, 1)?,
        name: text(r, 2)?,
        manifest: text(r, 3)?,
        targets: json(r, 4)?,
        state: parsed(r, 5)?,
        report: optional_json(r, 6)?,
        artifacts: optional_json(r, 7)?.unwrap_or_default(),
    })
}

impl Store {
    /// Records a submission: reuses a finished build, joins a pending one,
    /// or queues a new job. Identical submissions arriving together (at any
    /// process) get one job.
    pub async fn submit(&self, build: &NewBuild) -> Result<Submission, StoreError> {
        // The common case, a build made already, needs no transaction.
        let row = sqlx::query(BUILT).bind(build.id.as_str()).fetch_optional(&self.pool).await?;
        if let Some(built) = row.as_ref().map(built).transpose()?.flatten() {
            return Ok(built);
        }
        let mut tx = self.writer().await?;
        self.serialize(&mut tx, Lock::Submit, build.id.as_str()).await?;
        let row = sqlx::query(BUILT).bind(build.id.as_str()).fetch_optional(&mut *tx).await?;
        if let Some(row) = row {
            if let Some(built) = built(&row)? {
                return Ok(built);
            }
            if let Some((job_id, state)) = self.pending(&mut tx, Kind::BUILD, build.id.as_str()).await? {
                return Ok(Submission::Joined { job_id, state });
            }
        }
        sqlx::query(
            "INSERT INTO builds (id, workflow_id, name, manifest, targets, state, created_at, third_party, operations)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             ON CONFLICT (id) DO UPDATE SET state = excluded.state, third_party = excluded.third_party,
             operations = excluded.operations",
        )
        .bind(build.id.as_str())
        .bind(build.workflow_id.as_str())
        .bind(&build.name)
        .bind(&build.manifest)
        .bind(serde_json::to_string(&build.targets).expect("targets serialize"))
        .bind(BuildState::Building.as_str())
        .bind(now())
        .bind(serde_json::to_string(&build.third_party).expect("version ids serialize"))
        .bind(serde_json::to_string(&build.operations).expect("version ids serialize"))
        .execute(&mut *tx)
        .await?;
        let job_id = JobId::new_random();
        self.enqueue(&mut tx, Kind::BUILD, &job_id, build.id.as_str()).await?;
        tx.commit().await?;
        Ok(Submission::Queued { job_id })
    }

    /// Takes the oldest queued build job (see [`Store::claim`]), with what
    /// it builds: a worker's claim in one call, for tests, here and of the
    /// crates above (the runner claims by kind, then loads).
    #[doc(hidden)]
    pub async fn claim_build(&self) -> Result<Option<Claimed>, StoreError> {
        match self.claim(Kind::BUILD).await? {
            Some(claim) => self.claimed_build(&claim).await.map(Some),
            None => Ok(None),
        }
    }

    /// What the claimed build job `claim` builds.
    pub async fn claimed_build(&self, claim: &Claim) -> Result<Claimed, StoreError> {
        let row = sqlx::query("SELECT id, manifest, targets, third_party, operations FROM builds WHERE id = $1")
            .bind(&claim.subject)
            .fetch_one(&self.pool)
            .await?;
        Ok(Claimed {
            job_id: claim.id.clone(),
            build_id: parsed(&row, 0)?,
            manifest: text(&row, 1)?,
            targets: json(&row, 2)?,
            third_party: optional_json(&row, 3)?,
            operations: optional_json(&row, 4)?,
            attempt: claim.attempt,
        })
    }

    /// Builds left `building` with no job queued or running (their last
    /// job failed for good) fail too.
    pub(super) async fn fail_orphaned_builds(&self, tx: &mut Transaction<'static, Any>) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE builds SET state = $1 WHERE state = $2 AND NOT EXISTS
             (SELECT 1 FROM jobs WHERE jobs.subject = builds.id AND jobs.kind = $3 AND jobs.state IN ($4, $5))",
        )
        .bind(BuildState::Failed.as_str())
        .bind(BuildState::Building.as_str())
        .bind(Kind::BUILD.as_str())
        .bind(JobState::Queued.as_str())
        .bind(JobState::Running.as_str())
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// Forgets artifacts found damaged or missing: their rows go, and every
    /// build listing one of them is `missing`, so that the next identical
    /// submission builds again.
    pub async fn forget_artifacts(&self, cids: &[ContentId]) -> Result<(), StoreError> {
        let mut tx = self.writer().await?;
        for cid in cids {
            sqlx::query("DELETE FROM artifacts WHERE cid = $1").bind(cid.as_str()).execute(&mut *tx).await?;
            sqlx::query("DELETE FROM packages WHERE cid = $1").bind(cid.as_str()).execute(&mut *tx).await?;
            // A CID is 59 characters of [a-z2-7]: found in a build's
            // artifact list only where that list names it.
            sqlx::query("UPDATE builds SET state = $2 WHERE state = $3 AND artifacts LIKE '%' || $1 || '%'")
                .bind(format!("\"{cid}\""))
                .bind(BuildState::Missing.as_str())
                .bind(BuildState::Succeeded.as_str())
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Ends a build job with its build's report, artifacts (already in the
    /// artifact store) and registry packages, in one transaction; nothing
    /// if this process no longer holds the job.
    pub async fn succeed(
        &self,
        job_id: &JobId,
        build_id: &BuildId,
        report: &Report,
        artifacts: &[Artifact],
        packages: &[Package],
    ) -> Result<(), StoreError> {
        let mut tx = self.writer().await?;
        if !self.holds(&mut tx, job_id).await? {
            return Ok(());
        }
        self.serialize(&mut tx, Lock::Packages, "").await?;
        for ecosystem in packages::ECOSYSTEMS {
            let of: Vec<Package> = packages.iter().filter(|p| p.ecosystem == ecosystem).cloned().collect();
            let conflicts = packages::record(&mut tx, build_id.as_str(), &of).await?;
            if !conflicts.is_empty() {
                tracing::warn!(
                    build = %build_id,
                    "not in the registries: {} already published with other content (bump the workflow's version)",
                    conflicts.join(", ")
                );
            }
        }
        insert_artifacts(&mut tx, artifacts).await?;
        sqlx::query("UPDATE builds SET state = $2, report = $3, artifacts = $4, built_at = $5 WHERE id = $1")
            .bind(build_id.as_str())
            .bind(BuildState::Succeeded.as_str())
            .bind(serde_json::to_string(report).expect("a report serializes"))
            .bind(serde_json::to_string(artifacts).expect("artifacts serialize"))
            .bind(now_ms())
            .execute(&mut *tx)
            .await?;
        self.end(&mut tx, job_id, "done", None, None).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Ends a build job, and its build, failed; nothing if this process no
    /// longer holds the job.
    pub async fn fail(&self, job_id: &JobId, build_id: &BuildId, error: &str) -> Result<(), StoreError> {
        let mut tx = self.writer().await?;
        if !self.holds(&mut tx, job_id).await? {
            return Ok(());
        }
        self.end(&mut tx, job_id, "failed", Some(error), None).await?;
        sqlx::query("UPDATE builds SET state = $2 WHERE id = $1")
            .bind(build_id.as_str())
            .bind(BuildState::Failed.as_str())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// A build job.
    pub async fn job(&self, id: &JobId) -> Result<Option<Job>, StoreError> {
        let row = sqlx::query(
            "SELECT jobs.id, jobs.state, builds.workflow_id, jobs.subject, jobs.progress, jobs.log, jobs.error
             FROM jobs JOIN builds ON builds.id = jobs.subject WHERE jobs.id = $1 AND jobs.kind = $2",
        )
        .bind(id.as_str())
        .bind(Kind::BUILD.as_str())
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| {
            Ok(Job {
                id: parsed(&r, 0)?,
                state: parsed(&r, 1)?,
                workflow_id: parsed(&r, 2)?,
                build_id: parsed(&r, 3)?,
                progress: text(&r, 4)?,
                log_tail: tail(&text(&r, 5)?, 4096),
                error: optional_text(&r, 6)?,
            })
        })
        .transpose()
    }

    pub async fn build(&self, id: &BuildId) -> Result<Option<BuildRow>, StoreError> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {BUILD_COLUMNS} FROM builds WHERE id = $1")))
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(build_row).transpose()
    }

    /// The builds of a workflow, oldest first.
    pub async fn builds_of(&self, workflow: &WorkflowId) -> Result<Vec<BuildRow>, StoreError> {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {BUILD_COLUMNS} FROM builds WHERE workflow_id = $1 ORDER BY created_at, id"
        )))
        .bind(workflow.as_str())
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(build_row)
        .collect()
    }

    /// The build of a workflow that succeeded last with an artifact whose
    /// name ends with `suffix` (no `%` or `_` in it): one query on the
    /// `builds_built` index, newest first, reading rows only until one has
    /// it.
    pub async fn newest_build_with(&self, workflow: &WorkflowId, suffix: &str) -> Result<Option<BuildRow>, StoreError> {
        // The artifacts column is the JSON of [`Artifact`]s: `"name":"..."`.
        let named = format!("%{suffix}\"%");
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {BUILD_COLUMNS} FROM builds WHERE workflow_id = $1 AND built_at IS NOT NULL AND state = $2
             AND artifacts LIKE $3 ORDER BY built_at DESC, id DESC LIMIT 1"
        )))
        .bind(workflow.as_str())
        .bind(BuildState::Succeeded.as_str())
        .bind(named)
        .fetch_optional(&self.pool)
        .await?
        .as_ref()
        .map(build_row)
        .transpose()
    }

    /// The media type of a stored artifact, and the name a build gave it
    /// (`pkg-node.tgz`; the same bytes may have several, one is taken).
    pub async fn artifact(&self, cid: &ContentId) -> Result<Option<(String, Option<String>)>, StoreError> {
        let Some(row) = sqlx::query("SELECT media_type FROM artifacts WHERE cid = $1")
            .bind(cid.as_str())
            .fetch_optional(&self.pool)
            .await?
        else {
            return Ok(None);
        };
        let media_type = text(&row, 0)?;
        let lists = sqlx::query(
            "SELECT artifacts FROM builds WHERE artifacts LIKE '%' || $1 || '%' ORDER BY created_at, id LIMIT 1",
        )
        .bind(cid.as_str())
        .fetch_optional(&self.pool)
        .await?;
        let name = match lists {
            Some(r) => optional_json::<Vec<Artifact>>(&r, 0)?
                .and_then(|list| list.into_iter().find(|a| &a.cid == cid).map(|a| a.name)),
            None => None,
        };
        Ok(Some((media_type, name)))
    }

    /// Workflows with at least one build, by id, `limit` at most, after
    /// `after` (paging), with name `name` only if given.
    pub async fn workflows(
        &self,
        name: Option<&str>,
        after: Option<&WorkflowId>,
        limit: u32,
    ) -> Result<Vec<WorkflowRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT workflow_id, MIN(name), COUNT(*) FROM builds
             WHERE (CAST($1 AS TEXT) IS NULL OR name = $1) AND (CAST($2 AS TEXT) IS NULL OR workflow_id > $2)
             GROUP BY workflow_id ORDER BY workflow_id LIMIT $3",
        )
        .bind(name)
        .bind(after.map(WorkflowId::as_str))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| Ok(WorkflowRow { id: parsed(r, 0)?, name: text(r, 1)?, builds: int(r, 2)? as u32 }))
            .collect()
    }
}
