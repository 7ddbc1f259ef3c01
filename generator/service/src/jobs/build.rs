//! Build workers: a bounded pool that takes jobs from the persisted queue
//! and runs each as a `braid build --events json` child in its own process
//! group (so a timeout kills cargo and everything under it), reads its
//! typed [`Event`]s (stdout) and log (stderr, and any stdout line that is
//! not an event) into the job, then packs the outputs named by its
//! [`Report`] into the artifact store and records them in one transaction.
//!
//! Every way a build can end ends its job: success or failure is recorded
//! (retried until the store takes it, e.g. once a full disk has room
//! again), the attempt's own directory `builds/<job>.<attempt>` is removed
//! on every path, and logs and errors are stored with the server's paths
//! made relative (the build directory) or named (`<data>`, `<target-dir>`,
//! `~`). The child dies with the server, even by `kill -9` (`child.rs`);
//! on SIGTERM or SIGINT the running build is stopped and its job queued
//! again.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use braid::build::{Event, Report};
use braid::manifest::Workflow;
use braid::registry::Origin;
use braid::target::{JsTarget, Target};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::child::{self, Child, Ended};
use super::{record, Redact};
use crate::store::{Artifact, Claimed, Ecosystem, Package, Store};
use crate::{pack, AppState};

/// Starts `n` workers; each returns once the server shuts down.
pub fn spawn(state: Arc<AppState>, n: usize) -> Vec<tokio::task::JoinHandle<()>> {
    (0..n).map(|i| tokio::spawn(work(state.clone(), i))).collect()
}

async fn work(state: Arc<AppState>, i: usize) {
    let mut stop = state.shutdown.subscribe();
    while !*stop.borrow() {
        // A build slot first (publish checks take them too); held while
        // the job runs, given back at once when there is none.
        let Ok(slot) = state.build_slots.clone().acquire_owned().await else { return };
        let store = state.store.clone();
        match tokio::task::spawn_blocking(move || store.claim()).await {
            Ok(Ok(Some(job))) => {
                tracing::info!(worker = i, job = %job.job_id, attempt = job.attempt, "build started");
                // A panic in the build's code must still end the job.
                let run = tokio::spawn(run(state.clone(), job.clone())).await;
                if let Err(e) = run {
                    tracing::error!(job = %job.job_id, "the build task failed: {e}");
                    let _ = tokio::fs::remove_dir_all(build_dir(&state, &job)).await;
                    let (id, build) = (job.job_id.clone(), job.build_id.clone());
                    record(&state, move |s| s.fail(&id, &build, "the build failed inside the server (see its log)"))
                        .await;
                }
            }
            Ok(Ok(None)) => {
                drop(slot);
                // Woken by a submission, or poll now and then.
                tokio::select! {
                    () = state.wake.notified() => {}
                    () = tokio::time::sleep(Duration::from_secs(2)) => {}
                    _ = stop.changed() => {}
                }
            }
            Ok(Err(e)) => {
                tracing::error!("claiming a job: {e}");
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs(5)) => {}
                    _ = stop.changed() => {}
                }
            }
            Err(e) => tracing::error!("worker task: {e}"),
        }
    }
}

/// How a build ended.
enum Outcome {
    Built(Box<Report>, Vec<Artifact>, Vec<Package>),
    Failed(String),
    /// The server is shutting down.
    Stopped,
    /// The job's lease ran out and another worker took it over.
    Lost,
}

fn build_dir(state: &AppState, job: &Claimed) -> PathBuf {
    state.config.data.join("builds").join(format!("{}.{}", job.job_id, job.attempt))
}

