//! Running built workflows for callers (`POST /v1/builds/{id}/run`,
//! `POST /v1/workflows/{id}/run`): one [`braid_engine::Engine`] per
//! process, started on the first run; programs by their component's CID,
//! fetched from the store on first use (so any process of a deployment
//! runs any build), checked against that CID, and kept precompiled under
//! `<data>/precompiled` ([`PrecompiledCache`]: loaded only when bound to
//! that component and engine by this process's MAC key); runs bounded by
//! slots shared fairly between keys and a queue ([`crate::fair`]; beyond
//! it, 503 + `Retry-After`). Every run is a fresh instance: an executor
//! holds no state a request could leave behind.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use braid_engine::{Engine, Limits, PrecompiledCache, Program, Source, Timings};

use crate::fair::FairSlots;
use crate::ids::{BuildId, ContentId};
use crate::problem::Problem;

/// How the service runs workflows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunConfig {
    /// Each run's budgets.
    pub limits: Limits,
    /// Runs at once.
    pub slots: usize,
    /// Runs waiting for a slot; beyond, 503.
    pub queue: usize,
    /// Runs need no API key (`--public-run`).
    pub public: bool,
}

impl Default for RunConfig {
    /// The engine's default budgets, one run per core, 64 waiting, keys needed.
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            slots: std::thread::available_parallelism().map_or(1, |n| n.get()),
            queue: 64,
            public: false,
        }
    }
}

/// The engine, the programs and the slots.
pub struct Executor {
    config: RunConfig,
    engine: OnceLock<Result<Arc<Engine>, String>>,
    programs: Mutex<HashMap<String, Arc<Program>>>,
    loading: Mutex<()>,
    /// The component of each succeeded build run so far (a build's
    /// artifacts never change once it succeeded), so that a run by build
    /// id does not ask the store.
    components: Mutex<HashMap<BuildId, ContentId>>,
    precompiled: PathBuf,
    /// The disk cache, opened on first use; `None` where it is refused
    /// (runs then compile every component once per process).
    cache: OnceLock<Option<PrecompiledCache>>,
    /// Run slots, shared fairly between keys ([`crate::fair`]).
    pub(crate) slots: Arc<FairSlots>,
}

impl Executor {
    pub fn new(config: RunConfig, data: &std::path::Path) -> Self {
        Self {
            config,
            engine: OnceLock::new(),
            programs: Mutex::new(HashMap::new()),
            loading: Mutex::new(()),
            components: Mutex::new(HashMap::new()),
            precompiled: data.join("precompiled"),
            cache: OnceLock::new(),
            slots: FairSlots::new(config.slots, config.queue),
        }
    }

    pub fn config(&self) -> RunConfig {
        self.config
    }

    /// The component of build `id`, if a run of it was seen.
    pub fn component_of(&self, id: &BuildId) -> Option<ContentId> {
        self.components.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(id).cloned()
    }

    /// Remembers the component of the succeeded build `id`.
    pub fn remember_component(&self, id: BuildId, cid: ContentId) {
        self.components.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(id, cid);
    }

    /// The engine, started on first use.
    pub fn engine(&self) -> Result<Arc<Engine>, Problem> {
        let slots = u32::try_from(self.config.slots).unwrap_or(u32::MAX);
        self.engine
            .get_or_init(|| Engine::new(self.config.limits, slots).map_err(|e| e.to_string()))
            .clone()
            .map_err(|e| Problem::internal(format!("the executor cannot start: {e}")))
    }

    /// The program of the component `cid`, if it is loaded.
    pub fn loaded(&self, cid: &ContentId) -> Option<Arc<Program>> {
        self.programs.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&cid.to_string()).cloned()
    }

    /// The program of the component `cid` (blocking: it may read the store
    /// and compile). `fetch` gives the component's bytes, checked. With it,
    /// where it came from: `memory`, `precompiled` (the disk cache) or
    /// `compiled`.
    pub fn program(
        &self,
        cid: &ContentId,
        fetch: impl FnOnce() -> Result<Vec<u8>, Problem>,
    ) -> Result<(Arc<Program>, &'static str), Problem> {
        // One load at a time, so that runs arriving together compile once
        // (callers look in memory first, [`Executor::loaded`]).
        let _loading = self.loading.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(program) = self.loaded(cid) {
            return Ok((program, "memory"));
        }
        let key = cid.to_string();
        let wasm = fetch()?;
        let engine = self.engine()?;
        let program = Arc::new(
            engine
                .load(&wasm, &key, self.cache())
                .map_err(|e| Problem::internal(format!("loading the component {key}: {e}")))?,
        );
        self.programs.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(key, program.clone());
        let source = match program.source() {
            Source::Compiled => "compiled",
            Source::Precompiled => "precompiled",
        };
        Ok((program, source))
    }
}

impl Executor {
    /// The precompiled cache, opened on first use.
    fn cache(&self) -> Option<&PrecompiledCache> {
        self.cache
            .get_or_init(|| {
                PrecompiledCache::open(&self.precompiled, PRECOMPILED_MAX_BYTES)
                    .inspect_err(|e| tracing::warn!("not keeping precompiled components: {e}"))
                    .ok()
            })
            .as_ref()
    }
}

/// Most bytes of precompiled components kept on disk (the least recently
/// used go first): a CID workflow's is about 1 MB, photo_proof's 4 MB.
pub const PRECOMPILED_MAX_BYTES: u64 = 1 << 30;

/// A run's timings as a `Server-Timing` header value (milliseconds): the
/// fresh instance's making, and the whole run.
pub fn server_timing(timings: Timings) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    format!("inst;dur={:.3}, run;dur={:.3}", ms(timings.instantiate), ms(timings.total))
}
