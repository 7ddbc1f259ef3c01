//! `braid build`: generates and builds a workflow for its targets, showing
//! progress (a bar on a terminal, plain lines otherwise), or, with
//! `--events json`, printing [`build::Event`]s as JSON lines on stdout for
//! a program to read (the publish service does).

use std::io::Write as _;
use std::path::PathBuf;

use crate::output::{load, registry, tool_dirs};
use braid::build::{self, Event};
use braid::codegen::Generator;
use braid::compile_cache::CompileCache;
use braid::sandbox::Sandbox;

#[derive(clap::Args)]
pub struct Args {
    manifest: PathBuf,
    #[arg(short, long)]
    out: PathBuf,
    /// Comma-separated: native, nostd, node, web, bundler; wasm is node,web,bundler (default: every
    /// target the operations allow).
    #[arg(long, value_delimiter = ',')]
    targets: Vec<String>,
    /// Cargo target directory shared between builds (default: $BRAID_TARGET_DIR or ~/.cache/braid/target).
    #[arg(long)]
    target_dir: Option<PathBuf>,
    /// `json`: one JSON object per line on stdout for each step's start and end, then the report or
    /// the error (`{"event":"start",...}`); log text stays on stderr. Default: progress for humans on stderr.
    #[arg(long, value_enum)]
    events: Option<EventFormat>,
    /// Skip wasm-opt (as `wasm-pack --no-opt`): a large workflow builds minutes faster, its Wasm
    /// module is bigger and slower. wasm-opt need not be installed then.
    #[arg(long)]
    no_opt: bool,
    /// Build the Wasm packages without Wasm SIMD (simd128), which they use by default: for engines
    /// that refuse such a module (Safari 15 to 16.3).
    /// About 10 % slower on image operations.
    #[arg(long)]
    no_simd: bool,
    /// Run cargo under bubblewrap: no network, the system read-only, only the target directory
    /// writable, $BRAID_HOME, /tmp, /run and the home directory hidden, a memory and time limit.
    /// For workflows whose operations you have not vetted (their build scripts and proc-macros
    /// run during the build). Dependencies are fetched before, outside the sandbox.
    #[arg(long)]
    sandbox: bool,
    /// Require the streaming entry (`stream()`, and `runStream` in JS): an error saying why when the
    /// workflow has none (its one external input must be Bytes, into a first step with an
    /// incremental form). Without it, a workflow that can stream has the entry anyway.
    #[arg(long)]
    stream: bool,
    /// Compile through sccache, its cache in the bucket the SCCACHE_* variables name (credentials in
    /// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY): dependencies another builder compiled come from
    /// there. With --sandbox, the sandbox then shares the network: for code you trust only.
    #[arg(long)]
    compile_cache: bool,
    /// With --sandbox: also hide this directory (repeatable).
    #[arg(long, value_name = "DIR", requires = "sandbox")]
    sandbox_hide: Vec<PathBuf>,
    /// With --sandbox: the longest a sandboxed command may run, in seconds (default 600).
    #[arg(long, value_name = "SECS", requires = "sandbox")]
    sandbox_timeout: Option<u64>,
    /// The largest request body the HTTP function (`--targets http`) reads, in MiB (default 16);
    /// past it, 413.
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=1024))]
    http_input_limit: Option<u64>,
    /// Also make the build's distribution in OUT/dist/ (listed under `dist` in the report): the crate
    /// as crate.tar.gz, each JS package as pkg-<target>.tgz, the .wasm module, the component, the
    /// .crate files of a Cargo registry and one npm package, with their registry entries. What the
    /// publish service serves of a build.
    #[arg(long)]
    dist: bool,
    /// With --dist: the npm package's scope (`@org` makes `@org/wf_name`).
    #[arg(long, value_name = "SCOPE", requires = "dist")]
    npm_scope: Option<String>,
    /// Comma-separated version ids (as `braid ops` shows them): build with exactly these versions of
    /// their crates, whatever else the registry has of them; an error if it lacks one. The publish
    /// service gives each build every version its submission resolved, so that the build is the one
    /// its id names.
    #[arg(long, value_name = "VERSION_IDS", value_delimiter = ',')]
    operations: Vec<String>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum EventFormat {
    Json,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let mut progress = match args.events {
        Some(EventFormat::Json) => Progress::Json,
        None => Progress::human(),
    };
    let result = build(&args, &mut progress);
    progress.finish(&result);
    let report = result?;
    if matches!(progress, Progress::Human(_)) {
        eprintln!("{}; report: {}", Event::Report { report: Box::new(report) }, args.out.join("report.json").display());
    }
    Ok(())
}

