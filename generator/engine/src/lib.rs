//! Braid's executor: a workflow's component (`braid build --targets
//! component`) run by wasmtime the way its authors recommend for running
//! untrusted code per request: compiled once and kept precompiled on disk
//! ([`PrecompiledCache`]: keyed by the component's CID, the wasmtime
//! version and the engine's settings, and bound to them by a MAC),
//! pre-instantiated ([`Program`]), the pooling allocator with
//! copy-on-write memory images, and a fresh instance for every run, so
//! that nothing a run leaves in memory is seen by the next.
//!
//! Every run has budgets ([`Limits`]): time (checked at every tick of the
//! engine's millisecond clock), linear memory, input and output size;
//! exceeding one is a [`RunError`] naming it, never a crash.
//!
//! Runs are async (on fibers from the pool): a run yields to its executor
//! at every tick, so a server runs them on its own threads, a long run
//! never holding one for more than a millisecond, rather than handing each
//! to a blocking thread and back (two context switches a request: without
//! them `braid serve` answered 1.5x the 64 B runs, measured side by side).
//! The linker is empty: a workflow's component imports nothing (no WASI:
//! no files, no environment, no network, no clock, no randomness), so a
//! run can reach nothing but its own memory, its input and its budgets.
//! A component that imports anything is refused when it is loaded.

mod fast;
mod io;
mod packed;
mod precompiled;
#[cfg(test)]
mod testing;
mod values;

pub use braid_schema::RunErrorKind;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, ComponentExportIndex, InstancePre, Linker};
use wasmtime::{
    Config, Engine as Wasmtime, InstanceAllocationStrategy, PoolingAllocationConfig, Store, UpdateDeadline,
};

pub use braid_schema::wire::{self, Shape};
pub use io::{Input, Output};
pub use precompiled::{CacheError, PrecompiledCache};
pub use values::{camel, is_bytes};
pub use wasmtime::component::{Type, Val};

/// Linear memory a pool slot keeps mapped between runs (the pages a run
/// dirtied, reset in place); beyond it, pages are given back.
const KEEP_RESIDENT: usize = 8 << 20;

/// The wasmtime version precompiled components are keyed by.
pub const WASMTIME_VERSION: &str = "48.0.8";

/// The budgets of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest a run may take (wall clock, in whole milliseconds).
    pub time: Duration,
    /// Most linear memory a run may have, in bytes.
    pub memory_bytes: usize,
    /// Largest input (the sum of its bytes and strings).
    pub input_bytes: usize,
    /// Largest output.
    pub output_bytes: usize,
}

impl Limits {
    /// Each of these limits, or `bound`'s where it is smaller.
    pub fn within(self, bound: Limits) -> Limits {
        Limits {
            time: self.time.min(bound.time),
            memory_bytes: self.memory_bytes.min(bound.memory_bytes),
            input_bytes: self.input_bytes.min(bound.input_bytes),
            output_bytes: self.output_bytes.min(bound.output_bytes),
        }
    }
}

impl Default for Limits {
    /// 1 s, 256 MiB of memory, 16 MiB in and out.
    fn default() -> Self {
        Self {
            time: Duration::from_secs(1),
            memory_bytes: 256 << 20,
            input_bytes: braid_schema::wire::DEFAULT_INPUT_LIMIT,
            output_bytes: 16 << 20,
        }
    }
}

/// Why a component could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("this is not a Braid workflow component: {0}")]
    Invalid(String),
    #[error("the engine could not start: {0}")]
    Engine(String),
    /// The component's memory at start is over the memory budget: no run
    /// of it could fit.
    #[error("the component needs {needs} bytes of memory to start, more than its memory limit of {limit} bytes: raise the limit (--memory-limit)")]
    Memory { needs: u64, limit: usize },
}

/// Why a run did not give an output.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    #[error("the run took longer than its {} ms and was stopped", .0.as_millis())]
    Time(Duration),
    #[error("the run needed more than its {0} bytes of memory and was stopped")]
    Memory(usize),
    #[error("the input is {found} bytes, over the limit of {limit}")]
    InputTooLarge { found: usize, limit: usize },
    #[error("the output is over the limit of {limit} bytes")]
    OutputTooLarge { limit: usize },
    /// An input that does not fit `run`'s parameters.
    #[error("{0}")]
    BadInput(String),
    /// The workflow refused its input: its `run-error`.
    #[error("{message}")]
    Workflow { kind: RunErrorKind, message: String },
    /// The module trapped (a bug or a hostile operation); the instance is
    /// gone, the next run has a fresh one.
    #[error("the module trapped: {0}")]
    Trap(String),
}

