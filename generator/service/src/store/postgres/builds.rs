//! Builds and their jobs in PostgreSQL: submissions under an advisory
//! lock, claims with `FOR UPDATE SKIP LOCKED` and leases.

use super::*;

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
        crate::store::packages::record_build(build_id.as_str(), packages, |of| record(&mut tx, build_id.as_str(), of))?;
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
