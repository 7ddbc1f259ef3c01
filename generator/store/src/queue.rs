//! The one job queue: every kind of job (a workflow build, a publish check,
//! whatever comes next) is a row of `jobs` with its [`Kind`] and its
//! subject (what the job is about: a build id, a version id). One life
//! cycle for all of them: queued, claimed (leased to the claiming process,
//! which renews the lease while the job runs), then succeeded or failed;
//! queued again if its process shuts down ([`Store::requeue`]) or stops
//! renewing the lease, failed after [`MAX_ATTEMPTS`]. Every write a
//! process makes to a running job names the process, so one that lost its
//! lease can no longer change a job another one took over (fencing).
//!
//! What a kind's jobs are about lives with that kind ([`super::builds`],
//! [`super::publishes`]); what a kind does is its handler in
//! braid-worker's `jobs`.

use sqlx::{Any, Transaction};

use super::rows::{int, parsed, text};
use super::{now, tail, JobState, Lock, Store, StoreError, MAX_ATTEMPTS};
use crate::ids::JobId;

/// A kind of job: how its rows in the queue are told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind(&'static str);

impl Kind {
    /// A workflow build; the subject is the build id.
    pub const BUILD: Kind = Kind("build");
    /// A published operation's check; the subject is its version id.
    pub const PUBLISH: Kind = Kind("publish");

    /// A kind named `name` (lowercase; stored in every job of the kind).
    pub const fn new(name: &'static str) -> Self {
        Kind(name)
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }
}

/// A job a process took from the queue.
#[derive(Debug, Clone)]
pub struct Claim {
    pub id: JobId,
    /// What the job is about (a build id, a version id).
    pub subject: String,
    /// 1 for the first run, 2 after an interruption, ...
    pub attempt: i64,
}

/// Which running jobs count as abandoned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Abandoned {
    /// Those whose lease ran out.
    Expired,
    /// Every running job: this process is the only one, and it just started.
    All,
}

impl Store {
    /// Queues job `id` of `kind` about `subject`, in `tx`.
    pub(super) async fn enqueue(
        &self,
        tx: &mut Transaction<'static, Any>,
        kind: Kind,
        id: &JobId,
        subject: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO jobs (id, kind, subject, state, created_at, seq)
             VALUES ($1, $2, $3, $4, $5, (SELECT COALESCE(MAX(seq), 0) + 1 FROM jobs))",
        )
        .bind(id.as_str())
        .bind(kind.as_str())
        .bind(subject)
        .bind(JobState::Queued.as_str())
        .bind(now())
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// Queues a job of `kind` about `subject`, unless one is queued or
    /// running already: the job's id, and whether it is new. For a kind
    /// whose jobs need nothing stored but their subject.
    pub async fn submit_job(&self, kind: Kind, subject: &str) -> Result<(JobId, bool), StoreError> {
        let mut tx = self.writer().await?;
        self.serialize(&mut tx, Lock::Submit, subject).await?;
        if let Some((id, _)) = self.pending(&mut tx, kind, subject).await? {
            return Ok((id, false));
        }
        let id = JobId::new_random();
        self.enqueue(&mut tx, kind, &id, subject).await?;
        tx.commit().await?;
        Ok((id, true))
    }

    /// The oldest queued or running job of `kind` about `subject`, in `tx`.
    pub(super) async fn pending(
        &self,
        tx: &mut Transaction<'static, Any>,
        kind: Kind,
        subject: &str,
    ) -> Result<Option<(JobId, JobState)>, StoreError> {
        let row = sqlx::query(
            "SELECT id, state FROM jobs WHERE subject = $1 AND kind = $2 AND state IN ($3, $4) ORDER BY seq LIMIT 1",
        )
        .bind(subject)
        .bind(kind.as_str())
        .bind(JobState::Queued.as_str())
        .bind(JobState::Running.as_str())
        .fetch_optional(&mut **tx)
        .await?;
        row.map(|r| Ok((parsed(&r, 0)?, parsed(&r, 1)?))).transpose()
    }