/// One engine per process: its settings, its clock and its (empty) linker.
pub struct Engine {
    wasmtime: Wasmtime,
    linker: Linker<Host>,
    limits: Limits,
    /// Settings, version and target, for the precompiled cache's keys.
    key: String,
}

/// What a run's store holds: its memory budget, and whether it was hit.
struct Host {
    memory_limit: usize,
    memory_refused: bool,
}

impl wasmtime::ResourceLimiter for Host {
    fn memory_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let ok = desired <= self.memory_limit;
        self.memory_refused |= !ok;
        Ok(ok)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 20)
    }
}

/// A component ready to run: compiled, linked, its `run` type known.
pub struct Program {
    pre: InstancePre<Host>,
    /// `run`, looked up once rather than by name on every run.
    run: ComponentExportIndex,
    params: Vec<(String, Type)>,
    output: Type,
    /// The same, as the wire's shapes (JSON and the packed encoding).
    shapes: Vec<(String, Shape)>,
    output_shape: Shape,
    source: Source,
    /// The typed path of `run`, for the shapes it covers.
    shape: Option<fast::Shape>,
    /// `run-packed`, the typed path for every other shape (absent from
    /// components built by Braid before it had one).
    packed: Option<ComponentExportIndex>,
    /// Bytes of compiled code it keeps mapped.
    code_bytes: usize,
}

/// Where a [`Program`]'s machine code came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Compiled from the component (and written to the cache, if any).
    Compiled,
    /// Loaded precompiled from the cache.
    Precompiled,
}

/// How long the parts of a run took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timings {
    /// Making the fresh instance (store, memory image, `start`).
    pub instantiate: Duration,
    /// The whole run: instantiation, the call, the output's copy.
    pub total: Duration,
}

impl Engine {
    /// An engine whose runs have `limits`, at most `concurrent` at once
    /// (the pool's size).
    pub fn new(limits: Limits, concurrent: u32) -> Result<Arc<Self>, LoadError> {
        let mut config = Config::new();
        config.wasm_component_model(true).epoch_interruption(true).memory_init_cow(true);
        let mut pool = PoolingAllocationConfig::default();
        // A workflow's component is one core instance with one memory and
        // one table; the rest is headroom.
        let instances = concurrent.max(1) * 2;
        pool.total_component_instances(instances)
            .total_core_instances(instances * 2)
            .total_memories(instances * 2)
            .total_tables(instances * 2)
            .total_stacks(instances)
            .max_memory_size(limits.memory_bytes)
            // What a run wrote is reset in place, up to these sizes, rather
            // than given back to the kernel and faulted in again by the next
            // instance: Linux's PAGEMAP_SCAN (6.7 and later; elsewhere the
            // first bytes are zeroed) finds the pages a run dirtied, so a
            // small run's reset is a few `memcpy`s, with no `madvise` and no
            // TLB shootdown. Measured on 2 cores (cidv1_from_bytes, 64 B,
            // `cargo run --release -p braid-engine --example runs`): 20 us a
            // run giving pages back, 29 us zeroing the first 4 MiB, 8 us
            // with the scan.
            .linear_memory_keep_resident(KEEP_RESIDENT)
            // Not where the host swaps: wasmtime's tracker has an open
            // report (PR 14357, 2026-09) that a dirty page swapped out is
            // neither reset nor decommitted by the scan, so that the next
            // instance could read the last run's data. Resets then use
            // `madvise`, which swap does not fool (slower, still isolated).
            .pagemap_scan(if host_swaps() { wasmtime::Enabled::No } else { wasmtime::Enabled::Auto })
            .table_keep_resident(64 << 10);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        let wasmtime = Wasmtime::new(&config).map_err(|e| LoadError::Engine(format!("{e:#}")))?;
        let linker = Linker::new(&wasmtime);
        let key = {
            use std::hash::{Hash, Hasher};
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            wasmtime.precompile_compatibility_hash().hash(&mut hasher);
            format!("wasmtime-{WASMTIME_VERSION}-{:016x}", hasher.finish())
        };
        let engine = Arc::new(Self { wasmtime, linker, limits, key });
        // The clock of every deadline; it stops with the engine.
        let clock = Arc::downgrade(&engine);
        std::thread::Builder::new()
            .name("braid-engine-clock".into())
            .spawn(move || {
                while let Some(engine) = clock.upgrade() {
                    engine.wasmtime.increment_epoch();
                    drop(engine);
                    std::thread::sleep(Duration::from_millis(1));
                }
            })
            .map_err(|e| LoadError::Engine(e.to_string()))?;
        Ok(engine)
    }

