//! Publish jobs: one per operation crate uploaded with `POST
//! /v1/operations`, a job of the queue ([`Kind::PUBLISH`], about the
//! version id the operation will have) until a process checks it (builds
//! it for its targets in the sandbox) and registers it; `publishes` keeps
//! what each is about. Uploads of the same sources while one is pending
//! join it. And the operations registered so, with the owners of their
//! names: each with its upload in the artifact store, from where every
//! process of a deployment takes it into its own registry
//! (braid-worker's `operations`).

use serde::Serialize;
use sqlx::any::AnyRow;

use super::queue::Kind;
use super::rows::{optional_parsed, optional_text, parsed, text};
use super::{now, tail, JobState, Lock, Store, StoreError};
use crate::ids::{ContentId, JobId};

/// An operation to check and register: what [`Store::submit_publish`] takes.
#[derive(Debug, Clone)]
pub struct NewPublish {
    pub name: String,
    pub version: String,
    /// The version id the operation will have (its sources included).
    pub version_id: String,
    /// The upload (a `.tar.gz` of the crate) in the artifact store.
    pub source: ContentId,
}

/// An operation registered through a publish job: what every process's
/// registry takes in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedOperation {
    pub name: String,
    pub version: String,
    pub version_id: String,
    /// Its upload (a `.tar.gz` of the crate) in the artifact store.
    pub source: ContentId,
}

/// What an upload led to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublishSubmission {
    /// A job for the same version id is queued or running: this one.
    Joined(JobId),
    /// The new job.
    Queued(JobId),
}

/// A publish job, as `GET /v1/publishes/{id}` shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Publish {
    pub id: JobId,
    pub state: JobState,
    pub name: String,
    pub version: String,
    pub version_id: String,
    /// The upload in the artifact store (none for a job queued before
    /// uploads were kept there: its files wait in the data directory).
    #[schema(value_type = Option<String>)]
    pub source: Option<ContentId>,
    /// The step under way.
    pub progress: String,
    /// The last lines of the check's log.
    pub log_tail: String,
    pub error: Option<String>,
}

fn operation_row(r: &AnyRow) -> Result<PublishedOperation, StoreError> {
    Ok(PublishedOperation { name: text(r, 0)?, version: text(r, 1)?, version_id: text(r, 2)?, source: parsed(r, 3)? })
}

impl Store {
    /// Queues publish job `id`, or joins the pending one for the same
    /// version id.
    pub async fn submit_publish(&self, id: &JobId, new: &NewPublish) -> Result<PublishSubmission, StoreError> {
        let mut tx = self.writer().await?;
        self.serialize(&mut tx, Lock::Publish, &new.version_id).await?;
        if let Some((pending, _)) = self.pending(&mut tx, Kind::PUBLISH, &new.version_id).await? {
            return Ok(PublishSubmission::Joined(pending));
        }
        self.enqueue(&mut tx, Kind::PUBLISH, id, &new.version_id).await?;
        sqlx::query("INSERT INTO publishes (id, name, version, version_id, source_cid) VALUES ($1, $2, $3, $4, $5)")
            .bind(id.as_str())
            .bind(&new.name)
            .bind(&new.version)
            .bind(&new.version_id)
            .bind(new.source.as_str())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(PublishSubmission::Queued(id.clone()))
    }

    /// Takes the oldest queued publish job (see [`Store::claim`]), for
    /// tests (the runner claims by kind, then loads).
    #[cfg(test)]
    pub(crate) async fn claim_publish(&self) -> Result<Option<Publish>, StoreError> {
        match self.claim(Kind::PUBLISH).await? {
            Some(claim) => self.publish(&claim.id).await,
            None => Ok(None),
        }
    }

    /// Ends a publish job: registered (`error` none) or failed with the
    /// reason; nothing if this process no longer holds it.
    pub async fn finish_publish(&self, id: &JobId, error: Option<&str>, log: &str) -> Result<(), StoreError> {
        self.finish(id, if error.is_none() { "registered" } else { "failed" }, error, log).await
    }

