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

mod builds;
mod packages;
mod publishes;
#[cfg(test)]
mod tests;

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
