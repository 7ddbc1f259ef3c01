//! Running built workflows for callers (`POST /v1/builds/{id}/run`,
//! `POST /v1/workflows/{id}/run`): the [`Executor`] owns everything between
//! a checked request and a run. It finds what to run (a build id pins a
//! build; a workflow id takes the build that succeeded last with a
//! component, one indexed query), loads its component once per process
//! (fetched from the store, so any process of a deployment runs any build,
//! checked against its CID; precompiled under `<data>/precompiled` in a
//! [`PrecompiledCache`] that loads a file only when this process's MAC key
//! binds it to that component and engine), keeps programs in a cache
//! bounded by their compiled code, least recently used first out, and
//! gives run slots fairly between keys ([`crate::fair`]). Concurrent first
//! runs of one component share its load; loads of different components do
//! not wait for each other; no run slot is held while a component loads.
//! Every run is a fresh instance: an executor holds no state a request
//! could leave behind. Errors are [`ExecError`]s; the route maps them to
//! problem documents.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use braid_engine::{Engine, Limits, PrecompiledCache, Program, Source, Timings};
use braid_store::ids::{BuildId, ContentId, WorkflowId};
use braid_store::{BuildRow, BuildState, Store, StoreError};
use braid_worker::cas::{Cas, CasError};
use braid_worker::BuildsChanged;

use crate::fair::{FairSlot, FairSlots};
use crate::held::{Held, HeldBody};
use crate::rate::RunRate;

/// How the service runs workflows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunConfig {
    /// Each run's budgets.
    pub limits: Limits,
    /// Runs at once.
    pub slots: usize,
    /// Runs waiting for a slot; beyond, 503.
    pub queue: usize,
    /// Runs need no API key (`--public-run`).
    pub public: bool,
    /// Runs one key may have in progress at once (`--run-slots-per-key`;
    /// `None`: every slot).
    pub slots_per_key: Option<usize>,
    /// Runs one key may start a second (`--run-rate-per-key`; `None`: no
    /// limit), in bursts of as many.
    pub rate_per_key: Option<f64>,
}

impl Default for RunConfig {
    /// The engine's default budgets, one run per core, 64 waiting, keys needed.
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            slots: std::thread::available_parallelism().map_or(1, |n| n.get()),
            queue: 64,
            public: false,
            slots_per_key: None,
            rate_per_key: None,
        }
    }
}

/// Most bytes of precompiled components kept on disk (the least recently
/// used go first): a CID workflow's is about 1 MB, photo_proof's 4 MB.
pub const PRECOMPILED_MAX_BYTES: u64 = 1 << 30;

/// Most bytes of compiled code kept loaded in memory, all programs
/// together (the least recently used go first).
pub const PROGRAMS_MAX_BYTES: usize = 256 << 20;

impl Loader {
    /// The engine, started on first use.
    fn engine(&self) -> Result<Arc<Engine>, ExecError> {
        let slots = u32::try_from(self.slots).unwrap_or(u32::MAX);
        self.engine
            .get_or_init(|| Engine::new(self.limits, slots).map_err(|e| e.to_string()))
            .clone()
            .map_err(ExecError::Engine)
    }

    /// The precompiled cache, opened on first use.
    fn cache(&self) -> Option<Arc<PrecompiledCache>> {
        self.cache
            .get_or_init(|| {
                PrecompiledCache::open(&self.precompiled, PRECOMPILED_MAX_BYTES)
                    .inspect_err(|e| tracing::warn!("not keeping precompiled components: {e}"))
                    .ok()
                    .map(Arc::new)
            })
            .clone()
    }