    /// After a crash. In the only process of an embedded store every
    /// running job's runner is gone; in a shared store, those whose lease
    /// ran out. They run again, unless they already had [`MAX_ATTEMPTS`]:
    /// then they fail. Returns how many of each.
    pub async fn recover(&self) -> Result<(u64, u64), StoreError> {
        let which = if self.is_shared() { Abandoned::Expired } else { Abandoned::All };
        let mut tx = self.writer().await?;
        let counts = self.abandon(&mut tx, which).await?;
        tx.commit().await?;
        Ok(counts)
    }

    /// Jobs `which` are abandoned: queued again, or failed after
    /// [`MAX_ATTEMPTS`] (and their builds with them). How many of each.
    async fn abandon(&self, tx: &mut Transaction<'static, Any>, which: Abandoned) -> Result<(u64, u64), StoreError> {
        let clock = self.clock();
        let condition = match which {
            Abandoned::Expired => format!("state = $1 AND lease_until < {clock}"),
            Abandoned::All => "state = $1".to_string(),
        };
        let retried = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE jobs SET state = $2, lease_owner = NULL, progress = 'requeued: its run was interrupted'
             WHERE {condition} AND attempts < $3"
        )))
        .bind(JobState::Running.as_str())
        .bind(JobState::Queued.as_str())
        .bind(MAX_ATTEMPTS)
        .execute(&mut **tx)
        .await?
        .rows_affected();
        let failed = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE jobs SET state = $2, lease_owner = NULL, finished_at = $3,
             error = 'the ' || kind || ' job was interrupted too many times (its process stopped)'
             WHERE {condition}"
        )))
        .bind(JobState::Running.as_str())
        .bind(JobState::Failed.as_str())
        .bind(now())
        .execute(&mut **tx)
        .await?
        .rows_affected();
        if failed > 0 {
            self.fail_orphaned_builds(tx).await?;
        }
        Ok((retried, failed))
    }

    /// Takes the oldest queued job of `kind`, leased to this process (after
    /// passing on the jobs whose lease ran out).
    pub async fn claim(&self, kind: Kind) -> Result<Option<Claim>, StoreError> {
        let mut tx = self.writer().await?;
        self.abandon(&mut tx, Abandoned::Expired).await?;
        tx.commit().await?;
        let mut tx = self.writer().await?;
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE jobs SET state = $1, attempts = attempts + 1, started_at = $2, progress = 'starting',
             lease_owner = $3, lease_until = {clock} + $4
             WHERE id = (SELECT id FROM jobs WHERE kind = $5 AND state = $6 ORDER BY seq LIMIT 1{skip_locked})
             RETURNING id, subject, attempts",
            clock = self.clock(),
            skip_locked = self.for_update(true),
        )))
        .bind(JobState::Running.as_str())
        .bind(now())
        .bind(&self.owner)
        .bind(self.lease)
        .bind(kind.as_str())
        .bind(JobState::Queued.as_str())
        .fetch_optional(&mut *tx)
        .await?;
        let claim =
            row.map(|r| Ok::<_, StoreError>(Claim { id: parsed(&r, 0)?, subject: text(&r, 1)?, attempt: int(&r, 2)? }));
        let claim = claim.transpose()?;
        tx.commit().await?;
        Ok(claim)
    }

    /// Renews the lease of a running job; `false` once the job is no longer
    /// this process's (its lease ran out and another process took it): the
    /// job must stop.
    pub async fn heartbeat(&self, id: &JobId) -> Result<bool, StoreError> {
        let renewed = self
            .write(
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "UPDATE jobs SET lease_until = {} + $2 WHERE id = $1 AND state = $3 AND lease_owner = $4",
                    self.clock()
                )))
                .bind(id.as_str())
                .bind(self.lease)
                .bind(JobState::Running.as_str())
                .bind(&self.owner),
            )
            .await?;
        Ok(renewed > 0)
    }

    /// Puts this process's running job back in the queue without counting
    /// the attempt (the process is shutting down).
    pub async fn requeue(&self, id: &JobId) -> Result<(), StoreError> {
        self.write(
            sqlx::query(
                "UPDATE jobs SET state = $2, attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END,
                 lease_owner = NULL, progress = 'requeued: its process shut down'
                 WHERE id = $1 AND state = $3 AND lease_owner = $4",
            )
            .bind(id.as_str())
            .bind(JobState::Queued.as_str())
            .bind(JobState::Running.as_str())
            .bind(&self.owner),
        )
        .await?;
        Ok(())
    }

    /// The step under way and the log so far (its last 64 KiB), of a job
    /// this process holds.
    pub async fn progress(&self, id: &JobId, progress: &str, log: &str) -> Result<(), StoreError> {
        self.write(
            sqlx::query("UPDATE jobs SET progress = $2, log = $3 WHERE id = $1 AND lease_owner = $4")
                .bind(id.as_str())
                .bind(progress)
                .bind(tail(log, 64 * 1024))
                .bind(&self.owner),
        )
        .await?;
        Ok(())
    }

    /// Whether this process still holds the running job `id`, locking its
    /// row until `tx` ends. A job another process took over is not ended
    /// by this one: what it would write is dropped (and said in the log).
    pub(super) async fn holds(&self, tx: &mut Transaction<'static, Any>, id: &JobId) -> Result<bool, StoreError> {
        let held = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT kind FROM jobs WHERE id = $1 AND state = $2 AND lease_owner = $3{}",
            self.for_update(false)
        )))
        .bind(id.as_str())
        .bind(JobState::Running.as_str())
        .bind(&self.owner)
        .fetch_optional(&mut **tx)
        .await?
        .is_some();
        if !held {
            tracing::warn!(job = %id, "this process's lease ran out and another took the job over; its result is dropped");
        }
        Ok(held)
    }

    /// Ends job `id`, this process's: `succeeded` with the last step
    /// `progress`, or `failed` with `error`; `log` replaces its log.
    /// Nothing if this process no longer holds the job.
    pub async fn finish(&self, id: &JobId, progress: &str, error: Option<&str>, log: &str) -> Result<(), StoreError> {
        let mut tx = self.writer().await?;
        if self.holds(&mut tx, id).await? {
            self.end(&mut tx, id, progress, error, Some(log)).await?;
            tx.commit().await?;
        }
        Ok(())
    }

    /// Ends job `id` in `tx` (the caller checked it [`holds`](Self::holds)
    /// it): `succeeded` with the last step `progress`, or `failed` with
    /// `error` (its last 8 KiB); `log`, if given, replaces the log.
    pub(super) async fn end(
        &self,
        tx: &mut Transaction<'static, Any>,
        id: &JobId,
        progress: &str,
        error: Option<&str>,
        log: Option<&str>,
    ) -> Result<(), StoreError> {
        let state = if error.is_none() { JobState::Succeeded } else { JobState::Failed };
        sqlx::query(
            "UPDATE jobs SET state = $2, progress = $3, error = $4, log = COALESCE($5, log), finished_at = $6,
             lease_owner = NULL WHERE id = $1",
        )
        .bind(id.as_str())
        .bind(state.as_str())
        .bind(progress)
        .bind(error.map(|e| tail(e, 8 * 1024)))
        .bind(log.map(|l| tail(l, 64 * 1024)))
        .bind(now())
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// Jobs of `kind` by state, for metrics.
    pub async fn job_counts(&self, kind: Kind) -> Result<Vec<(JobState, i64)>, StoreError> {
        let rows = sqlx::query("SELECT state, COUNT(*) FROM jobs WHERE kind = $1 GROUP BY state ORDER BY state")
            .bind(kind.as_str())
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| Ok((parsed(r, 0)?, int(r, 1)?))).collect()
    }
}
