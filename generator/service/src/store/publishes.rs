//! Publish jobs: one per operation crate uploaded with `POST
//! /v1/operations`, queued until a publisher checks it (builds it for its
//! targets in the sandbox) and registers it. Uploads of the same sources
//! while one is pending join it. And the operations registered so: each
//! with its upload in the artifact store, from where every process of a
//! deployment takes it into its own registry ([`crate::operations`]).

use rusqlite::{params, OptionalExtension};
use serde::Serialize;

use super::{now, tail, JobState, Sqlite, StoreError, MAX_ATTEMPTS};
use crate::ids::{ContentId, JobId};

/// An operation to check and register: what [`Publishes::submit_publish`] takes.
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

/// Publish jobs: operation crates uploaded, checked, registered.
pub trait Publishes {
    /// Queues a publish job `id`, or joins the pending one for the same
    /// version id.
    fn submit_publish(&self, id: &JobId, new: &NewPublish) -> Result<PublishSubmission, StoreError>;
    /// Takes the oldest queued publish job, marking it running.
    fn claim_publish(&self) -> Result<Option<Publish>, StoreError>;
    /// The job's step and log so far.
    fn publish_progress(&self, id: &JobId, progress: &str, log: &str) -> Result<(), StoreError>;
    /// Ends the job: registered (`error` none) or failed with the reason.
    fn finish_publish(&self, id: &JobId, error: Option<&str>, log: &str) -> Result<(), StoreError>;
    /// Puts a running job back in the queue without counting the attempt
    /// (this process is shutting down).
    fn requeue_publish(&self, id: &JobId) -> Result<(), StoreError>;
    /// After a crash: publish jobs left `running` run again, unless they
    /// already had [`MAX_ATTEMPTS`]; then they fail.
    fn recover_publishes(&self) -> Result<(), StoreError>;
    fn publish(&self, id: &JobId) -> Result<Option<Publish>, StoreError>;
    /// Lists `op` as registered; if its name and version already are, with
    /// other sources, nothing changes and that one is returned.
    fn register_operation(&self, op: &PublishedOperation) -> Result<Option<PublishedOperation>, StoreError>;
    /// Every operation registered through a publish job, oldest first.
    fn operations(&self) -> Result<Vec<PublishedOperation>, StoreError>;
    /// Makes `owner` the owner of the operation name `name` if it has
    /// none yet, atomically; returns the name's owners, oldest first
    /// (`owner` may publish it if it is among them).
    fn claim_name(&self, name: &str, owner: &str) -> Result<Vec<String>, StoreError>;
    /// Adds `owner` to the owners of `name` (the operator's `--owner`).
    fn add_owner(&self, name: &str, owner: &str) -> Result<(), StoreError>;
}

