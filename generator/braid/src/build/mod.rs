//! Building a generated crate for its targets: native (`cargo build
//! --release`), `no_std` (`thumbv7em-none-eabihf`, default features off),
//! the npm packages (node, web, bundler) through [`crate::package::js`], and a
//! Wasm component (a core module encoded with `wit-component`, with its
//! WIT world). All
//! builds share one target directory and compile in its staging directory
//! ([`crate::staging`]), so a new workflow over operations already built
//! compiles only itself. Writes `report.json` with targets,
//! timings, sizes and the CID of every artifact.
//!
//! Beside it: the protocol between `braid build` and whoever runs it
//! ([`Event`], `event.rs`), the report (`report.rs`), the identity of a
//! build that the service deduplicates by ([`build_key`], `key.rs`), and
//! where builds cache (`dirs.rs`).

mod dirs;
mod event;
mod key;
mod report;

pub use self::dirs::{cache_dirs, default_target_dir, disk_usage, precompiled_dir, run_dir};
pub use self::event::Event;
pub use self::key::build_key;
pub use self::report::Report;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::codegen::{crate_name, Generator};
use crate::compile_cache::CompileCache;
use crate::fsutil::{self, FsError};
use crate::manifest::Workflow;
use crate::package;
use crate::package::js::{PackageError as PkgError, PackageSpec, Toolchain};
use crate::process::{self, ProcessError};
use crate::project::{self, GenerateError};
use crate::sandbox::Sandbox;
use crate::schema::Platform;
use crate::staging::Staging;
use crate::target::{JsTarget, Target, NOSTD_TRIPLE, STEPS_DIR};

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("target `{target}` is not possible for workflow {workflow}: {reason}")]
    Unsupported { target: String, workflow: String, reason: String },
    #[error("workflow {workflow} has no component: {reason}")]
    NoComponent { workflow: String, reason: String },
    /// The core module could not be encoded as a component: a bug in the
    /// generated crate's WIT bindings, not in the workflow.
    #[error("the component of workflow {workflow} could not be encoded: {reason}")]
    Component { workflow: String, reason: String },
    #[error("workflow {workflow} cannot stream: {reason}. Build it without --stream for run() and next() only")]
    NoStream { workflow: String, reason: String },
    #[error(transparent)]
    Generate(#[from] GenerateError),
    #[error(transparent)]
    Package(#[from] PkgError),
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error(transparent)]
    Dist(#[from] crate::package::dist::DistError),
}

/// The targets `workflow` allows, for `--targets` by default: all but
/// `component`, `http` and `steps`, which are asked for by name.
pub fn default_targets(workflow: &Workflow) -> Vec<Target> {
    Target::ALL
        .into_iter()
        .filter(|t| !matches!(t, Target::Component | Target::Http | Target::Steps) && workflow.supports(t.requires()))
        .collect()
}

/// Refuses targets an operation does not allow, naming the operation.
pub fn check_targets(workflow: &Workflow, targets: &[Target]) -> Result<(), BuildError> {
    for t in targets {
        if let Some(op) = workflow.crates.iter().find(|op| !op.manifest.supports(t.requires())) {
            return Err(BuildError::Unsupported {
                target: t.name().into(),
                workflow: workflow.manifest.name.clone(),
                reason: format!(
                    "operation {} has no {} build (its targets: {})",
                    op.name(),
                    t.requires(),
                    crate::join(&op.manifest.targets, ", ")
                ),
            });
        }
    }
    Ok(())
}

/// Options of [`build`].
#[derive(Debug, Clone)]
pub struct Options {
    pub targets: Vec<Target>,
    /// Cargo's target directory, shared between workflows.
    pub target_dir: PathBuf,
    /// Directories where `wasm-opt` may be found besides PATH.
    pub tool_dirs: Vec<PathBuf>,
    /// Compile with `-D warnings` (tests do; `BRAID_DENY_WARNINGS=1`).
    pub deny_warnings: bool,
    /// Run wasm-opt on the Wasm packages. Off (`braid build --no-opt`), a
    /// large workflow builds minutes faster, its module bigger and slower.
    pub optimize: bool,
    /// Build the Wasm packages with Wasm SIMD (the default; `braid build
    /// --no-simd` for engines without it: see [`package::js::SIMD_FLAG`]).
    pub simd: bool,
    /// Run cargo (build scripts, proc-macros) in this sandbox: for crates
    /// with operations nobody vetted. Dependencies are fetched first,
    /// outside it.
    pub sandbox: Option<Sandbox>,
    /// Compile through this cache (sccache; see [`crate::compile_cache`]).
    pub compile_cache: Option<CompileCache>,
    /// Refuse to build a workflow without a streaming entry (`stream()`,
    /// `runStream`) with the reason (`braid build --stream`); without it,
    /// such a workflow simply has none.
    pub require_stream: bool,
    /// The largest request body the HTTP function (`Target::Http`)
    /// reads, in bytes (`braid build --http-input-limit`); `None`:
    /// [`braid_schema::wire::DEFAULT_INPUT_LIMIT`].
    pub http_input_limit: Option<u64>,
    /// Make the build's distribution last (`braid build --dist`; see
    /// [`crate::package::dist`]), its npm package under this scope if any.
    pub dist: Option<Dist>,
}

/// What the distribution step is asked for.
#[derive(Debug, Clone, Default)]
pub struct Dist {
    /// The npm package's scope (`@org`), if any.
    pub npm_scope: Option<String>,
}

/// Refuses, before anything is written, what `options` ask of `workflow`
/// that it cannot give: a target an operation does not allow, a stream, a
/// component.
fn check_buildable(workflow: &Workflow, options: &Options) -> Result<(), BuildError> {
    check_targets(workflow, &options.targets)?;
    if options.require_stream {
        crate::codegen::plan::streaming(workflow)
            .map_err(|reason| BuildError::NoStream { workflow: workflow.manifest.name.clone(), reason })?;
    }
    if options.targets.iter().any(|t| matches!(t, Target::Component | Target::Http)) {
        if let Some(Err(reason)) = crate::codegen::plan(workflow).component {
            return Err(BuildError::NoComponent { workflow: workflow.manifest.name.clone(), reason });
        }
    }
    Ok(())
}

/// Generates the crate into `out/crate` and builds it for `options.targets`.
pub fn build(
    workflow: &Workflow,
    generator: &Generator,
    out: &Path,
    options: &Options,
    progress: &mut dyn FnMut(Event),
) -> Result<Report, BuildError> {
    check_buildable(workflow, options)?;
    let tools = if options.targets.iter().any(|t| matches!(t, Target::Js(_) | Target::Steps)) {
        Some(Toolchain::detect(&options.tool_dirs, options.optimize)?)
    } else {
        None
    };
    let crate_dir = out.join("crate");
    let crate_name = crate_name(&workflow.manifest.name);
    let mut sizes = BTreeMap::new();
    let js: Vec<JsTarget> =
        options.targets.iter().filter_map(|t| if let Target::Js(j) = t { Some(*j) } else { None }).collect();
    remove_stale_packages(out, &js)?;
    let total = 1
        + usize::from(options.targets.contains(&Target::Native))
        + usize::from(options.targets.contains(&Target::Nostd))
        + usize::from(options.targets.contains(&Target::Component))
        + usize::from(options.targets.contains(&Target::Http))
        + if options.targets.contains(&Target::Steps) { workflow.operations.len() } else { 0 }
        + usize::from(!js.is_empty())
        + js.len()
        + usize::from(options.dist.is_some());
    let mut steps = Steps { progress, index: 0, total, timings: BTreeMap::new() };

    steps.run("generate", || {
        fsutil::create_dir_all(&crate_dir)?;
        Ok(project::write(workflow, generator, &crate_dir)?)
    })?;
    // Compiled in the staging directory, so the remapped paths in the Wasm
    // build's flags, and with them cargo's artifacts, stay the same from one
    // workflow to the next (see `staging`).
    let staging = Staging::sync(&crate_dir, &options.target_dir)?;
    let manifest_path = staging.dir().join("Cargo.toml");
    if let Some(sandbox) = &options.sandbox {
        sandbox.fetch(&manifest_path)?;
    }
    let rlib_size = |triple: Option<&str>| {
        let dir = triple.map_or_else(|| options.target_dir.clone(), |t| options.target_dir.join(t));
        std::fs::metadata(dir.join("release").join(format!("lib{crate_name}.rlib"))).ok().map(|m| m.len())
    };
    if options.targets.contains(&Target::Native) {
        steps.run("native", || cargo_build(&manifest_path, options, &[], None))?;
        sizes.extend(rlib_size(None).map(|size| ("native.rlib".to_string(), size)));
    }
    if options.targets.contains(&Target::Nostd) {
        steps.run("nostd", || cargo_build(&manifest_path, options, &["--no-default-features"], Some(NOSTD_TRIPLE)))?;
        sizes.extend(rlib_size(Some(NOSTD_TRIPLE)).map(|size| ("nostd.rlib".to_string(), size)));
    }
    // The Wasm builds (npm packages and component) of a workflow whose
    // operations all allow `no_std` link no `std`: its panic machinery was
    // about 4 % of the CID module. Both use braid-support's allocator; each
    // adds its interface (`wasm`: wasm-bindgen; `component`: wit-bindgen).
    let no_std = workflow.supports(Platform::Nostd);
    let features = |interface: &str| -> Vec<String> {
        [interface, "wasm-allocator"].into_iter().chain(no_std.then_some("panic-trap")).map(Into::into).collect()
    };
    let spec = PackageSpec {
        manifest_path: manifest_path.clone(),
        package: crate_name.clone(),
        version: workflow.manifest.version.clone(),
        description: workflow.manifest.description.clone(),
        license: String::new(),
        features: features("wasm"),
        std: !no_std,
        target_dir: options.target_dir.clone(),
        remap: package::js::remaps(None, Some(staging.dir())),
        deny_warnings: options.deny_warnings,
        simd: options.simd,
        sandbox: options.sandbox.clone(),
        compile_cache: options.compile_cache.clone(),
        http_input_limit: None,
        speed: false,
    };
    // The two components: `run` (importing nothing), and the HTTP
    // function (importing WASI 0.2's HTTP interfaces).
    for (target, interface) in [(Target::Component, "component"), (Target::Http, "http")] {
        let dir = out.join(interface);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(fsutil::at(&dir))?;
        }
        if options.targets.contains(&target) {
            let http_input_limit = if target == Target::Http { options.http_input_limit } else { None };
            let spec = PackageSpec { features: features(interface), http_input_limit, speed: true, ..spec.clone() };
            let size = steps.run(interface, || write_component(&spec, &crate_dir, &dir))?;
            sizes.insert(format!("{interface}.wasm"), size);
        }
    }
    let steps_dir = out.join(STEPS_DIR);
    if steps_dir.exists() {
        std::fs::remove_dir_all(&steps_dir).map_err(fsutil::at(&steps_dir))?;
    }
    if let (Some(tools), true) = (&tools, options.targets.contains(&Target::Steps)) {
        // Each operation alone, in the workflow crate's workspace.
        for op in &workflow.operations {
            let name = op.name();
            let op_spec = spec.step(op);
            let pkg = steps.run(&format!("steps {name}"), || {
                let wasm = package::js::compile(&op_spec)?;
                Ok(package::js::package(&op_spec, &wasm, JsTarget::Web, &steps_dir.join(name), tools)?)
            })?;
            sizes.insert(format!("steps-{name}.wasm"), pkg.wasm_bytes);
        }
    }
    if let (Some(tools), false) = (&tools, js.is_empty()) {
        let wasm = steps.run("wasm", || Ok(package::js::compile(&spec)?))?;
        for target in &js {
            let dir = out.join("pkg").join(target.name());
            let pkg = steps.run(target.name(), || Ok(package::js::package(&spec, &wasm, *target, &dir, tools)?))?;
            sizes.insert(format!("{}.wasm", target.name()), pkg.wasm_bytes);
        }
    }
    let dist = match &options.dist {
        Some(asked) => Some(steps.run("dist", || {
            let scope = asked.npm_scope.as_deref();
            Ok(package::dist::dist(out, workflow, &crate_name, &options.targets, scope)?)
        })?),
        None => None,
    };
    let report = Report {
        workflow: workflow.manifest.name.clone(),
        id: workflow.id.clone(),
        crate_name,
        targets: options.targets.clone(),
        operations: workflow.crate_versions(),
        timings_ms: steps.timings,
        sizes_bytes: sizes,
        artifacts: Report::artifacts_in(out)?,
        dist,
        http_input_limit_bytes: options
            .targets
            .contains(&Target::Http)
            .then(|| options.http_input_limit.unwrap_or(braid_schema::wire::DEFAULT_INPUT_LIMIT as u64)),
    };
    report.write(out)?;
    Ok(report)
}

