//! Build jobs ([`Kind::BUILD`]), run by the [`runner`](super::runner):
//! each a `braid build --events json --dist` child in its own process
//! group (so a timeout kills cargo and everything under it), whose typed
//! [`Event`]s (stdout) and log (stderr, and any stdout line that is not an
//! event) go into the job, then the distribution its [`Report`] lists
//! (every file served of the build, made by the child:
//! `braid::package::dist`) into the artifact store, each checked against
//! its content id, recorded in one transaction.
//!
//! Every way a build can end ends its job: success or failure is recorded
//! (retried until the store takes it, e.g. once a full disk has room
//! again), the attempt's own directory `builds/<job>.<attempt>` is removed
//! on every path, and logs and errors are stored with the server's paths
//! made relative (the build directory) or named (`<data>`, `<target-dir>`,
//! `~`). The child dies with the server, even by `kill -9` (`child.rs`);
//! on SIGTERM or SIGINT the running build is stopped and its job queued
//! again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use braid::build::{Event, Report};
use braid::registry::{Origin, Registry};
use braid_store::ids::JobId;
use braid_store::queue::Claim;
use braid_store::{Artifact, Claimed, Ecosystem, Kind, Package, StoreError};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::child::{self, Child, Ended};
use super::record;
use super::runner::{Handler, Interrupt, Ran};
use super::{Outcome, Redact};
use crate::Env;

/// Workflow builds.
pub(crate) struct Build;

impl Handler for Build {
    const KIND: Kind = Kind::BUILD;
    const WHAT: &'static str = "build";
    type Job = Claimed;

    async fn load(env: &Env, claim: &Claim) -> Result<Claimed, StoreError> {
        env.store.claimed_build(claim).await
    }

    async fn run(env: Arc<Env>, job: Arc<Claimed>, interrupt: Interrupt) -> Ran {
        env.metrics.build_started();
        let start = Instant::now();
        let dir = build_dir(&env, &job);
        let outcome = build_in(&env, &job, &dir, &interrupt).await;
        let _ = tokio::fs::remove_dir_all(&dir).await;
        let ms = start.elapsed().as_millis() as u64;
        let result = match outcome {
            Ok(built) => Ok(built),
            Err(Outcome::Interrupted(why)) => return why,
            Err(Outcome::Failed(error)) => Err(Redact::new(&env.config, &dir).apply(&error)),
        };
        env.metrics.build_finished(ms, result.is_ok());
        match result {
            Ok((report, artifacts, packages)) => {
                record(&env, |env| {
                    let (job, report, artifacts, packages) = (&job, &report, &artifacts, &packages);
                    async move { env.store.succeed(&job.job_id, &job.build_id, report, artifacts, packages).await }
                })
                .await;
                // A newer build for runs by workflow id.
                env.builds.tell();
            }
            Err(error) => {
                tracing::warn!(job = %job.job_id, "build failed: {}", error.lines().next().unwrap_or_default());
                record(&env, |env| {
                    let (job, error) = (&job, &error);
                    async move { Self::fail(&env, job, error).await }
                })
                .await;
            }
        }
        Ran::Ended
    }

    async fn fail(env: &Env, job: &Claimed, error: &str) -> Result<(), StoreError> {
        // (Gone already, unless the run panicked.)
        let _ = tokio::fs::remove_dir_all(build_dir(env, job)).await;
        env.store.fail(&job.job_id, &job.build_id, error).await
    }
}

/// What a build made: its report, artifacts and registry packages.
type Built = (Report, Vec<Artifact>, Vec<Package>);