    /// Loads component `cid` (once a load slot is free), keeps it in
    /// memory, and ends the load: a run arriving after finds it in memory.
    async fn load(self: Arc<Self>, cas: Cas, cid: &ContentId) -> LoadEnd {
        let key = cid.to_string();
        let end = match self.loads.clone().acquire_owned().await {
            Ok(_slot) => {
                let (loader, cid) = (self.clone(), cid.clone());
                tokio::task::spawn_blocking(move || loader.load_blocking(&cas, &cid))
                    .await
                    .unwrap_or_else(|e| LoadEnd::Failed(format!("the load panicked: {e}")))
            }
            Err(_) => LoadEnd::Failed("the loads were closed".into()),
        };
        if let LoadEnd::Loaded(program, _) = &end {
            let weight = program.code_bytes();
            self.programs.lock().unwrap_or_else(PoisonError::into_inner).insert(&key, program.clone(), weight);
        }
        self.loading.lock().unwrap_or_else(PoisonError::into_inner).remove(&key);
        end
    }

    /// Fetches the component (checked against its CID by the store),
    /// starts the engine and opens the disk cache if need be, and loads it.
    fn load_blocking(&self, cas: &Cas, cid: &ContentId) -> LoadEnd {
        let failed = |e: &dyn std::fmt::Display| LoadEnd::Failed(e.to_string());
        let wasm = match cas.get(cid) {
            Ok(Some(wasm)) => wasm,
            Ok(None) => return LoadEnd::Missing,
            Err(e) => return failed(&e),
        };
        let engine = match self.engine() {
            Ok(engine) => engine,
            Err(e) => return failed(&e),
        };
        match engine.load(&wasm, self.cache().as_deref()) {
            Ok(program) => {
                let source = match program.source() {
                    Source::Compiled => "compiled",
                    Source::Precompiled => "precompiled",
                };
                LoadEnd::Loaded(Arc::new(program), source)
            }
            Err(e @ braid_engine::LoadError::Memory { .. }) => LoadEnd::OverBudget(e.to_string()),
            Err(e) => failed(&e),
        }
    }
}

/// Bytes of outputs that clients have not read yet, all together: twice
/// what the run slots can produce at once, at least 64 MiB.
fn unread_output_limit(config: &RunConfig) -> usize {
    config.slots.saturating_mul(config.limits.output_bytes).saturating_mul(2).max(64 << 20)
}

/// How long a run by workflow id trusts the build it found where other
/// processes build into the same store: a rebuild elsewhere runs within it.
pub const SHARED_FRESHNESS: Duration = Duration::from_secs(1);

/// What to run.
#[derive(Debug, Clone)]
pub enum Target {
    /// This build.
    Build(BuildId),
    /// The build of this workflow that succeeded last with a component.
    Workflow(WorkflowId),
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("no build with this id")]
    NoBuild,
    #[error("{0} has no component to run: submit the workflow with \"targets\": [\"component\"] (POST /v1/workflows), wait for its build, then run it")]
    NoComponent(String),
    #[error("the build's component is missing from the store; submit its workflow again")]
    ComponentMissing,
    #[error("no deployment is named `{0}`: make it with PUT /v1/deployments/{{name}}")]
    NoDeployment(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("reading the component: {0}")]
    Cas(#[from] CasError),
    #[error("loading the component {cid}: {detail}")]
    Load { cid: String, detail: String },
    /// The component cannot run within this service's budgets.
    #[error("{0}")]
    OverBudget(String),
    #[error("the executor cannot start: {0}")]
    Engine(String),
}

/// A program, and where it came from: `memory`, `precompiled` (the disk
/// cache) or `compiled`.
pub struct Loaded {
    pub program: Arc<Program>,
    pub source: &'static str,
}

