//! `braid serve` (the HTTP API, building too unless `--workers 0`) and
//! `braid worker` (builds only): their flags, logging and runtime. Both
//! roles take the same flags for what they share, so one set of flags or
//! environment variables configures a whole deployment.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use braid::build;
use braid_service::{Config, HttpConfig};
use braid_worker::stop::Stop;
use braid_worker::{Config as WorkerConfig, Database};

/// What `braid serve` and `braid worker` share.
#[derive(clap::Args)]
pub struct Shared {
    /// Data directory: build directories, the operation registry, and by default the SQLite database and the
    /// artifacts. One process per directory.
    #[arg(long, env = "BRAID_DATA", default_value = "braid-data")]
    data: PathBuf,
    /// Keep the state (workflows, builds, jobs, packages) in PostgreSQL, shared by any number of `braid serve` and
    /// `braid worker` processes: postgres://USER:PASSWORD@HOST:PORT/DATABASE. By default: SQLite in --data, one
    /// process.
    #[arg(long, env = "BRAID_DATABASE", value_name = "URL")]
    database: Option<String>,
    /// Keep artifacts in an S3-compatible bucket shared by every process of a deployment,
    /// s3://BUCKET?endpoint=URL[,URL...]&region=REGION (credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY),
    /// or in a directory they all mount; by default <data>/artifacts.
    #[arg(long, alias = "artifacts", env = "BRAID_STORE", value_name = "s3://BUCKET?endpoint=URL | DIR")]
    store: Option<String>,
    /// Compile through sccache with its cache in the --store bucket (an s3:// store only), so that a new
    /// worker's first build finds what others compiled. For builds of Braid's own operations: those of
    /// published operations compile without it, in a sandbox without network.
    #[arg(long, env = "BRAID_COMPILE_CACHE")]
    compile_cache: bool,
    /// Seconds a worker holds a job without renewing its lease (a shared --database); a worker that dies loses
    /// its job to another after this long.
    #[arg(long, env = "BRAID_LEASE", default_value_t = 30)]
    lease: u64,
    /// Seconds a build may take before it is stopped.
    #[arg(long, default_value_t = 1800)]
    build_timeout: u64,
    #[arg(long, env = "BRAID_TARGET_DIR")]
    target_dir: Option<PathBuf>,
    /// Publish workflows' npm packages under this scope (`@org/wf_name`). Every process that builds
    /// (`braid serve` with workers, each `braid worker`) needs the same one.
    #[arg(long, value_name = "@SCOPE")]
    npm_scope: Option<String>,
}

#[derive(clap::Args)]
pub struct WorkerArgs {
    #[command(flatten)]
    shared: Shared,
    /// Concurrent builds (default: half the cores, at least 1).
    #[arg(long)]
    workers: Option<usize>,
}

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    #[command(flatten)]
    shared: Shared,
    /// An API key for writes (repeatable); also BRAID_API_KEYS=k1,k2. Without any, one is generated and printed.
    #[arg(long = "api-key", value_name = "KEY")]
    api_keys: Vec<String>,
    /// A key for publishing operations (repeatable), apart from the API keys; also
    /// BRAID_PUBLISHER_KEYS=k1,k2. Without any, publishing is off.
    /// `OWNER=KEY` publishes as OWNER (a lowercase name); a bare key as `key-` and 16 hex digits of its SHA-256.
    /// The first publisher of an operation name owns it: only its owners publish its versions.
    #[arg(long = "publisher-key", value_name = "KEY")]
    publisher_keys: Vec<String>,
    /// Adds OWNER to the owners of the operation name NAME (repeatable), so that its key may publish it too.
    #[arg(long = "owner", value_name = "NAME=OWNER", value_parser = parse_owner)]
    owners: Vec<(String, String)>,
    /// Largest operation upload (`POST /v1/operations`, a .tar.gz), in bytes (413 beyond).
    #[arg(long, default_value_t = braid_service::MAX_UPLOAD)]
    max_upload: usize,
    /// Concurrent builds (default: half the cores, at least 1; 0 with a shared --database: this process only
    /// serves the API, `braid worker`s build). Builds that share a target directory take turns compiling: cargo
    /// locks it, and so does Braid's staging directory in it.
    #[arg(long)]
    workers: Option<usize>,
    /// Largest request body, in bytes (413 beyond).
    #[arg(long, default_value_t = 2 << 20)]
    max_body: usize,
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
    /// Seconds a new connection may stay silent before its first request's first byte (closed after).
    #[arg(long, default_value_t = 5)]
    first_byte_timeout: u64,
    /// Open connections at most; more wait to be accepted.
    #[arg(long, default_value_t = 512)]
    max_connections: usize,
    /// Open connections of one client address at most; its further ones are closed at once.
    #[arg(long, default_value_t = 64)]
    max_connections_per_client: usize,
    /// The service's address as clients reach it (`https://braid.example.org`), for the URLs the Cargo and npm
    /// registries hand out; by default `http://` and the request's Host.
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,
    /// Runs of built workflows (`POST /v1/workflows/{id}/run`) need no API key.
    #[arg(long)]
    public_run: bool,
    /// Runs at once; default: one per core.
    #[arg(long, value_name = "N")]
    run_slots: Option<usize>,
    /// Runs waiting for a slot; beyond, 503 + Retry-After.
    #[arg(long, default_value_t = 64, value_name = "N")]
    run_queue: usize,
    /// Runs one API key may have in progress at once; its runs past it wait while other keys' take the free
    /// slots. Default: every slot (the slots are shared fairly between keys anyway).
    #[arg(long, value_name = "N")]
    run_slots_per_key: Option<usize>,
    /// Runs one API key may start a second (in bursts of as many); past it, 429 + Retry-After. Default: no
    /// limit.
    #[arg(long, value_name = "RATE", value_parser = positive_rate)]
    run_rate_per_key: Option<f64>,
    /// Each run's budgets (as `braid run --engine wasm`'s).
    #[command(flatten)]
    run_limits: super::run::LimitArgs,
}

