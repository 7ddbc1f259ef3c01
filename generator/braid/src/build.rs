//! Building a generated crate for its targets: native (`cargo build
//! --release`), `no_std` (`thumbv7em-none-eabihf`, default features off),
//! the npm packages (node, web, bundler) through [`crate::package::js`], and a
//! Wasm component (`wasm32-wasip2`, with its WIT world). All
//! builds share one target directory and compile in its staging directory
//! ([`crate::staging`]), so a new workflow over operations already built
//! compiles only itself. Writes `report.json` with targets,
//! timings, sizes and the CID of every artifact.
//!
//! Also the protocol between `braid build` and whoever runs it: [`Event`],
//! one JSON object per line with `braid build --events json` (what the
//! publish service reads), and [`build_key`], the identity of a build
//! (manifest, targets, operations, toolchain) that the service
//! deduplicates by.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::codegen::{crate_name, Generator};
use crate::compile_cache::CompileCache;
use crate::fsutil::{self, FsError};
use crate::manifest::Workflow;
use crate::package;
use crate::package::js::{PackageError as PkgError, PackageSpec, Toolchain};
use crate::process::{self, ProcessError};
use crate::project::{self, GenerateError};
use crate::sandbox::Sandbox;
use crate::staging::Staging;
use crate::target::{JsTarget, Target, COMPONENT_TRIPLE, NOSTD_TRIPLE};

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("target `{target}` is not possible for workflow {workflow}: {reason}")]
    Unsupported { target: String, workflow: String, reason: String },
    #[error("workflow {workflow} has no component: {reason}")]
    NoComponent { workflow: String, reason: String },
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
}

/// The targets `workflow` allows, for `--targets` by default: all but
/// `component`, which is asked for by name.
pub fn default_targets(workflow: &Workflow) -> Vec<Target> {
    Target::ALL.into_iter().filter(|t| *t != Target::Component && workflow.supports(t.requires())).collect()
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

/// The identity of a build: the CIDv1 (raw, blake3, base32) of the
/// canonical JSON of `{manifest, targets, operations, toolchain}`: the
/// manifest canonicalized (key order and white space do not matter), the
/// target names sorted without repeats, each operation's version id by
/// name, and `toolchain`, which names whatever else makes the output
/// differ (Braid's and the compiler's versions). Two builds with the same
/// key give the same artifacts, so the publish service builds a key once.
/// Not the workflow id ([`Workflow::id`], the manifest's CID alone): one
/// workflow has a build per set of targets and toolchain.
pub fn build_key(workflow: &Workflow, targets: &[Target], toolchain: &str) -> String {
    #[derive(Serialize)]
    struct BuildKey<'a> {
        manifest: &'a crate::manifest::WorkflowManifest,
        targets: Vec<Target>,
        operations: BTreeMap<&'a str, &'a str>,
        toolchain: &'a str,
    }
    let mut targets = targets.to_vec();
    targets.sort();
    targets.dedup();
    let operations = workflow.crates.iter().map(|op| (op.name(), op.version_id.as_str())).collect();
    let key = serde_json::to_value(BuildKey { manifest: &workflow.manifest, targets, operations, toolchain })
        .expect("a build key serializes");
    crate::content_id(braid_schema::json::canonical(&key).as_bytes())
}

/// What a build reports while it runs, for a progress bar, log lines or a
/// program driving `braid build --events json`: one JSON object per line,
/// tagged by `event` (`{"event":"start","index":1,"total":4,"step":"generate"}`).
/// [`build`] reports `start` and `done`; the command reports how it ended,
/// `report` or `failed`, last. A reader should take a line that does not
/// parse as an [`Event`] for log text ([`Event::parse_line`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// Step `index` (from 1) of `total` starts: `generate`, `native`,
    /// `nostd`, `wasm`, then one per JS target (`node`, `web`, `bundler`).
    Start { index: usize, total: usize, step: String },
    /// A step finished after `ms` milliseconds.
    Done { step: String, ms: u64 },
    /// The build succeeded: what `report.json` holds.
    Report { report: Report },
    /// The build failed: the error, as the command prints it.
    Failed { error: String },
}