/// How one load of a component ended, told to every run waiting for it.
#[derive(Clone)]
enum LoadEnd {
    Loaded(Arc<Program>, &'static str),
    Missing,
    /// No run of it fits the budgets (its memory at start).
    OverBudget(String),
    Failed(String),
}

/// One load of a component, watched by the runs that wait for it (`None`
/// until it ends).
type Pending = tokio::sync::watch::Receiver<Option<LoadEnd>>;

/// What was looked up of builds, and the count of [`BuildsChanged`] it
/// holds for.
type HeldFor<K, V> = (u64, HashMap<K, V>);

/// The engine, the programs and the slots.
pub struct Executor {
    config: RunConfig,
    /// What loads components: shared with the load tasks, which finish
    /// whether or not the runs that started them are still there.
    loader: Arc<Loader>,
    /// The component of each succeeded build run so far (a build's
    /// artifacts never change once it succeeded), so that a run by build
    /// id does not ask the store.
    components: Mutex<HashMap<BuildId, ContentId>>,
    /// The component each workflow id ran last, and when it was looked up,
    /// beside the count of [`Executor::builds`] they hold for: dropped when
    /// builds change here (this process is the only writer of an embedded
    /// store), or kept for [`SHARED_FRESHNESS`] where other processes build
    /// too.
    workflows: Mutex<HeldFor<WorkflowId, (ContentId, std::time::Instant)>>,
    /// How many times builds changed in this process (a job's build
    /// succeeded, an artifact went missing): the `Env`'s.
    builds: BuildsChanged,
    /// The build each deployment pointed at when last looked up, kept
    /// the same way (and dropped here when it moves).
    deployments: Mutex<HashMap<String, (BuildId, braid_store::DeploymentLimits, std::time::Instant)>>,
    /// Runs in progress here, by deployment (those with any).
    deployment_runs: Arc<Mutex<HashMap<String, usize>>>,
    freshness: Option<Duration>,
    /// Run slots, shared fairly between keys.
    slots: Arc<FairSlots>,
    /// Runs a second per key, where the operator set a rate.
    rate: Option<RunRate>,
    /// Outputs their clients have not read yet, bounded in all.
    held: Held,
}

/// Values by key, bounded by their weight in bytes: past the bound, the
/// least recently used go (never the one just kept). Loaded programs by
/// component CID, weighed by their compiled code.
struct Lru<V> {
    by_key: HashMap<String, (V, usize, u64)>,
    bytes: usize,
    max_bytes: usize,
    uses: u64,
}

impl<V: Clone> Lru<V> {
    fn new(max_bytes: usize) -> Self {
        Self { by_key: HashMap::new(), bytes: 0, max_bytes, uses: 0 }
    }

    fn get(&mut self, key: &str) -> Option<V> {
        self.uses += 1;
        let uses = self.uses;
        self.by_key.get_mut(key).map(|(value, _, used)| {
            *used = uses;
            value.clone()
        })
    }

    fn insert(&mut self, key: &str, value: V, bytes: usize) {
        self.uses += 1;
        self.bytes += bytes;
        if let Some((_, old, _)) = self.by_key.insert(key.to_string(), (value, bytes, self.uses)) {
            self.bytes -= old;
        }
        while self.bytes > self.max_bytes {
            let oldest = self.by_key.iter().filter(|(k, _)| *k != key).min_by_key(|(_, (_, _, used))| *used);
            let Some(oldest) = oldest.map(|(k, _)| k.clone()) else { break };
            if let Some((_, gone, _)) = self.by_key.remove(&oldest) {
                self.bytes -= gone;
            }
        }
    }
}

/// The engine, the disk cache, the programs in memory and the loads under
/// way.
struct Loader {
    limits: Limits,
    slots: usize,
    engine: OnceLock<Result<Arc<Engine>, String>>,
    precompiled: PathBuf,
    /// The disk cache, opened on first use; `None` where it is refused
    /// (runs then compile every component once per process).
    cache: OnceLock<Option<Arc<PrecompiledCache>>>,
    programs: Mutex<Lru<Arc<Program>>>,
    /// Loads under way, by component CID.
    loading: Mutex<HashMap<String, Pending>>,
    /// Loads at once (compiling is CPU-bound): one per core.
    loads: Arc<tokio::sync::Semaphore>,
}

impl Executor {
    /// With `shared`, other processes build into the same store.
    pub fn new(config: RunConfig, data: &std::path::Path, shared: bool, builds: BuildsChanged) -> Self {
        Self {
            workflows: Mutex::default(),
            builds,
            deployments: Mutex::default(),
            deployment_runs: Arc::default(),
            freshness: shared.then_some(SHARED_FRESHNESS),
            config,
            loader: Arc::new(Loader {
                limits: config.limits,
                slots: config.slots,
                engine: OnceLock::new(),
                precompiled: data.join("precompiled"),
                cache: OnceLock::new(),
                programs: Mutex::new(Lru::new(PROGRAMS_MAX_BYTES)),
                loading: Mutex::default(),
                loads: Arc::new(tokio::sync::Semaphore::new(
                    std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
                )),
            }),
            components: Mutex::default(),
            slots: FairSlots::new(config.slots, config.queue, config.slots_per_key),
            rate: config.rate_per_key.map(RunRate::new),
            held: Held::new(unread_output_limit(&config)),
        }
    }