fn build(args: &Args, progress: &mut Progress) -> anyhow::Result<build::Report> {
    let mut registry = registry()?;
    if !args.operations.is_empty() {
        registry = registry.pin(&args.operations)?;
    }
    let workflow = load(&args.manifest, &registry)?;
    let used = workflow.crate_versions();
    if let Some(unused) = args.operations.iter().find(|id| !used.values().any(|v| v == *id)) {
        anyhow::bail!(
            "--operations names {unused}, which workflow {} does not build on (it builds on {}): give the versions of \
             its own crates",
            workflow.manifest.name,
            used.iter().map(|(name, id)| format!("{name} {id}")).collect::<Vec<_>>().join(", ")
        );
    }
    let target_dir = args.target_dir.clone().unwrap_or_else(build::default_target_dir);
    let compile_cache = match args.compile_cache.then(CompileCache::from_env).transpose()? {
        Some(cache) => match cache.check() {
            Ok(()) => Some(cache),
            Err(why) => {
                eprintln!("warning: building without the compile cache, which is out of reach: {why}");
                cache.stop();
                None
            }
        },
        None => None,
    };
    let sandbox = if args.sandbox {
        let mut sandbox = Sandbox::detect()?.writable(&target_dir)?;
        if let Some(secs) = args.sandbox_timeout {
            sandbox = sandbox.timeout(std::time::Duration::from_secs(secs));
        }
        for dir in registry.dir().iter().copied().chain(args.sandbox_hide.iter().map(PathBuf::as_path)) {
            sandbox = sandbox.hide(dir);
        }
        if let Some(cache) = &compile_cache {
            sandbox = sandbox.share_network().writable(cache.dir())?;
        }
        Some(sandbox)
    } else {
        None
    };
    let options = build::Options {
        targets: if args.targets.is_empty() {
            build::default_targets(&workflow)
        } else {
            braid::target::parse_targets(&args.targets)?
        },
        target_dir,
        tool_dirs: tool_dirs(),
        deny_warnings: crate::output::deny_warnings(),
        optimize: !args.no_opt,
        simd: !args.no_simd,
        sandbox,
        compile_cache,
        require_stream: args.stream,
        http_input_limit: args.http_input_limit.map(|mib| mib << 20),
        dist: args.dist.then(|| build::Dist { npm_scope: args.npm_scope.clone() }),
    };
    let report = build::build(&workflow, &Generator::new(), &args.out, &options, &mut |e| progress.event(e));
    if let Some(cache) = &options.compile_cache {
        cache.stop();
    }
    Ok(report?)
}

/// Where build progress goes.
enum Progress {
    /// A bar on a terminal (`Some`), plain lines otherwise; on stderr.
    Human(Option<indicatif::ProgressBar>),
    /// JSON lines on stdout.
    Json,
}

impl Progress {
    fn human() -> Self {
        use std::io::IsTerminal as _;
        Progress::Human(std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(1);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} [{pos}/{len}] {wide_msg} {elapsed}")
                    .expect("a valid template"),
            );
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
            bar
        }))
    }

    fn event(&mut self, event: Event) {
        match (&*self, &event) {
            (Progress::Json, _) => {
                // One line per event, flushed at once: the reader follows the build live.
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", event.to_json_line());
                let _ = out.flush();
            }
            (Progress::Human(Some(bar)), Event::Start { index, total, step }) => {
                bar.set_length(*total as u64);
                bar.set_position(*index as u64 - 1);
                bar.set_message(format!("building {step}"));
            }
            (Progress::Human(Some(bar)), Event::Done { step, ms }) => {
                bar.inc(1);
                bar.println(format!("  {step:<8} {ms:>6} ms"));
            }
            (Progress::Human(Some(bar)), _) => bar.println(event.to_string()),
            (Progress::Human(None), _) => eprintln!("{event}"),
        }
    }

    /// Ends the bar, or, for JSON, says how the build ended: the report, or
    /// the error (which `main` also prints on stderr).
    fn finish(&mut self, result: &anyhow::Result<build::Report>) {
        match self {
            Progress::Human(Some(bar)) => bar.finish_and_clear(),
            Progress::Human(None) => {}
            Progress::Json => self.event(match result {
                Ok(report) => Event::Report { report: Box::new(report.clone()) },
                Err(e) => Event::Failed { error: format!("{e:#}") },
            }),
        }
    }
}
