//! The embedded store's builds, jobs and schema, on a fresh SQLite file per test.

use braid::target::Target;

use super::fixtures::{artifact, cid, new_build, report, TempStore};
use super::*;
use crate::ids::{BuildId, JobId, WorkflowId};

fn store() -> TempStore {
    TempStore::new()
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
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
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
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let path = dir.join("db.sqlite");
    Connection::open(&path).unwrap().pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
    let err = Sqlite::open(&path).err().expect("refused");
    assert!(matches!(err, StoreError::TooNew { .. }), "{err}");
    assert!(err.to_string().contains("newer than"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}
