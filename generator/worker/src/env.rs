//! The service's environment ([`Env`]): what its jobs and its HTTP app
//! share (the configuration, the state's store, the artifact store, the
//! registry, the metrics, the build slots, the sandbox, shutdown), opened
//! once per process. Jobs, the registry's sync and the Cargo registry's
//! packages take an `Env` and know nothing of HTTP; `braid worker` opens
//! only this. The HTTP app's own state (braid-service's `AppState`) is built
//! around it, as the crates.io codebase gives its background jobs an
//! environment apart from its web app.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use braid::registry::Registry;
use braid_store::Kind;
use tokio::sync::Notify;

use crate::{cas, datadir, metrics, Config, Database, OpenError};

/// Shared by the jobs and the HTTP app.
pub struct Env {
    pub config: Config,
    pub store: braid_store::Store,
    pub cas: cas::Cas,
    /// The registry in `<data>/registry`; replaced when an operation is
    /// published (here, or anywhere in the deployment: [`crate::operations::sync`]).
    pub registry: std::sync::RwLock<Arc<Registry>>,
    /// Published operations (by version id) [`crate::operations::sync`] is done
    /// with (`None`) or last failed to fetch (when); held while it runs.
    pub published: std::sync::Mutex<std::collections::BTreeMap<String, Option<std::time::Instant>>>,
    pub metrics: metrics::Metrics,
    /// Wakes idle runners of a kind of job when one is queued here.
    pub wake: Wake,
    /// One permit per `--workers`: a workflow build and a publish check
    /// each take one while they run, so together they never exceed it.
    pub build_slots: Arc<tokio::sync::Semaphore>,
    /// Where code nobody vetted is built (published operations, workflows
    /// using them), or why it cannot be here: then publishing is refused.
    pub sandbox: Result<braid::sandbox::Sandbox, String>,
    /// Set to `true` when the process shuts down: workers stop their builds.
    pub shutdown: tokio::sync::watch::Sender<bool>,
    /// Told when builds change here, so that what was looked up of them
    /// (the executor's components by workflow id) is looked up again.
    pub builds: BuildsChanged,
    /// Held while the process runs.
    pub data_lock: datadir::DataLock,
}

/// How many times builds changed in this process (one succeeded, or a
/// build's artifacts went missing): whoever keeps what it looked up of
/// builds keeps it with the count it saw, and looks again once the count
/// moved. A count rather than a callback, so that a job tells without
/// knowing who listens.
#[derive(Debug, Clone, Default)]
pub struct BuildsChanged(Arc<AtomicU64>);

impl BuildsChanged {
    /// Builds changed.
    pub fn tell(&self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }

    /// How many times they have so far.
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}

/// Wakes the idle runners of a kind when a job of it is queued in this
/// process. A wake-up sent while none waits is kept for the next wait.
#[derive(Default)]
pub struct Wake(Mutex<BTreeMap<&'static str, Arc<Notify>>>);

impl Wake {
    /// What the runners of `kind` wait on.
    pub(crate) fn of(&self, kind: Kind) -> Arc<Notify> {
        let mut kinds = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        kinds.entry(kind.as_str()).or_default().clone()
    }

    /// A job of `kind` was queued.
    pub fn notify(&self, kind: Kind) {
        self.of(kind).notify_one();
    }
}

impl Env {
    /// Opens the data directory (recovering from a crash) and what lives
    /// in it or beside it: the registry (`<data>/registry`, the data
    /// directory is the builds' `BRAID_HOME`), the state's store and the
    /// artifact store.
    pub async fn open(config: Config) -> Result<Arc<Env>, OpenError> {
        let (config, data_lock, location) = tokio::task::spawn_blocking(move || lock_data(config))
            .await
            .expect("locking the data directory does not panic")?;
        let store = braid_store::Store::open(&location, config.lease, Duration::from_secs(30)).await?;
        for (name, owner) in &config.owners {
            store.add_owner(name, owner).await?;
        }
        let (retried, failed) = store.recover().await?;
        if retried + failed > 0 {
            tracing::warn!("recovered from a crash: {retried} interrupted job(s) queued again, {failed} marked failed");
        }
        tokio::task::spawn_blocking(move || around(config, data_lock, store))
            .await
            .expect("opening the environment does not panic")
    }

    /// The registry as it is now.
    pub fn registry(&self) -> Arc<Registry> {
        self.registry.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

/// Takes the data directory (before anything in it is read or cleaned:
/// another server may be using it); where the state's database is.
fn lock_data(config: Config) -> Result<(Config, datadir::DataLock, braid_store::Location), OpenError> {
    let io = |path: &PathBuf| {
        let path = path.clone();
        move |source| OpenError::Io { path, source }
    };
    std::fs::create_dir_all(&config.data).map_err(io(&config.data))?;
    let data_lock = datadir::DataLock::acquire(&config.data)?;
    let location = match &config.database {
        Database::Embedded => {
            let database = config.data.join("braid.sqlite");
            datadir::check_database(&config.data, &database)?;
            braid_store::Location::File(database)
        }
        Database::Postgres(url) => braid_store::Location::Postgres(url.clone()),
    };
    Ok((config, data_lock, location))
}

/// The rest of the environment, around the store (blocking: it sweeps the
/// artifact store and opens the registry).
fn around(config: Config, data_lock: datadir::DataLock, store: braid_store::Store) -> Result<Arc<Env>, OpenError> {
    let cas = cas::Cas::open(&config.store)?;
    cas.sweep();
    // Build directories of interrupted jobs (their jobs start over in new
    // ones) and scratch files.
    for dir in ["builds", "tmp"] {
        let _ = std::fs::remove_dir_all(config.data.join(dir));
    }
    let sandbox = braid::sandbox::Sandbox::detect().map(|s| s.timeout(config.build_timeout)).map_err(|e| e.to_string());
    // (A process that builds nothing leaves the checks to `braid worker`s.)
    if let (Err(e), true) = (&sandbox, config.workers > 0) {
        tracing::warn!("this process cannot check published operations: {e}");
    }
    Ok(Arc::new(Env {
        store,
        cas,
        registry: std::sync::RwLock::new(Arc::new(Registry::open(&config.data)?)),
        published: std::sync::Mutex::new(std::collections::BTreeMap::new()),
        metrics: metrics::Metrics::default(),
        wake: Wake::default(),
        build_slots: Arc::new(tokio::sync::Semaphore::new(config.workers)),
        sandbox,
        shutdown: tokio::sync::watch::Sender::new(false),
        builds: BuildsChanged::default(),
        data_lock,
        config,
    }))
}