    pub fn config(&self) -> RunConfig {
        self.config
    }

    /// The engine, started on first use.
    pub fn engine(&self) -> Result<Arc<Engine>, ExecError> {
        self.loader.engine()
    }

    /// The component `target` runs.
    pub async fn component(&self, store: &Store, target: &Target) -> Result<ContentId, ExecError> {
        match target {
            Target::Build(id) => self.build_component(store, id).await,
            Target::Workflow(id) => {
                let seen = self.builds.count();
                let known = {
                    let mut workflows = self.workflows.lock().unwrap_or_else(PoisonError::into_inner);
                    if workflows.0 != seen {
                        *workflows = (seen, HashMap::new());
                    }
                    workflows.1.get(id).cloned()
                };
                if let Some((cid, when)) = known {
                    if self.freshness.is_none_or(|fresh| when.elapsed() < fresh) {
                        return Ok(cid);
                    }
                }
                let row = store.newest_build_with(id, braid::package::dist::COMPONENT_SUFFIX).await?;
                let cid =
                    row.as_ref().and_then(component).ok_or_else(|| ExecError::NoComponent(format!("workflow {id}")))?;
                let now = std::time::Instant::now();
                // Kept only if builds did not change while it was looked up.
                let mut workflows = self.workflows.lock().unwrap_or_else(PoisonError::into_inner);
                if workflows.0 == seen {
                    workflows.1.insert(id.clone(), (cid.clone(), now));
                }
                Ok(cid)
            }
        }
    }

    /// The component of build `id` (kept: a build's artifacts never
    /// change once it succeeded).
    async fn build_component(&self, store: &Store, id: &BuildId) -> Result<ContentId, ExecError> {
        if let Some(cid) = self.components.lock().unwrap_or_else(PoisonError::into_inner).get(id) {
            return Ok(cid.clone());
        }
        let row = store.build(id).await?.ok_or(ExecError::NoBuild)?;
        let cid = component(&row).ok_or_else(|| ExecError::NoComponent(format!("build {id}")))?;
        self.components.lock().unwrap_or_else(PoisonError::into_inner).insert(id.clone(), cid.clone());
        Ok(cid)
    }

    /// The build deployment `name` points at, and its budgets: as last
    /// looked up (kept until it moves here, or for [`SHARED_FRESHNESS`]
    /// where other processes share the store), else from the store.
    pub async fn deployment(
        &self,
        store: &Store,
        name: &str,
    ) -> Result<(BuildId, braid_store::DeploymentLimits), ExecError> {
        let key = braid_store::deployment_key(name);
        let known = self.deployments.lock().unwrap_or_else(PoisonError::into_inner).get(&key).cloned();
        if let Some((build, limits, when)) = known {
            if self.freshness.is_none_or(|fresh| when.elapsed() < fresh) {
                return Ok((build, limits));
            }
        }
        let found = store.deployment(name).await?.ok_or_else(|| ExecError::NoDeployment(name.to_string()))?;
        let entry = (found.build_id.clone(), found.limits, std::time::Instant::now());
        self.deployments.lock().unwrap_or_else(PoisonError::into_inner).insert(key, entry);
        Ok((found.build_id, found.limits))
    }

