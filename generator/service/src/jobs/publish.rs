//! The publisher: takes publish jobs from the persisted queue one at a
//! time (in every process that builds, where the sandbox works), fetches
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

use super::{lease_lost, record, Redact};
use crate::ids::JobId;
use crate::store::{Publish, PublishedOperation};
use crate::AppState;

/// Starts the publisher where this process builds and the sandbox works;
/// it returns once the process shuts down.
pub fn spawn(state: Arc<AppState>) -> Option<tokio::task::JoinHandle<()>> {
    if state.config.workers == 0 || state.sandbox.is_err() {
        return None;
    }
    Some(tokio::spawn(work(state)))
}

/// Where an upload's files wait for their job.
pub fn job_dir(data: &Path, id: &JobId) -> PathBuf {
    data.join("publish").join(id.as_str())
}

async fn work(state: Arc<AppState>) {
    let mut stop = state.shutdown.subscribe();
    loop {
        if *stop.borrow() {
            return;
        }
        // A check is a build: it takes one of the `--workers` slots.
        let Ok(slot) = state.build_slots.clone().acquire_owned().await else { return };
        let store = state.store.clone();
        let claimed = tokio::task::spawn_blocking(move || store.claim_publish()).await;
        let job = match claimed {
            Ok(Ok(Some(job))) => job,
            Ok(Ok(None)) => {
                drop(slot);
                // Woken by an upload here, or poll now and then (uploads
                // through other processes of a deployment).
                tokio::select! {
                    () = state.publish_wake.notified() => {}
                    // (A wake-up sent while no one waited is kept for the next wait.)
                    () = tokio::time::sleep(std::time::Duration::from_secs(2)) => {}
                    _ = stop.changed() => {}
                }
                continue;
            }
            Ok(Err(e)) => {
                tracing::error!("taking a publish job: {e}");
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                continue;
            }
            Err(e) => {
                tracing::error!("taking a publish job: {e}");
                continue;
            }
        };
        let id = job.id.clone();
        tracing::info!(job = %id, "checking {} {} for publishing", job.name, job.version);
        let task = tokio::task::spawn_blocking({
            let state = state.clone();
            move || run(&state, &job)
        });
        // Renews the job's lease (a shared database); a result recorded
        // after it is lost is dropped by the store.
        let heartbeat = tokio::spawn({
            let (state, id) = (state.clone(), id.clone());
            async move { lease_lost(&state, &id).await }
        });
        let _abort = AbortOnDrop(heartbeat);
        tokio::select! {
            result = task => {
                let (error, log) = match result {
                    Ok(Ok(log)) => (None, log),
                    Ok(Err(error)) => (Some(error), String::new()),
                    Err(e) => (Some(format!("the check stopped: {e}")), String::new()),
                };
                let redact = Redact::new(&state.config, &job_dir(&state.config.data, &id).join("src"));
                let error = error.map(|e| redact.apply(&e));
                if let Some(e) = &error {
                    tracing::warn!("publish job {}: {e}", id.as_str());
                }
                let _ = std::fs::remove_dir_all(job_dir(&state.config.data, &id));
                record(&state, move |store| store.finish_publish(&id, error.as_deref(), &log)).await;
            }
            _ = stop.changed() => {
                // The sandbox dies with the server; the job runs on the next start.
                let store = state.store.clone();
                let _ = tokio::task::spawn_blocking(move || store.requeue_publish(&id)).await;
                return;
            }
        }
    }
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Checks and registers the job's crate; its log, or why it failed.
fn run(state: &AppState, job: &Publish) -> Result<String, String> {
    let sandbox = state.sandbox.clone()?;
    let dir = job_dir(&state.config.data, &job.id);
    let progress = |step: &str| {
        let _ = state.store.publish_progress(&job.id, step, "");
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
        if let Some(taken) = state.store.register_operation(&op).map_err(|e| e.to_string())? {
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
