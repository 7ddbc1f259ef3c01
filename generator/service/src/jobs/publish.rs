//! Publish checks ([`Kind::PUBLISH`]), run by the
//! [`runner`](super::runner) in every process that builds, where the
//! sandbox works: each fetches
//! each upload from the artifact store, builds the operation crate for the
//! targets its manifest declares inside the sandbox, lists it as
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

use braid::opcheck::{self, Check};
use braid::registry::{self, Added, Origin, Registry};

use super::runner::{Handler, Interrupt, Ran};
use super::{record, Redact};
use crate::ids::JobId;
use crate::store::queue::Claim;
use crate::store::{Kind, Publish, PublishedOperation, StoreError};
use crate::AppState;

/// Checks of published operations.
pub(crate) struct PublishCheck;

impl PublishCheck {
    /// Whether this process can run checks: it builds, and the sandbox works.
    pub(crate) fn runs_here(state: &AppState) -> bool {
        state.config.workers > 0 && state.sandbox.is_ok()
    }
}

impl Handler for PublishCheck {
    const KIND: Kind = Kind::PUBLISH;
    const WHAT: &'static str = "publish check";
    type Job = Publish;

    async fn load(state: &AppState, claim: &Claim) -> Result<Publish, StoreError> {
        state.store.publish(&claim.id).await?.ok_or_else(|| StoreError::Damaged(format!("no publish {}", claim.id)))
    }

    async fn run(state: Arc<AppState>, job: Arc<Publish>, interrupt: Interrupt) -> Ran {
        tracing::info!(job = %job.id, "checking {} {} for publishing", job.name, job.version);
        let mut task = tokio::task::spawn_blocking({
            let (state, job) = (state.clone(), job.clone());
            move || check(&state, &job)
        });
        let result = tokio::select! {
            result = &mut task => result,
            why = interrupt.wait() => {
                if why == Ran::Lost {
                    // What it records now is dropped by the store.
                    let _ = task.await;
                }
                // (On shutdown, the sandbox dies with the server.)
                return why;
            }
        };
        let (error, log) = match result {
            Ok(Ok(log)) => (None, log),
            Ok(Err(error)) => (Some(error), String::new()),
            Err(e) => (Some(format!("the check stopped: {e}")), String::new()),
        };
        let redact = Redact::new(&state.config, &job_dir(&state.config.data, &job.id).join("src"));
        let error = error.map(|e| redact.apply(&e));
        if let Some(e) = &error {
            tracing::warn!("publish job {}: {e}", job.id);
        }
        let _ = tokio::fs::remove_dir_all(job_dir(&state.config.data, &job.id)).await;
        record(&state, |state| {
            let (job, error, log) = (&job, &error, &log);
            async move { state.store.finish_publish(&job.id, error.as_deref(), log).await }
        })
        .await;
        Ran::Ended
    }

    async fn fail(state: &AppState, job: &Publish, error: &str) -> Result<(), StoreError> {
        let _ = tokio::fs::remove_dir_all(job_dir(&state.config.data, &job.id)).await;
        state.store.finish_publish(&job.id, Some(error), "").await
    }
}

/// Where an upload's files wait for their job.
pub fn job_dir(data: &Path, id: &JobId) -> PathBuf {
    data.join("publish").join(id.as_str())
}

/// Checks and registers the job's crate (on a blocking thread); its log,
/// or why it failed.
fn check(state: &AppState, job: &Publish) -> Result<String, String> {
    let sandbox = state.sandbox.clone()?;
    let dir = job_dir(&state.config.data, &job.id);
    let progress = |step: &str| {
        let _ = state.store.blocking(state.store.progress(&job.id, step, ""));
    };
    progress("reading the sources");
    let prepared = match &job.source {
        Some(source) => crate::operations::fetch(state, source, &job.version_id, &dir.join("src"))?,
        // A job queued before uploads were kept in the store: its files
        // wait in the data directory of the process that took the upload.
        None => {
            let files = registry::read_crate(&dir.join("src")).map_err(|e| e.to_string())?;
            registry::prepare(files, &job.name).map_err(|e| e.to_string())?
        }
    };
    let version_id = prepared.version_id.clone();
    if version_id != job.version_id {
        return Err(format!("the sources changed since the upload (version id {version_id}, not {})", job.version_id));
    }
    // One target directory for every check (warm for the runtime crates):
    // what a crate leaves there can only sway other checks, never a
    // workflow's build, which compiles in its own set's directory.
    let target_dir = state.config.target_dir.join("third-party").join("checks");
    let work_dir = dir.join("work");
    let sandbox = sandbox
        .writable(&work_dir)
        .and_then(|s| s.writable(&target_dir))
        .map_err(|e| e.to_string())?
        .hide(&state.config.data);
    let targets = braid::join(&prepared.manifest.targets, ", ");
    progress(&format!("building for {targets} in the sandbox"));
    let registry = state.synced_registry();
    opcheck::check(&prepared, &Check { work_dir, target_dir, sandbox: Some(&sandbox), registry: &registry })
        .map_err(|e| e.to_string())?;
    progress("registering");
    if let Some(source) = &job.source {
        let op = PublishedOperation {
            name: job.name.clone(),
            version: job.version.clone(),
            version_id: version_id.clone(),
            source: source.clone(),
        };
        if let Some(taken) = state.store.blocking(state.store.register_operation(&op)).map_err(|e| e.to_string())? {
            return Err(format!(
                "{} {} was registered meanwhile with other sources (version id {}); bump the version to publish a change",
                job.name, job.version, taken.version_id
            ));
        }
    }
    let mut registry = Registry::open(&state.config.data).map_err(|e| e.to_string())?;
    let added = registry.add(prepared, Origin::Published).map_err(|e| e.to_string())?;
    *state.registry.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(registry);
    crate::packages::add_operations(state);
    let what = match added {
        Added::New => "registered",
        Added::Unchanged => "already registered with the same sources",
        Added::Replaced => "registered, replacing the built-in of the same version",
    };
    Ok(format!("{} {}: built for {targets} in the sandbox; {what} as {version_id}\n", job.name, job.version))
}