    /// Deployment `name` moved or went here: its runs look it up again.
    /// (Elsewhere, in a deployment of several processes, within
    /// [`SHARED_FRESHNESS`].)
    pub fn deployment_changed(&self, name: &str) {
        self.deployments.lock().unwrap_or_else(PoisonError::into_inner).remove(&braid_store::deployment_key(name));
    }

    /// A run of deployment `name` in progress until the guard drops; with
    /// `concurrent` (its own cap) runs of it already in progress here, a
    /// 429 saying so instead.
    pub fn deployment_run(
        &self,
        name: &str,
        concurrent: Option<u64>,
    ) -> Result<DeploymentRun, crate::problem::Problem> {
        let key = braid_store::deployment_key(name);
        let mut runs = self.deployment_runs.lock().unwrap_or_else(PoisonError::into_inner);
        let running = runs.entry(key.clone()).or_default();
        if let Some(cap) = concurrent {
            if *running as u64 >= cap {
                let mut problem = crate::problem::Problem::new(
                    axum::http::StatusCode::TOO_MANY_REQUESTS,
                    format!("deployment {name} runs at most {cap} at once (its limits.concurrent); retry shortly"),
                );
                problem.retry_after = Some(1);
                if *running == 0 {
                    runs.remove(&key);
                }
                return Err(problem);
            }
        }
        *running += 1;
        Ok(DeploymentRun { runs: self.deployment_runs.clone(), key })
    }

    /// The runs in progress here, by deployment (its name in lower case).
    pub fn deployment_runs(&self) -> Vec<(String, usize)> {
        let runs = self.deployment_runs.lock().unwrap_or_else(PoisonError::into_inner);
        runs.iter().map(|(name, n)| (name.clone(), *n)).collect()
    }

    /// The program of component `cid`: from memory, or loaded by a task of
    /// its own (on a blocking thread, one per core at most: it reads the
    /// store and may compile) that every run of `cid` arriving meanwhile
    /// waits for, and that finishes even if they all go away.
    pub async fn program(&self, cas: &Cas, cid: &ContentId) -> Result<Loaded, ExecError> {
        let key = cid.to_string();
        if let Some(program) = self.loader.programs.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
            return Ok(Loaded { program, source: "memory" });
        }
        let (mut pending, started) = {
            let mut loading = self.loader.loading.lock().unwrap_or_else(PoisonError::into_inner);
            match loading.get(&key) {
                Some(pending) => (pending.clone(), false),
                None => {
                    let (tell, pending) = tokio::sync::watch::channel(None);
                    loading.insert(key.clone(), pending.clone());
                    let (loader, cas, cid) = (self.loader.clone(), cas.clone(), cid.clone());
                    tokio::spawn(async move {
                        let end = loader.load(cas, &cid).await;
                        let _ = tell.send(Some(end));
                    });
                    (pending, true)
                }
            }
        };
        let end = pending
            .wait_for(Option::is_some)
            .await
            .map_err(|_| ExecError::Engine("a component's load stopped".into()))?
            .clone()
            .expect("waited for an end");
        match end {
            // The run that started the load says where the program came from.
            LoadEnd::Loaded(program, source) => Ok(Loaded { program, source: if started { source } else { "memory" } }),
            LoadEnd::Missing => {
                // Its build is no longer runnable: look again next time.
                self.builds.tell();
                Err(ExecError::ComponentMissing)
            }
            LoadEnd::OverBudget(detail) => Err(ExecError::OverBudget(detail)),
            LoadEnd::Failed(detail) => Err(ExecError::Load { cid: key, detail }),
        }
    }

    /// A run's output as a response body, counted against the bound on
    /// unread outputs (and `tenant`'s share of it) until the connection
    /// takes it, or a 503 past it.
    pub fn hold(&self, tenant: &str, output: axum::body::Bytes) -> Result<HeldBody, crate::problem::Problem> {
        self.held.hold(tenant, output)
    }