/// A rate of runs a second: a positive, finite number.
fn positive_rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 => Ok(rate),
        _ => Err(format!("`{text}` is not a positive number of runs a second")),
    }
}

fn init_logging() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                // (PostgreSQL's notices, such as sqlx's "relation
                // _sqlx_migrations already exists" at every start, are not news.)
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,sqlx::postgres::notice=warn")),
        )
        .with_writer(std::io::stderr)
        .init();
}

/// Before the first job: what this machine lacks for some builds (the
/// checks of `braid doctor`), so that an operator learns it at start and
/// not from a failed job.
fn say_what_is_missing(who: &str) {
    let missing = super::doctor::missing_for_serve();
    if !missing.is_empty() {
        eprintln!("{who}: builds that need what follows will fail until it is installed (`braid doctor --fix`):");
        for line in missing {
            eprintln!("  {line}");
        }
    }
}

/// The runtime, and SIGINT and SIGTERM taken before anything else (the
/// checks of the machine and the data directory can take seconds): from
/// the `starting` line on, either signal stops the process gracefully.
fn start(who: &str) -> anyhow::Result<(tokio::runtime::Runtime, Stop)> {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the async runtime")?;
    let stop = {
        let _inside = runtime.enter();
        Stop::install().context("cannot take SIGINT and SIGTERM")?
    };
    eprintln!("{who}: starting");
    Ok((runtime, stop))
}

impl Shared {
    fn database(&self) -> anyhow::Result<Database> {
        match &self.database {
            None => Ok(Database::Embedded),
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                Ok(Database::Postgres(url.clone()))
            }
            Some(_) => anyhow::bail!(
                "--database takes a PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE); leave it out for \
                 SQLite in --data"
            ),
        }
    }

    /// The number of builders: `workers`, or the default; 0 only with a
    /// shared database.
    fn workers(&self, workers: Option<usize>, database: &Database) -> anyhow::Result<usize> {
        match workers {
            Some(0) if *database == Database::Embedded => {
                anyhow::bail!("--workers 0 needs a shared --database, where `braid worker` processes build")
            }
            Some(n) => Ok(n),
            None => Ok(WorkerConfig::default_workers()),
        }
    }
}

/// `braid worker`: builds jobs from the shared database until SIGINT or SIGTERM.
pub fn worker(args: WorkerArgs) -> anyhow::Result<()> {
    let (runtime, stop) = start("braid worker")?;
    init_logging();
    let database = args.shared.database()?;
    say_what_is_missing("braid worker");
    if database == Database::Embedded {
        anyhow::bail!(
            "braid worker builds for a deployment that shares its state: give it the --database \
             (postgres://...) and --store its `braid serve` processes use"
        );
    }
    let workers = args.shared.workers(args.workers, &database)?.max(1);
    let config = WorkerConfig { workers, ..config(args.shared, database)? };
    runtime.block_on(braid_worker::work(config, stop))?;
    Ok(())
}