    pub async fn publish(&self, id: &JobId) -> Result<Option<Publish>, StoreError> {
        let row = sqlx::query(
            "SELECT jobs.id, jobs.state, name, version, version_id, source_cid, jobs.progress, jobs.log, jobs.error
             FROM jobs JOIN publishes ON publishes.id = jobs.id WHERE jobs.id = $1",
        )
        .bind(id.as_str())
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| {
            Ok(Publish {
                id: parsed(&r, 0)?,
                state: parsed(&r, 1)?,
                name: text(&r, 2)?,
                version: text(&r, 3)?,
                version_id: text(&r, 4)?,
                source: optional_parsed(&r, 5)?,
                progress: text(&r, 6)?,
                log_tail: tail(&text(&r, 7)?, 8192),
                error: optional_text(&r, 8)?,
            })
        })
        .transpose()
    }

    /// Lists `op` as registered; if its name and version already are, with
    /// other sources, nothing changes and that one is returned.
    pub async fn register_operation(&self, op: &PublishedOperation) -> Result<Option<PublishedOperation>, StoreError> {
        let mut tx = self.writer().await?;
        sqlx::query(
            "INSERT INTO operations (name, version, version_id, source_cid, registered_at) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (name, version) DO NOTHING",
        )
        .bind(&op.name)
        .bind(&op.version)
        .bind(&op.version_id)
        .bind(op.source.as_str())
        .bind(now())
        .execute(&mut *tx)
        .await?;
        let row = sqlx::query(
            "SELECT name, version, version_id, source_cid FROM operations WHERE name = $1 AND version = $2",
        )
        .bind(&op.name)
        .bind(&op.version)
        .fetch_one(&mut *tx)
        .await?;
        let listed = operation_row(&row)?;
        tx.commit().await?;
        Ok((listed.version_id != op.version_id).then_some(listed))
    }

    /// Every operation registered through a publish job, oldest first.
    pub async fn operations(&self) -> Result<Vec<PublishedOperation>, StoreError> {
        sqlx::query(
            "SELECT name, version, version_id, source_cid FROM operations ORDER BY registered_at, name, version",
        )
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(operation_row)
        .collect()
    }

    /// Makes `owner` the owner of the operation name `name` if it has none
    /// yet, atomically; returns the name's owners, oldest first (`owner`
    /// may publish it if it is among them). Names are compared as cargo
    /// compares crate names ([`braid::schema::name_key`]): whoever owns
    /// `op_x` owns `OP-X`.
    pub async fn claim_name(&self, name: &str, owner: &str) -> Result<Vec<String>, StoreError> {
        let key = braid::schema::name_key(name);
        let mut tx = self.writer().await?;
        self.serialize(&mut tx, Lock::Publish, &key).await?;
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO owners (name, owner, added_at) SELECT $1, $2, $3
             WHERE NOT EXISTS (SELECT 1 FROM owners WHERE {OWNED_NAME} = $1)"
        )))
        .bind(&key)
        .bind(owner)
        .bind(now())
        .execute(&mut *tx)
        .await?;
        let owners = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT owner, MIN(added_at) FROM owners WHERE {OWNED_NAME} = $1 GROUP BY owner
             ORDER BY MIN(added_at), owner"
        )))
        .bind(&key)
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(|r| text(r, 0))
        .collect::<Result<_, _>>()?;
        tx.commit().await?;
        Ok(owners)
    }

    /// Adds `owner` to the owners of `name` (the operator's `--owner`).
    pub async fn add_owner(&self, name: &str, owner: &str) -> Result<(), StoreError> {
        self.write(
            sqlx::query(
                "INSERT INTO owners (name, owner, added_at) VALUES ($1, $2, $3) ON CONFLICT (name, owner) DO NOTHING",
            )
            .bind(braid::schema::name_key(name))
            .bind(owner)
            .bind(now()),
        )
        .await?;
        Ok(())
    }
}

/// An owner row's name as [`braid::schema::name_key`] gives it (rows written
/// before names were compared so keep the name as published).
const OWNED_NAME: &str = "LOWER(REPLACE(name, '-', '_'))";