async fn run(state: Arc<AppState>, job: Claimed) {
    state.metrics.build_started();
    let start = Instant::now();
    let dir = build_dir(&state, &job);
    let outcome = build(&state, &job, &dir).await;
    let _ = tokio::fs::remove_dir_all(&dir).await;
    let ms = start.elapsed().as_millis() as u64;
    let (id, build) = (job.job_id.clone(), job.build_id.clone());
    match outcome {
        Outcome::Built(report, artifacts, packages) => {
            state.metrics.build_finished(ms, true);
            record(&state, move |s| s.succeed(&id, &build, &report, &artifacts, &packages)).await;
        }
        Outcome::Failed(error) => {
            state.metrics.build_finished(ms, false);
            let error = Redact::new(&state.config, &dir).apply(&error);
            tracing::warn!(job = %job.job_id, "build failed: {}", error.lines().next().unwrap_or_default());
            record(&state, move |s| s.fail(&id, &build, &error)).await;
        }
        Outcome::Stopped => {
            tracing::info!(job = %job.job_id, "build stopped by the shutdown; it runs again at the next start");
            let _ = tokio::task::spawn_blocking(move || state.store.requeue(&id)).await;
        }
        Outcome::Lost => tracing::warn!(job = %job.job_id, "build stopped: another worker took its job over"),
    }
}

/// sccache's settings for its cache in `bucket`, under `sccache/`, beside
/// the artifacts (the credentials are the store's: `AWS_*`, inherited), on
/// the first endpoint that takes a connection; `None` if none does.
/// sccache takes one endpoint, and fails the build if it cannot reach it.
async fn sccache_env(bucket: &crate::cas::s3::Bucket) -> Option<Vec<(&'static str, String)>> {
    let mut reachable = None;
    for endpoint in &bucket.endpoints {
        let (Some(host), Some(port)) = (endpoint.host_str(), endpoint.port_or_known_default()) else { continue };
        let connect = tokio::net::TcpStream::connect((host, port));
        if let Ok(Ok(_)) = tokio::time::timeout(Duration::from_secs(2), connect).await {
            reachable = Some(endpoint);
            break;
        }
    }
    let endpoint = reachable?;
    Some(vec![
        ("SCCACHE_BUCKET", bucket.name.clone()),
        ("SCCACHE_ENDPOINT", endpoint.as_str().trim_end_matches('/').to_string()),
        ("SCCACHE_REGION", bucket.region.clone()),
        ("SCCACHE_S3_KEY_PREFIX", "sccache/".into()),
        ("SCCACHE_S3_USE_SSL", (endpoint.scheme() == "https").to_string()),
    ])
}

/// What a build of a job needs to know before it starts: the workflow as
/// validated now, and where and how what it compiles is built.
struct Plan {
    /// `None` when the workflow no longer validates here (`braid build`
    /// then says why).
    workflow: Option<Workflow>,
    /// Version ids of operations that did not ship with braid.
    third_party: Vec<String>,
    target_dir: PathBuf,
    sandboxed: bool,
}

impl Plan {
    /// Operations that did not ship with braid compile in a target
    /// directory of their own set, in the sandbox (see `publish`). With the
    /// operations published to the deployment: `braid build` reads the
    /// registry this takes them into.
    async fn new(state: &Arc<AppState>, job: &Claimed) -> Result<Self, String> {
        let registry = crate::operations::synced_registry(state).await;
        let workflow = braid::manifest::validate(&job.manifest, &registry).ok();
        let third_party: Vec<String> = workflow
            .iter()
            .flat_map(|w| &w.crates)
            .filter(|op| op.origin != Origin::Builtin)
            .map(|op| op.version_id.clone())
            .collect();
        let ids: Vec<&str> = third_party.iter().map(String::as_str).collect();
        let target_dir = super::third_party_target_dir(&state.config.target_dir, &ids);
        let sandboxed = match (&state.sandbox, third_party.is_empty()) {
            (Ok(_), _) => true,
            (Err(_), true) => false,
            (Err(why), false) => {
                return Err(format!("this workflow uses operations that must be built in a sandbox, and {why}"))
            }
        };
        Ok(Self { workflow, third_party, target_dir, sandboxed })
    }