/// The jobs' configuration from the shared flags; the rest at its defaults.
fn config(shared: Shared, database: Database) -> anyhow::Result<WorkerConfig> {
    // BRAID_ARTIFACTS: what --store was called before; a deployment still
    // setting it must not fall back to a directory of each process's own.
    let store = match shared.store.or_else(|| std::env::var("BRAID_ARTIFACTS").ok().filter(|s| !s.is_empty())) {
        Some(s) => braid_worker::cas::Location::parse(&s)?,
        None => braid_worker::cas::Location::Dir(shared.data.join("artifacts")),
    };
    if let Some(scope) = &shared.npm_scope {
        braid::package::npm::check_scope(scope)?;
    }
    if shared.compile_cache && !matches!(store, braid_worker::cas::Location::S3(_)) {
        anyhow::bail!("--compile-cache keeps sccache's cache in the --store bucket: give an s3:// --store");
    }
    Ok(WorkerConfig {
        compile_cache: shared.compile_cache,
        store,
        database,
        lease: Duration::from_secs(shared.lease.max(3)),
        build_timeout: Duration::from_secs(shared.build_timeout),
        target_dir: shared.target_dir.unwrap_or_else(build::default_target_dir),
        braid_exe: std::env::current_exe().context("cannot find the braid executable")?,
        npm_scope: shared.npm_scope,
        ..WorkerConfig::defaults(shared.data)
    })
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let (runtime, stop) = start("braid serve")?;
    init_logging();
    let database = args.shared.database()?;
    let workers = args.shared.workers(args.workers, &database)?;
    if workers > 0 {
        say_what_is_missing("braid serve");
    }
    let mut api_keys = args.api_keys;
    api_keys.extend(keys_from_env("BRAID_API_KEYS"));
    let mut publisher_keys = args.publisher_keys;
    publisher_keys.extend(keys_from_env("BRAID_PUBLISHER_KEYS"));
    if api_keys.is_empty() {
        let key = uuid::Uuid::new_v4().simple().to_string();
        eprintln!("braid serve: no --api-key given; writes need this generated key: {key}");
        api_keys.push(key);
    }
    let public_url = args.public_url.map(|url| braid_service::routes::hosts::check_public_url(&url)).transpose()?;
    let http = HttpConfig {
        addr: args.addr,
        api_keys,
        publisher_keys,
        max_upload: args.max_upload,
        max_body: args.max_body,
        max_checks: args.max_checks.unwrap_or_else(HttpConfig::default_checks).max(1),
        check_queue: args.check_queue,
        max_crate_bytes: args.max_crate_bytes,
        limits: braid_service::conn::Limits {
            header_timeout: Duration::from_secs(args.header_timeout),
            idle_timeout: Duration::from_secs(args.idle_timeout),
            first_byte_timeout: Duration::from_secs(args.first_byte_timeout.max(1)),
            max_connections: args.max_connections.max(1),
            max_connections_per_client: args.max_connections_per_client.max(1),
        },
        body_timeout: Duration::from_secs(args.body_timeout),
        public_url,
        run: braid_service::execute::RunConfig {
            limits: args.run_limits.limits(),
            slots: args.run_slots.unwrap_or(braid_service::execute::RunConfig::default().slots).max(1),
            queue: args.run_queue,
            public: args.public_run,
            slots_per_key: args.run_slots_per_key.map(|n| n.max(1)),
            rate_per_key: args.run_rate_per_key,
        },
    };
    let worker = WorkerConfig { workers, owners: args.owners, ..config(args.shared, database)? };
    runtime.block_on(braid_service::serve(Config { worker, http }, stop))?;
    Ok(())
}

/// `NAME=OWNER` of `--owner`.
fn parse_owner(value: &str) -> Result<(String, String), String> {
    match value.split_once('=') {
        Some((name, _)) if !braid::schema::is_crate_name(name) => Err(format!(
            "{name:?} is not an operation name (a crate name: an ASCII letter, then letters, digits, `-` and `_`)"
        )),
        Some((name, owner)) if !owner.is_empty() => Ok((name.to_string(), owner.to_string())),
        _ => Err(format!("expected NAME=OWNER (an operation name and an owner), found {value:?}")),
    }
}

/// Comma-separated keys in the variable `name`.
fn keys_from_env(name: &str) -> Vec<String> {
    let keys = std::env::var(name).unwrap_or_default();
    keys.split(',').map(str::trim).filter(|k| !k.is_empty()).map(String::from).collect()
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Worker {
        #[command(flatten)]
        args: WorkerArgs,
    }

    /// The process that builds takes the flags that shape what it builds,
    /// wherever it runs: a `braid worker` of a deployment names npm
    /// packages as its `braid serve` does.
    #[test]
    fn a_worker_takes_the_npm_scope_and_refuses_a_bad_one() {
        let parsed = Worker::parse_from(["worker", "--data", "/srv/w", "--npm-scope", "@org"]);
        let made = config(parsed.args.shared, Database::Postgres("postgres://x".into())).unwrap();
        assert_eq!(made.npm_scope.as_deref(), Some("@org"));
        assert_eq!(made.data, PathBuf::from("/srv/w"));
        let parsed = Worker::parse_from(["worker", "--npm-scope", "org"]);
        let error = config(parsed.args.shared, Database::Embedded).unwrap_err();
        assert!(error.to_string().contains("org"), "{error}");
    }
}