/// The steps of one build, each reported as it starts and ends, and timed.
struct Steps<'a> {
    progress: &'a mut dyn FnMut(Event),
    index: usize,
    total: usize,
    timings: BTreeMap<String, u64>,
}

impl Steps<'_> {
    fn run<T>(&mut self, name: &str, step: impl FnOnce() -> Result<T, BuildError>) -> Result<T, BuildError> {
        self.index += 1;
        (self.progress)(Event::Start { index: self.index, total: self.total, step: name.to_string() });
        let start = Instant::now();
        let value = step()?;
        let ms = start.elapsed().as_millis() as u64;
        (self.progress)(Event::Done { step: name.to_string(), ms });
        self.timings.insert(name.to_string(), ms);
        Ok(value)
    }
}

/// Compiles a component into `dir` as `<crate>.wasm`, with the WIT world
/// of the workflow beside it (`world.wit`); returns the component's size.
///
/// The core module is plain Wasm (wasm32-unknown-unknown). With the
/// `component` feature it imports nothing, so the component imports no
/// WASI: it can reach nothing outside itself, and a host makes one core
/// instance a run where a wasm32-wasip2 build made four (the program,
/// WASI's preview-1 adapter, their shims); what that saves per run is in
/// the contributor guide's benchmarks. With `http`, it imports only what
/// its wasi:http handler calls (the request, the response, their streams).
fn write_component(spec: &PackageSpec, crate_dir: &Path, dir: &Path) -> Result<u64, BuildError> {
    let module = fsutil::read(&package::js::compile_module(spec, true)?)?;
    let wasm = wit_component::ComponentEncoder::default()
        .module(&module)
        .and_then(|encoder| encoder.validate(true).encode())
        .map_err(|e| BuildError::Component { workflow: spec.package.clone(), reason: format!("{e:#}") })?;
    fsutil::create_dir_all(dir)?;
    fsutil::write(&dir.join(format!("{}.wasm", spec.package)), &wasm)?;
    fsutil::write(&dir.join("world.wit"), &fsutil::read(&crate_dir.join(crate::codegen::WORLD_WIT))?)?;
    Ok(wasm.len() as u64)
}