    /// The component `wasm`, compiled or, with `cache`, loaded precompiled
    /// from it when the cache wrote it for this component (by its CID,
    /// computed here from `wasm`, not taken on a caller's word) and engine
    /// (written after the first compilation).
    pub fn load(&self, wasm: &[u8], cache: Option<&PrecompiledCache>) -> Result<Program, LoadError> {
        let (component, source) = self.component(wasm, cache)?;
        self.program(component, source)
    }

    /// The compiled component: precompiled from `cache` if it holds this
    /// one's code (a file that does not load is deleted), else compiled
    /// and kept there.
    fn component(&self, wasm: &[u8], cache: Option<&PrecompiledCache>) -> Result<(Component, Source), LoadError> {
        let cid = cache.map(|_| braid_schema::content_id(wasm)).unwrap_or_default();
        let cid = cid.as_str();
        if let Some(code) = cache.and_then(|c| c.read(cid, &self.key)) {
            // SAFETY: `code` is what this engine serialized for exactly this
            // component: its MAC, under a key only this user can read, was
            // checked on these very bytes (nothing re-reads the file), and
            // wasmtime checks the version and settings again.
            match unsafe { Component::deserialize(&self.wasmtime, &code) } {
                Ok(component) => return Ok((component, Source::Precompiled)),
                Err(_) => cache.into_iter().for_each(|c| c.remove(cid, &self.key)),
            }
        }
        let component = Component::new(&self.wasmtime, wasm).map_err(|e| self.load_error(e))?;
        if let Some(cache) = cache {
            if let Ok(code) = component.serialize() {
                cache.write(cid, &self.key, &code);
            }
        }
        Ok((component, Source::Compiled))
    }

    /// The program of a compiled component, checked: it imports nothing
    /// and exports `run`.
    fn program(&self, component: Component, source: Source) -> Result<Program, LoadError> {
        let invalid = |e: wasmtime::Error| self.load_error(e);
        let ty = component.component_type();
        if let Some((name, _)) = ty.imports(&self.wasmtime).find(|(_, item)| !self.types_only(&item.ty)) {
            return Err(LoadError::Invalid(format!(
                "it imports `{name}`, and a workflow's component imports nothing (earlier versions of braid \
                 built components that imported WASI): build the workflow again, with `braid build` or by \
                 submitting it to the service again"
            )));
        }
        let run = component
            .get_export_index(None, "run")
            .ok_or_else(|| LoadError::Invalid("it exports no `run` function".into()))?;
        let Some(ComponentItem::ComponentFunc(func)) = ty.get_export(&self.wasmtime, "run").map(|e| e.ty) else {
            return Err(LoadError::Invalid("it exports no `run` function".into()));
        };
        let params: Vec<_> = func.params().map(|(name, ty)| (name.to_string(), ty)).collect();
        let output = match func.results().collect::<Vec<_>>().as_slice() {
            [Type::Result(result)] => result.ok(),
            _ => None,
        }
        .ok_or_else(|| LoadError::Invalid("its `run` does not return result<T, run-error>".into()))?;
        let shapes = params
            .iter()
            .map(|(name, ty)| Ok((name.clone(), packed::shape_of(ty)?)))
            .collect::<Result<_, String>>()
            .map_err(LoadError::Invalid)?;
        let output_shape = packed::shape_of(&output).map_err(LoadError::Invalid)?;
        let pre = self.linker.instantiate_pre(&component).map_err(invalid)?;
        let shape = fast::Shape::of(&params, &output);
        let packed = component.get_export_index(None, "run-packed");
        let code = component.image_range();
        let code_bytes = (code.end as usize).saturating_sub(code.start as usize);
        Ok(Program { pre, run, params, output, shapes, output_shape, source, shape, packed, code_bytes })
    }
}

impl Engine {
    /// Why wasmtime would not load a component: over the memory budget
    /// from the start (the pool's check, which says how much the component
    /// needs), or not a valid component.
    fn load_error(&self, e: wasmtime::Error) -> LoadError {
        let needs = e.chain().find_map(|cause| {
            let text = cause.to_string();
            let rest = text.strip_prefix("memory has a minimum byte size of ")?;
            rest.split(' ').next()?.parse::<u64>().ok()
        });
        match needs {
            Some(needs) => LoadError::Memory { needs, limit: self.limits.memory_bytes },
            None => LoadError::Invalid(format!("{e:#}")),
        }
    }

