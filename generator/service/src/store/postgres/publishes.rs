//! Publish jobs and registered operations (with their owners) in
//! PostgreSQL.

use super::*;

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
