//! The one job runner: every kind of job runs under it. A kind is a type
//! implementing [`Handler`] (its [`Kind`], what a job of it needs, how to
//! run one, how to fail one); [`spawn`] starts runners of that kind,
//! each looping: take a build slot, claim the oldest queued job of the
//! kind, run it while renewing its lease, then take the next; when the
//! queue is empty, sleep until [`crate::env::Wake::notify`] says a job was queued here
//! (or two seconds pass: jobs queued by other processes of a deployment).
//!
//! The runner owns what every kind shares: the slot (`--workers` bounds
//! all jobs together), the lease heartbeat, the shutdown (a job stopped by
//! it goes back to the queue without using an attempt), a job whose lease
//! another process took over, and a handler that panics (its job fails).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use braid_store::ids::JobId;
use braid_store::queue::Claim;
use braid_store::{Kind, StoreError};

use super::{record, stopped};
use crate::Env;

/// A kind of job: what the runner needs to take and run its jobs.
pub(crate) trait Handler: Send + Sync + 'static {
    /// Its jobs in the queue.
    const KIND: Kind;
    /// What the runner says in logs: "build", "publish check".
    const WHAT: &'static str;

    /// A claimed job with what running it needs.
    type Job: Send + Sync + 'static;

    /// Reads what running the job `claim` needs (its build, its upload).
    fn load(env: &Env, claim: &Claim) -> impl Future<Output = Result<Self::Job, StoreError>> + Send;

    /// Runs `job` and records how it ended (see [`record`]), unless
    /// `interrupt` fires first: then it stops the work and says why.
    fn run(env: Arc<Env>, job: Arc<Self::Job>, interrupt: Interrupt) -> impl Future<Output = Ran> + Send;

    /// Records that `job` failed with `error`.
    fn fail(env: &Env, job: &Self::Job, error: &str) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// How a run came to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ran {
    /// The job ended, and the handler recorded how.
    Ended,
    /// Stopped by the shutdown: the job goes back to the queue.
    Stopped,
    /// Another process took the job over (this one's lease ran out).
    Lost,
}

/// Fires when a running job must stop before it ends: the server shuts
/// down, or the job's lease is lost. Renews the lease while awaited.
pub(crate) struct Interrupt {
    env: Arc<Env>,
    job: JobId,
}

impl Interrupt {
    /// Waits for the shutdown or the loss of the lease, renewing the
    /// lease meanwhile; [`Ran::Stopped`] or [`Ran::Lost`].
    pub(crate) async fn wait(&self) -> Ran {
        let mut stop = self.env.shutdown.subscribe();
        tokio::select! {
            () = stopped(&mut stop) => Ran::Stopped,
            () = lease_lost(&self.env, &self.job) => Ran::Lost,
        }
    }
}

/// Renews the job's lease every third of its length; returns once the
/// store says the job is no longer this process's. A renewal that fails
/// (the database out of reach) is tried again at the next tick: the lease
/// outlives two of them.
async fn lease_lost(env: &Env, job: &JobId) {
    let every = (env.store.lease() / 3).max(Duration::from_secs(1));
    loop {
        tokio::time::sleep(every).await;
        match env.store.heartbeat(job).await {
            Ok(false) => return,
            Ok(true) => {}
            Err(e) => tracing::warn!(job = %job, "renewing the job's lease: {e}"),
        }
    }
}

/// Starts `n` runners of jobs of `H`; each returns once the server shuts down.
pub(crate) fn spawn<H: Handler>(env: &Arc<Env>, n: usize) -> Vec<tokio::task::JoinHandle<()>> {
    (0..n).map(|i| tokio::spawn(work::<H>(env.clone(), i))).collect()
}

async fn work<H: Handler>(env: Arc<Env>, i: usize) {
    let mut stop = env.shutdown.subscribe();
    let wake = env.wake.of(H::KIND);
    while !*stop.borrow() {
        // A slot first; held while the job runs, given back at once when
        // there is none.
        let Ok(slot) = env.build_slots.clone().acquire_owned().await else { return };
        match env.store.claim(H::KIND).await {
            Ok(Some(claim)) => {
                tracing::info!(runner = i, job = %claim.id, attempt = claim.attempt, "{} started", H::WHAT);
                match H::load(&env, &claim).await {
                    Ok(job) => run_one::<H>(&env, job, claim.id).await,
                    // A damaged row: the job runs again once its lease
                    // runs out, and fails after MAX_ATTEMPTS.
                    Err(e) => tracing::error!(job = %claim.id, "reading the {} job: {e}", H::WHAT),
                }
                drop(slot);
            }
            Ok(None) => {
                drop(slot);
                tokio::select! {
                    () = wake.notified() => {}
                    () = tokio::time::sleep(Duration::from_secs(2)) => {}
                    _ = stop.changed() => {}
                }
            }
            Err(e) => {
                drop(slot);
                tracing::error!("taking a {} job: {e}", H::WHAT);
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs(5)) => {}
                    _ = stop.changed() => {}
                }
            }
        }
    }
}

