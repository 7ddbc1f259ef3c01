//! The shared backend: the service's state in PostgreSQL, for any number of
//! API processes and workers on any hosts (`--database postgres://...`).
//!
//! Jobs are claimed with `FOR UPDATE SKIP LOCKED` (two workers never take
//! the same job, and neither waits for the other) and leased to the
//! claiming process for [`Postgres::lease`]; its worker renews the lease
//! while the build runs ([`Builds::heartbeat`]). A job whose lease ran out
//! (its worker was killed, its host lost) is queued again by the next
//! claim, or failed after [`MAX_ATTEMPTS`]. Every write a worker makes to a
//! job names its process, so a worker that lost its lease can no longer
//! change the job another one took over.
//!
//! Submissions of the same build, and registry packages, are serialized
//! with transaction-scoped advisory locks: identical manifests arriving at
//! two API processes together get one job. Leases are timed by the
//! database's clock, so hosts need not agree on the time.
//!
//! Why the `postgres` crate (synchronous, on tokio-postgres) with an r2d2
//! pool rather than sqlx: every store call already runs on a blocking
//! thread (the SQLite backend blocks), the queries are plain SQL with no
//! compile-time database, and it keeps one [`Store`](super::Store) trait
//! for both backends.

use std::str::FromStr;
use std::time::Duration;

use braid::build::Report;
use braid::target::Target;
use postgres::{NoTls, Row, Transaction};
use r2d2_postgres::PostgresConnectionManager;

use super::{
    now, tail, Artifact, BuildRow, BuildState, Builds, Claimed, Ecosystem, Job, JobState, NewBuild, NewPublish,
    Package, Packages, Publish, PublishSubmission, PublishedOperation, Publishes, StoreError, Submission, WorkflowRow,
    MAX_ATTEMPTS,
};
use crate::ids::{BuildId, ContentId, JobId, WorkflowId};

type Pool = r2d2::Pool<PostgresConnectionManager<NoTls>>;

/// The database's clock, in seconds (leases).
const CLOCK: &str = "EXTRACT(EPOCH FROM clock_timestamp())::BIGINT";

/// Advisory lock keys (the first half; the second is a hash where needed).
const LOCK_SCHEMA: i32 = 0x6272_0001;
const LOCK_SUBMIT: i32 = 0x6272_0002;
const LOCK_PUBLISH: i32 = 0x6272_0003;
const LOCK_PACKAGES: i32 = 0x6272_0004;

/// Migration `i` (from 0) takes the schema from version `i` to `i + 1`;
/// never edited once released. The version is kept in `braid_schema`.
const MIGRATIONS: &[&str] = &[
    // 1: the schema of SQLite's version 4, with leases; ids compare bytewise.
    r#"CREATE TABLE builds (
        id TEXT COLLATE "C" PRIMARY KEY, workflow_id TEXT COLLATE "C" NOT NULL, name TEXT NOT NULL,
        manifest TEXT NOT NULL, targets TEXT NOT NULL, state TEXT NOT NULL, report TEXT, artifacts TEXT,
        created_at BIGINT NOT NULL);
     CREATE INDEX builds_workflow ON builds(workflow_id, created_at);
     CREATE TABLE jobs (
        id TEXT PRIMARY KEY, build_id TEXT COLLATE "C" NOT NULL REFERENCES builds(id), state TEXT NOT NULL,
        progress TEXT NOT NULL DEFAULT '', log TEXT NOT NULL DEFAULT '', error TEXT,
        attempts BIGINT NOT NULL DEFAULT 0, created_at BIGINT NOT NULL, started_at BIGINT, finished_at BIGINT,
        seq BIGSERIAL NOT NULL, lease_owner TEXT, lease_until BIGINT);
     CREATE INDEX jobs_state ON jobs(state, seq);
     CREATE INDEX jobs_build ON jobs(build_id, state);
     CREATE TABLE artifacts (cid TEXT PRIMARY KEY, size BIGINT NOT NULL, media_type TEXT NOT NULL);
     CREATE TABLE publishes (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, version TEXT NOT NULL, version_id TEXT NOT NULL,
        state TEXT NOT NULL, progress TEXT NOT NULL DEFAULT '', log TEXT NOT NULL DEFAULT '', error TEXT,
        attempts BIGINT NOT NULL DEFAULT 0, created_at BIGINT NOT NULL, started_at BIGINT, finished_at BIGINT,
        seq BIGSERIAL NOT NULL, lease_owner TEXT, lease_until BIGINT);
     CREATE INDEX publishes_state ON publishes(state, seq);
     CREATE INDEX publishes_version ON publishes(version_id, state);
     CREATE TABLE packages (
        ecosystem TEXT NOT NULL, name TEXT NOT NULL, version TEXT NOT NULL, cid TEXT NOT NULL,
        entry TEXT NOT NULL, digest TEXT NOT NULL, build_id TEXT NOT NULL, created_at BIGINT NOT NULL,
        PRIMARY KEY (ecosystem, name, version));
     CREATE INDEX packages_cid ON packages(cid);"#,
    // 2: as SQLite's version 5: uploads kept in the store, registered operations listed.
    r#"ALTER TABLE publishes ADD COLUMN source_cid TEXT;
     CREATE TABLE operations (
        name TEXT NOT NULL, version TEXT NOT NULL, version_id TEXT NOT NULL, source_cid TEXT NOT NULL,
        registered_at BIGINT NOT NULL, PRIMARY KEY (name, version));"#,
    // 3: as SQLite's version 6: the owners of operation names.
    r#"CREATE TABLE owners (
        name TEXT NOT NULL, owner TEXT NOT NULL, added_at BIGINT NOT NULL, PRIMARY KEY (name, owner));"#,
];