/// `cargo build --release` of the crate at `manifest_path`, for `target`
/// (the host's when none), as `options` say: warnings, cache, sandbox.
fn cargo_build(manifest_path: &Path, options: &Options, args: &[&str], target: Option<&str>) -> Result<(), BuildError> {
    let mut cmd = process::cargo();
    cmd.arg("build").arg("--quiet").arg("--release").arg("--manifest-path").arg(manifest_path);
    cmd.arg("--target-dir").arg(&options.target_dir).args(args);
    if let Some(t) = target {
        cmd.args(["--target", t]);
    }
    if options.deny_warnings {
        cmd.env("RUSTFLAGS", "-Dwarnings");
    }
    if let Some(cache) = &options.compile_cache {
        cache.apply(&mut cmd);
    }
    Sandbox::output_in(options.sandbox.as_ref(), &mut cmd)?;
    Ok(())
}

/// Removes the packages an earlier build into `out` made for JS targets
/// this one does not build (`pkg/<target>`, and `pkg/` once empty), so that
/// `out` holds what its report lists.
fn remove_stale_packages(out: &Path, js: &[JsTarget]) -> Result<(), FsError> {
    let pkg = out.join("pkg");
    for target in JsTarget::ALL.iter().filter(|t| !js.contains(t)) {
        let dir = pkg.join(target.name());
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(fsutil::at(&dir))?;
        }
    }
    if js.is_empty() && pkg.is_dir() && std::fs::read_dir(&pkg).map_err(fsutil::at(&pkg))?.next().is_none() {
        std::fs::remove_dir(&pkg).map_err(fsutil::at(&pkg))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_with_fewer_targets_removes_the_packages_it_no_longer_makes() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().to_path_buf();
        for t in ["node", "web", "bundler"] {
            std::fs::create_dir_all(out.join("pkg").join(t)).unwrap();
            std::fs::write(out.join("pkg").join(t).join("x.js"), "").unwrap();
        }
        remove_stale_packages(&out, &[JsTarget::Web]).unwrap();
        assert!(!out.join("pkg/node").exists() && !out.join("pkg/bundler").exists());
        assert!(out.join("pkg/web/x.js").exists(), "the target being built is left to its packaging");
        remove_stale_packages(&out, &[]).unwrap();
        assert!(!out.join("pkg").exists(), "a native-only build leaves no pkg/");
        remove_stale_packages(&out, &[]).unwrap();
        std::fs::remove_dir_all(&out).unwrap();
    }
}
