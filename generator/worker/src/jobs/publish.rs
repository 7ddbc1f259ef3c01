//! Publish checks ([`Kind::PUBLISH`]), run by the
//! [`runner`](super::runner) in every process that builds, where the
//! sandbox works: each fetches
//! each upload from the artifact store, builds the operation crate for the
//! targets its manifest declares inside the sandbox (`braid ops check`, a
//! supervised child like a build's: on shutdown it is stopped, whole, and
//! the job queued again), lists it as
//! registered in the database (for every process: [`crate::operations`])
//! and registers it in `<data>/registry` (then swaps the service's
//! registry, so workflows submitted afterwards may use it). The crate's
//! files are unpacked in `<data>/publish/<job>/src` while the job runs.
//!
//! Code nobody vetted is compiled in cargo target directories of its own:
//! one for the checks, and one per set of such operations for workflow
//! builds ([`crate::jobs::third_party_target_dir`]). Their build scripts can write only
//! there, so they can never change what builds without them read.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use braid::registry::{self, Added, Origin, Registry};
use braid_store::ids::JobId;
use braid_store::queue::Claim;
use braid_store::{Kind, Publish, PublishedOperation, StoreError};
use tokio::io::AsyncReadExt;

use super::child::{self, Child, Ended};
use super::runner::{Handler, Interrupt, Ran};
use super::{record, Outcome, Redact};
use crate::Env;

/// Checks of published operations.
pub(crate) struct PublishCheck;

impl PublishCheck {
    /// Whether this process can run checks: it builds, and the sandbox works.
    pub(crate) fn runs_here(env: &Env) -> bool {
        env.config.workers > 0 && env.sandbox.is_ok()
    }
}

impl Handler for PublishCheck {
    const KIND: Kind = Kind::PUBLISH;
    const WHAT: &'static str = "publish check";
    type Job = Publish;

    async fn load(env: &Env, claim: &Claim) -> Result<Publish, StoreError> {
        env.store.publish(&claim.id).await?.ok_or_else(|| StoreError::Damaged(format!("no publish {}", claim.id)))
    }

    async fn run(env: Arc<Env>, job: Arc<Publish>, interrupt: Interrupt) -> Ran {
        tracing::info!(job = %job.id, "checking {} {} for publishing", job.name, job.version);
        let (error, log) = match check(&env, &job, &interrupt).await {
            Ok(log) => (None, log),
            Err(Outcome::Failed(error)) => (Some(error), String::new()),
            // The check's processes are gone ([`Child::wait`]); a stopped
            // job is queued again by the runner, its upload kept.
            Err(Outcome::Interrupted(why)) => return why,
        };
        let redact = Redact::new(&env.config, &job_dir(&env.config.data, &job.id).join("src"));
        let error = error.map(|e| redact.apply(&e));
        if let Some(e) = &error {
            tracing::warn!("publish job {}: {e}", job.id);
        }
        let _ = tokio::fs::remove_dir_all(job_dir(&env.config.data, &job.id)).await;
        record(&env, |env| {
            let (job, error, log) = (&job, &error, &log);
            async move { env.store.finish_publish(&job.id, error.as_deref(), log).await }
        })
        .await;
        Ran::Ended
    }

    async fn fail(env: &Env, job: &Publish, error: &str) -> Result<(), StoreError> {
        let _ = tokio::fs::remove_dir_all(job_dir(&env.config.data, &job.id)).await;
        env.store.finish_publish(&job.id, Some(error), "").await
    }
}

/// Where an upload's files wait for their job.
pub fn job_dir(data: &Path, id: &JobId) -> PathBuf {
    data.join("publish").join(id.as_str())
}

/// Checks and registers the job's crate: its sources fetched and read
/// here, built for its targets in the sandbox by `braid ops check` (a
/// supervised child, killed with its whole process group when the server
/// stops or the job's time is up), then registered here; its log, or why
/// it failed.
async fn check(env: &Arc<Env>, job: &Arc<Publish>, interrupt: &Interrupt) -> Result<String, Outcome> {
    let prepared = blocking(env, job, fetch).await?;
    let dir = job_dir(&env.config.data, &job.id);
    // One target directory for every check (warm for the runtime crates):
    // what a crate leaves there can only sway other checks, never a
    // workflow's build, which compiles in its own set's directory.
    let target_dir = env.config.target_dir.join("third-party").join("checks");
    let targets = braid::join(&prepared.manifest.targets, ", ");
    progress(env, job, &format!("building for {targets} in the sandbox")).await;
    // The operations published to the deployment, in `<data>/registry`
    // for the child to read.
    crate::operations::synced_registry(env).await;
    let mut cmd = child::command(&env.config.braid_exe);
    cmd.args(["ops", "check"])
        .arg(dir.join("src"))
        .arg("--target-dir")
        .arg(&target_dir)
        .arg("--work-dir")
        .arg(dir.join("work"))
        .args(["--sandbox", "--sandbox-hide"])
        .arg(&env.config.data)
        // The sandbox's own limit is the job's, as in the service before.
        .arg("--sandbox-timeout")
        .arg(env.config.build_timeout.as_secs().to_string())
        .arg("--version-id")
        .arg(&job.version_id)
        // Marks every process of the check (tests look for it).
        .env("BRAID_SERVE_JOB", job.id.as_str())
        .env("BRAID_HOME", &env.config.data)
        .env("BRAID_TOOLS", braid::registry::tools_dir());
    let (child, stdout, stderr) = Child::spawn(cmd).map_err(|e| format!("cannot start the check: {e}"))?;
    // Both read to their end (a full pipe would stall the child); the
    // log's end is kept, where `braid ops check` prints why it failed.
    let output = tokio::spawn(async move {
        let (_, log) = tokio::join!(tail(stdout), tail(stderr));
        String::from_utf8_lossy(&log).into_owned()
    });
    let timeout = env.config.build_timeout;
    match child.wait(interrupt, timeout).await {
        Ok(Ended::Exited(status)) if status.success() => {}
        Ok(Ended::Exited(status)) => return Err(failure(status, &output.await.unwrap_or_default()).into()),
        Ok(Ended::TimedOut) => {
            return Err(format!("the check took longer than {} s and was stopped", timeout.as_secs()).into())
        }
        Ok(Ended::Interrupted(why)) => return Err(Outcome::Interrupted(why)),
        Err(e) => return Err(format!("waiting for the check: {e}").into()),
    }
    progress(env, job, "registering").await;
    let log = blocking(env, job, move |env, job| register(env, job, prepared)).await?;
    Ok(log)
}