/// The version this braid writes.
pub const LATEST: i64 = MIGRATIONS.len() as i64;

/// What `packages.build_id` says of packages from the operation registry.
const FROM_REGISTRY: &str = "registry";

pub struct Postgres {
    /// Always `Some` until dropped (see the `Drop` impl).
    pool: Option<Pool>,
    /// This process, in the leases it holds: `host:pid:random`.
    owner: String,
    /// How long a claimed job stays this process's without a heartbeat.
    lease: i64,
}

impl Postgres {
    /// Connects to `url` (`postgres://user:password@host:port/database`),
    /// waiting up to `connect_timeout`, and brings the schema up to date
    /// (one process at a time); refuses a schema written by a newer braid.
    pub fn open(url: &str, lease: Duration, connect_timeout: Duration) -> Result<Self, StoreError> {
        let config = postgres::Config::from_str(url).map_err(|e| StoreError::Url(e.to_string()))?;
        let manager = PostgresConnectionManager::new(config, NoTls);
        let pool = r2d2::Pool::builder().max_size(8).connection_timeout(connect_timeout).build(manager)?;
        migrate(&mut *pool.get()?)?;
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        let owner =
            format!("{}:{}:{}", host.trim(), std::process::id(), &uuid::Uuid::new_v4().simple().to_string()[..8]);
        Ok(Self { pool: Some(pool), owner, lease: lease.as_secs().max(1) as i64 })
    }

    /// How long a claimed job stays this process's without a heartbeat.
    pub fn lease(&self) -> Duration {
        Duration::from_secs(self.lease as u64)
    }

    fn client(&self) -> Result<r2d2::PooledConnection<PostgresConnectionManager<NoTls>>, StoreError> {
        Ok(self.pool.as_ref().expect("open until dropped").get()?)
    }

    /// Jobs of `table` whose lease ran out: queued again, or failed after
    /// [`MAX_ATTEMPTS`]. Returns how many of each, and the failed rows'
    /// `build_id` (jobs) or id (publishes).
    fn expire(&self, tx: &mut Transaction<'_>, table: Table) -> Result<(usize, Vec<String>), StoreError> {
        let t = table.name();
        let retried = tx.execute(
            &format!(
                "UPDATE {t} SET state = $1, lease_owner = NULL, progress = 'requeued: its worker stopped renewing its lease'
                 WHERE state = $2 AND lease_until < {CLOCK} AND attempts < $3"
            ),
            &[&JobState::Queued.as_str(), &JobState::Running.as_str(), &MAX_ATTEMPTS],
        )?;
        let failed = tx.query(
            &format!(
                "UPDATE {t} SET state = $1, lease_owner = NULL, finished_at = $3,
                 error = 'the {} was interrupted too many times (its worker stopped)'
                 WHERE state = $2 AND lease_until < {CLOCK} RETURNING {}",
                table.what(),
                table.key()
            ),
            &[&JobState::Failed.as_str(), &JobState::Running.as_str(), &now()],
        )?;
        let failed: Vec<String> = failed.iter().map(|r| r.get(0)).collect();
        if table == Table::Jobs && !failed.is_empty() {
            tx.execute("UPDATE builds SET state = $1 WHERE id = ANY($2)", &[&BuildState::Failed.as_str(), &failed])?;
        }
        Ok((retried as usize, failed))
    }

    /// Takes the oldest queued row of `table`, leased to this process.
    fn claim_row(&self, tx: &mut Transaction<'_>, table: Table) -> Result<Option<Row>, StoreError> {
        let t = table.name();
        Ok(tx.query_opt(
            &format!(
                "UPDATE {t} SET state = $1, attempts = attempts + 1, started_at = $2, progress = 'starting',
                 lease_owner = $3, lease_until = {CLOCK} + $4
                 WHERE id = (SELECT id FROM {t} WHERE state = $5 ORDER BY seq FOR UPDATE SKIP LOCKED LIMIT 1)
                 RETURNING id, attempts"
            ),
            &[&JobState::Running.as_str(), &now(), &self.owner, &self.lease, &JobState::Queued.as_str()],
        )?)
    }

    /// Whether this process still holds the running job `id` of `table`
    /// (locking its row until the transaction ends).
    fn holds(&self, tx: &mut Transaction<'_>, table: Table, id: &str) -> Result<bool, StoreError> {
        let t = table.name();
        let held = tx
            .query_opt(
                &format!("SELECT 1 FROM {t} WHERE id = $1 AND state = $2 AND lease_owner = $3 FOR UPDATE"),
                &[&id, &JobState::Running.as_str(), &self.owner],
            )?
            .is_some();
        if !held {
            tracing::warn!(
                "{} {id}: this worker's lease ran out and another took it over; its result is dropped",
                table.what()
            );
        }
        Ok(held)
    }
}

/// Closing a `postgres` connection blocks on its own runtime, which tokio
/// forbids on an async thread, where the service's last reference to the
/// store may go: the pool is closed on a thread of its own.
impl Drop for Postgres {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            let _ = std::thread::spawn(move || drop(pool)).join();
        }
    }
}

/// The two leased queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Table {
    Jobs,
    Publishes,
}

impl Table {
    fn name(self) -> &'static str {
        match self {
            Table::Jobs => "jobs",
            Table::Publishes => "publishes",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Table::Jobs => "build",
            Table::Publishes => "check",
        }
    }

    /// What [`Postgres::expire`] returns of a failed row.
    fn key(self) -> &'static str {
        match self {
            Table::Jobs => "build_id",
            Table::Publishes => "id",
        }
    }
}