    /// `braid build` of `manifest` into `out` for the job, as a supervised child.
    async fn command(&self, state: &AppState, job: &Claimed, manifest: &Path, out: &Path) -> tokio::process::Command {
        let mut cmd = child::command(&state.config.braid_exe);
        cmd.arg("build")
            .arg(manifest)
            .arg("-o")
            .arg(out)
            .arg("--targets")
            .arg(braid::join(&job.targets, ","))
            .arg("--target-dir")
            .arg(&self.target_dir)
            .args(["--events", "json"])
            // Marks every process of the build (tests look for it).
            .env("BRAID_SERVE_JOB", job.job_id.as_str())
            // The service's registry (`<data>/registry`), and the operator's
            // tools (what `braid doctor --fix` installed), not `<data>/tools`.
            .env("BRAID_HOME", &state.config.data)
            .env("BRAID_TOOLS", braid::registry::tools_dir());
        if self.sandboxed {
            cmd.arg("--sandbox").arg("--sandbox-hide").arg(&state.config.data);
        }
        // The compile cache shares the network with the build: only for
        // Braid's own operations, and not when the workflow did not validate
        // here (what it compiles is unknown).
        if let (true, true, true, crate::cas::Location::S3(bucket)) =
            (state.config.compile_cache, self.workflow.is_some(), self.third_party.is_empty(), &state.config.store)
        {
            match sccache_env(bucket).await {
                Some(env) => {
                    cmd.arg("--compile-cache").envs(env);
                }
                None => tracing::warn!("no endpoint of {bucket} answers: building without the compile cache"),
            }
        }
        cmd
    }
}

/// Runs the build in `dir`.
async fn build(state: &Arc<AppState>, job: &Claimed, dir: &Path) -> Outcome {
    match build_in(state, job, dir).await {
        Ok(outcome) => outcome,
        Err(error) => Outcome::Failed(error),
    }
}

async fn build_in(state: &Arc<AppState>, job: &Claimed, dir: &Path) -> Result<Outcome, String> {
    let _ = tokio::fs::remove_dir_all(dir).await;
    tokio::fs::create_dir_all(dir).await.map_err(|e| format!("{}: {e}", dir.display()))?;
    let manifest = dir.join("manifest.json");
    tokio::fs::write(&manifest, &job.manifest).await.map_err(|e| format!("{}: {e}", manifest.display()))?;
    let out = dir.join("out");
    let plan = Plan::new(state, job).await?;
    let cmd = plan.command(state, job, &manifest, &out).await;
    let (child, stdout, stderr) = Child::spawn(cmd).map_err(|e| format!("cannot start the build: {e}"))?;
    let mut output = Output::new(state.store.clone(), job.job_id.clone(), Redact::new(&state.config, dir));
    let logger = tokio::spawn(async move {
        let mut events = BufReader::new(stdout).lines();
        let mut log = BufReader::new(stderr).lines();
        let (mut events_open, mut log_open) = (true, true);
        while events_open || log_open {
            tokio::select! {
                line = events.next_line(), if events_open => match line {
                    Ok(Some(line)) => output.stdout(&line).await,
                    _ => events_open = false,
                },
                line = log.next_line(), if log_open => match line {
                    Ok(Some(line)) => output.log(&line).await,
                    _ => log_open = false,
                },
            }
        }
        output
    });
    let timeout = state.config.build_timeout;
    let status = match child.wait(state, &job.job_id, timeout).await {
        Ok(Ended::Exited(status)) => status,
        Ok(Ended::Stopped) => return Ok(Outcome::Stopped),
        Ok(Ended::Lost) => return Ok(Outcome::Lost),
        Ok(Ended::TimedOut) => {
            let log = logger.await.map(|o| o.log).unwrap_or_default();
            return Err(format!(
                "the build took longer than {} s and was stopped\n{}",
                timeout.as_secs(),
                crate::store::tail(&log, 2048)
            ));
        }
        Err(e) => return Err(format!("waiting for the build: {e}")),
    };
    let output = logger.await.map_err(|e| format!("reading the build's output: {e}"))?;
    if !status.success() {
        let summary =
            output.failed.as_deref().map_or_else(String::new, |e| format!(": {}", e.lines().next().unwrap_or("")));
        return Err(format!("braid build failed ({status}){summary}\n{}", crate::store::tail(&output.log, 4096)));
    }
    let Some(report) = output.report else {
        return Err(format!(
            "braid build succeeded but reported no result (no `report` event)\n{}",
            crate::store::tail(&output.log, 2048)
        ));
    };
    let state2 = state.clone();
    let workflow = plan.workflow;
    let (report, artifacts, packages) =
        tokio::task::spawn_blocking(move || collect(&state2, &out, workflow.as_ref(), report))
            .await
            .map_err(|e| e.to_string())??;
    Ok(Outcome::Built(Box::new(report), artifacts, packages))
}