    /// Whether an import needs nothing from the host: an interface of types
    /// only (a workflow's `types`, whose records its `run` uses).
    fn types_only(&self, item: &ComponentItem) -> bool {
        match item {
            ComponentItem::Type(_) => true,
            ComponentItem::ComponentInstance(instance) => {
                instance.exports(&self.wasmtime).all(|(_, item)| matches!(item.ty, ComponentItem::Type(_)))
            }
            _ => false,
        }
    }
}

impl Program {
    /// `run`'s parameters: names (kebab case) and types.
    pub fn params(&self) -> &[(String, Type)] {
        &self.params
    }

    /// The type of `run`'s output.
    pub fn output(&self) -> &Type {
        &self.output
    }

    /// `run`'s parameters as the wire's shapes: what a request's inputs
    /// are read by ([`braid_schema::wire::inputs`]).
    pub fn shapes(&self) -> &[(String, Shape)] {
        &self.shapes
    }

    /// Bytes of compiled code the program keeps mapped (what a cache of
    /// programs weighs).
    pub fn code_bytes(&self) -> usize {
        self.code_bytes
    }

    /// Whether it was compiled or loaded precompiled.
    pub fn source(&self) -> Source {
        self.source
    }

    /// Runs the workflow on `inputs` (one per parameter) in a fresh
    /// instance, within the engine's limits: the output, or why not.
    pub async fn run(&self, engine: &Engine, inputs: Vec<Input>) -> Result<Output, RunError> {
        self.run_timed(engine, inputs).await.0
    }

    /// [`Program::run`], and how long its parts took.
    pub async fn run_timed(&self, engine: &Engine, inputs: Vec<Input>) -> (Result<Output, RunError>, Timings) {
        self.run_within(engine, inputs, engine.limits).await
    }

    /// [`Program::run_timed`] within `limits`, each at most the engine's
    /// (a larger one is the engine's): tighter budgets for some runs, such
    /// as a deployment's.
    pub async fn run_within(
        &self,
        engine: &Engine,
        inputs: Vec<Input>,
        limits: Limits,
    ) -> (Result<Output, RunError>, Timings) {
        let start = Instant::now();
        let mut timings = Timings::default();
        let result = self.call(engine, inputs, limits.within(engine.limits), &mut timings).await;
        timings.total = start.elapsed();
        (result, timings)
    }