fn migrate(client: &mut postgres::Client) -> Result<(), StoreError> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1, 0)", &[&LOCK_SCHEMA])?;
    // (Not `IF NOT EXISTS`, which logs a notice at every start.)
    if tx.query_one("SELECT to_regclass('braid_schema') IS NULL", &[])?.get(0) {
        tx.batch_execute("CREATE TABLE braid_schema (version BIGINT NOT NULL)")?;
    }
    let found: i64 = tx.query_opt("SELECT version FROM braid_schema", &[])?.map_or(0, |r| r.get(0));
    if found > LATEST {
        return Err(StoreError::TooNew { found, supported: LATEST });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found.max(0) as usize) {
        tx.batch_execute(sql).map_err(|source| StoreError::PgMigration { version: i as i64 + 1, source })?;
    }
    if found != LATEST {
        tx.execute("DELETE FROM braid_schema", &[])?;
        tx.execute("INSERT INTO braid_schema (version) VALUES ($1)", &[&LATEST])?;
        tracing::info!("database schema migrated from version {found} to {LATEST}");
    }
    tx.commit()?;
    Ok(())
}

/// Column `i` of `row`, parsed: a malformed value is a damaged row, an
/// error, never a default.
fn parsed<T: FromStr>(row: &Row, i: usize) -> Result<T, StoreError>
where
    T::Err: std::fmt::Display,
{
    let text: &str = row.try_get(i)?;
    text.parse().map_err(|e| StoreError::Damaged(format!("column {} holds {text:?}: {e}", row.columns()[i].name())))
}

/// Column `i` of `row`, JSON text parsed into `T`.
fn json<T: serde::de::DeserializeOwned>(row: &Row, i: usize) -> Result<T, StoreError> {
    let text: &str = row.try_get(i)?;
    serde_json::from_str(text).map_err(|e| StoreError::Damaged(format!("column {}: {e}", row.columns()[i].name())))
}

/// Like [`json`], for a column that may be NULL.
fn optional_json<T: serde::de::DeserializeOwned>(row: &Row, i: usize) -> Result<Option<T>, StoreError> {
    let text: Option<&str> = row.try_get(i)?;
    text.map(|t| {
        serde_json::from_str(t).map_err(|e| StoreError::Damaged(format!("column {}: {e}", row.columns()[i].name())))
    })
    .transpose()
}

const BUILD_COLUMNS: &str = "id, workflow_id, name, manifest, targets, state, report, artifacts";

fn build_row(r: &Row) -> Result<BuildRow, StoreError> {
    Ok(BuildRow {
        id: parsed(r, 0)?,
        workflow_id: parsed(r, 1)?,
        name: r.try_get(2)?,
        manifest: r.try_get(3)?,
        targets: json::<Vec<Target>>(r, 4)?,
        state: parsed(r, 5)?,
        report: optional_json::<Report>(r, 6)?,
        artifacts: optional_json(r, 7)?.unwrap_or_default(),
    })
}

fn insert_artifacts(tx: &mut Transaction<'_>, artifacts: &[Artifact]) -> Result<(), StoreError> {
    for a in artifacts {
        tx.execute(
            "INSERT INTO artifacts (cid, size, media_type) VALUES ($1, $2, $3) ON CONFLICT (cid) DO NOTHING",
            &[&a.cid.as_str(), &(a.size as i64), &a.media_type],
        )?;
    }
    Ok(())
}

/// Records `packages` from `source` (all or none, [`super::packages::sort_out`]);
/// the caller holds [`LOCK_PACKAGES`]. Returns the conflicts.
fn record(tx: &mut Transaction<'_>, source: &str, packages: &[Package]) -> Result<Vec<String>, StoreError> {
    let mut served = Vec::new();
    for p in packages {
        let row = tx.query_opt(
            "SELECT digest FROM packages WHERE ecosystem = $1 AND name = $2 AND version = $3",
            &[&p.ecosystem.as_str(), &p.name, &p.version],
        )?;
        served.push(row.map(|r| r.try_get::<_, String>(0)).transpose()?);
    }
    let fresh = match super::packages::sort_out(packages, &served) {
        Ok(fresh) => fresh,
        Err(conflicts) => return Ok(conflicts),
    };
    for p in fresh {
        tx.execute(
            "INSERT INTO packages (ecosystem, name, version, cid, entry, digest, build_id, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &[&p.ecosystem.as_str(), &p.name, &p.version, &p.cid.as_str(), &p.entry, &p.digest, &source, &now()],
        )?;
    }
    Ok(Vec::new())
}

impl Builds for Postgres {
    fn check(&self) -> Result<(), StoreError> {
        self.client()?.batch_execute("SELECT 1")?;
        Ok(())
    }