/// What a build child said: its progress and log, stored in its job as
/// they come, and how it ended.
struct Output {
    store: Arc<dyn Store>,
    job_id: crate::ids::JobId,
    redact: Redact,
    /// The step under way, e.g. `[3/4] wasm`.
    progress: String,
    log: String,
    report: Option<Report>,
    failed: Option<String>,
}

impl Output {
    fn new(store: Arc<dyn Store>, job_id: crate::ids::JobId, redact: Redact) -> Self {
        Self { store, job_id, redact, progress: "starting".into(), log: String::new(), report: None, failed: None }
    }

    /// A line of stdout: an [`Event`], or log text.
    async fn stdout(&mut self, line: &str) {
        let Some(event) = Event::parse_line(line) else { return self.log(line).await };
        match &event {
            Event::Start { .. } => self.progress = event.to_string(),
            Event::Done { .. } => {}
            Event::Report { report } => self.report = Some(report.clone()),
            Event::Failed { error } => self.failed = Some(self.redact.apply(error)),
        }
        // The error is on stderr too, where `braid` prints it.
        if !matches!(event, Event::Failed { .. }) {
            self.log(&event.to_string()).await;
        }
    }

    /// A line of log text: redacted, kept, and stored with the progress.
    async fn log(&mut self, line: &str) {
        self.log.push_str(&self.redact.apply(line));
        self.log.push('\n');
        if self.log.len() > 256 * 1024 {
            self.log = crate::store::tail(&self.log, 64 * 1024);
        }
        let (store, job_id, progress, log) =
            (self.store.clone(), self.job_id.clone(), self.progress.clone(), crate::store::tail(&self.log, 64 * 1024));
        let _ = tokio::task::spawn_blocking(move || store.progress(&job_id, &progress, &log)).await;
    }
}

/// Packs `out/`, as `report` describes it, into artifacts in the store,
/// with the registries' packages of the build (see [`registry_packages`]).
fn collect(
    state: &AppState,
    out: &Path,
    workflow: Option<&Workflow>,
    report: Report,
) -> Result<(Report, Vec<Artifact>, Vec<Package>), String> {
    let crate_name = report.crate_name.clone();
    // It names files here: a plain crate name, nothing that could be a path.
    if crate_name.is_empty() || !crate_name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        return Err(format!("the build reported an unexpected crate name {crate_name:?}"));
    }
    let mut artifacts = Vec::new();
    let mut put = |name: String, bytes: Vec<u8>, media_type: &str| -> Result<(), String> {
        let cid = state.cas.put(&bytes).map_err(|e| e.to_string())?;
        artifacts.push(Artifact { name, cid, size: bytes.len() as u64, media_type: media_type.into() });
        Ok(())
    };
    // Every file the report names is there with the bytes it names: what
    // is packed is what was built.
    for (rel, cid) in &report.artifacts {
        let relative = Path::new(rel);
        if relative.is_absolute() || relative.components().any(|c| !matches!(c, std::path::Component::Normal(_))) {
            return Err(format!("the build reported an unexpected artifact path {rel:?}"));
        }
        let path = out.join(relative);
        let bytes = std::fs::read(&path).map_err(|e| format!("{rel}: {e}"))?;
        if braid::content_id(&bytes) != *cid {
            return Err(format!("{rel} does not have the content the build reported"));
        }
    }
    let crate_tar = pack::tar_gz(&out.join("crate"), &crate_name).map_err(|e| format!("packing the crate: {e}"))?;
    put("crate.tar.gz".into(), crate_tar, "application/gzip")?;
    let mut wasm: Option<PathBuf> = None;
    for target in report.targets.iter().filter_map(|t| match t {
        Target::Js(js) => Some(js.name()),
        _ => None,
    }) {
        let dir = out.join("pkg").join(target);
        let tgz = pack::tar_gz(&dir, "package").map_err(|e| format!("packing pkg/{target}: {e}"))?;
        put(format!("pkg-{target}.tgz"), tgz, "application/gzip")?;
        wasm.get_or_insert(dir.join(format!("{crate_name}_bg.wasm")));
    }
    if let Some(path) = wasm {
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        put(format!("{crate_name}.wasm"), bytes, "application/wasm")?;
    }
    if report.targets.contains(&Target::Component) {
        let dir = out.join("component");
        let read = |file: &str| std::fs::read(dir.join(file)).map_err(|e| format!("component/{file}: {e}"));
        put(format!("{crate_name}.component.wasm"), read(&format!("{crate_name}.wasm"))?, "application/wasm")?;
        put("world.wit".into(), read("world.wit")?, "text/plain; charset=utf-8")?;
    }
    let (stored, packages): (Vec<Artifact>, Vec<Package>) =
        registry_packages(state, out, workflow, &report).into_iter().unzip();
    artifacts.extend(stored);
    Ok((report, artifacts, packages))
}