fn build_dir(env: &Env, job: &Claimed) -> PathBuf {
    env.config.data.join("builds").join(format!("{}.{}", job.job_id, job.attempt))
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

/// What a build of a job needs to know before it starts: which crates of
/// the workflow nobody vetted (as the submission resolved them), and so
/// where and how what it compiles is built.
struct Plan {
    /// Version ids of crates that did not ship with braid; `None`: not
    /// known (the workflow did not validate here, see [`Plan::new`]).
    third_party: Option<Vec<String>>,
    target_dir: PathBuf,
    sandboxed: bool,
}

impl Plan {
    /// Crates that did not ship with braid compile in a target directory
    /// of their own set, in the sandbox (see `publish`). With the
    /// operations published to the deployment: `braid build` reads the
    /// registry this takes them into.
    async fn new(env: &Arc<Env>, job: &Claimed) -> Result<Self, String> {
        let third_party = match &job.third_party {
            // As the submission resolved them: not validated again here.
            // Those published to the deployment that this process lacks
            // come into its registry (which `braid build` reads) first.
            Some(ids) => {
                let registry =
                    if ids.is_empty() { env.registry() } else { crate::operations::synced_registry(env).await };
                if let Some(pins) = pins(job) {
                    at_hand(&registry, pins)?;
                }
                Some(ids.clone())
            }
            // Submitted before the submission kept them: resolved now, if
            // the workflow still validates here (else `braid build` says why).
            None => {
                let (s, manifest) = (env.clone(), job.manifest.clone());
                let validated = tokio::task::spawn_blocking(move || crate::operations::validate(&s, &manifest).ok())
                    .await
                    .ok()
                    .flatten();
                validated.map(|workflow| {
                    let crates = workflow.crates.iter().filter(|c| c.origin != Origin::Builtin);
                    crates.map(|c| c.version_id.clone()).collect()
                })
            }
        };
        let unvetted = third_party.as_ref().is_some_and(|ids| !ids.is_empty());
        let ids: Vec<&str> = third_party.iter().flatten().map(String::as_str).collect();
        let target_dir = super::third_party_target_dir(&env.config.target_dir, &ids);
        let sandboxed = match (&env.sandbox, unvetted) {
            (Ok(_), _) => true,
            (Err(_), false) => false,
            (Err(why), true) => {
                return Err(format!("this workflow uses operations that must be built in a sandbox, and {why}"))
            }
        };
        Ok(Self { third_party, target_dir, sandboxed })
    }

    /// `braid build` of `manifest` into `out` for the job, as a supervised child.
    async fn command(&self, env: &Env, job: &Claimed, manifest: &Path, out: &Path) -> tokio::process::Command {
        let mut cmd = child::command(&env.config.braid_exe);
        cmd.arg("build").arg(manifest);
        // The versions the submission resolved, which the build id names:
        // not newer ones registered since.
        if let Some(pins) = pins(job) {
            cmd.arg("--operations").arg(pins.values().map(String::as_str).collect::<Vec<_>>().join(","));
        }
        cmd.arg("-o")
            .arg(out)
            .arg("--targets")
            .arg(braid::join(&job.targets, ","))
            .arg("--target-dir")
            .arg(&self.target_dir)
            .args(["--events", "json", "--dist"])
            // Marks every process of the build (tests look for it).
            .env("BRAID_SERVE_JOB", job.job_id.as_str())
            // The service's registry (`<data>/registry`), and the operator's
            // tools (what `braid doctor --fix` installed), not `<data>/tools`.
            .env("BRAID_HOME", &env.config.data)
            .env("BRAID_TOOLS", braid::registry::tools_dir());
        if let Some(scope) = &env.config.npm_scope {
            cmd.arg("--npm-scope").arg(scope);
        }
        if self.sandboxed {
            cmd.arg("--sandbox").arg("--sandbox-hide").arg(&env.config.data);
            // The sandbox's own limit is the job's.
            cmd.arg("--sandbox-timeout").arg(env.config.build_timeout.as_secs().to_string());
        }
        // The compile cache shares the network with the build: only for
        // Braid's own crates, and not when what it compiles is unknown.
        let vetted = self.third_party.as_ref().is_some_and(Vec::is_empty);
        if let (true, true, crate::cas::Location::S3(bucket)) = (env.config.compile_cache, vetted, &env.config.store) {
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

/// Runs the build in `dir`: what it made, or why not.
async fn build_in(env: &Arc<Env>, job: &Claimed, dir: &Path, interrupt: &Interrupt) -> Result<Built, Outcome> {
    let _ = tokio::fs::remove_dir_all(dir).await;
    tokio::fs::create_dir_all(dir).await.map_err(|e| format!("{}: {e}", dir.display()))?;
    let manifest = dir.join("manifest.json");
    tokio::fs::write(&manifest, &job.manifest).await.map_err(|e| format!("{}: {e}", manifest.display()))?;
    let out = dir.join("out");
    let plan = Plan::new(env, job).await?;
    let cmd = plan.command(env, job, &manifest, &out).await;
    let (child, stdout, stderr) = Child::spawn(cmd).map_err(|e| format!("cannot start the build: {e}"))?;
    let mut output = Output::new(env.clone(), job.job_id.clone(), Redact::new(&env.config, dir));
    let logger = tokio::spawn(async move {
        let mut events = BufReader::new(stdout).lines();
        let mut log = BufReader::new(stderr).lines();
        let (mut events_open, mut log_open) = (true, true);
        // The lines that came since the last write are stored together, at
        // most every STORE_EVERY: one write of the job's row a batch, not
        // a line (cargo prints hundreds).
        let mut store = tokio::time::interval(STORE_EVERY);
        store.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        while events_open || log_open {
            tokio::select! {
                line = events.next_line(), if events_open => match line {
                    Ok(Some(line)) => output.stdout(&line),
                    _ => events_open = false,
                },
                line = log.next_line(), if log_open => match line {
                    Ok(Some(line)) => output.log(&line),
                    _ => log_open = false,
                },
                _ = store.tick(), if output.unstored => output.store().await,
            }
        }
        output.store().await;
        output
    });
    let timeout = env.config.build_timeout;
    let status = match child.wait(interrupt, timeout).await {
        Ok(Ended::Exited(status)) => status,
        Ok(Ended::Interrupted(why)) => return Err(Outcome::Interrupted(why)),
        Ok(Ended::TimedOut) => {
            let log = logger.await.map(|o| o.log).unwrap_or_default();
            return Err(format!(
                "the build took longer than {} s and was stopped\n{}",
                timeout.as_secs(),
                braid_store::tail(&log, 2048)
            )
            .into());
        }
        Err(e) => return Err(format!("waiting for the build: {e}").into()),
    };
    let output = logger.await.map_err(|e| format!("reading the build's output: {e}"))?;
    if !status.success() {
        let summary =
            output.failed.as_deref().map_or_else(String::new, |e| format!(": {}", e.lines().next().unwrap_or("")));
        return Err(format!("braid build failed ({status}){summary}\n{}", braid_store::tail(&output.log, 4096)).into());
    }
    let Some(report) = output.report else {
        return Err(format!(
            "braid build succeeded but reported no result (no `report` event)\n{}",
            braid_store::tail(&output.log, 2048)
        )
        .into());
    };
    pinned(job, &report)?;
    let state2 = env.clone();
    Ok(tokio::task::spawn_blocking(move || collect(&state2, &out, report)).await.map_err(|e| e.to_string())??)
}

/// The crate versions a job's build is to be made of (`--operations`),
/// by crate name: those its submission resolved, when it kept them.
fn pins(job: &Claimed) -> Option<&BTreeMap<String, String>> {
    job.operations.as_ref().filter(|pins| !pins.is_empty())
}

/// Every pinned version is in this process's registry (which `braid
/// build` reads), or why the build cannot be made here.
fn at_hand(registry: &Registry, pins: &BTreeMap<String, String>) -> Result<(), String> {
    let missing: Vec<String> = pins
        .iter()
        .filter(|(_, id)| registry.by_version_id(id).is_none())
        .map(|(name, id)| match Registry::is_builtin_name(name) {
            // Built-ins' version ids are those of the braid that has them.
            true => format!(
                "{name} {id} ships with the braid that took the submission, not with this worker's: run the same \
                 braid on every process of the deployment"
            ),
            false => format!(
                "{name} {id} was published to the deployment but is not in this worker's registry yet (its log says \
                 why): submit the workflow again"
            ),
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(format!("the build cannot be made of the versions its submission resolved: {}", missing.join("; ")))
}

/// The build was made of the crate versions its submission resolved (and
/// its id names), as `--operations` asked: a build of others is not kept
/// under that id.
fn pinned(job: &Claimed, report: &Report) -> Result<(), String> {
    let Some(asked) = pins(job) else { return Ok(()) };
    let names: BTreeSet<&String> = asked.keys().chain(report.operations.keys()).collect();
    let differ: Vec<String> = names
        .into_iter()
        .filter_map(|name| {
            let (built, resolved) = (report.operations.get(name), asked.get(name));
            let shown = |id: Option<&String>| id.map_or("none", String::as_str).to_string();
            (built != resolved).then(|| format!("{name}: built {}, resolved {}", shown(built), shown(resolved)))
        })
        .collect();
    if !differ.is_empty() {
        return Err(format!(
            "the build was made of other crate versions than its submission resolved, and is not kept under its \
             id ({}): a fault of this deployment, to report to its operator",
            differ.join("; ")
        ));
    }
    Ok(())
}

/// What a build child said: its progress and log, stored in its job as
/// they come, and how it ended.
struct Output {
    env: Arc<Env>,
    job_id: JobId,
    redact: Redact,
    /// The step under way, e.g. `[3/4] wasm`.
    progress: String,
    log: String,
    /// Whether lines came since the progress and log were last stored.
    unstored: bool,
    report: Option<Report>,
    failed: Option<String>,
}

/// How often a build's new log lines are written to its job, at most.
const STORE_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

impl Output {
    fn new(env: Arc<Env>, job_id: JobId, redact: Redact) -> Self {
        let (progress, log) = ("starting".into(), String::new());
        Self { env, job_id, redact, progress, log, unstored: false, report: None, failed: None }
    }

    /// A line of stdout: an [`Event`], or log text.
    fn stdout(&mut self, line: &str) {
        let Some(event) = Event::parse_line(line) else { return self.log(line) };
        match &event {
            Event::Start { .. } => self.progress = event.to_string(),
            Event::Done { .. } => {}
            Event::Report { report } => self.report = Some((**report).clone()),
            Event::Failed { error } => self.failed = Some(self.redact.apply(error)),
        }
        // The error is on stderr too, where `braid` prints it.
        if !matches!(event, Event::Failed { .. }) {
            self.log(&event.to_string());
        }
    }

    /// A line of log text: redacted and kept, to be stored with the
    /// progress by the next [`Output::store`].
    fn log(&mut self, line: &str) {
        self.log.push_str(&self.redact.apply(line));
        self.log.push('\n');
        if self.log.len() > 256 * 1024 {
            self.log = braid_store::tail(&self.log, 64 * 1024);
        }
        self.unstored = true;
    }

    /// Stores the progress and the log's tail, if lines came since.
    async fn store(&mut self) {
        if std::mem::take(&mut self.unstored) {
            let _ = self.env.store.progress(&self.job_id, &self.progress, &self.log).await;
        }
    }
}

/// What the build made of its distribution (`braid build --dist`, listed
/// in its report), into the artifact store, each file checked against the
/// content id the build reported; its registry packages, to record with
/// the build. The service packs nothing itself.
fn collect(env: &Env, out: &Path, report: Report) -> Result<Built, String> {
    let Some(dist) = &report.dist else {
        return Err("braid build reported no distribution (`dist`): is it older than this service?".into());
    };
    let mut artifacts = Vec::new();
    for file in &dist.files {
        // The build's own check, again: the name makes a path here.
        if !braid::package::dist::is_plain_name(&file.name) {
            return Err(format!("the build reported an unexpected file name {:?}", file.name));
        }
        let bytes = std::fs::read(out.join("dist").join(&file.name)).map_err(|e| format!("dist/{}: {e}", file.name))?;
        let cid = env.cas.put(&bytes).map_err(|e| e.to_string())?;
        if cid.as_str() != file.cid {
            return Err(format!("dist/{} does not have the content the build reported", file.name));
        }
        artifacts.push(Artifact {
            name: file.name.clone(),
            cid,
            size: bytes.len() as u64,
            media_type: file.media_type.clone(),
        });
    }
    for why in &dist.skipped {
        tracing::warn!("{why}");
    }
    let mut packages = Vec::new();
    for p in &dist.packages {
        let ecosystem: Ecosystem = p.ecosystem.parse().map_err(|e| format!("the build reported a package of {e}"))?;
        let Some(artifact) = artifacts.iter().find(|a| a.name == p.file) else {
            return Err(format!(
                "the build reported package {} {} in {}, which it did not make",
                p.name, p.version, p.file
            ));
        };
        packages.push(Package {
            ecosystem,
            name: p.name.clone(),
            version: p.version.clone(),
            cid: artifact.cid.clone(),
            entry: p.entry.clone(),
            digest: p.digest.clone(),
        });
    }
    Ok((report, artifacts, packages))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claimed(operations: Option<&[(&str, &str)]>) -> Claimed {
        Claimed {
            job_id: JobId::new_random(),
            build_id: braid_store::ids::BuildId::parse(&braid::content_id(b"k")).unwrap(),
            manifest: "{}".into(),
            targets: Vec::new(),
            third_party: Some(Vec::new()),
            operations: operations.map(versions),
            attempt: 1,
        }
    }

    fn versions(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(name, id)| (name.to_string(), id.to_string())).collect()
    }

    fn report(operations: &[(&str, &str)]) -> Report {
        Report {
            workflow: "k".into(),
            id: "bafkr4i".into(),
            crate_name: "wf_k".into(),
            targets: Vec::new(),
            operations: versions(operations),
            timings_ms: Default::default(),
            sizes_bytes: Default::default(),
            artifacts: Default::default(),
            dist: None,
            http_input_limit_bytes: None,
        }
    }

    #[test]
    fn a_build_of_other_versions_than_its_submission_resolved_is_refused() {
        let built = report(&[("op_a", "id-a1"), ("op_b", "id-b1")]);
        assert_eq!(pinned(&claimed(Some(&[("op_b", "id-b1"), ("op_a", "id-a1")])), &built), Ok(()));
        let e = pinned(&claimed(Some(&[("op_a", "id-a1"), ("op_b", "id-b0")])), &built).unwrap_err();
        assert!(e.contains("(op_b: built id-b1, resolved id-b0)"), "{e}");
        let e = pinned(&claimed(Some(&[("op_a", "id-a1")])), &built).unwrap_err();
        assert!(e.contains("(op_b: built id-b1, resolved none)"), "a crate the submission did not resolve: {e}");
        // Submitted before the versions were kept: nothing to compare.
        assert_eq!(pinned(&claimed(None), &built), Ok(()));
        assert_eq!(pins(&claimed(Some(&[]))), None, "no --operations without versions");
    }

    /// A version the submission resolved that this process lacks is named
    /// before anything is built, with what to do.
    #[test]
    fn versions_this_worker_lacks_are_named_before_the_build() {
        let registry = Registry::builtin();
        let cid = registry.get("op_cid").unwrap().version_id.clone();
        assert_eq!(at_hand(&registry, &versions(&[("op_cid", &cid)])), Ok(()));
        let e = at_hand(&registry, &versions(&[("op_cid", "bafkr4iother"), ("op_mine", "bafkr4imine")])).unwrap_err();
        assert!(
            e.contains("op_cid bafkr4iother ships with the braid that took the submission, not with this worker's"),
            "{e}"
        );
        assert!(
            e.contains("op_mine bafkr4imine was published to the deployment but is not in this worker's registry"),
            "{e}"
        );
    }

    /// The job's `braid build` is given the versions its submission resolved.
    #[tokio::test]
    async fn the_build_is_given_the_versions_its_submission_resolved() {
        let dir = tempfile::tempdir().unwrap();
        let env = crate::Env::open(crate::Config::for_tests(dir.path().to_path_buf())).await.unwrap();
        let plan = Plan { third_party: Some(Vec::new()), target_dir: dir.path().join("target"), sandboxed: false };
        let job = claimed(Some(&[("op_b", "id-b"), ("op_a", "id-a")]));
        let cmd = plan.command(&env, &job, Path::new("manifest.json"), Path::new("out")).await;
        let args: Vec<String> = cmd.as_std().get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        let at = args.iter().position(|a| a == "--operations").expect("--operations given");
        assert_eq!(args[at + 1], "id-a,id-b");
    }
}