    async fn call(
        &self,
        engine: &Engine,
        inputs: Vec<Input>,
        limits: Limits,
        timings: &mut Timings,
    ) -> Result<Output, RunError> {
        let found: usize = inputs.iter().map(Input::size).sum();
        if found > limits.input_bytes {
            return Err(RunError::InputTooLarge { found, limit: limits.input_bytes });
        }
        if inputs.len() != self.params.len() {
            return Err(RunError::BadInput(format!(
                "the workflow takes {} input(s), found {}",
                self.params.len(),
                inputs.len()
            )));
        }
        let started = Instant::now();
        let host = Host { memory_limit: limits.memory_bytes, memory_refused: false };
        let mut store = Store::new(&engine.wasmtime, host);
        store.limiter(|host| host);
        // At every tick: stop a run past its time, else let others run.
        let deadline = started + limits.time;
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |_| {
            Ok(if Instant::now() >= deadline { UpdateDeadline::Interrupt } else { UpdateDeadline::Yield(1) })
        });
        // What the output may copy out of the guest, counted by wasmtime
        // as it lifts (a byte a byte on the typed paths, a `Val` a byte on
        // the dynamic one); past it, the call fails before the host holds
        // the whole output.
        let typed_fuel = limits.output_bytes.saturating_add(1 << 20);
        store.set_hostcall_fuel(typed_fuel);
        let trapped = |store: &Store<Host>, e: wasmtime::Error| {
            if store.data().memory_refused {
                return RunError::Memory(limits.memory_bytes);
            }
            if let Some(wasmtime::Trap::Interrupt) = e.downcast_ref::<wasmtime::Trap>() {
                return RunError::Time(limits.time);
            }
            if format!("{e:#}").contains("fuel allocated for hostcalls has been exhausted") {
                return RunError::OutputTooLarge { limit: limits.output_bytes };
            }
            RunError::Trap(trap_message(&e))
        };
        let instance = match self.pre.instantiate_async(&mut store).await {
            Ok(instance) => instance,
            Err(e) => return Err(trapped(&store, e)),
        };
        timings.instantiate = started.elapsed();
        if let (Some(shape), [input]) = (self.shape, inputs.as_slice()) {
            match shape.call(&instance, &mut store, &self.run, input, limits.output_bytes).await {
                Ok(Some(result)) => return result,
                Ok(None) => {}
                Err(e) => return Err(trapped(&store, e)),
            }
        }
        if let Some(run_packed) = &self.packed {
            let mut packed = Vec::with_capacity(found + 8 * inputs.len());
            for input in &inputs {
                input.pack(&mut packed).map_err(RunError::BadInput)?;
            }
            drop(inputs);
            // The length before a `list<u8>` or `string` output is not output.
            let limit = limits.output_bytes.saturating_add(4);
            match fast::packed(&instance, &mut store, run_packed, &packed, limit).await {
                Ok(Some(result)) => {
                    return result.and_then(|output| {
                        Output::from_packed(output, &self.output_shape)
                            .map_err(|why| RunError::Trap(format!("`run-packed` gave a malformed output: {why}")))
                    });
                }
                Ok(None) => return Err(RunError::Trap("`run-packed` is not of the type Braid gives it".into())),
                Err(e) => return Err(trapped(&store, e)),
            }
        }
        // A component built before `run-packed`: the dynamic API.
        store.set_hostcall_fuel(limits.output_bytes.saturating_mul(std::mem::size_of::<Val>()).saturating_add(1 << 20));
        let Some(run) = instance.get_func(&mut store, self.run) else {
            return Err(RunError::Trap("the instance has no `run`".into()));
        };
        let mut results = [Val::Bool(false)];
        let inputs: Vec<Val> = inputs
            .into_iter()
            .zip(&self.params)
            .map(|(input, (_, ty))| io::into_val(input, ty))
            .collect::<Result<_, _>>()
            .map_err(RunError::BadInput)?;
        if let Err(e) = run.call_async(&mut store, &inputs, &mut results).await {
            return Err(trapped(&store, e));
        }
        let [result] = results;
        match result {
            Val::Result(Ok(Some(output))) => {
                if values::size(&output) > limits.output_bytes {
                    return Err(RunError::OutputTooLarge { limit: limits.output_bytes });
                }
                Ok(Output::from_val(*output, &self.output))
            }
            Val::Result(Err(Some(error))) => Err(workflow_error(&error)),
            other => Err(RunError::Trap(format!("`run` gave {other:?}, not a result"))),
        }
    }
}

/// Whether the host has swap in use (a line under `/proc/swaps`' header);
/// unknown counts as yes.
fn host_swaps() -> bool {
    std::fs::read_to_string("/proc/swaps").map_or(true, |swaps| swaps_listed(&swaps))
}

/// Whether `/proc/swaps` text lists a swap area.
fn swaps_listed(swaps: &str) -> bool {
    swaps.lines().skip(1).any(|line| !line.trim().is_empty())
}

/// What a trap was, for the caller: wasmtime's kind of trap (its root
/// cause; the first line of the error is only "error while executing"),
/// and what the kind usually means in a workflow.
fn trap_message(e: &wasmtime::Error) -> String {
    match e.downcast_ref::<wasmtime::Trap>() {
        Some(wasmtime::Trap::UnreachableCodeReached) => {
            "wasm `unreachable` instruction executed (an operation panicked: panics abort in a component)".into()
        }
        Some(wasmtime::Trap::StackOverflow) => "call stack exhausted (unbounded recursion?)".into(),
        Some(trap) => trap.to_string(),
        None => e.root_cause().to_string(),
    }
}