impl Event {
    /// The event as one line of JSON, without the newline.
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).expect("an event serializes")
    }

    /// The event a line holds, or `None` when the line is something else
    /// (log text).
    pub fn parse_line(line: &str) -> Option<Event> {
        let line = line.trim_end();
        if !line.starts_with('{') {
            return None;
        }
        serde_json::from_str(line).ok()
    }
}

/// The event as a human reads it in a log: `[2/4] native`, `native done in
/// 812 ms`.
impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Event::Start { index, total, step } => write!(f, "[{index}/{total}] {step}"),
            Event::Done { step, ms } => write!(f, "      {step} done in {ms} ms"),
            Event::Report { report } => write!(
                f,
                "built {} for {} in {} ms",
                report.crate_name,
                crate::join(&report.targets, ", "),
                report.timings_ms.values().sum::<u64>()
            ),
            Event::Failed { error } => write!(f, "error: {error}"),
        }
    }
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
}

/// `report.json`, and the [`Event::Report`] of `braid build --events json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Report {
    /// The workflow's name.
    pub workflow: String,
    /// The workflow id: CIDv1 of the manifest's canonical JSON.
    pub id: String,
    pub crate_name: String,
    pub targets: Vec<Target>,
    pub timings_ms: BTreeMap<String, u64>,
    pub sizes_bytes: BTreeMap<String, u64>,
    /// Every file under `pkg/` and the crate's own files, by path relative
    /// to the output directory, with its CIDv1 (raw, blake3, base32).
    pub artifacts: BTreeMap<String, String>,
}

/// The default shared target directory: `$BRAID_TARGET_DIR`, else
/// `$XDG_CACHE_HOME/braid/target`, else `~/.cache/braid/target`.
pub fn default_target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("BRAID_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("braid/target")
}

/// Where `braid run` keeps the crates and runners it builds next to the
/// cargo target directory `target_dir` (their artifacts go into it).
pub fn run_dir(target_dir: &Path) -> PathBuf {
    target_dir.parent().unwrap_or(target_dir).join("run")
}

/// Everything Braid caches for builds into `target_dir`, for `braid cache`
/// and `braid clean`: the target directory and [`run_dir`].
pub fn cache_dirs(target_dir: &Path) -> [PathBuf; 2] {
    [target_dir.to_path_buf(), run_dir(target_dir)]
}

/// The bytes of the files under `dir` (0 when it does not exist).
pub fn disk_usage(dir: &Path) -> Result<u64, FsError> {
    if !dir.exists() {
        return Ok(0);
    }
    let mut total = 0;
    for rel in fsutil::walk(dir)? {
        let path = dir.join(rel);
        total += std::fs::symlink_metadata(&path).map_err(fsutil::at(&path))?.len();
    }
    Ok(total)
}

