//! The `braid` command line: a thin layer over the `braid` library.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context as _};
use braid::build::{self, Target};
use braid::codegen::{self, Generator};
use braid::manifest::{validate_bytes, Workflow, MAX_MANIFEST_BYTES};
use braid::project;
use braid::registry::Registry;
use braid::runner;
use braid::vendor::Sources;
use braid::wasm_pkg::{self, JsTarget, PackageSpec, Toolchain};
use clap::{Parser, Subcommand};

/// Braid compiles workflow manifests into one fused Rust crate.
#[derive(Parser)]
#[command(name = "braid", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a workflow manifest: exit 0 if valid, 1 with diagnostics if not, 2 on usage or I/O errors.
    Validate {
        manifest: PathBuf,
        /// Print {"valid": bool, "diagnostics": [...]} as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write the crate generated from a workflow manifest into DIR.
    Generate {
        manifest: PathBuf,
        #[arg(short, long)]
        out: PathBuf,
    },
    /// List the operations in the registry with versions and version ids.
    Ops {
        /// Print JSON (an array of {name, version, version_id, manifest}).
        #[arg(long, conflicts_with = "names")]
        json: bool,
        /// Print only the names, one per line.
        #[arg(long)]
        names: bool,
        /// Only operations that run on this target: native, nostd or wasm.
        #[arg(long, value_parser = ["native", "nostd", "wasm"])]
        supports: Option<String>,
    },
    /// Generate and build a workflow: DIR/crate, DIR/pkg/{node,web,bundler}, DIR/report.json.
    Build {
        manifest: PathBuf,
        #[arg(short, long)]
        out: PathBuf,
        /// Comma-separated: native, nostd, node, web, bundler (default: every target the operations allow).
        #[arg(long, value_delimiter = ',')]
        targets: Vec<String>,
        /// Cargo target directory shared between builds (default: $BRAID_TARGET_DIR or ~/.cache/braid/target).
        #[arg(long)]
        target_dir: Option<PathBuf>,
    },
    /// Build a workflow natively (cached) and run it; each --input FILE is one external input, in order.
    Run {
        manifest: PathBuf,
        /// A file per external input: its bytes (Bytes, Multihash) or its text (String, Cid, U64, Bool).
        #[arg(long = "input", value_name = "FILE")]
        inputs: Vec<PathBuf>,
        /// Print how long the workflow took (on stderr).
        #[arg(long)]
        time: bool,
        #[arg(long)]
        target_dir: Option<PathBuf>,
    },
    /// Run the publish service: an HTTP API that validates, generates and builds workflows.
    Serve {
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: std::net::SocketAddr,
        /// Data directory: SQLite database, artifacts, build directories.
        #[arg(long, default_value = "braid-data")]
        data: PathBuf,
        /// An API key for writes (repeatable); also BRAID_API_KEYS=k1,k2. Without any, one is generated and printed.
        #[arg(long = "api-key", value_name = "KEY")]
        api_keys: Vec<String>,
        /// Concurrent builds (default: half the cores, at least 1). Builds that
        /// share a target directory take turns compiling: cargo locks it, and
        /// so does Braid's staging directory in it.
        #[arg(long)]
        workers: Option<usize>,
        /// Seconds a build may take before it is stopped.
        #[arg(long, default_value_t = 1800)]
        build_timeout: u64,
        /// Largest request body, in bytes (413 beyond).
        #[arg(long, default_value_t = 2 << 20)]
        max_body: usize,
        #[arg(long)]
        target_dir: Option<PathBuf>,
        /// CPU-heavy requests (validate, generate, publish, artifact reads) run at once (default: one per core).
        #[arg(long)]
        max_checks: Option<usize>,
        /// Heavy requests that may wait for a free slot; beyond, 503 with Retry-After.
        #[arg(long, default_value_t = 64)]
        check_queue: usize,
        /// Largest generated crate, all files together, in bytes (422 beyond).
        #[arg(long, default_value_t = 16 << 20)]
        max_crate_bytes: usize,
        /// Seconds from a request's first byte to the end of its headers (the connection is closed after).
        #[arg(long, default_value_t = 10)]
        header_timeout: u64,
        /// Seconds to send a whole request body (408 after).
        #[arg(long, default_value_t = 30)]
        body_timeout: u64,
        /// Seconds a connection may wait with no byte moving: no new request, or a response the client does not read.
        #[arg(long, default_value_t = 60)]
        idle_timeout: u64,
        /// Open connections at most; more wait to be accepted.
        #[arg(long, default_value_t = 512)]
        max_connections: usize,
    },
    /// Build operations alone as npm packages (their `wasm` feature).
    OpPackage {
        /// Operation names, e.g. op_multihash.
        #[arg(required = true)]
        names: Vec<String>,
        /// Comma-separated JS targets: node, web, bundler.
        #[arg(long, default_value = "node", value_delimiter = ',')]
        targets: Vec<String>,
        /// Output directory: DIR/<op>/<target>/.
        #[arg(short, long)]
        out: PathBuf,
        /// The Braid repository (default: the one this binary was built from).
        #[arg(long)]
        root: Option<PathBuf>,
    },
}

