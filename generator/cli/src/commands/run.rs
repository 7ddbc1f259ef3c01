//! `braid run`: builds a workflow natively (cached) and runs it on files;
//! with `--engine wasm`, builds its component and runs it in Braid's
//! executor, within the budgets the service gives a run.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use braid::build;
use braid::codegen::{crate_name, Generator};
use braid::manifest::Workflow;
use braid::runner::{self, RunError};
use braid::target::Target;
use braid_engine::{Engine, Limits, Output};

use crate::output::{emit, load, registry};

#[derive(clap::Args)]
pub struct Args {
    manifest: PathBuf,
    /// A file per external input, in order, or `NAME=FILE` for an input the manifest names: its bytes
    /// (Bytes, Multihash) or its text (String, Cid, U64, Bool); `-` reads standard input (streamed
    /// when the workflow can stream). Exit status 3 when the workflow itself fails, 2 when an input
    /// cannot be read.
    #[arg(long = "input", value_name = "[NAME=]FILE")]
    inputs: Vec<PathBuf>,
    /// Print how long the workflow took (on stderr).
    #[arg(long)]
    time: bool,
    /// `native`: the generated crate compiled for this machine. `wasm`: its component
    /// (`--targets component`) in Braid's executor (wasmtime, a fresh instance, the budgets below),
    /// as `braid serve` runs it; value types of one's own as input files are JSON.
    #[arg(long, value_enum, default_value_t = Engine_::Native)]
    engine: Engine_,
    #[command(flatten)]
    limits: LimitArgs,
    #[arg(long)]
    target_dir: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Engine_ {
    Native,
    Wasm,
}

/// The budgets of a run in the executor (`--engine wasm`, and `braid serve`'s runs).
#[derive(clap::Args, Clone, Copy)]
pub struct LimitArgs {
    /// Longest a run may take, in milliseconds.
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub time_limit: u64,
    /// Most linear memory a run may use, in MiB.
    #[arg(long, default_value_t = 256, value_name = "MIB")]
    pub memory_limit: usize,
    /// Largest input of a run, in MiB.
    #[arg(long, default_value_t = Limits::default().input_bytes >> 20, value_name = "MIB")]
    pub input_limit: usize,
    /// Largest output of a run, in MiB.
    #[arg(long, default_value_t = 16, value_name = "MIB")]
    pub output_limit: usize,
}

impl LimitArgs {
    pub fn limits(self) -> Limits {
        Limits {
            time: Duration::from_millis(self.time_limit.max(1)),
            memory_bytes: self.memory_limit << 20,
            input_bytes: self.input_limit << 20,
            output_bytes: self.output_limit << 20,
        }
    }
}

pub fn run(Args { manifest, inputs, time, engine, limits, target_dir }: Args) -> anyhow::Result<()> {
    let workflow = load(&manifest, &registry()?)?;
    let target_dir = target_dir.unwrap_or_else(build::default_target_dir);
    if engine == Engine_::Wasm {
        return run_component(&workflow, &target_dir, &inputs, time, limits.limits());
    }
    let output = runner::run(&workflow, &Generator::new(), &target_dir, &inputs, time)?;
    emit(&output.stdout)?;
    eprint!("{}", output.stderr);
    Ok(())
}

/// Builds the workflow's component (cached next to `braid run`'s crates)
/// and runs it on the files, printing what the native runner prints.
fn run_component(
    workflow: &Workflow,
    target_dir: &Path,
    files: &[PathBuf],
    time: bool,
    limits: Limits,
) -> anyhow::Result<()> {
    let files = runner::place_inputs(workflow, files)?;
    let name = crate_name(&workflow.manifest.name);
    let out = build::run_dir(target_dir).join(format!("{name}-component"));
    let options = build::Options {
        targets: vec![Target::Component],
        target_dir: target_dir.to_path_buf(),
        tool_dirs: Vec::new(),
        deny_warnings: crate::output::deny_warnings(),
        optimize: false,
        simd: true,
        sandbox: None,
        compile_cache: None,
        require_stream: false,
        http_input_limit: None,
        dist: None,
    };
    build::build(workflow, &Generator::new(), &out, &options, &mut |_| {})?;
    let wasm_path = out.join("component").join(format!("{name}.wasm"));
    let wasm = std::fs::read(&wasm_path).with_context(|| format!("reading {}", wasm_path.display()))?;
    let engine = Engine::new(limits, 1)?;
    let program = engine.load(&wasm, precompiled_cache().as_ref()).map_err(|e| match e {
        // A budget, as a run's budgets are: the workflow's failure here.
        braid_engine::LoadError::Memory { .. } => {
            RunError::Workflow { workflow: workflow.manifest.name.clone(), message: e.to_string() }.into()
        }
        e => anyhow::Error::from(e),
    })?;
    if files.len() != program.params().len() {
        return Err(RunError::Arity {
            workflow: workflow.manifest.name.clone(),
            expected: program.params().len(),
            types: workflow.signature().rsplit_once(" -> ").map_or_else(String::new, |(i, _)| i.to_string()),
            found: files.len(),
        }
        .into());
    }
    let mut inputs = Vec::new();
    for (file, (param, shape)) in files.iter().zip(program.shapes()) {
        let bytes = if file.as_os_str() == "-" {
            let mut buf = Vec::new();
            std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)?;
            buf
        } else {
            std::fs::read(file).map_err(|e| RunError::Input(format!("{}: {e}", file.display())))?
        };
        let place = format!("input {} ({})", braid_engine::camel(param), file.display());
        inputs.push(braid_engine::Input::from_bytes(bytes, shape, &place).map_err(RunError::Input)?);
    }
    let start = Instant::now();
    // The executor's runs are async (they yield at every tick of its clock).
    let ran =
        tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(program.run(&engine, inputs));
    let elapsed = start.elapsed();
    let output = ran.map_err(|e| match e {
        braid_engine::RunError::BadInput(message) => RunError::Input(message),
        other => RunError::Workflow { workflow: workflow.manifest.name.clone(), message: other.to_string() },
    })?;
    emit(&(show(output) + "\n"))?;
    if time {
        eprintln!("wasm: instantiating and running took {:.3} ms", elapsed.as_secs_f64() * 1e3);
    }
    Ok(())
}

/// As the native runner prints it: bytes as hex, text as is, the rest as JSON.
fn show(output: Output) -> String {
    match output {
        Output::Text(text) => text,
        Output::Bytes(bytes) => bytes.iter().map(|b| format!("{b:02x}")).collect(),
        Output::Json(json) => json,
    }
}

/// The user's own cache of precompiled components ([`build::precompiled_dir`]).
/// Without a home, or where the directory is not the user's alone, none
/// (each run compiles, saying why).
fn precompiled_cache() -> Option<braid_engine::PrecompiledCache> {
    braid_engine::PrecompiledCache::open(&build::precompiled_dir()?, 256 << 20)
        .inspect_err(|e| eprintln!("warning: compiling the component on every run: {e}"))
        .ok()
}