/// Generates the crate into `out/crate` and builds it for `options.targets`.
pub fn build(
    workflow: &Workflow,
    generator: &Generator,
    out: &Path,
    options: &Options,
    progress: &mut dyn FnMut(Event),
) -> Result<Report, BuildError> {
    check_targets(workflow, &options.targets)?;
    if options.require_stream {
        crate::codegen::plan::streaming(workflow)
            .map_err(|reason| BuildError::NoStream { workflow: workflow.manifest.name.clone(), reason })?;
    }
    if options.targets.contains(&Target::Component) {
        if let Some(Err(reason)) = crate::codegen::plan(workflow).component {
            return Err(BuildError::NoComponent { workflow: workflow.manifest.name.clone(), reason });
        }
    }
    let tools = if options.targets.iter().any(|t| matches!(t, Target::Js(_))) {
        Some(Toolchain::detect(&options.tool_dirs, options.optimize)?)
    } else {
        None
    };
    let crate_dir = out.join("crate");
    let crate_name = crate_name(&workflow.manifest.name);
    let mut timings = BTreeMap::new();
    let mut sizes = BTreeMap::new();
    let js: Vec<JsTarget> =
        options.targets.iter().filter_map(|t| if let Target::Js(j) = t { Some(*j) } else { None }).collect();
    remove_stale_packages(out, &js)?;
    let total = 1
        + usize::from(options.targets.contains(&Target::Native))
        + usize::from(options.targets.contains(&Target::Nostd))
        + usize::from(options.targets.contains(&Target::Component))
        + usize::from(!js.is_empty())
        + js.len();
    let mut index = 0;
    let mut step = |name: &str, f: &mut dyn FnMut() -> Result<(), BuildError>| -> Result<(), BuildError> {
        index += 1;
        progress(Event::Start { index, total, step: name.to_string() });
        let start = Instant::now();
        f()?;
        let ms = start.elapsed().as_millis() as u64;
        progress(Event::Done { step: name.to_string(), ms });
        timings.insert(name.to_string(), ms);
        Ok(())
    };

    step("generate", &mut || {
        fsutil::create_dir_all(&crate_dir)?;
        project::write(workflow, generator, &crate_dir)?;
        Ok(())
    })?;
    // Compiled in the staging directory, so the remapped paths in the Wasm
    // build's flags, and with them cargo's artifacts, stay the same from one
    // workflow to the next (see `staging`).
    let staging = Staging::sync(&crate_dir, &options.target_dir)?;
    let manifest_path = staging.dir().join("Cargo.toml");
    if let Some(sandbox) = &options.sandbox {
        sandbox.fetch(&manifest_path)?;
    }
    let cargo = |args: &[&str], target: Option<&str>| -> Result<(), BuildError> {
        let mut cmd = process::cargo();
        cmd.arg("build").arg("--quiet").arg("--release").arg("--manifest-path").arg(&manifest_path);
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
    };
    if options.targets.contains(&Target::Native) {
        step("native", &mut || cargo(&[], None))?;
        let rlib = options.target_dir.join("release").join(format!("lib{crate_name}.rlib"));
        if let Ok(meta) = std::fs::metadata(&rlib) {
            sizes.insert("native.rlib".to_string(), meta.len());
        }
    }
    if options.targets.contains(&Target::Nostd) {
        step("nostd", &mut || cargo(&["--no-default-features"], Some(NOSTD_TRIPLE)))?;
        let rlib = options.target_dir.join(NOSTD_TRIPLE).join("release").join(format!("lib{crate_name}.rlib"));
        if let Ok(meta) = std::fs::metadata(&rlib) {
            sizes.insert("nostd.rlib".to_string(), meta.len());
        }
    }
    let spec = PackageSpec {
        manifest_path: manifest_path.clone(),
        package: crate_name.clone(),
        version: workflow.manifest.version.clone(),
        description: workflow.manifest.description.clone(),
        license: String::new(),
        features: vec!["wasm".into(), "wasm-allocator".into()],
        target_dir: options.target_dir.clone(),
        remap: package::js::remaps(None, Some(staging.dir())),
        deny_warnings: options.deny_warnings,
        sandbox: options.sandbox.clone(),
        compile_cache: options.compile_cache.clone(),
    };
    let component_dir = out.join("component");
    if component_dir.exists() {
        std::fs::remove_dir_all(&component_dir).map_err(fsutil::at(&component_dir))?;
    }
    if options.targets.contains(&Target::Component) {
        let spec = PackageSpec { features: vec!["component".into()], ..spec.clone() };
        step("component", &mut || {
            let wasm = package::js::compile_for(&spec, COMPONENT_TRIPLE, true)?;
            fsutil::create_dir_all(&component_dir)?;
            fsutil::write(&component_dir.join(format!("{crate_name}.wasm")), &fsutil::read(&wasm)?)?;
            fsutil::write(
                &component_dir.join("world.wit"),
                &fsutil::read(&crate_dir.join(crate::codegen::WORLD_WIT))?,
            )?;
            Ok(())
        })?;
        sizes.insert(
            "component.wasm".to_string(),
            fsutil::read(&component_dir.join(format!("{crate_name}.wasm")))?.len() as u64,
        );
    }
    if let Some(tools) = &tools {
        let mut wasm = PathBuf::new();
        step("wasm", &mut || {
            wasm = package::js::compile(&spec)?;
            Ok(())
        })?;
        for target in &js {
            let dir = out.join("pkg").join(target.name());
            let mut built = None;
            step(target.name(), &mut || {
                built = Some(package::js::package(&spec, &wasm, *target, &dir, tools)?);
                Ok(())
            })?;
            if let Some(pkg) = built {
                sizes.insert(format!("{}.wasm", target.name()), pkg.wasm_bytes);
            }
        }
    }
    let mut artifacts = BTreeMap::new();
    for rel in ["crate/Cargo.toml", "crate/Cargo.lock", "crate/src/lib.rs"] {
        artifacts.insert(rel.to_string(), braid_schema::content_id(&fsutil::read(&out.join(rel))?));
    }
    for dir in ["pkg", "component"] {
        let path = out.join(dir);
        if path.is_dir() {
            for rel in fsutil::walk(&path)? {
                let name = Path::new(dir).join(&rel).to_string_lossy().replace('\\', "/");
                artifacts.insert(name, braid_schema::content_id(&fsutil::read(&path.join(&rel))?));
            }
        }
    }
    let report = Report {
        workflow: workflow.manifest.name.clone(),
        id: workflow.id.clone(),
        crate_name,
        targets: options.targets.clone(),
        timings_ms: timings,
        sizes_bytes: sizes,
        artifacts,
    };
    let path = out.join("report.json");
    let text = serde_json::to_string_pretty(&report).expect("a report serializes") + "\n";
    fsutil::write(&path, text.as_bytes())?;
    Ok(report)
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
    use crate::manifest::validate;
    use crate::registry::Registry;

    const CID: &str = r#"{"name":"k","version":"0.1.0","segments":[{"inputs":[-1],"sequence":[{"operation":"op_multihash"},{"operation":"op_cid"}]}]}"#;

    fn workflow(text: &str) -> Workflow {
        validate(text, &Registry::builtin()).expect("a valid manifest")
    }

    #[test]
    fn a_build_with_fewer_targets_removes_the_packages_it_no_longer_makes() {
        let out = std::env::temp_dir().join(format!("braid-stale-{}", uuid::Uuid::new_v4()));
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

    #[test]
    fn events_are_tagged_json_lines_and_read_back() {
        let start = Event::Start { index: 1, total: 4, step: "generate".into() };
        assert_eq!(start.to_json_line(), r#"{"event":"start","index":1,"total":4,"step":"generate"}"#);
        let done = Event::Done { step: "native".into(), ms: 812 };
        assert_eq!(done.to_json_line(), r#"{"event":"done","step":"native","ms":812}"#);
        let report = Report {
            workflow: "k".into(),
            id: "bafkr4i".into(),
            crate_name: "wf_k".into(),
            targets: vec![Target::Native],
            timings_ms: [("generate".to_string(), 3), ("native".to_string(), 5)].into(),
            sizes_bytes: BTreeMap::new(),
            artifacts: [("crate/src/lib.rs".to_string(), "bafkr4ix".to_string())].into(),
        };
        let failed = Event::Failed { error: "it broke\nhere".into() };
        for event in [start, done, Event::Report { report }, failed] {
            let line = event.to_json_line();
            assert!(!line.contains('\n'), "{line}");
            assert_eq!(Event::parse_line(&format!("{line}\n")), Some(event));
        }
        assert_eq!(Event::Start { index: 2, total: 4, step: "native".into() }.to_string(), "[2/4] native");
        for log in ["[1/4] generate", "   Compiling x v0.1.0", "{\"event\":\"nope\"}", "{\"event\":\"done\"}", "{"] {
            assert_eq!(Event::parse_line(log), None, "{log}");
        }
    }

    #[test]
    fn the_build_key_is_the_manifest_targets_operations_and_toolchain() {
        let wf = workflow(CID);
        let key = build_key(&wf, &[Target::Native, Target::Js(JsTarget::Node)], "t1");
        assert!(key.starts_with("bafkr4i") && key.len() == 59, "{key}");
        assert_ne!(key, wf.id, "a build key is not the workflow id");
        // Key order, white space and target order do not matter.
        let reordered = r#"{ "segments": [{"sequence":[{"operation":"op_multihash"},{"operation":"op_cid"}],"inputs":[-1]}],
            "version": "0.1.0", "name": "k" }"#;
        let same = [Target::Js(JsTarget::Node), Target::Native, Target::Native];
        assert_eq!(build_key(&workflow(reordered), &same, "t1"), key);
        // Anything else does.
        assert_ne!(build_key(&wf, &[Target::Native], "t1"), key);
        assert_ne!(build_key(&wf, &[Target::Native, Target::Js(JsTarget::Node)], "t2"), key);
        let other = workflow(&CID.replace("\"k\"", "\"k2\""));
        assert_ne!(build_key(&other, &[Target::Native, Target::Js(JsTarget::Node)], "t1"), key);
    }
}