/// Why a check that exited with `status` failed: the error `braid ops
/// check` printed (after `error: `, with the build's output it carries),
/// or its status and the end of what it printed.
fn failure(status: std::process::ExitStatus, log: &str) -> String {
    let at = if log.starts_with("error: ") { Some(0) } else { log.find("\nerror: ").map(|at| at + 1) };
    match at {
        Some(at) => log[at + "error: ".len()..].trim_end().to_string(),
        None => format!("the check failed ({status})\n{}", braid_store::tail(log, 4096)).trim_end().to_string(),
    }
}

/// At most this much of a check's output is kept: its end.
const LOG_LIMIT: usize = 1 << 20;

/// The last [`LOG_LIMIT`] bytes of what `reader` gives until its end.
async fn tail(mut reader: impl tokio::io::AsyncRead + Unpin) -> Vec<u8> {
    let (mut kept, mut chunk) = (Vec::new(), vec![0; 64 << 10]);
    while let Ok(n @ 1..) = reader.read(&mut chunk).await {
        kept.extend_from_slice(&chunk[..n]);
        if kept.len() > 2 * LOG_LIMIT {
            kept.drain(..kept.len() - LOG_LIMIT);
        }
    }
    if kept.len() > LOG_LIMIT {
        kept.drain(..kept.len() - LOG_LIMIT);
    }
    kept
}

/// `work` on a blocking thread (it reads files and the store).
async fn blocking<T: Send + 'static>(
    env: &Arc<Env>,
    job: &Arc<Publish>,
    work: impl FnOnce(&Env, &Publish) -> Result<T, String> + Send + 'static,
) -> Result<T, Outcome> {
    let (env, job) = (env.clone(), job.clone());
    match tokio::task::spawn_blocking(move || work(&env, &job)).await {
        Ok(result) => result.map_err(Outcome::Failed),
        Err(e) => Err(Outcome::Failed(format!("the check stopped: {e}"))),
    }
}

async fn progress(env: &Env, job: &Publish, step: &str) {
    let _ = env.store.progress(&job.id, step, "").await;
}

/// The job's crate, read from the artifact store into `<job>/src`.
fn fetch(env: &Env, job: &Publish) -> Result<registry::Prepared, String> {
    let _ = env.store.blocking(env.store.progress(&job.id, "reading the sources", ""));
    let dir = job_dir(&env.config.data, &job.id);
    let prepared = match &job.source {
        Some(source) => crate::operations::fetch(env, source, &job.version_id, &dir.join("src"))?,
        // A job queued before uploads were kept in the store: its files
        // wait in the data directory of the process that took the upload.
        None => {
            let files = registry::read_crate(&dir.join("src")).map_err(|e| e.to_string())?;
            registry::prepare(files, &job.name).map_err(|e| e.to_string())?
        }
    };
    let version_id = &prepared.version_id;
    if *version_id != job.version_id {
        return Err(format!("the sources changed since the upload (version id {version_id}, not {})", job.version_id));
    }
    Ok(prepared)
}

/// Registers the checked crate: in the store (for every process) and in
/// `<data>/registry`, then swaps the service's registry.
fn register(env: &Env, job: &Publish, prepared: registry::Prepared) -> Result<String, String> {
    let version_id = prepared.version_id.clone();
    let targets = braid::join(&prepared.manifest.targets, ", ");
    if let Some(source) = &job.source {
        let op = PublishedOperation {
            name: job.name.clone(),
            version: job.version.clone(),
            version_id: version_id.clone(),
            source: source.clone(),
        };
        if let Some(taken) = env.store.blocking(env.store.register_operation(&op)).map_err(|e| e.to_string())? {
            return Err(format!(
                "{} {} was registered meanwhile with other sources (version id {}); bump the version to publish a change",
                job.name, job.version, taken.version_id
            ));
        }
    }
    let mut registry = Registry::open(&env.config.data).map_err(|e| e.to_string())?;
    let added = registry.add(prepared, Origin::Published).map_err(|e| e.to_string())?;
    *env.registry.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(registry);
    crate::packages::add_operations(env);
    let what = match added {
        Added::New => "registered",
        Added::Unchanged => "already registered with the same sources",
        Added::Replaced => "registered, replacing the built-in of the same version",
    };
    Ok(format!("{} {}: built for {targets} in the sandbox; {what} as {version_id}\n", job.name, job.version))
}