    fn recover(&self) -> Result<(usize, usize), StoreError> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        let (retried, failed) = self.expire(&mut tx, Table::Jobs)?;
        tx.commit()?;
        Ok((retried, failed.len()))
    }

    fn submit(&self, build: &NewBuild) -> Result<Submission, StoreError> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))", &[&LOCK_SUBMIT, &build.id.as_str()])?;
        if let Some(row) = tx.query_opt("SELECT state, artifacts FROM builds WHERE id = $1", &[&build.id.as_str()])? {
            if parsed::<BuildState>(&row, 0)? == BuildState::Succeeded {
                return Ok(Submission::Built { artifacts: optional_json(&row, 1)?.unwrap_or_default() });
            }
            let pending = tx.query_opt(
                "SELECT id, state FROM jobs WHERE build_id = $1 AND state IN ($2, $3) ORDER BY seq LIMIT 1",
                &[&build.id.as_str(), &JobState::Queued.as_str(), &JobState::Running.as_str()],
            )?;
            if let Some(row) = pending {
                return Ok(Submission::Joined { job_id: parsed(&row, 0)?, state: parsed(&row, 1)? });
            }
        }
        let targets = serde_json::to_string(&build.targets).expect("targets serialize");
        tx.execute(
            "INSERT INTO builds (id, workflow_id, name, manifest, targets, state, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state",
            &[
                &build.id.as_str(),
                &build.workflow_id.as_str(),
                &build.name,
                &build.manifest,
                &targets,
                &BuildState::Building.as_str(),
                &now(),
            ],
        )?;
        let job_id = JobId::new_random();
        tx.execute(
            "INSERT INTO jobs (id, build_id, state, created_at) VALUES ($1, $2, $3, $4)",
            &[&job_id.as_str(), &build.id.as_str(), &JobState::Queued.as_str(), &now()],
        )?;
        tx.commit()?;
        Ok(Submission::Queued { job_id })
    }

    fn claim(&self) -> Result<Option<Claimed>, StoreError> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        self.expire(&mut tx, Table::Jobs)?;
        tx.commit()?;
        let mut tx = client.transaction()?;
        let Some(row) = self.claim_row(&mut tx, Table::Jobs)? else { return Ok(None) };
        let job_id: JobId = parsed(&row, 0)?;
        let attempt: i64 = row.try_get(1)?;
        let build = tx.query_one(
            "SELECT builds.id, manifest, targets FROM jobs JOIN builds ON builds.id = jobs.build_id WHERE jobs.id = $1",
            &[&job_id.as_str()],
        )?;
        let claimed = Claimed {
            job_id,
            build_id: parsed(&build, 0)?,
            manifest: build.try_get(1)?,
            targets: json(&build, 2)?,
            attempt,
        };
        tx.commit()?;
        Ok(Some(claimed))
    }

    fn heartbeat(&self, job_id: &JobId) -> Result<bool, StoreError> {
        let mut client = self.client()?;
        let mut renewed = 0;
        for t in [Table::Jobs, Table::Publishes] {
            renewed += client.execute(
                &format!(
                    "UPDATE {} SET lease_until = {CLOCK} + $2 WHERE id = $1 AND state = $3 AND lease_owner = $4",
                    t.name()
                ),
                &[&job_id.as_str(), &self.lease, &JobState::Running.as_str(), &self.owner],
            )?;
        }
        Ok(renewed > 0)
    }

    fn requeue(&self, job_id: &JobId) -> Result<(), StoreError> {
        requeue(self, Table::Jobs, job_id)
    }

    fn forget_artifacts(&self, cids: &[ContentId]) -> Result<(), StoreError> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        for cid in cids {
            tx.execute("DELETE FROM artifacts WHERE cid = $1", &[&cid.as_str()])?;
            tx.execute("DELETE FROM packages WHERE cid = $1", &[&cid.as_str()])?;
            tx.execute(
                "UPDATE builds SET state = $2 WHERE state = $3 AND strpos(artifacts, $1) > 0",
                &[&format!("\"{cid}\""), &BuildState::Missing.as_str(), &BuildState::Succeeded.as_str()],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    fn progress(&self, job_id: &JobId, progress: &str, log: &str) -> Result<(), StoreError> {
        self.client()?.execute(
            "UPDATE jobs SET progress = $2, log = $3 WHERE id = $1 AND lease_owner = $4",
            &[&job_id.as_str(), &progress, &tail(log, 64 * 1024), &self.owner],
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
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        if !self.holds(&mut tx, Table::Jobs, job_id.as_str())? {
            return Ok(());
        }
        tx.execute("SELECT pg_advisory_xact_lock($1, 0)", &[&LOCK_PACKAGES])?;
        super::packages::record_build(build_id.as_str(), packages, |of| record(&mut tx, build_id.as_str(), of))?;
        insert_artifacts(&mut tx, artifacts)?;
        tx.execute(
            "UPDATE builds SET state = $2, report = $3, artifacts = $4 WHERE id = $1",
            &[
                &build_id.as_str(),
                &BuildState::Succeeded.as_str(),
                &serde_json::to_string(report).expect("a report serializes"),
                &serde_json::to_string(artifacts).expect("artifacts serialize"),
            ],
        )?;
        tx.execute(
            "UPDATE jobs SET state = $3, progress = 'done', finished_at = $2, lease_owner = NULL WHERE id = $1",
            &[&job_id.as_str(), &now(), &JobState::Succeeded.as_str()],
        )?;
        tx.commit()?;
        Ok(())
    }

    fn fail(&self, job_id: &JobId, build_id: &BuildId, error: &str) -> Result<(), StoreError> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        if !self.holds(&mut tx, Table::Jobs, job_id.as_str())? {
            return Ok(());
        }
        tx.execute(
            "UPDATE jobs SET state = $4, error = $2, finished_at = $3, lease_owner = NULL WHERE id = $1",
            &[&job_id.as_str(), &tail(error, 8 * 1024), &now(), &JobState::Failed.as_str()],
        )?;
        tx.execute("UPDATE builds SET state = $2 WHERE id = $1", &[&build_id.as_str(), &BuildState::Failed.as_str()])?;
        tx.commit()?;
        Ok(())
    }

    fn job(&self, id: &JobId) -> Result<Option<Job>, StoreError> {
        let row = self.client()?.query_opt(
            "SELECT jobs.id, jobs.state, builds.workflow_id, jobs.build_id, jobs.progress, jobs.log, jobs.error
             FROM jobs JOIN builds ON builds.id = jobs.build_id WHERE jobs.id = $1",
            &[&id.as_str()],
        )?;
        row.map(|r| {
            Ok(Job {
                id: parsed(&r, 0)?,
                state: parsed(&r, 1)?,
                workflow_id: parsed(&r, 2)?,
                build_id: parsed(&r, 3)?,
                progress: r.try_get(4)?,
                log_tail: tail(r.try_get(5)?, 4096),
                error: r.try_get(6)?,
            })
        })
        .transpose()
    }

    fn build(&self, id: &BuildId) -> Result<Option<BuildRow>, StoreError> {
        let row =
            self.client()?.query_opt(&format!("SELECT {BUILD_COLUMNS} FROM builds WHERE id = $1"), &[&id.as_str()])?;
        row.as_ref().map(build_row).transpose()
    }

    fn builds_of(&self, workflow: &WorkflowId) -> Result<Vec<BuildRow>, StoreError> {
        self.client()?
            .query(
                &format!("SELECT {BUILD_COLUMNS} FROM builds WHERE workflow_id = $1 ORDER BY created_at, id"),
                &[&workflow.as_str()],
            )?
            .iter()
            .map(build_row)
            .collect()
    }

    fn artifact(&self, cid: &ContentId) -> Result<Option<(String, Option<String>)>, StoreError> {
        let mut client = self.client()?;
        let Some(row) = client.query_opt("SELECT media_type FROM artifacts WHERE cid = $1", &[&cid.as_str()])? else {
            return Ok(None);
        };
        let media_type: String = row.try_get(0)?;
        let lists = client.query_opt(
            "SELECT artifacts FROM builds WHERE strpos(artifacts, $1) > 0 ORDER BY created_at, id LIMIT 1",
            &[&cid.as_str()],
        )?;
        let name = lists
            .and_then(|r| r.get::<_, Option<String>>(0))
            .and_then(|text| serde_json::from_str::<Vec<Artifact>>(&text).ok())
            .and_then(|list| list.into_iter().find(|a| &a.cid == cid).map(|a| a.name));
        Ok(Some((media_type, name)))
    }

    fn workflows(
        &self,
        name: Option<&str>,
        after: Option<&WorkflowId>,
        limit: u32,
    ) -> Result<Vec<WorkflowRow>, StoreError> {
        let rows = self.client()?.query(
            "SELECT workflow_id, MIN(name), COUNT(*) FROM builds
             WHERE ($1::TEXT IS NULL OR name = $1) AND ($2::TEXT IS NULL OR workflow_id > $2)
             GROUP BY workflow_id ORDER BY workflow_id LIMIT $3",
            &[&name, &after.map(WorkflowId::as_str), &i64::from(limit)],
        )?;
        rows.iter()
            .map(|r| {
                let builds: i64 = r.try_get(2)?;
                Ok(WorkflowRow { id: parsed(r, 0)?, name: r.try_get(1)?, builds: builds as u32 })
            })
            .collect()
    }

    fn job_counts(&self) -> Result<Vec<(JobState, i64)>, StoreError> {
        let rows = self.client()?.query("SELECT state, COUNT(*) FROM jobs GROUP BY state ORDER BY state", &[])?;
        rows.iter().map(|r| Ok((parsed(r, 0)?, r.try_get(1)?))).collect()
    }
}

/// Puts this process's running job back in the queue without counting the
/// attempt.
fn requeue(store: &Postgres, table: Table, id: &JobId) -> Result<(), StoreError> {
    store.client()?.execute(
        &format!(
            "UPDATE {} SET state = $2, attempts = GREATEST(attempts - 1, 0), lease_owner = NULL,
             progress = 'requeued: its worker shut down' WHERE id = $1 AND state = $3 AND lease_owner = $4",
            table.name()
        ),
        &[&id.as_str(), &JobState::Queued.as_str(), &JobState::Running.as_str(), &store.owner],
    )?;
    Ok(())
}

impl Publishes for Postgres {
    fn submit_publish(&self, id: &JobId, new: &NewPublish) -> Result<PublishSubmission, StoreError> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))", &[&LOCK_PUBLISH, &new.version_id])?;
        let pending = tx.query_opt(
            "SELECT id FROM publishes WHERE version_id = $1 AND state IN ($2, $3) ORDER BY seq LIMIT 1",
            &[&new.version_id, &JobState::Queued.as_str(), &JobState::Running.as_str()],
        )?;
        if let Some(row) = pending {
            return Ok(PublishSubmission::Joined(parsed(&row, 0)?));
        }
        tx.execute(
            "INSERT INTO publishes (id, name, version, version_id, source_cid, state, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[
                &id.as_str(),
                &new.name,
                &new.version,
                &new.version_id,
                &new.source.as_str(),
                &JobState::Queued.as_str(),
                &now(),
            ],
        )?;
        tx.commit()?;
        Ok(PublishSubmission::Queued(id.clone()))
    }

    fn claim_publish(&self) -> Result<Option<Publish>, StoreError> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        self.expire(&mut tx, Table::Publishes)?;
        tx.commit()?;
        let mut tx = client.transaction()?;
        let Some(row) = self.claim_row(&mut tx, Table::Publishes)? else { return Ok(None) };
        let id: JobId = parsed(&row, 0)?;
        tx.commit()?;
        drop(client);
        self.publish(&id)
    }

    fn publish_progress(&self, id: &JobId, progress: &str, log: &str) -> Result<(), StoreError> {
        self.client()?.execute(
            "UPDATE publishes SET progress = $2, log = $3 WHERE id = $1 AND lease_owner = $4",
            &[&id.as_str(), &progress, &log, &self.owner],
        )?;
        Ok(())
    }

    fn finish_publish(&self, id: &JobId, error: Option<&str>, log: &str) -> Result<(), StoreError> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        if !self.holds(&mut tx, Table::Publishes, id.as_str())? {
            return Ok(());
        }
        let state = if error.is_none() { JobState::Succeeded } else { JobState::Failed };
        let progress = if error.is_none() { "registered" } else { "failed" };
        tx.execute(
            "UPDATE publishes SET state = $2, progress = $3, error = $4, log = $5, finished_at = $6, lease_owner = NULL
             WHERE id = $1",
            &[&id.as_str(), &state.as_str(), &progress, &error, &log, &now()],
        )?;
        tx.commit()?;
        Ok(())
    }

    fn requeue_publish(&self, id: &JobId) -> Result<(), StoreError> {
        requeue(self, Table::Publishes, id)
    }

    fn recover_publishes(&self) -> Result<(), StoreError> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        self.expire(&mut tx, Table::Publishes)?;
        tx.commit()?;
        Ok(())
    }

    fn publish(&self, id: &JobId) -> Result<Option<Publish>, StoreError> {
        let row = self.client()?.query_opt(
            "SELECT id, state, name, version, version_id, source_cid, progress, log, error FROM publishes
             WHERE id = $1",
            &[&id.as_str()],
        )?;
        row.map(|r| {
            let source: Option<&str> = r.try_get(5)?;
            Ok(Publish {
                id: parsed(&r, 0)?,
                state: parsed(&r, 1)?,
                name: r.try_get(2)?,
                version: r.try_get(3)?,
                version_id: r.try_get(4)?,
                source: source.map(|_| parsed(&r, 5)).transpose()?,
                progress: r.try_get(6)?,
                log_tail: tail(r.try_get(7)?, 8192),
                error: r.try_get(8)?,
            })
        })
        .transpose()
    }

    fn register_operation(&self, op: &PublishedOperation) -> Result<Option<PublishedOperation>, StoreError> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        tx.execute(
            "INSERT INTO operations (name, version, version_id, source_cid, registered_at) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (name, version) DO NOTHING",
            &[&op.name, &op.version, &op.version_id, &op.source.as_str(), &now()],
        )?;
        let listed = operation_row(&tx.query_one(
            "SELECT name, version, version_id, source_cid FROM operations WHERE name = $1 AND version = $2",
            &[&op.name, &op.version],
        )?)?;
        tx.commit()?;
        Ok((listed.version_id != op.version_id).then_some(listed))
    }

    fn claim_name(&self, name: &str, owner: &str) -> Result<Vec<String>, StoreError> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        // Two first publishers at once: one takes the name.
        tx.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))", &[&LOCK_PUBLISH, &name])?;
        tx.execute(
            "INSERT INTO owners (name, owner, added_at) SELECT $1, $2, $3
             WHERE NOT EXISTS (SELECT 1 FROM owners WHERE name = $1)",
            &[&name, &owner, &now()],
        )?;
        let owners = tx.query("SELECT owner FROM owners WHERE name = $1 ORDER BY added_at, owner", &[&name])?;
        tx.commit()?;
        owners.iter().map(|r| Ok(r.try_get(0)?)).collect()
    }

    fn add_owner(&self, name: &str, owner: &str) -> Result<(), StoreError> {
        self.client()?.execute(
            "INSERT INTO owners (name, owner, added_at) VALUES ($1, $2, $3) ON CONFLICT (name, owner) DO NOTHING",
            &[&name, &owner, &now()],
        )?;
        Ok(())
    }

    fn operations(&self) -> Result<Vec<PublishedOperation>, StoreError> {
        let rows = self.client()?.query(
            "SELECT name, version, version_id, source_cid FROM operations ORDER BY registered_at, name, version",
            &[],
        )?;
        rows.iter().map(operation_row).collect()
    }
}