/// A `run-error { kind, message }` as a [`RunError`].
fn workflow_error(error: &Val) -> RunError {
    let (mut kind, mut message) = (RunErrorKind::Failed, String::new());
    if let Val::Record(fields) = error {
        for (name, value) in fields {
            match (name.as_str(), value) {
                ("kind", Val::Enum(k)) => kind = RunErrorKind::from_wit(k).unwrap_or(RunErrorKind::Failed),
                ("message", Val::String(m)) => message = m.clone(),
                _ => {}
            }
        }
    }
    RunError::Workflow { kind, message }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A component (binary format, layer 1): a type section with
    /// `func()`, then `sections` (an import section, or none).
    fn component(sections: &[u8]) -> Vec<u8> {
        let mut wasm = b"\0asm\x0d\x00\x01\x00\x07\x05\x01\x40\x00\x01\x00".to_vec();
        wasm.extend_from_slice(sections);
        wasm
    }

    fn refusal(wasm: &[u8]) -> String {
        let engine = Engine::new(Limits::default(), 1).unwrap();
        match engine.load(wasm, None) {
            Err(LoadError::Invalid(why)) => why,
            Err(e) => panic!("not refused as invalid: {e}"),
            Ok(_) => panic!("loaded"),
        }
    }

    #[test]
    fn a_component_that_imports_anything_is_refused_naming_the_import() {
        // (import "f" (func (type 0)))
        let why = refusal(&component(b"\x0a\x06\x01\x00\x01f\x01\x00"));
        assert!(why.starts_with("it imports `f`, and a workflow's component imports nothing"), "{why}");
        assert!(why.ends_with("submitting it to the service again"), "{why}");
    }

    #[test]
    fn a_component_without_run_is_refused() {
        assert_eq!(refusal(&component(b"")), "it exports no `run` function");
        let core = refusal(b"\0asm\x01\x00\x00\x00");
        assert!(core.contains("component"), "a core module: {core}");
    }

    /// A memory limit under the component's own memory at start is the
    /// memory budget's error, saying both sizes, not "not a component".
    #[test]
    fn a_memory_limit_under_the_components_start_says_so() {
        // (core module (memory 2)): 128 KiB at start, over a 64 KiB limit.
        let module = b"\0asm\x01\x00\x00\x00\x05\x03\x01\x00\x02";
        let mut wasm = b"\0asm\x0d\x00\x01\x00\x01".to_vec();
        wasm.push(module.len() as u8);
        wasm.extend_from_slice(module);
        let limits = Limits { memory_bytes: 64 << 10, ..Limits::default() };
        let engine = Engine::new(limits, 1).unwrap();
        match engine.load(&wasm, None) {
            Err(LoadError::Memory { needs, limit }) => assert_eq!((needs, limit), (128 << 10, 64 << 10)),
            Err(e) => panic!("another error: {e}"),
            Ok(_) => panic!("loaded"),
        }
        let roomy = Engine::new(Limits::default(), 1).unwrap();
        assert!(matches!(roomy.load(&wasm, None), Err(LoadError::Invalid(_))), "no `run`, and no memory error");
    }

    #[test]
    fn swap_is_seen_in_proc_swaps() {
        let header = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
        assert!(!swaps_listed(header));
        assert!(swaps_listed(&format!("{header}/swapfile                               file\t\t1048572\t\t0\t\t-2\n")));
    }

    /// A precompiled file that is not this cache's own for this component
    /// (another component's, truncated, patched) is never deserialized:
    /// the component is compiled again and the file rewritten.
    #[test]
    fn a_tampered_precompiled_file_is_compiled_again_never_loaded() {
        let engine = Engine::new(Limits::default(), 1).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let cache = PrecompiledCache::open(tmp.path(), 1 << 30).unwrap();
        let source = |wasm: &[u8]| engine.component(wasm, Some(&cache)).unwrap().1;
        let (a, b) = (component(b""), component(b"\x0a\x06\x01\x00\x01f\x01\x00"));
        assert_eq!(source(&a), Source::Compiled);
        assert_eq!(source(&a), Source::Precompiled);
        assert_eq!(source(&b), Source::Compiled);
        let files = [("a", &a), ("b", &b)].map(|(name, wasm)| (name, braid_schema::content_id(wasm)));
        let file = |name: &str| {
            let cid = &files.iter().find(|(n, _)| *n == name).unwrap().1;
            tmp.path().join(format!("{cid}.{}.cwasm", engine.key))
        };
        type Tamper<'a> = &'a dyn Fn(&mut Vec<u8>);
        let tampered: [(&str, Tamper); 3] = [
            ("swapped", &|bytes| *bytes = std::fs::read(file("b")).unwrap()),
            ("truncated", &|bytes| bytes.truncate(bytes.len() / 2)),
            ("patched", &|bytes| {
                let middle = bytes.len() / 2;
                bytes[middle] ^= 0xff;
            }),
        ];
        for (how, tamper) in tampered {
            let mut bytes = std::fs::read(file("a")).unwrap();
            tamper(&mut bytes);
            std::fs::write(file("a"), &bytes).unwrap();
            assert_eq!(source(&a), Source::Compiled, "a {how} file was loaded");
            assert_eq!(source(&a), Source::Precompiled, "after a {how} file, the cache works again");
        }
    }
}