    /// Whether `tenant` may start a run now, under the rate the operator
    /// set per key; a 429 with `Retry-After` if not.
    pub fn admit(&self, tenant: &str) -> Result<(), crate::problem::Problem> {
        let Some(rate) = &self.rate else { return Ok(()) };
        rate.take(tenant, std::time::Instant::now()).map_err(|wait| {
            let mut problem = crate::problem::Problem::new(
                axum::http::StatusCode::TOO_MANY_REQUESTS,
                format!("this key may start {} runs a second; retry shortly", rate.per_second()),
            );
            problem.retry_after = Some(wait.as_secs_f64().ceil().max(1.0) as u64);
            problem
        })
    }

    /// A run slot for `tenant` (a key, or `""` for public runs), taken
    /// only once the program is loaded.
    pub async fn slot(&self, tenant: &str) -> Result<FairSlot, crate::problem::Problem> {
        self.slots.acquire(tenant).await
    }
}

/// A run of a deployment in progress ([`Executor::deployment_run`]).
pub struct DeploymentRun {
    runs: Arc<Mutex<HashMap<String, usize>>>,
    key: String,
}

impl Drop for DeploymentRun {
    fn drop(&mut self) {
        let mut runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = runs.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                runs.remove(&self.key);
            }
        }
    }
}

/// The component artifact of a build, if it has one.
fn component(row: &BuildRow) -> Option<ContentId> {
    let name = braid::package::dist::component_artifact(&braid::codegen::crate_name(&row.name));
    (row.state == BuildState::Succeeded)
        .then(|| row.artifacts.iter().find(|a| a.name == name).map(|a| a.cid.clone()))
        .flatten()
}

/// A run's timings as a `Server-Timing` header value (milliseconds): the
/// fresh instance's making, and the whole run.
pub fn server_timing(timings: Timings) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    format!("inst;dur={:.3}, run;dur={:.3}", ms(timings.instantiate), ms(timings.total))
}

#[cfg(test)]
mod tests {
    use super::{Executor, Lru, RunConfig};

    #[test]
    fn a_deployment_runs_at_most_its_cap_at_once_here() {
        let data = std::env::temp_dir();
        let executor = Executor::new(RunConfig::default(), &data, false, braid_worker::BuildsChanged::default());
        let first = executor.deployment_run("Echo", Some(2)).unwrap();
        let second = executor.deployment_run("echo", Some(2)).unwrap();
        // One name in any case: the third run of it is refused, not queued.
        let refused = executor.deployment_run("ECHO", Some(2)).err().expect("a third run of two at once");
        assert_eq!((refused.status, refused.retry_after), (429, Some(1)));
        assert_eq!(refused.detail, "deployment ECHO runs at most 2 at once (its limits.concurrent); retry shortly");
        // Another deployment, and one without a cap, are not held back.
        let other = executor.deployment_run("other", Some(1)).unwrap();
        let uncapped: Vec<_> = (0..10).map(|_| executor.deployment_run("free", None).unwrap()).collect();
        let mut runs = executor.deployment_runs();
        runs.sort();
        assert_eq!(runs, [("echo".into(), 2), ("free".into(), 10), ("other".into(), 1)]);
        drop(first);
        let _third = executor.deployment_run("echo", Some(2)).unwrap();
        drop((second, other, uncapped, _third));
        assert_eq!(executor.deployment_runs(), [], "nothing kept for deployments with no run in progress");
    }

    #[test]
    fn the_least_recently_used_go_past_the_bound() {
        let mut lru = Lru::new(10);
        lru.insert("a", 1, 4);
        lru.insert("b", 2, 4);
        assert_eq!(lru.get("a"), Some(1), "a is used: b is now the oldest");
        lru.insert("c", 3, 4);
        assert_eq!((lru.get("a"), lru.get("b"), lru.get("c")), (Some(1), None, Some(3)));
        assert_eq!(lru.bytes, 8);
        lru.insert("huge", 4, 20);
        assert_eq!((lru.get("huge"), lru.get("a"), lru.bytes), (Some(4), None, 20), "the one just kept stays");
    }
}