fn operation_row(r: &Row) -> Result<PublishedOperation, StoreError> {
    Ok(PublishedOperation {
        name: r.try_get(0)?,
        version: r.try_get(1)?,
        version_id: r.try_get(2)?,
        source: parsed(r, 3)?,
    })
}

impl Packages for Postgres {
    fn package_versions(&self, ecosystem: Ecosystem, name: &str) -> Result<Vec<Package>, StoreError> {
        let rows = self.client()?.query(
            "SELECT name, version, cid, entry, digest FROM packages WHERE ecosystem = $1 AND name = $2
             ORDER BY created_at, version",
            &[&ecosystem.as_str(), &name],
        )?;
        rows.iter()
            .map(|r| {
                Ok(Package {
                    ecosystem,
                    name: r.try_get(0)?,
                    version: r.try_get(1)?,
                    cid: parsed(r, 2)?,
                    entry: r.try_get(3)?,
                    digest: r.try_get(4)?,
                })
            })
            .collect()
    }

    fn add_registry_packages(&self, artifacts: &[Artifact], packages: &[Package]) -> Result<Vec<String>, StoreError> {
        let mut client = self.client()?;
        let mut tx = client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1, 0)", &[&LOCK_PACKAGES])?;
        insert_artifacts(&mut tx, artifacts)?;
        let mut conflicts = Vec::new();
        for p in packages {
            conflicts.extend(record(&mut tx, FROM_REGISTRY, std::slice::from_ref(p))?);
        }
        tx.commit()?;
        Ok(conflicts)
    }
}