async fn run_one<H: Handler>(env: &Arc<Env>, job: H::Job, id: JobId) {
    let job = Arc::new(job);
    let interrupt = Interrupt { env: env.clone(), job: id.clone() };
    // A panic in the handler must still end the job.
    match tokio::spawn(H::run(env.clone(), job.clone(), interrupt)).await {
        Ok(Ran::Ended) => {}
        Ok(Ran::Stopped) => {
            tracing::info!(job = %id, "{} stopped by the shutdown; it runs again at the next start", H::WHAT);
            if let Err(e) = env.store.requeue(&id).await {
                tracing::warn!(job = %id, "putting the job back in the queue: {e}");
            }
        }
        Ok(Ran::Lost) => tracing::warn!(job = %id, "{} stopped: another process took its job over", H::WHAT),
        Err(e) => {
            tracing::error!(job = %id, "the {} task failed: {e}", H::WHAT);
            let error = format!("the {} failed inside the server (see its log)", H::WHAT);
            record(env, move |env| {
                let (job, error) = (job.clone(), error.clone());
                async move { H::fail(&env, &job, &error).await }
            })
            .await;
        }
    }
}

#[cfg(test)]
mod tests {
    use braid_store::JobState;

    use super::*;

    /// A kind of job of one's own, as the README walks through it: the
    /// type and its handler are all it takes.
    struct Echo;

    impl Handler for Echo {
        const KIND: Kind = Kind::new("echo");
        const WHAT: &'static str = "echo";
        type Job = Claim;

        async fn load(_: &Env, claim: &Claim) -> Result<Claim, StoreError> {
            Ok(claim.clone())
        }

        async fn run(env: Arc<Env>, job: Arc<Claim>, interrupt: Interrupt) -> Ran {
            if job.subject == "wait" {
                return interrupt.wait().await;
            }
            if job.subject == "panic" {
                panic!("a handler that panics");
            }
            let log = format!("echo {}", job.subject);
            record(&env, |env| {
                let (job, log) = (&job, &log);
                async move { env.store.finish(&job.id, "echoed", None, log).await }
            })
            .await;
            Ran::Ended
        }

        async fn fail(env: &Env, job: &Claim, error: &str) -> Result<(), StoreError> {
            env.store.finish(&job.id, "failed", Some(error), "").await
        }
    }

    async fn counts(env: &Env) -> Vec<(JobState, i64)> {
        env.store.job_counts(Echo::KIND).await.unwrap()
    }

    /// Waits (a bounded number of polls) until the echo jobs are `want`.
    async fn until(env: &Env, want: Vec<(JobState, i64)>) {
        for _ in 0..200 {
            if counts(env).await == want {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the echo jobs are {:?}, not {want:?}", counts(env).await);
    }

    #[tokio::test]
    async fn a_kind_of_ones_own_runs_ends_fails_and_is_requeued_on_shutdown() {
        let dir = tempfile::tempdir().unwrap();
        let env = crate::Env::open(crate::Config::for_tests(dir.path().to_path_buf())).await.unwrap();
        let runners = spawn::<Echo>(&env, 1);
        let (_, new) = env.store.submit_job(Echo::KIND, "hello").await.unwrap();
        assert!(new);
        env.wake.notify(Echo::KIND);
        until(&env, vec![(JobState::Succeeded, 1)]).await;
        // A handler that panics: its job fails, the runner goes on.
        env.store.submit_job(Echo::KIND, "panic").await.unwrap();
        env.wake.notify(Echo::KIND);
        until(&env, vec![(JobState::Failed, 1), (JobState::Succeeded, 1)]).await;
        env.store.submit_job(Echo::KIND, "wait").await.unwrap();
        env.wake.notify(Echo::KIND);
        until(&env, vec![(JobState::Failed, 1), (JobState::Running, 1), (JobState::Succeeded, 1)]).await;
        // The shutdown: the job goes back to the queue, and the runner returns.
        let _ = env.shutdown.send(true);
        for runner in runners {
            runner.await.unwrap();
        }
        assert_eq!(counts(&env).await, vec![(JobState::Failed, 1), (JobState::Queued, 1), (JobState::Succeeded, 1)]);
    }
}
