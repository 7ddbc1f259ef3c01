//! Tests against a real PostgreSQL: `make test-postgres` starts one
//! (scripts/postgres.sh) and runs these with its URL in
//! `BRAID_TEST_POSTGRES`; each test works in a database of its own.

use std::sync::Arc;

use super::*;
use crate::store::fixtures::{artifact, cid, new_build, report};

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

#[test]
#[ignore = "needs PostgreSQL: run `make test-postgres`"]
fn a_build_is_queued_joined_claimed_and_reused() {
    let url = database();
    let (api, worker) = (process(&url, 30), process(&url, 30));
    let b = new_build("w1", &["native"]);
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
        let handles: Vec<_> =
            processes.iter().map(|p| s.spawn(|| p.submit(&new_build("same", &["native"])).unwrap())).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let queued = submitted.iter().filter(|s| matches!(s, Submission::Queued { .. })).count();
    assert_eq!(queued, 1, "{submitted:?}");
    for i in 0..39 {
        processes[i % 4].submit(&new_build(&format!("w{i}"), &["native"])).unwrap();
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
    let b = new_build("w", &["native"]);
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
    let err = Postgres::open("postgres://[", Duration::from_secs(30), Duration::from_secs(1)).err().expect("refused");
    assert!(matches!(err, StoreError::Url(_)), "{err}");
}
