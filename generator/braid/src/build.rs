//! Building a generated crate for its targets: native (`cargo build
//! --release`), `no_std` (`thumbv7em-none-eabihf`, default features off) and
//! the npm packages (node, web, bundler) through [`crate::wasm_pkg`]. All
//! builds share one target directory and compile in its staging directory
//! ([`crate::staging`]), so a new workflow over operations already built
//! compiles only itself. Writes `report.json` with targets,
//! timings, sizes and the CID of every artifact.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use braid_schema::Platform;
use serde::Serialize;

use crate::codegen::{crate_name, Generator};
use crate::manifest::Workflow;
use crate::project::{self, GenerateError};
use crate::staging::Staging;
use crate::vendor::Sources;
use crate::wasm_pkg::{self, JsTarget, PackageError as PkgError, PackageSpec, Toolchain};

/// What `braid build` can produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    Native,
    Nostd,
    Js(JsTarget),
}

impl Target {
    pub const ALL: [Target; 5] = [
        Target::Native,
        Target::Nostd,
        Target::Js(JsTarget::Node),
        Target::Js(JsTarget::Web),
        Target::Js(JsTarget::Bundler),
    ];

    pub fn name(self) -> &'static str {
        match self {
            Target::Native => "native",
            Target::Nostd => "nostd",
            Target::Js(t) => t.name(),
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The operation-manifest target this needs.
    fn requires(self) -> Platform {
        match self {
            Target::Native => Platform::Native,
            Target::Nostd => Platform::Nostd,
            Target::Js(_) => Platform::Wasm,
        }
    }
}

/// The bare-metal target `nostd` builds for.
pub const NOSTD_TRIPLE: &str = "thumbv7em-none-eabihf";

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("target `{target}` is not possible for workflow {workflow}: {reason}")]
    Unsupported { target: String, workflow: String, reason: String },
    #[error(transparent)]
    Generate(#[from] GenerateError),
    #[error(transparent)]
    Package(#[from] PkgError),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BuildError + '_ {
    move |source| BuildError::Io { path: path.to_path_buf(), source }
}

/// The targets `workflow` allows, for `--targets` by default.
pub fn default_targets(workflow: &Workflow) -> Vec<Target> {
    Target::ALL.into_iter().filter(|t| workflow.supports(t.requires().as_str())).collect()
}

/// Refuses targets an operation does not allow, naming the operation.
pub fn check_targets(workflow: &Workflow, targets: &[Target]) -> Result<(), BuildError> {
    for t in targets {
        if let Some(op) = workflow.operations.iter().find(|op| !op.manifest.supports(t.requires())) {
            return Err(BuildError::Unsupported {
                target: t.name().into(),
                workflow: workflow.manifest.name.clone(),
                reason: format!(
                    "operation {} has no {} build (its targets: {})",
                    op.info.name,
                    t.requires(),
                    op.manifest.targets.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(", ")
                ),
            });
        }
    }
    Ok(())
}

/// Progress of a build, for a progress bar or log lines.
#[derive(Debug, Clone)]
pub enum Event<'a> {
    /// Step `index` of `total` starts.
    Start { index: usize, total: usize, step: &'a str },
    /// A step finished after `ms` milliseconds.
    Done { step: &'a str, ms: u64 },
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
}

/// `report.json`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Report {
    pub workflow: String,
    pub id: String,
    pub crate_name: String,
    pub targets: Vec<String>,
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

/// Generates the crate into `out/crate` and builds it for `options.targets`.
pub fn build(
    workflow: &Workflow,
    generator: &Generator,
    sources: &Sources,
    out: &Path,
    options: &Options,
    progress: &mut dyn FnMut(Event<'_>),
) -> Result<Report, BuildError> {
    check_targets(workflow, &options.targets)?;
    let tools = if options.targets.iter().any(|t| matches!(t, Target::Js(_))) {
        Some(Toolchain::detect(&options.tool_dirs)?)
    } else {
        None
    };
    let crate_dir = out.join("crate");
    let crate_name = crate_name(&workflow.manifest.name);
    let mut timings = BTreeMap::new();
    let mut sizes = BTreeMap::new();
    let js: Vec<JsTarget> =
        options.targets.iter().filter_map(|t| if let Target::Js(j) = t { Some(*j) } else { None }).collect();
    let total = 1
        + usize::from(options.targets.contains(&Target::Native))
        + usize::from(options.targets.contains(&Target::Nostd))
        + usize::from(!js.is_empty())
        + js.len();
    let mut index = 0;
    let mut step = |name: &str, f: &mut dyn FnMut() -> Result<(), BuildError>| -> Result<(), BuildError> {
        index += 1;
        progress(Event::Start { index, total, step: name });
        let start = Instant::now();
        f()?;
        let ms = start.elapsed().as_millis() as u64;
        progress(Event::Done { step: name, ms });
        timings.insert(name.to_string(), ms);
        Ok(())
    };

    step("generate", &mut || {
        std::fs::create_dir_all(&crate_dir).map_err(io(&crate_dir))?;
        project::write(workflow, generator, sources, &crate_dir)?;
        Ok(())
    })?;
    // Compiled in the staging directory, so the remapped paths in the Wasm
    // build's flags, and with them cargo's artifacts, stay the same from one
    // workflow to the next (see `staging`).
    let staging = Staging::sync(&crate_dir, &options.target_dir)
        .map_err(|e| BuildError::Io { path: e.path, source: e.source })?;
    let manifest_path = staging.dir().join("Cargo.toml");
    let cargo = |args: &[&str], target: Option<&str>| -> Result<(), BuildError> {
        let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        cmd.arg("build").arg("--quiet").arg("--release").arg("--manifest-path").arg(&manifest_path);
        cmd.arg("--target-dir").arg(&options.target_dir).args(args);
        if let Some(t) = target {
            cmd.args(["--target", t]);
        }
        if options.deny_warnings {
            cmd.env("RUSTFLAGS", "-Dwarnings");
        }
        run(&mut cmd)
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
    if let Some(tools) = &tools {
        let spec = PackageSpec {
            manifest_path: manifest_path.clone(),
            package: crate_name.clone(),
            version: workflow.manifest.version.clone(),
            description: workflow.manifest.description.clone(),
            license: String::new(),
            features: vec!["wasm".into(), "wasm-allocator".into()],
            target_dir: options.target_dir.clone(),
            remap: remaps(sources.root(), Some(staging.dir())),
            deny_warnings: options.deny_warnings,
        };
        let mut wasm = PathBuf::new();
        step("wasm", &mut || {
            wasm = wasm_pkg::compile(&spec)?;
            Ok(())
        })?;
        for target in &js {
            let dir = out.join("pkg").join(target.name());
            let mut built = None;
            step(target.name(), &mut || {
                built = Some(wasm_pkg::package(&spec, &wasm, *target, &dir, tools)?);
                Ok(())
            })?;
            if let Some(pkg) = built {
                sizes.insert(format!("{}.wasm", target.name()), pkg.wasm_bytes);
            }
        }
    }
    let mut artifacts = BTreeMap::new();
    for rel in ["crate/Cargo.toml", "crate/Cargo.lock", "crate/src/lib.rs"] {
        let path = out.join(rel);
        let bytes = std::fs::read(&path).map_err(io(&path))?;
        artifacts.insert(rel.to_string(), braid_schema::content_id(&bytes));
    }
    let pkg = out.join("pkg");
    if pkg.is_dir() {
        hash_tree(&pkg, out, &mut artifacts)?;
    }
    let report = Report {
        workflow: workflow.manifest.name.clone(),
        id: workflow.id.clone(),
        crate_name,
        targets: options.targets.iter().map(|t| t.name().to_string()).collect(),
        timings_ms: timings,
        sizes_bytes: sizes,
        artifacts,
    };
    let path = out.join("report.json");
    let text = serde_json::to_string_pretty(&report).expect("a report serializes") + "\n";
    std::fs::write(&path, text).map_err(io(&path))?;
    Ok(report)
}

/// Absolute paths that must not end up in the `.wasm`: cargo's home, the
/// Braid repository and, when building a generated crate, its directory.
/// rustc applies the last matching prefix, so the most specific comes last.
pub fn remaps(braid_root: &Path, crate_dir: Option<&Path>) -> Vec<(PathBuf, String)> {
    let mut remap = Vec::new();
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    if let Some(home) = cargo_home {
        remap.push((home, "/cargo".to_string()));
    }
    remap.push((braid_root.to_path_buf(), "/braid".to_string()));
    if let Some(dir) = crate_dir {
        remap.push((dir.canonicalize().unwrap_or(dir.to_path_buf()), "/wf".to_string()));
    }
    remap
}

fn hash_tree(dir: &Path, base: &Path, out: &mut BTreeMap<String, String>) -> Result<(), BuildError> {
    let mut entries: Vec<_> = std::fs::read_dir(dir).map_err(io(dir))?.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            hash_tree(&path, base, out)?;
        } else {
            let bytes = std::fs::read(&path).map_err(io(&path))?;
            let rel = path.strip_prefix(base).unwrap_or(&path).to_string_lossy().replace('\\', "/");
            out.insert(rel, braid_schema::content_id(&bytes));
        }
    }
    Ok(())
}

fn run(cmd: &mut Command) -> Result<(), BuildError> {
    crate::process::output(cmd).map(drop).map_err(|e| BuildError::Package(e.into()))
}