/// A manifest that failed validation: diagnostics were printed; exit 1.
#[derive(Debug)]
struct Invalid;

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("invalid manifest")
    }
}

impl std::error::Error for Invalid {}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is::<Invalid>() => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Reads and validates a manifest, printing diagnostics like a compiler.
fn load(path: &Path, registry: &Registry) -> anyhow::Result<Workflow> {
    let bytes = read_manifest(path)?;
    validate_bytes(&bytes, registry).map_err(|diagnostics| {
        let shown = path.display().to_string();
        for d in &diagnostics {
            eprint!("{}", d.render(&shown, std::str::from_utf8(&bytes).ok()));
        }
        eprintln!("{shown}: {} error(s)", diagnostics.len());
        anyhow::Error::new(Invalid)
    })
}

/// Reads a manifest file: at most one byte more than a manifest may have
/// (so `/dev/zero` or a huge file costs nothing), left for the validator to
/// judge (size, UTF-8), like any other manifest problem.
fn read_manifest(path: &Path) -> anyhow::Result<Vec<u8>> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_MANIFEST_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(bytes)
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let registry = Registry::builtin();
    match cli.command {
        Command::Validate { manifest, json } => {
            let bytes = read_manifest(&manifest)?;
            let result = validate_bytes(&bytes, &registry);
            if json {
                let body = match &result {
                    Ok(w) => {
                        serde_json::json!({ "valid": true, "workflow": w.manifest.name, "id": w.id, "targets": w.targets })
                    }
                    Err(d) => serde_json::json!({ "valid": false, "diagnostics": d }),
                };
                emit(&(serde_json::to_string_pretty(&body)? + "\n"))?;
            }
            match result {
                Ok(w) => {
                    if !json {
                        emit(&format!(
                            "{}: valid: workflow {} ({} segment(s)), targets {}, id {}\n",
                            manifest.display(),
                            w.manifest.name,
                            w.segments.len(),
                            w.targets.join(","),
                            w.id
                        ))?;
                    }
                }
                Err(diagnostics) => {
                    if !json {
                        let shown = manifest.display().to_string();
                        for d in &diagnostics {
                            eprint!("{}", d.render(&shown, std::str::from_utf8(&bytes).ok()));
                        }
                        eprintln!("{shown}: {} error(s)", diagnostics.len());
                    }
                    return Err(Invalid.into());
                }
            }
        }
        Command::Generate { manifest, out } => {
            let workflow = load(&manifest, &registry)?;
            let sources = Sources::locate(None)?;
            let files = project::write(&workflow, &Generator::new(), &sources, &out)?;
            eprintln!(
                "wrote {} files of crate {} to {}",
                files.len() + 1,
                codegen::crate_name(&workflow.manifest.name),
                out.display()
            );
        }
        Command::Ops { json, names, supports } => {
            let supports: Option<braid::schema::Platform> = supports.map(|t| t.parse()).transpose()?;
            let selected: Vec<_> =
                registry.iter().filter(|op| supports.is_none_or(|p| op.manifest.supports(p))).collect();
            let mut out = String::new();
            if names {
                for op in &selected {
                    out.push_str(op.info.name);
                    out.push('\n');
                }
            } else if json {
                let list: Vec<serde_json::Value> = selected
                    .iter()
                    .map(|op| {
                        serde_json::json!({
                            "name": op.info.name,
                            "version": op.info.version,
                            "version_id": op.version_id,
                            "manifest": op.manifest,
                        })
                    })
                    .collect();
                out = serde_json::to_string_pretty(&list)? + "\n";
            } else {
                for op in &selected {
                    let m = &op.manifest;
                    let sig = if op.info.flow_control {
                        format!("{}... -> {}", join(&m.inputs, ", "), m.output)
                    } else {
                        format!("{} -> {}", join(&m.inputs, ", "), m.output)
                    };
                    let targets = format!("[{}]", join(&m.targets, ","));
                    out.push_str(&format!(
                        "{:<14} {:<8} {:<26} {:<20} {}\n",
                        m.name, m.version, sig, targets, op.version_id
                    ));
                }
            }
            emit(&out)?;
        }
        Command::Build { manifest, out, targets, target_dir } => {
            let workflow = load(&manifest, &registry)?;
            let targets = if targets.is_empty() {
                build::default_targets(&workflow)
            } else {
                targets
                    .iter()
                    .map(|t| {
                        Target::parse(t).with_context(|| {
                            format!("unknown target `{t}`; expected native, nostd, node, web or bundler")
                        })
                    })
                    .collect::<anyhow::Result<Vec<_>>>()?
            };
            let sources = Sources::locate(None)?;
            let options = build::Options {
                targets,
                target_dir: target_dir.unwrap_or_else(build::default_target_dir),
                tool_dirs: vec![sources.root().join("js/node_modules/.bin")],
                deny_warnings: std::env::var_os("BRAID_DENY_WARNINGS").is_some_and(|v| v == "1"),
            };
            let mut progress = Progress::new();
            let report =
                build::build(&workflow, &Generator::new(), &sources, &out, &options, &mut |e| progress.event(e));
            progress.finish();
            let report = report?;
            eprintln!(
                "built {} for {} in {} ms; report: {}",
                report.crate_name,
                report.targets.join(", "),
                report.timings_ms.values().sum::<u64>(),
                out.join("report.json").display()
            );
        }
        Command::Run { manifest, inputs, time, target_dir } => {
            let workflow = load(&manifest, &registry)?;
            let sources = Sources::locate(None)?;
            let target_dir = target_dir.unwrap_or_else(build::default_target_dir);
            let output = runner::run(&workflow, &Generator::new(), &sources, &target_dir, &inputs, time)?;
            emit(&output.stdout)?;
            eprint!("{}", output.stderr);
        }
        Command::Serve {
            addr,
            data,
            mut api_keys,
            workers,
            build_timeout,
            max_body,
            target_dir,
            max_checks,
            check_queue,
            max_crate_bytes,
            header_timeout,
            body_timeout,
            idle_timeout,
            max_connections,
        } => {
            tracing_subscriber::fmt()
                .with_env_filter(
                    tracing_subscriber::EnvFilter::try_from_default_env()
                        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
                )
                .with_writer(std::io::stderr)
                .init();
            if let Ok(keys) = std::env::var("BRAID_API_KEYS") {
                api_keys.extend(keys.split(',').map(str::trim).filter(|k| !k.is_empty()).map(String::from));
            }
            if api_keys.is_empty() {
                let key = uuid::Uuid::new_v4().simple().to_string();
                eprintln!("braid serve: no --api-key given; writes need this generated key: {key}");
                api_keys.push(key);
            }
            let config = braid_service::Config {
                addr,
                data,
                api_keys,
                workers: workers.unwrap_or_else(braid_service::Config::default_workers).max(1),
                build_timeout: std::time::Duration::from_secs(build_timeout),
                target_dir: target_dir.unwrap_or_else(build::default_target_dir),
                braid_exe: std::env::current_exe().context("cannot find the braid executable")?,
                max_body,
                max_checks: max_checks.unwrap_or_else(braid_service::Config::default_checks).max(1),
                check_queue,
                max_crate_bytes,
                limits: braid_service::conn::Limits {
                    header_timeout: std::time::Duration::from_secs(header_timeout),
                    idle_timeout: std::time::Duration::from_secs(idle_timeout),
                    max_connections: max_connections.max(1),
                },
                body_timeout: std::time::Duration::from_secs(body_timeout),
            };
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .context("cannot start the async runtime")?
                .block_on(braid_service::serve(config))?;
        }
        Command::OpPackage { names, targets, out, root } => {
            let root = match root {
                Some(r) => r,
                None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."),
            };
            let root =
                root.canonicalize().with_context(|| format!("cannot open the repository at {}", root.display()))?;
            let targets = targets
                .iter()
                .map(|t| {
                    JsTarget::parse(t).with_context(|| format!("unknown target `{t}`; expected node, web or bundler"))
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            let tools = Toolchain::detect(&[root.join("js/node_modules/.bin")])?;
            for name in &names {
                let Some(op) = registry.get(name) else {
                    bail!("no operation `{name}` in the registry; `braid ops` lists them");
                };
                if !op.manifest.supports(braid::schema::Platform::Wasm) {
                    bail!(
                        "{name} cannot run in Wasm (targets: {}); it has no standalone npm package",
                        join(&op.manifest.targets, ", ")
                    );
                }
                let spec = PackageSpec {
                    manifest_path: root.join("Cargo.toml"),
                    package: name.clone(),
                    version: op.manifest.version.clone(),
                    description: op.manifest.description.clone(),
                    license: op.manifest.license.clone(),
                    features: vec!["wasm".into(), "braid-support/wasm-allocator".into()],
                    target_dir: root.join("target"),
                    remap: build::remaps(&root, None),
                    deny_warnings: false,
                };
                let wasm = wasm_pkg::compile(&spec)?;
                for target in &targets {
                    let dir = out.join(name).join(target.name());
                    let pkg = wasm_pkg::package(&spec, &wasm, *target, &dir, &tools)?;
                    println!("{name} {:<8} {} ({} bytes of wasm)", target.name(), pkg.dir.display(), pkg.wasm_bytes);
                }
            }
        }
    }
    Ok(())
}

/// Build progress: a bar on a terminal, plain lines otherwise.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    fn new() -> Self {
        use std::io::IsTerminal as _;
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(1);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} [{pos}/{len}] {wide_msg} {elapsed}")
                    .expect("a valid template"),
            );
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
            bar
        });
        Self { bar }
    }

    fn event(&mut self, event: build::Event<'_>) {
        match (&self.bar, event) {
            (Some(bar), build::Event::Start { index, total, step }) => {
                bar.set_length(total as u64);
                bar.set_position(index as u64 - 1);
                bar.set_message(format!("building {step}"));
            }
            (Some(bar), build::Event::Done { step, ms }) => {
                bar.inc(1);
                bar.println(format!("  {step:<8} {ms:>6} ms"));
            }
            (None, build::Event::Start { index, total, step }) => eprintln!("[{index}/{total}] {step}"),
            (None, build::Event::Done { step, ms }) => eprintln!("      {step} done in {ms} ms"),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Writes `text` to stdout; a closed pipe (`braid ops | head`) is not an error.
/// Type names or platforms, joined by `sep`.
fn join<T: std::fmt::Display>(items: &[T], sep: &str) -> String {
    items.iter().map(ToString::to_string).collect::<Vec<_>>().join(sep)
}

fn emit(text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}
