//! Braid's background side (`braid-worker`): the environment a process
//! opens once ([`Env`]: configuration, the state's store, the artifact
//! store, the registry, metrics, build slots, the sandbox, shutdown), the
//! job runner and its kinds ([`jobs`]: workflow builds, publish checks),
//! the artifact store ([`cas`]), the registry's sync ([`operations`]) and
//! the registries' packages ([`packages`]), and how a process starts and
//! stops its jobs ([`start`], [`wind_down`], [`stop`]). `braid worker` runs
//! only this ([`work`]); `braid serve` runs it under its HTTP app.
//!
//! A crate of its own, apart from braid-service, so that the seam shows:
//! nothing here knows HTTP (no axum) or the executor, as the crates.io
//! codebase gives its background jobs an environment apart from its web
//! app. The state itself is braid-store's.

pub mod cas;
pub mod datadir;
mod env;
pub mod jobs;
pub mod metrics;
pub mod operations;
pub mod packages;
pub mod stop;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use env::{BuildsChanged, Env, Wake};

/// What a process's jobs and its HTTP app share of its configuration:
/// where its state and artifacts live and how it builds.
#[derive(Debug, Clone)]
pub struct Config {
    /// Artifacts and build directories live here, and the SQLite database
    /// of the embedded default.
    pub data: PathBuf,
    /// Where the service's state is kept.
    pub database: Database,
    /// The artifact store: the directory `<data>/artifacts`, or a
    /// directory or S3 bucket every process of a deployment shares.
    pub store: cas::Location,
    /// Compile through sccache with its cache in the store's bucket (an S3
    /// `store` only): builds of Braid's own operations; code nobody vetted
    /// compiles without it, in a sandbox without network.
    pub compile_cache: bool,
    /// How long a job stays its worker's without a heartbeat, where the
    /// database is shared ([`Database::Postgres`]).
    pub lease: Duration,
    /// Owners the operator adds to operation names, `(name, owner)`, at
    /// start (`--owner NAME=OWNER`).
    pub owners: Vec<(String, String)>,
    /// Build workers (concurrent builds).
    pub workers: usize,
    pub build_timeout: Duration,
    /// Cargo target directory shared by all builds.
    pub target_dir: PathBuf,
    /// The `braid` executable that runs builds (this one).
    pub braid_exe: PathBuf,
    /// The npm scope of workflow packages (`@org`), if any.
    pub npm_scope: Option<String>,
}

/// Where the service's state (workflows, builds, jobs, publishes,
/// packages) is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    /// SQLite in the data directory: one process.
    Embedded,
    /// PostgreSQL at this URL, shared by any number of processes.
    Postgres(String),
}

impl Config {
    /// Workers for this machine: half the cores (a build is itself
    /// parallel), at least one.
    pub fn default_workers() -> usize {
        std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1))
    }

    /// Every setting at its default, for the data directory `data`.
    pub fn defaults(data: PathBuf) -> Self {
        Self {
            store: cas::Location::Dir(data.join("artifacts")),
            data,
            database: Database::Embedded,
            compile_cache: false,
            lease: Duration::from_secs(30),
            owners: Vec::new(),
            workers: Self::default_workers(),
            build_timeout: Duration::from_secs(1800),
            target_dir: braid::build::default_target_dir(),
            braid_exe: PathBuf::from("braid"),
            npm_scope: None,
        }
    }

    /// A configuration for tests, here and of the crates above: `data`, one
    /// worker, a short build time, paths that are not this machine's.
    #[doc(hidden)]
    pub fn for_tests(data: PathBuf) -> Self {
        Self {
            workers: 1,
            build_timeout: Duration::from_secs(60),
            target_dir: PathBuf::from("/var/cache/braid/target"),
            braid_exe: PathBuf::from("/usr/bin/braid"),
            ..Self::defaults(data)
        }
    }
}

/// Why the environment could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Store(#[from] braid_store::StoreError),
    #[error(transparent)]
    Cas(#[from] cas::CasError),
    #[error(transparent)]
    Registry(#[from] braid::registry::RegistryError),
    #[error(transparent)]
    Locked(#[from] datadir::LockError),
}

/// At start: the operations published to the deployment into this
/// process's registry, and every registered operation in the Cargo
/// registry (about a second for the built-ins).
async fn take_in_operations(env: &Arc<Env>) {
    let state = env.clone();
    let _ = tokio::task::spawn_blocking(move || {
        if !operations::sync(&state) {
            packages::add_operations(&state);
        }
    })
    .await;
}

/// `braid worker`: builds jobs from the shared database (nothing else)
/// until `stop` (SIGINT or SIGTERM, taken before this is called); then
/// stops its running builds (their jobs go back to the queue, for another
/// worker) and returns. Prints `braid worker: ready` once it takes jobs; a
/// stop asked for before that returns without taking any.
pub async fn work(config: Config, stop: stop::Stop) -> Result<(), OpenError> {
    let workers = config.workers;
    let Some(env) = start(config, &stop, "braid worker: stopped before taking jobs").await? else { return Ok(()) };
    env.data_lock.record("worker")?;
    let runners = jobs::spawn(&env, workers);
    eprintln!("braid worker: ready ({workers} builder(s))");
    stop.wait().await;
    eprintln!("braid worker: shutting down");
    wind_down("braid worker", &env, runners).await;
    Ok(())
}

/// What `braid serve` and `braid worker` do before they take work: the
/// environment opened, then every registered operation in the Cargo registry
/// (about a second for the built-ins: what the index lists does not change
/// under a client that just started). `None`, saying `stopped`, when a stop
/// is asked for first: both steps give way to it.
pub async fn start(config: Config, stop: &stop::Stop, stopped: &str) -> Result<Option<Arc<Env>>, OpenError> {
    let opened = stop.unless_asked(Env::open(config)).await.transpose()?;
    if let Some(env) = opened {
        if stop.unless_asked(take_in_operations(&env)).await.is_some() && !stop.asked() {
            return Ok(Some(env));
        }
    }
    eprintln!("{stopped}");
    Ok(None)
}

/// Stops the builds (their jobs go back to the queue) and waits for the
/// runners to end.
pub async fn wind_down(who: &str, env: &Env, runners: Vec<tokio::task::JoinHandle<()>>) {
    let _ = env.shutdown.send(true);
    for runner in runners {
        let _ = runner.await;
    }
    eprintln!("{who}: stopped");
}