/// Against a real PostgreSQL: `make test-postgres` starts one
/// (scripts/postgres.sh) and runs these with its URL in
/// `BRAID_TEST_POSTGRES`; each test works in a database of its own.
#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    const NEEDS: &str = "needs PostgreSQL: run `make test-postgres`";

    /// A fresh database; its URL.
    fn database() -> String {
        let admin = std::env::var("BRAID_TEST_POSTGRES").expect("BRAID_TEST_POSTGRES: run through make test-postgres");
        let name = format!("braid_test_{}", uuid::Uuid::new_v4().simple());
        let mut client = postgres::Client::connect(&admin, NoTls).expect("connect to BRAID_TEST_POSTGRES");
        client.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        let (base, _) = admin.rsplit_once('/').unwrap();
        format!("{base}/{name}")
    }

    /// One process's view of the database at `url`.
    fn process(url: &str, lease_secs: u64) -> Postgres {
        Postgres::open(url, Duration::from_secs(lease_secs), Duration::from_secs(10)).unwrap()
    }

    fn cid(seed: &str) -> ContentId {
        ContentId::of(seed.as_bytes())
    }

    fn new_build(seed: &str) -> NewBuild {
        NewBuild {
            id: BuildId::parse(cid(seed).as_str()).unwrap(),
            workflow_id: WorkflowId::parse(cid("{}").as_str()).unwrap(),
            name: "a".into(),
            manifest: "{}".into(),
            targets: vec![Target::Native],
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
    #[ignore = "needs PostgreSQL: run `make test-postgres`"]
    fn a_build_is_queued_joined_claimed_and_reused() {
        let url = database();
        let (api, worker) = (process(&url, 30), process(&url, 30));
        let b = new_build("w1");
        let Submission::Queued { job_id } = api.submit(&b).unwrap() else { panic!("{NEEDS}") };
        assert_eq!(api.submit(&b).unwrap(), Submission::Joined { job_id: job_id.clone(), state: JobState::Queued });
        let claimed = worker.claim().unwrap().unwrap();
        assert_eq!((&claimed.job_id, &claimed.build_id, claimed.attempt), (&job_id, &b.id, 1));
        assert_eq!(claimed.targets, vec![Target::Native]);
        assert!(api.claim().unwrap().is_none(), "one job, claimed once");
        worker.progress(&job_id, "[1/2] native", "log").unwrap();
        assert_eq!(api.job(&job_id).unwrap().unwrap().progress, "[1/2] native");
        let a = artifact("c");
        worker.succeed(&job_id, &b.id, &report(), std::slice::from_ref(&a), &[]).unwrap();
        assert_eq!(api.submit(&b).unwrap(), Submission::Built { artifacts: vec![a.clone()] });
        let row = api.build(&b.id).unwrap().unwrap();
        assert_eq!((row.state, row.report), (BuildState::Succeeded, Some(report())));
        assert_eq!(api.artifact(&a.cid).unwrap(), Some(("application/wasm".into(), Some("x.wasm".into()))));
        assert_eq!(api.workflows(None, None, 10).unwrap().len(), 1);
        assert_eq!(api.job_counts().unwrap(), vec![(JobState::Succeeded, 1)]);
        api.forget_artifacts(std::slice::from_ref(&a.cid)).unwrap();
        assert_eq!(api.build(&b.id).unwrap().unwrap().state, BuildState::Missing);
        assert!(matches!(api.submit(&b).unwrap(), Submission::Queued { .. }));
    }

    /// Identical submissions racing through several processes get one
    /// job; many jobs claimed by racing workers are each claimed once.
    #[test]
    #[ignore = "needs PostgreSQL: run `make test-postgres`"]
    fn racing_processes_share_jobs_and_never_claim_one_twice() {
        let url = database();
        let processes: Vec<Arc<Postgres>> = (0..4).map(|_| Arc::new(process(&url, 30))).collect();
        let submitted: Vec<Submission> = std::thread::scope(|s| {
            let handles: Vec<_> = processes.iter().map(|p| s.spawn(|| p.submit(&new_build("same")).unwrap())).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let queued = submitted.iter().filter(|s| matches!(s, Submission::Queued { .. })).count();
        assert_eq!(queued, 1, "{submitted:?}");
        for i in 0..39 {
            processes[i % 4].submit(&new_build(&format!("w{i}"))).unwrap();
        }
        let claimed: Vec<JobId> = std::thread::scope(|s| {
            let handles: Vec<_> = processes
                .iter()
                .map(|p| {
                    s.spawn(|| {
                        let mut mine = Vec::new();
                        while let Some(job) = p.claim().unwrap() {
                            mine.push(job.job_id);
                        }
                        mine
                    })
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        let mut unique = claimed.clone();
        unique.sort_by(|a, b| a.as_str().cmp(b.as_str()));
        unique.dedup();
        assert_eq!((claimed.len(), unique.len()), (40, 40));
    }

    /// A worker that stops renewing its lease loses the job to another;
    /// what it writes afterwards is dropped; after MAX_ATTEMPTS leases run
    /// out, the job fails.
    #[test]
    #[ignore = "needs PostgreSQL: run `make test-postgres`"]
    fn an_expired_lease_passes_the_job_on() {
        let url = database();
        let (dead, alive) = (process(&url, 1), process(&url, 1));
        let b = new_build("w");
        let Submission::Queued { job_id } = dead.submit(&b).unwrap() else { panic!() };
        assert_eq!(dead.claim().unwrap().unwrap().attempt, 1);
        assert!(dead.heartbeat(&job_id).unwrap(), "its own lease renews");
        assert!(alive.claim().unwrap().is_none(), "a live lease is respected");
        std::thread::sleep(Duration::from_millis(2500));
        let taken = alive.claim().unwrap().expect("the expired job is claimed again");
        assert_eq!((&taken.job_id, taken.attempt), (&job_id, 2));
        assert!(!dead.heartbeat(&job_id).unwrap(), "the first worker learns it lost the job");
        dead.fail(&job_id, &b.id, "late").unwrap();
        dead.progress(&job_id, "late", "late").unwrap();
        let job = alive.job(&job_id).unwrap().unwrap();
        assert_eq!((job.state, job.progress.as_str(), job.error), (JobState::Running, "starting", None));
        // The second worker dies too: MAX_ATTEMPTS is reached.
        std::thread::sleep(Duration::from_millis(2500));
        assert!(alive.claim().unwrap().is_none());
        let job = alive.job(&job_id).unwrap().unwrap();
        assert_eq!(job.state, JobState::Failed);
        assert!(job.error.unwrap().contains("interrupted"));
        assert_eq!(alive.build(&b.id).unwrap().unwrap().state, BuildState::Failed);
        // A process shutting down hands its job back without using an attempt.
        let Submission::Queued { job_id } = alive.submit(&b).unwrap() else { panic!() };
        alive.claim().unwrap().unwrap();
        alive.requeue(&job_id).unwrap();
        assert_eq!(dead.claim().unwrap().unwrap().attempt, 1);
    }

    #[test]
    #[ignore = "needs PostgreSQL: run `make test-postgres`"]
    fn publishes_and_packages_follow_the_embedded_rules() {
        let url = database();
        let (a, b) = (process(&url, 30), process(&url, 30));
        let new = NewPublish {
            name: "op_x".into(),
            version: "0.1.0".into(),
            version_id: "bafkr4ix".into(),
            source: cid("upload"),
        };
        let id = JobId::new_random();
        assert_eq!(a.submit_publish(&id, &new).unwrap(), PublishSubmission::Queued(id.clone()));
        assert_eq!(b.submit_publish(&JobId::new_random(), &new).unwrap(), PublishSubmission::Joined(id.clone()));
        assert_eq!(b.claim_publish().unwrap().unwrap().state, JobState::Running);
        assert!(a.claim_publish().unwrap().is_none());
        a.finish_publish(&id, None, "not a's").unwrap();
        assert_eq!(a.publish(&id).unwrap().unwrap().state, JobState::Running, "only the holder finishes it");
        b.finish_publish(&id, None, "built").unwrap();
        assert_eq!(a.publish(&id).unwrap().unwrap().state, JobState::Succeeded);
        assert_eq!(a.publish(&id).unwrap().unwrap().source, Some(cid("upload")));

        // Registered once for every process; other sources for the same version are refused.
        let op = |version_id: &str, seed: &str| PublishedOperation {
            name: "op_x".into(),
            version: "0.1.0".into(),
            version_id: version_id.into(),
            source: cid(seed),
        };
        // Names have owners, the same in every process.
        assert_eq!(a.claim_name("op_named", "alice").unwrap(), ["alice"]);
        assert_eq!(b.claim_name("op_named", "mallory").unwrap(), ["alice"], "taken");
        b.add_owner("op_named", "bob").unwrap();
        assert_eq!(a.claim_name("op_named", "bob").unwrap(), ["alice", "bob"]);
        assert_eq!(b.register_operation(&op("bafkr4ix", "upload")).unwrap(), None);
        assert_eq!(a.register_operation(&op("bafkr4ix", "upload")).unwrap(), None, "again: a no-op");
        assert_eq!(a.register_operation(&op("bafkr4iy", "other")).unwrap(), Some(op("bafkr4ix", "upload")));
        assert_eq!(a.operations().unwrap(), [op("bafkr4ix", "upload")]);

        let package = |digest: &str| Package {
            ecosystem: Ecosystem::Cargo,
            name: "wf_a".into(),
            version: "0.1.0".into(),
            cid: cid(digest),
            entry: "{}".into(),
            digest: digest.into(),
        };
        assert!(a.add_registry_packages(&[artifact("one")], &[package("one")]).unwrap().is_empty());
        assert_eq!(b.add_registry_packages(&[], &[package("two")]).unwrap(), vec!["cargo wf_a@0.1.0".to_string()]);
        assert_eq!(b.package(Ecosystem::Cargo, "wf_a", "0.1.0").unwrap(), Some(package("one")));
    }

    #[test]
    #[ignore = "needs PostgreSQL: run `make test-postgres`"]
    fn a_schema_from_a_newer_braid_is_refused() {
        let url = database();
        drop(process(&url, 30));
        postgres::Client::connect(&url, NoTls)
            .unwrap()
            .execute("UPDATE braid_schema SET version = version + 1", &[])
            .unwrap();
        let err = Postgres::open(&url, Duration::from_secs(30), Duration::from_secs(10)).err().expect("refused");
        assert!(matches!(err, StoreError::TooNew { .. }), "{err}");
    }

    #[test]
    #[ignore = "needs PostgreSQL: run `make test-postgres`"]
    fn an_unreachable_database_is_a_clear_error() {
        let err = Postgres::open("postgres://braid@127.0.0.1:1/braid", Duration::from_secs(30), Duration::from_secs(1))
            .err()
            .expect("refused");
        assert!(err.to_string().starts_with("PostgreSQL: "), "{err}");
        let err =
            Postgres::open("postgres://[", Duration::from_secs(30), Duration::from_secs(1)).err().expect("refused");
        assert!(matches!(err, StoreError::Url(_)), "{err}");
    }
}