/// What the registries serve of a build, stored: a `.crate` for the
/// workflow's crate and each crate it vendors (Cargo), and one npm package
/// when the build has the node and web targets. A build whose packages
/// cannot be made (an operation that bundles crates, say) still succeeds,
/// without them; the server logs why.
fn registry_packages(
    state: &AppState,
    out: &Path,
    workflow: Option<&Workflow>,
    report: &Report,
) -> Vec<(Artifact, Package)> {
    let mut found = Vec::new();
    let cargo = braid::package::cargo::packages(&out.join("crate")).map_err(|e| e.to_string()).and_then(|crates| {
        crates.into_iter().map(|c| crate::packages::store_cargo_package(state, c).map_err(|e| e.to_string())).collect()
    });
    match cargo {
        Ok(stored) => found.extend::<Vec<_>>(stored),
        Err(e) => tracing::warn!("{} is not in the Cargo registry: {e}", report.crate_name),
    }
    let js: Vec<JsTarget> = report
        .targets
        .iter()
        .filter_map(|t| match t {
            Target::Js(js) => Some(*js),
            _ => None,
        })
        .collect();
    if [JsTarget::Node, JsTarget::Web].iter().all(|t| js.contains(t)) {
        match npm_package(state, out, workflow, report) {
            Ok(stored) => found.push(stored),
            Err(e) => tracing::warn!("{} is not in the npm registry: {e}", report.crate_name),
        }
    }
    found
}

/// The build's one npm package, stored.
fn npm_package(
    state: &AppState,
    out: &Path,
    workflow: Option<&Workflow>,
    report: &Report,
) -> Result<(Artifact, Package), String> {
    let workflow = workflow.ok_or("the manifest did not validate against the registry when the build started")?;
    let scope = state.config.npm_scope.as_deref();
    let npm = braid::package::npm::unified(&out.join("pkg"), workflow, &report.crate_name, scope)
        .map_err(|e| e.to_string())?;
    let entries = npm.files.iter().map(|(path, bytes)| (path.as_str(), bytes.as_slice()));
    let tgz = pack::tar_gz_entries(entries, "package");
    let file = format!("npm-{}-{}.tgz", report.crate_name, npm.version);
    let (entry, digest) = (npm.package_json.to_string(), pack::integrity(&tgz));
    let package = |cid| Package { ecosystem: Ecosystem::Npm, name: npm.name, version: npm.version, cid, entry, digest };
    crate::packages::store_package(state, file, &tgz, package).map_err(|e| e.to_string())
}
