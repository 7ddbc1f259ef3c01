//! The store's tests, written once: each scenario of [`both!`] runs on a
//! fresh SQLite file, and on a fresh PostgreSQL database under `cargo
//! xtask test-postgres` (which starts one; the PostgreSQL runs are
//! `#[ignore]`d otherwise). What only one backend has (a SQLite file
//! deleted under the server, the one-process recovery, racing processes)
//! has tests of its own.

use std::sync::Arc;
use std::time::Duration;

use braid::target::Target;

use super::fixtures::{artifact, cid, new_build, report, Db, TempDb};
use super::*;
use crate::ids::{BuildId, JobId, WorkflowId};

/// Defines each scenario `name(db) { body }` as the tests `name::sqlite`
/// and `name::postgres`, with `db` the [`Db`] to run on.
macro_rules! both {
    ($($(#[doc = $doc:literal])* async fn $name:ident($db:ident) $body:block)*) => {$(
        $(#[doc = $doc])*
        mod $name {
            use super::*;

            async fn scenario($db: Db) $body

            #[tokio::test]
            async fn sqlite() {
                scenario(Db::Sqlite).await
            }

            #[tokio::test]
            #[ignore = "needs PostgreSQL: run `cargo xtask test-postgres`"]
            async fn postgres() {
                scenario(Db::Postgres).await
            }
        }
    )*};
}

both! {
    /// A deployment: made by one owner, moved (a version each time, the
    /// history newest first), moved back (a rollback), never by another
    /// owner, names compared in lower case; removed with its history.
    async fn deployments_belong_to_their_owner_and_keep_their_history(db) {
        let tmp = TempDb::new(db).await;
        let s = tmp.process(30).await;
        let [one, two] = [new_build("one", &[]).id, new_build("two", &[]).id];
        let Deployed::Set(made) = s.deploy("Photo-Proof", "key-a", &one, None).await.unwrap() else { panic!("not made") };
        assert_eq!((made.name.as_str(), made.version, &made.build_id), ("Photo-Proof", 1, &one));
        let Deployed::Set(moved) = s.deploy("photo-proof", "key-a", &two, None).await.unwrap() else { panic!("not moved") };
        assert_eq!((moved.name.as_str(), moved.version, &moved.build_id), ("Photo-Proof", 2, &two));
        assert_eq!(s.deploy("PHOTO-PROOF", "key-b", &one, None).await.unwrap(), Deployed::Owned("key-a".into()));
        assert_eq!(s.deployment("photo-proof").await.unwrap().unwrap().build_id, two, "another owner moved nothing");
        let Deployed::Set(back) = s.deploy("photo-proof", "key-a", &one, None).await.unwrap() else { panic!("no rollback") };
        assert_eq!((back.version, &back.build_id), (3, &one));
        let history = s.deployment_versions("Photo-proof").await.unwrap();
        let builds: Vec<(i64, &BuildId)> = history.iter().map(|v| (v.version, &v.build_id)).collect();
        assert_eq!(builds, [(3, &one), (2, &two), (1, &one)]);
        assert!(history.iter().all(|v| v.set_by == "key-a"));
        s.deploy("other", "key-b", &two, None).await.unwrap();
        let names: Vec<String> = s.deployments().await.unwrap().into_iter().map(|d| d.name).collect();
        assert_eq!(names, ["other", "Photo-Proof"]);
        assert_eq!(s.undeploy("photo-proof", "key-b").await.unwrap(), Some(Err("key-a".into())));
        assert_eq!(s.undeploy("photo-proof", "key-a").await.unwrap(), Some(Ok(())));
        assert_eq!(s.undeploy("photo-proof", "key-a").await.unwrap(), None);
        assert!(s.deployment("photo-proof").await.unwrap().is_none());
        assert!(s.deployment_versions("photo-proof").await.unwrap().is_empty(), "the history went with it");
        let Deployed::Set(again) = s.deploy("photo-proof", "key-b", &two, None).await.unwrap() else { panic!() };
        assert_eq!((again.version, again.owner.as_str()), (1, "key-b"), "a name removed is anyone's again");
    }

    /// A run by workflow id takes the build that succeeded last with a
    /// component (a rebuild after an operation's fix), not the first; a
    /// later build without one, or one whose artifacts went missing, is
    /// passed over.
    async fn the_newest_build_with_a_component_is_found(db) {
        let tmp = TempDb::new(db).await;
        let s = tmp.process(30).await;
        let component = |seed: &str| Artifact { name: "wf_a.component.wasm".into(), ..artifact(seed) };
        let workflow = new_build("any", &[]).workflow_id;
        assert!(s.newest_build_with(&workflow, braid::package::dist::COMPONENT_SUFFIX).await.unwrap().is_none());
        let mut built = Vec::new();
        for (seed, artifacts) in [("first", vec![component("c1")]), ("rebuilt", vec![component("c2")]), ("no-component", vec![artifact("c3")])] {
            let b = new_build(seed, &["component"]);
            let Submission::Queued { job_id } = s.submit(&b).await.unwrap() else { panic!() };
            s.claim_build().await.unwrap().unwrap();
            s.succeed(&job_id, &b.id, &report(), &artifacts, &[]).await.unwrap();
            built.push(b.id);
        }
        let newest = s.newest_build_with(&workflow, braid::package::dist::COMPONENT_SUFFIX).await.unwrap().unwrap();
        assert_eq!(newest.id, built[1], "not the build that succeeded last with a component");
        s.forget_artifacts(&[cid("c2")]).await.unwrap();
        let newest = s.newest_build_with(&workflow, braid::package::dist::COMPONENT_SUFFIX).await.unwrap().unwrap();
        assert_eq!(newest.id, built[0], "a build whose component went missing was taken");
    }

    /// The life of a build: queued, joined, claimed once, its progress
    /// seen by another process, succeeded, reused, forgotten, built again.
    async fn a_build_is_queued_joined_claimed_and_reused(db) {
        let tmp = TempDb::new(db).await;
        let (api, worker) = (tmp.process(30).await, tmp.process(30).await);
        let b = new_build("w1", &["native"]);
        let Submission::Queued { job_id } = api.submit(&b).await.unwrap() else { panic!() };
        assert_eq!(api.submit(&b).await.unwrap(), Submission::Joined { job_id: job_id.clone(), state: JobState::Queued });
        let claimed = worker.claim_build().await.unwrap().unwrap();
        assert_eq!((&claimed.job_id, &claimed.build_id, claimed.attempt), (&job_id, &b.id, 1));
        assert_eq!((claimed.targets, claimed.third_party), (vec![Target::Native], Some(vec![])));
        assert_eq!(claimed.operations, Some(b.operations.clone()), "the versions the submission resolved");
        assert!(api.claim_build().await.unwrap().is_none(), "one job, claimed once");
        assert_eq!(api.submit(&b).await.unwrap(), Submission::Joined { job_id: job_id.clone(), state: JobState::Running });
        worker.progress(&job_id, "[1/2] native", "log").await.unwrap();
        assert_eq!(api.job(&job_id).await.unwrap().unwrap().progress, "[1/2] native");
        let a = artifact("c");
        worker.succeed(&job_id, &b.id, &report(), std::slice::from_ref(&a), &[]).await.unwrap();
        assert_eq!(api.submit(&b).await.unwrap(), Submission::Built { artifacts: vec![a.clone()] });
        let job = api.job(&job_id).await.unwrap().unwrap();
        assert_eq!((job.state, &job.build_id, &job.workflow_id), (JobState::Succeeded, &b.id, &b.workflow_id));
        let row = api.build(&b.id).await.unwrap().unwrap();
        assert_eq!((row.state, row.report), (BuildState::Succeeded, Some(report())));
        assert_eq!(api.artifact(&a.cid).await.unwrap(), Some(("application/wasm".into(), Some("x.wasm".into()))));
        assert_eq!(api.job_counts(Kind::BUILD).await.unwrap(), vec![(JobState::Succeeded, 1)]);
        // Another build of the same workflow.
        let other = new_build("w2", &["nostd"]);
        api.submit(&other).await.unwrap();
        let builds: Vec<BuildId> = api.builds_of(&b.workflow_id).await.unwrap().into_iter().map(|r| r.id).collect();
        assert_eq!(builds.len(), 2);
        assert!(builds.contains(&b.id) && builds.contains(&other.id));
        let listed = api.workflows(None, None, 10).await.unwrap();
        assert_eq!(listed, vec![WorkflowRow { id: b.workflow_id.clone(), name: "a".into(), builds: 2 }]);
        assert!(api.workflows(Some("b"), None, 10).await.unwrap().is_empty());
        assert!(api.workflows(None, Some(&b.workflow_id), 10).await.unwrap().is_empty());
        // An artifact found damaged: its builds run again.
        api.forget_artifacts(std::slice::from_ref(&a.cid)).await.unwrap();
        assert_eq!(api.artifact(&a.cid).await.unwrap(), None);
        assert_eq!(api.build(&b.id).await.unwrap().unwrap().state, BuildState::Missing);
        assert!(matches!(api.submit(&b).await.unwrap(), Submission::Queued { .. }));
    }

    async fn a_damaged_row_is_an_error_not_an_empty_value(db) {
        let tmp = TempDb::new(db).await;
        let s = tmp.process(30).await;
        let b = new_build("w1", &["native"]);
        let Submission::Queued { .. } = s.submit(&b).await.unwrap() else { panic!() };
        tmp.execute("UPDATE builds SET targets = 'not json'").await;
        assert!(s.build(&b.id).await.is_err(), "a build row whose targets do not parse was read");
        assert!(s.claim_build().await.is_err(), "a job was claimed with targets that do not parse");
        tmp.execute("UPDATE jobs SET state = 'done'").await;
        let err = s.job_counts(Kind::BUILD).await.unwrap_err();
        assert!(matches!(err, StoreError::Damaged(_)), "{err}");
    }

    async fn a_requeued_job_keeps_its_attempts(db) {
        let tmp = TempDb::new(db).await;
        let s = tmp.process(30).await;
        let Submission::Queued { job_id } = s.submit(&new_build("w", &[])).await.unwrap() else { panic!() };
        assert_eq!(s.claim_build().await.unwrap().unwrap().attempt, 1);
        s.requeue(&job_id).await.unwrap();
        assert_eq!(s.job(&job_id).await.unwrap().unwrap().state, JobState::Queued);
        assert_eq!(s.claim_build().await.unwrap().unwrap().attempt, 1, "a shutdown does not count as an attempt");
    }

    /// A process that stops renewing its lease loses the job to another;
    /// what it writes afterwards is dropped; after MAX_ATTEMPTS leases
    /// run out, the job (and its build) fail.
    async fn an_expired_lease_passes_the_job_on(db) {
        let tmp = TempDb::new(db).await;
        // Leases of 3 s: long enough for "a live lease is respected" on a
        // busy machine; expiry is waited for by polling, not by sleeping.
        let (dead, alive) = (tmp.process(3).await, tmp.process(3).await);
        let b = new_build("w", &["native"]);
        let Submission::Queued { job_id } = dead.submit(&b).await.unwrap() else { panic!() };
        assert_eq!(dead.claim_build().await.unwrap().unwrap().attempt, 1);
        assert!(dead.heartbeat(&job_id).await.unwrap(), "its own lease renews");
        assert!(alive.claim_build().await.unwrap().is_none(), "a live lease is respected");
        let taken = eventually("the expired job to be claimed again", || alive.claim_build()).await;
        assert_eq!((&taken.job_id, taken.attempt), (&job_id, 2));
        assert!(!dead.heartbeat(&job_id).await.unwrap(), "the first process learns it lost the job");
        dead.fail(&job_id, &b.id, "late").await.unwrap();
        dead.progress(&job_id, "late", "late").await.unwrap();
        let job = alive.job(&job_id).await.unwrap().unwrap();
        assert_eq!((job.state, job.progress.as_str(), job.error), (JobState::Running, "starting", None));
        // The second process dies too: MAX_ATTEMPTS is reached (a claim
        // past the lease fails the job instead of taking it).
        let failed = || async {
            assert!(alive.claim_build().await.unwrap().is_none(), "a job past its last attempt is not claimed");
            Ok(alive.job(&job_id).await.unwrap().filter(|job| job.state == JobState::Failed))
        };
        let job = eventually("the job to fail after its last attempt", failed).await;
        assert!(job.error.unwrap().contains("interrupted"));
        assert_eq!(alive.build(&b.id).await.unwrap().unwrap().state, BuildState::Failed);
        // A process shutting down hands its job back without using an attempt.
        let Submission::Queued { job_id } = alive.submit(&b).await.unwrap() else { panic!() };
        alive.claim_build().await.unwrap().unwrap();
        alive.requeue(&job_id).await.unwrap();
        assert_eq!(dead.claim_build().await.unwrap().unwrap().attempt, 1);
    }

    /// Publish jobs share the queue with builds, each kind claimed apart.
    async fn publishes_operations_owners_and_packages(db) {
        let tmp = TempDb::new(db).await;
        let (a, b) = (tmp.process(30).await, tmp.process(30).await);
        let new = NewPublish {
            name: "op_x".into(),
            version: "0.1.0".into(),
            version_id: "bafkr4ix".into(),
            source: cid("upload"),
        };
        let id = JobId::new_random();
        assert_eq!(a.submit_publish(&id, &new).await.unwrap(), PublishSubmission::Queued(id.clone()));
        assert_eq!(b.submit_publish(&JobId::new_random(), &new).await.unwrap(), PublishSubmission::Joined(id.clone()));
        assert!(a.claim_build().await.unwrap().is_none(), "a publish job is not a build");
        assert!(a.job(&id).await.unwrap().is_none(), "nor shown as one");
        assert_eq!(b.claim_publish().await.unwrap().unwrap().state, JobState::Running);
        assert!(a.claim_publish().await.unwrap().is_none());
        a.finish_publish(&id, None, "not a's").await.unwrap();
        assert_eq!(a.publish(&id).await.unwrap().unwrap().state, JobState::Running, "only the holder finishes it");
        b.finish_publish(&id, None, "built").await.unwrap();
        let done = a.publish(&id).await.unwrap().unwrap();
        assert_eq!((done.state, done.log_tail.as_str(), done.error), (JobState::Succeeded, "built", None));
        assert_eq!(done.source, Some(cid("upload")));
        assert_eq!(a.job_counts(Kind::PUBLISH).await.unwrap(), vec![(JobState::Succeeded, 1)]);
        assert_eq!(a.job_counts(Kind::BUILD).await.unwrap(), vec![]);

        // Registered once for every process; other sources for the same version are refused.
        let op = |version_id: &str, seed: &str| PublishedOperation {
            name: "op_x".into(),
            version: "0.1.0".into(),
            version_id: version_id.into(),
            source: cid(seed),
        };
        assert_eq!(a.operations().await.unwrap(), []);
        // Names have owners, the same in every process.
        assert_eq!(a.claim_name("op_named", "alice").await.unwrap(), ["alice"]);
        assert_eq!(b.claim_name("op_named", "mallory").await.unwrap(), ["alice"], "taken");
        assert_eq!(a.claim_name("op_named", "alice").await.unwrap(), ["alice"], "again: a no-op");
        b.add_owner("op_named", "bob").await.unwrap();
        b.add_owner("op_named", "bob").await.unwrap();
        assert_eq!(a.claim_name("op_named", "bob").await.unwrap(), ["alice", "bob"]);
        // The same name as cargo sees it: another case, `-` for `_`.
        for other in ["OP_NAMED", "Op-Named", "op-named"] {
            assert_eq!(b.claim_name(other, "mallory").await.unwrap(), ["alice", "bob"], "{other} taken");
        }
        assert_eq!(b.register_operation(&op("bafkr4ix", "upload")).await.unwrap(), None);
        assert_eq!(a.register_operation(&op("bafkr4ix", "upload")).await.unwrap(), None, "again: a no-op");
        assert_eq!(a.register_operation(&op("bafkr4iy", "other")).await.unwrap(), Some(op("bafkr4ix", "upload")));
        assert_eq!(a.operations().await.unwrap(), [op("bafkr4ix", "upload")]);

        let package = |digest: &str| Package {
            ecosystem: Ecosystem::Cargo,
            name: "wf_a".into(),
            version: "0.1.0".into(),
            cid: cid(digest),
            entry: "{}".into(),
            digest: digest.into(),
        };
        assert!(a.add_registry_packages(&[artifact("one")], &[package("one")]).await.unwrap().is_empty());
        assert_eq!(b.add_registry_packages(&[], &[package("two")]).await.unwrap(), vec!["cargo wf_a@0.1.0".to_string()]);
        assert_eq!(b.package(Ecosystem::Cargo, "wf_a", "0.1.0").await.unwrap(), Some(package("one")));
        // A build bringing the same version with other bytes leaves it as it was.
        let bd = new_build("w", &["native"]);
        let Submission::Queued { job_id } = a.submit(&bd).await.unwrap() else { panic!() };
        a.claim_build().await.unwrap().unwrap();
        a.succeed(&job_id, &bd.id, &report(), &[artifact("two")], &[package("two")]).await.unwrap();
        assert_eq!(b.package_versions(Ecosystem::Cargo, "wf_a").await.unwrap(), vec![package("one")]);
    }

    /// A kind of job of one's own: queued once per subject, claimed by
    /// kind, leased, finished, counted; no other kind sees it.
    async fn any_kind_of_job_shares_the_queue(db) {
        const SWEEP: Kind = Kind::new("sweep");
        let tmp = TempDb::new(db).await;
        let (a, b) = (tmp.process(30).await, tmp.process(30).await);
        let (id, new) = a.submit_job(SWEEP, "bucket-1").await.unwrap();
        assert!(new);
        assert_eq!(b.submit_job(SWEEP, "bucket-1").await.unwrap(), (id.clone(), false), "joined while pending");
        assert!(a.claim_build().await.unwrap().is_none() && a.claim_publish().await.unwrap().is_none());
        let claim = b.claim(SWEEP).await.unwrap().unwrap();
        assert_eq!((&claim.id, claim.subject.as_str(), claim.attempt), (&id, "bucket-1", 1));
        assert!(a.claim(SWEEP).await.unwrap().is_none(), "claimed once");
        a.finish(&id, "swept", None, "not a's").await.unwrap();
        assert_eq!(a.job_counts(SWEEP).await.unwrap(), vec![(JobState::Running, 1)], "only the holder finishes it");
        b.finish(&id, "swept", None, "3 files").await.unwrap();
        assert_eq!(a.job_counts(SWEEP).await.unwrap(), vec![(JobState::Succeeded, 1)]);
        assert!(a.submit_job(SWEEP, "bucket-1").await.unwrap().1, "a finished job is not joined");
    }

    async fn a_schema_from_a_newer_braid_is_refused(db) {
        let tmp = TempDb::new(db).await;
        drop(tmp.process(30).await);
        tmp.execute(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
             SELECT 1000, 'from the future', TRUE, checksum, 0 FROM _sqlx_migrations WHERE version = 1",
        )
        .await;
        let err = Store::open(&tmp.location, Duration::from_secs(30), Duration::from_secs(10)).await.err().expect("refused");
        assert!(matches!(err, StoreError::TooNew { .. }), "{err}");
        assert!(err.to_string().contains("newer than"), "{err}");
    }
}

/// The only process of an embedded store recovers at start: every job
/// left running runs again, until MAX_ATTEMPTS; then it fails, and its
/// build with it. Publish jobs too.
#[tokio::test]
async fn interrupted_jobs_are_retried_then_failed() {
    let tmp = TempDb::new(Db::Sqlite).await;
    let s = tmp.process(30).await;
    let b = new_build("w", &[]);
    let Submission::Queued { job_id } = s.submit(&b).await.unwrap() else { panic!() };
    let publish = JobId::new_random();
    let new =
        NewPublish { name: "op_x".into(), version: "0.1.0".into(), version_id: "bafkr4ix".into(), source: cid("up") };
    s.submit_publish(&publish, &new).await.unwrap();
    for attempt in 1..=MAX_ATTEMPTS {
        s.claim_build().await.unwrap().unwrap();
        s.claim_publish().await.unwrap().unwrap();
        let (retried, failed) = s.recover().await.unwrap();
        if attempt < MAX_ATTEMPTS {
            assert_eq!((retried, failed), (2, 0));
            assert_eq!(s.job(&job_id).await.unwrap().unwrap().state, JobState::Queued);
            assert_eq!(s.publish(&publish).await.unwrap().unwrap().state, JobState::Queued);
        } else {
            assert_eq!((retried, failed), (0, 2));
            let job = s.job(&job_id).await.unwrap().unwrap();
            assert_eq!(job.state, JobState::Failed);
            assert!(job.error.unwrap().contains("interrupted"));
            assert_eq!(s.build(&b.id).await.unwrap().unwrap().state, BuildState::Failed);
            let failed = s.publish(&publish).await.unwrap().unwrap();
            assert_eq!(failed.state, JobState::Failed);
            assert!(failed.error.unwrap().contains("interrupted"));
        }
    }
    // A failed build can be submitted again, a failed publish too.
    assert!(matches!(s.submit(&b).await.unwrap(), Submission::Queued { .. }));
    let again = JobId::new_random();
    assert_eq!(s.submit_publish(&again, &new).await.unwrap(), PublishSubmission::Queued(again));
}

#[tokio::test]
async fn a_deleted_database_takes_no_more_writes() {
    let tmp = TempDb::new(Db::Sqlite).await;
    let s = tmp.process(30).await;
    s.submit(&new_build("w1", &[])).await.unwrap();
    std::fs::remove_file(tmp.path()).unwrap();
    let err = s.submit(&new_build("w2", &[])).await.unwrap_err();
    assert!(matches!(err, StoreError::Gone(_)), "{err}");
    assert!(s.is_gone());
    assert!(matches!(s.claim_build().await, Err(StoreError::Gone(_))));
    // A new file at the same path is not the database either.
    std::fs::write(tmp.path(), b"").unwrap();
    assert!(matches!(s.submit(&new_build("w3", &[])).await, Err(StoreError::Gone(_))));
    assert!(s.job_counts(Kind::BUILD).await.is_ok(), "reads still answer");
}

/// Identical submissions racing through several processes get one job;
/// many jobs claimed by racing processes are each claimed once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: run `cargo xtask test-postgres`"]
async fn racing_processes_share_jobs_and_never_claim_one_twice_postgres() {
    let tmp = TempDb::new(Db::Postgres).await;
    let mut processes = Vec::new();
    for _ in 0..4 {
        processes.push(Arc::new(tmp.process(30).await));
    }
    let racing = processes.iter().map(|p| {
        let p = p.clone();
        tokio::spawn(async move { p.submit(&new_build("same", &["native"])).await.unwrap() })
    });
    let mut submitted = Vec::new();
    for r in racing.collect::<Vec<_>>() {
        submitted.push(r.await.unwrap());
    }
    let queued = submitted.iter().filter(|s| matches!(s, Submission::Queued { .. })).count();
    assert_eq!(queued, 1, "{submitted:?}");
    for i in 0..39 {
        processes[i % 4].submit(&new_build(&format!("w{i}"), &["native"])).await.unwrap();
    }
    let claiming = processes.iter().map(|p| {
        let p = p.clone();
        tokio::spawn(async move {
            let mut mine = Vec::new();
            while let Some(job) = p.claim_build().await.unwrap() {
                mine.push(job.job_id);
            }
            mine
        })
    });
    let mut claimed = Vec::new();
    for c in claiming.collect::<Vec<_>>() {
        claimed.extend(c.await.unwrap());
    }
    let mut unique = claimed.clone();
    unique.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    unique.dedup();
    assert_eq!((claimed.len(), unique.len()), (40, 40));
}

#[tokio::test]
async fn an_unreachable_or_malformed_database_is_a_clear_error() {
    let open = |url: &str| {
        let location = Location::Postgres(url.to_string());
        async move { Store::open(&location, Duration::from_secs(30), Duration::from_secs(1)).await.err().expect("refused") }
    };
    let err = open("postgres://braid:secret@127.0.0.1:1/braid").await;
    assert!(matches!(err, StoreError::Unreachable { .. }), "{err}");
    assert!(
        err.to_string().starts_with("cannot reach the database at postgres://braid:***@127.0.0.1:1/braid"),
        "{err}"
    );
    let err = open("mysql://x").await;
    assert!(matches!(err, StoreError::Url(_)), "{err}");
}

/// A database made by the braid before the one queue and sqlx (an
/// embedded one of schema version 6, `tests/data/store-v6.sqlite`, and a
/// PostgreSQL one of version 3, `tests/data/store-postgres-v3.sql`, both
/// written by that braid's store: a build succeeded with an artifact and
/// a package, one running, one queued; a publish registered, one queued;
/// an owner) opens migrated, every row kept.
mod databases_of_the_braid_before {
    use super::*;

    async fn check(s: &Store) {
        let workflow = WorkflowId::parse(cid("{}").as_str()).unwrap();
        let builds = s.builds_of(&workflow).await.unwrap();
        let state_of = |seed: &str| builds.iter().find(|b| b.id == new_build(seed, &[]).id).map(|b| b.state);
        assert_eq!(builds.len(), 3);
        assert_eq!(state_of("done"), Some(BuildState::Succeeded));
        assert_eq!(state_of("queued"), Some(BuildState::Building));
        let done = s.build(&new_build("done", &[]).id).await.unwrap().unwrap();
        assert_eq!((done.report, done.artifacts.len()), (Some(report()), 2));
        assert_eq!(s.artifact(&cid("c1")).await.unwrap(), Some(("application/wasm".into(), Some("x.wasm".into()))));
        assert_eq!(s.package(Ecosystem::Cargo, "wf_a", "0.1.0").await.unwrap().unwrap().digest, "d1");
        // The publish registered, its operation and owner.
        let first = JobId::parse("00000000000000000000000000000001").unwrap();
        let publish = s.publish(&first).await.unwrap().unwrap();
        assert_eq!(
            (publish.state, publish.name.as_str(), publish.log_tail.as_str()),
            (JobState::Succeeded, "op_x", "built")
        );
        assert_eq!(publish.source, Some(cid("upload")));
        assert_eq!(s.operations().await.unwrap().len(), 1);
        assert_eq!(s.claim_name("op_x", "mallory").await.unwrap(), ["alice"]);
        // The queue, in its order: the build left running by a process
        // that is gone runs again, then the queued build, then the publish.
        assert_eq!(s.job_counts(Kind::BUILD).await.unwrap().iter().map(|(_, n)| n).sum::<i64>(), 3);
        assert_eq!(s.recover().await.unwrap(), (1, 0));
        let build = s.claim_build().await.unwrap().expect("the interrupted build");
        assert_eq!((&build.build_id, build.attempt), (&new_build("running", &[]).id, 2));
        let build = s.claim_build().await.unwrap().expect("the queued build");
        assert_eq!((&build.build_id, build.attempt), (&new_build("queued", &[]).id, 1));
        assert_eq!(build.targets, vec!["web".parse::<Target>().unwrap()]);
        assert_eq!(build.third_party, None, "not known: submitted before it was kept");
        assert_eq!(build.operations, None, "not known: submitted before they were kept");
        let next = s.claim_publish().await.unwrap().expect("the queued publish");
        assert_eq!((next.name.as_str(), next.version_id.as_str()), ("op_y", "bafkr4iy"));
        // Identical submissions are answered from what was there.
        assert!(matches!(s.submit(&new_build("done", &["native"])).await.unwrap(), Submission::Built { .. }));
        let running = new_build("running", &["node"]);
        assert!(matches!(s.submit(&running).await.unwrap(), Submission::Joined { state: JobState::Running, .. }));
    }

    #[tokio::test]
    async fn sqlite() {
        let tmp = TempDb::new(Db::Sqlite).await;
        let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/store-v6.sqlite");
        std::fs::copy(fixture, tmp.path()).unwrap();
        let s = tmp.process(30).await;
        check(&s).await;
        drop(s);
        // Opening it again changes nothing.
        let s = tmp.process(30).await;
        assert_eq!(s.operations().await.unwrap().len(), 1);
    }

    #[tokio::test]
    #[ignore = "needs PostgreSQL: run `cargo xtask test-postgres`"]
    async fn postgres() {
        let tmp = TempDb::new(Db::Postgres).await;
        tmp.execute(include_str!("../tests/data/store-postgres-v3.sql")).await;
        let s = tmp.process(30).await;
        check(&s).await;
    }

    /// A file from before schema versions (version 0: `workflows` keyed
    /// by the build key, `jobs.workflow_id`): its builds keep their ids
    /// and learn their workflow id, its queue and artifacts are kept.
    #[tokio::test]
    async fn sqlite_from_before_versions() {
        let tmp = TempDb::new(Db::Sqlite).await;
        let manifest = r#"{"name":"a","segments":[],"version":"0.1.0"}"#;
        let (built, pending, c) = (cid("k1"), cid("k2"), cid("c"));
        let queued_job = JobId::new_random();
        let artifacts = serde_json::to_string(&[artifact("c")]).unwrap();
        let report = serde_json::to_string(&report()).unwrap();
        tmp.execute(&format!(
            "CREATE TABLE workflows (
                id TEXT PRIMARY KEY, name TEXT NOT NULL, manifest TEXT NOT NULL, targets TEXT NOT NULL,
                state TEXT NOT NULL, report TEXT, artifacts TEXT, created_at INTEGER NOT NULL);
             CREATE TABLE jobs (
                id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL, state TEXT NOT NULL,
                progress TEXT NOT NULL DEFAULT '', log TEXT NOT NULL DEFAULT '', error TEXT,
                attempts INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,
                started_at INTEGER, finished_at INTEGER, seq INTEGER NOT NULL);
             CREATE INDEX jobs_state ON jobs(state, seq);
             CREATE TABLE artifacts (cid TEXT PRIMARY KEY, size INTEGER NOT NULL, media_type TEXT NOT NULL);
             INSERT INTO workflows VALUES ('{built}', 'a', '{manifest}', '[\"native\"]', 'succeeded', '{report}', '{artifacts}', 1),
                                          ('{pending}', 'a', '{manifest}', '[\"node\"]', 'building', NULL, NULL, 2);
             INSERT INTO jobs (id, workflow_id, state, created_at, seq) VALUES ('{queued_job}', '{pending}', 'queued', 2, 1);
             INSERT INTO artifacts VALUES ('{c}', 1, 'application/wasm');"
        ))
        .await;
        let s = tmp.process(30).await;
        let workflow_id = WorkflowId::parse(&braid::content_id(manifest.as_bytes())).unwrap();
        let row = s.build(&BuildId::parse(built.as_str()).unwrap()).await.unwrap().unwrap();
        assert_eq!(
            (row.state, &row.workflow_id, row.report),
            (BuildState::Succeeded, &workflow_id, Some(super::report()))
        );
        assert_eq!(s.builds_of(&workflow_id).await.unwrap().len(), 2);
        let job = s.job(&queued_job).await.unwrap().unwrap();
        assert_eq!(
            (job.state, job.build_id.as_str(), &job.workflow_id),
            (JobState::Queued, pending.as_str(), &workflow_id)
        );
        assert_eq!(s.artifact(&c).await.unwrap(), Some(("application/wasm".to_string(), Some(artifact("c").name))));
        let again = NewBuild {
            id: row.id.clone(),
            workflow_id: workflow_id.clone(),
            name: "a".into(),
            manifest: manifest.into(),
            targets: vec![Target::Native],
            third_party: Vec::new(),
            operations: Default::default(),
        };
        assert_eq!(s.submit(&again).await.unwrap(), Submission::Built { artifacts: vec![artifact("c")] });
        assert_eq!(s.claim_build().await.unwrap().unwrap().job_id, queued_job, "the queue survived");
    }

    /// A file whose `user_version` is past the last schema before sqlx
    /// was written by a braid this one does not know.
    #[tokio::test]
    async fn sqlite_from_a_newer_braid_is_refused() {
        let tmp = TempDb::new(Db::Sqlite).await;
        tmp.execute("PRAGMA user_version = 99").await;
        let err =
            Store::open(&tmp.location, Duration::from_secs(30), Duration::from_secs(10)).await.err().expect("refused");
        assert!(matches!(err, StoreError::TooNew { found: 99, .. }), "{err}");
    }
}

/// Polls `check` until it gives `Some`, for what only time brings (a
/// lease running out); fails after two minutes, saying what it waited for.
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>, StoreError>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(value) = check().await.unwrap() {
            return value;
        }
        assert!(tokio::time::Instant::now() < deadline, "waited two minutes for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