impl Publishes for Sqlite {
    /// Queues a publish job `id`, or joins the pending one for the same
    /// version id.
    fn submit_publish(&self, id: &JobId, new: &NewPublish) -> Result<PublishSubmission, StoreError> {
        let mut conn = self.writer()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let pending: Option<JobId> = tx
            .query_row(
                "SELECT id FROM publishes WHERE version_id = ?1 AND state IN (?2, ?3) ORDER BY seq LIMIT 1",
                params![new.version_id, JobState::Queued, JobState::Running],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(id) = pending {
            return Ok(PublishSubmission::Joined(id));
        }
        let seq: i64 = tx.query_row("SELECT COALESCE(MAX(seq), 0) + 1 FROM publishes", [], |r| r.get(0))?;
        tx.execute(
            "INSERT INTO publishes (id, name, version, version_id, source_cid, state, created_at, seq)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![id, new.name, new.version, new.version_id, new.source, JobState::Queued, now(), seq],
        )?;
        tx.commit()?;
        Ok(PublishSubmission::Queued(id.clone()))
    }

    /// Takes the oldest queued publish job, marking it running.
    fn claim_publish(&self) -> Result<Option<Publish>, StoreError> {
        let mut conn = self.writer()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let next: Option<JobId> = tx
            .query_row("SELECT id FROM publishes WHERE state = ?1 ORDER BY seq LIMIT 1", [JobState::Queued], |r| {
                r.get(0)
            })
            .optional()?;
        let Some(id) = next else { return Ok(None) };
        tx.execute(
            "UPDATE publishes SET state = ?3, attempts = attempts + 1, started_at = ?2, progress = 'starting' WHERE id = ?1",
            params![id, now(), JobState::Running],
        )?;
        tx.commit()?;
        drop(conn);
        self.publish(&id)
    }

    /// The job's step and log so far.
    fn publish_progress(&self, id: &JobId, progress: &str, log: &str) -> Result<(), StoreError> {
        self.writer()?
            .execute("UPDATE publishes SET progress = ?2, log = ?3 WHERE id = ?1", params![id, progress, log])?;
        Ok(())
    }

    /// Ends the job: registered (`error` none) or failed with the reason.
    fn finish_publish(&self, id: &JobId, error: Option<&str>, log: &str) -> Result<(), StoreError> {
        let state = if error.is_none() { JobState::Succeeded } else { JobState::Failed };
        let progress = if error.is_none() { "registered" } else { "failed" };
        self.writer()?.execute(
            "UPDATE publishes SET state = ?2, progress = ?3, error = ?4, log = ?5, finished_at = ?6 WHERE id = ?1",
            params![id, state, progress, error, log, now()],
        )?;
        Ok(())
    }

    /// Puts a running job back in the queue without counting the attempt
    /// (the server is shutting down).
    fn requeue_publish(&self, id: &JobId) -> Result<(), StoreError> {
        self.writer()?.execute(
            "UPDATE publishes SET state = ?2, attempts = MAX(attempts - 1, 0), progress = 'requeued: the server shut down'
             WHERE id = ?1 AND state = ?3",
            params![id, JobState::Queued, JobState::Running],
        )?;
        Ok(())
    }

    /// After a crash: publish jobs left `running` run again, unless they
    /// already had [`MAX_ATTEMPTS`]; then they fail.
    fn recover_publishes(&self) -> Result<(), StoreError> {
        let conn = self.writer()?;
        conn.execute(
            "UPDATE publishes SET state = ?1, progress = 'requeued after a restart' WHERE state = ?2 AND attempts < ?3",
            params![JobState::Queued, JobState::Running, MAX_ATTEMPTS],
        )?;
        conn.execute(
            "UPDATE publishes SET state = ?1, error = 'the check was interrupted (server restart) too many times',
             finished_at = ?3 WHERE state = ?2",
            params![JobState::Failed, JobState::Running, now()],
        )?;
        Ok(())
    }

    fn publish(&self, id: &JobId) -> Result<Option<Publish>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT id, state, name, version, version_id, source_cid, progress, log, error FROM publishes
                 WHERE id = ?1",
                params![id],
                |r| {
                    let log: String = r.get(7)?;
                    Ok(Publish {
                        id: r.get(0)?,
                        state: r.get(1)?,
                        name: r.get(2)?,
                        version: r.get(3)?,
                        version_id: r.get(4)?,
                        source: r.get(5)?,
                        progress: r.get(6)?,
                        log_tail: tail(&log, 8192),
                        error: r.get(8)?,
                    })
                },
            )
            .optional()?)
    }

    fn register_operation(&self, op: &PublishedOperation) -> Result<Option<PublishedOperation>, StoreError> {
        let mut conn = self.writer()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO operations (name, version, version_id, source_cid, registered_at) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (name, version) DO NOTHING",
            params![op.name, op.version, op.version_id, op.source, now()],
        )?;
        let listed = tx.query_row(
            "SELECT name, version, version_id, source_cid FROM operations WHERE name = ?1 AND version = ?2",
            params![op.name, op.version],
            operation_row,
        )?;
        tx.commit()?;
        Ok((listed.version_id != op.version_id).then_some(listed))
    }

    fn claim_name(&self, name: &str, owner: &str) -> Result<Vec<String>, StoreError> {
        let mut conn = self.writer()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO owners (name, owner, added_at) SELECT ?1, ?2, ?3
             WHERE NOT EXISTS (SELECT 1 FROM owners WHERE name = ?1)",
            params![name, owner, now()],
        )?;
        let owners = tx
            .prepare("SELECT owner FROM owners WHERE name = ?1 ORDER BY added_at, owner")?
            .query_map(params![name], |r| r.get(0))?
            .collect::<Result<Vec<String>, _>>()?;
        tx.commit()?;
        Ok(owners)
    }

    fn add_owner(&self, name: &str, owner: &str) -> Result<(), StoreError> {
        self.writer()?.execute(
            "INSERT INTO owners (name, owner, added_at) VALUES (?1, ?2, ?3) ON CONFLICT (name, owner) DO NOTHING",
            params![name, owner, now()],
        )?;
        Ok(())
    }

    fn operations(&self) -> Result<Vec<PublishedOperation>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT name, version, version_id, source_cid FROM operations ORDER BY registered_at, name, version",
        )?;
        let rows = stmt.query_map([], operation_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

fn operation_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<PublishedOperation> {
    Ok(PublishedOperation { name: r.get(0)?, version: r.get(1)?, version_id: r.get(2)?, source: r.get(3)? })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> crate::store::fixtures::TempStore {
        crate::store::fixtures::TempStore::new()
    }

    #[test]
    fn a_publish_job_is_queued_joined_claimed_recovered_and_finished() {
        let store = store();
        let new = NewPublish {
            name: "op_x".into(),
            version: "0.1.0".into(),
            version_id: "bafkr4ix".into(),
            source: braid::content_id(b"op_x").parse().unwrap(),
        };
        let id = JobId::new_random();
        assert_eq!(store.submit_publish(&id, &new).unwrap(), PublishSubmission::Queued(id.clone()));
        let other = JobId::new_random();
        assert_eq!(store.submit_publish(&other, &new).unwrap(), PublishSubmission::Joined(id.clone()));
        let claimed = store.claim_publish().unwrap().unwrap();
        assert_eq!((claimed.id.clone(), claimed.state), (id.clone(), JobState::Running));
        assert!(store.claim_publish().unwrap().is_none());
        // A restart: run again once, then fail.
        store.recover_publishes().unwrap();
        assert_eq!(store.publish(&id).unwrap().unwrap().state, JobState::Queued);
        store.claim_publish().unwrap().unwrap();
        store.recover_publishes().unwrap();
        let failed = store.publish(&id).unwrap().unwrap();
        assert_eq!(failed.state, JobState::Failed);
        assert!(failed.error.unwrap().contains("interrupted"));
        // A new upload of the same sources starts a new job; it succeeds.
        let again = JobId::new_random();
        assert_eq!(store.submit_publish(&again, &new).unwrap(), PublishSubmission::Queued(again.clone()));
        store.claim_publish().unwrap().unwrap();
        store.finish_publish(&again, None, "built").unwrap();
        let done = store.publish(&again).unwrap().unwrap();
        assert_eq!((done.state, done.log_tail.as_str(), done.error), (JobState::Succeeded, "built", None));
        assert_eq!(done.source, Some(new.source));
    }

    #[test]
    fn an_operation_is_registered_once_and_other_sources_are_refused() {
        let store = store();
        let op = |version_id: &str, seed: &[u8]| PublishedOperation {
            name: "op_x".into(),
            version: "0.1.0".into(),
            version_id: version_id.into(),
            source: braid::content_id(seed).parse().unwrap(),
        };
        assert_eq!(store.operations().unwrap(), []);
        // Names have owners: the first claim takes the name, others see its owners.
        assert_eq!(store.claim_name("op_named", "alice").unwrap(), ["alice"]);
        assert_eq!(store.claim_name("op_named", "mallory").unwrap(), ["alice"], "taken");
        assert_eq!(store.claim_name("op_named", "alice").unwrap(), ["alice"], "again: a no-op");
        store.add_owner("op_named", "bob").unwrap();
        store.add_owner("op_named", "bob").unwrap();
        assert_eq!(store.claim_name("op_named", "bob").unwrap(), ["alice", "bob"]);
        assert_eq!(store.register_operation(&op("bafkr4ia", b"a")).unwrap(), None);
        assert_eq!(store.register_operation(&op("bafkr4ia", b"a")).unwrap(), None, "again: a no-op");
        assert_eq!(store.register_operation(&op("bafkr4ib", b"b")).unwrap(), Some(op("bafkr4ia", b"a")));
        assert_eq!(store.operations().unwrap(), [op("bafkr4ia", b"a")]);
    }
}
