//! The publish service, `braid serve`: an HTTP/JSON API under `/v1` that
//! validates, generates and builds workflows and serves their artifacts by
//! content id. State lives in SQLite under the data directory, artifacts in
//! a content-addressed store beside it, builds run in a bounded worker pool
//! fed by the persisted queue. [`app`] builds the router without a socket
//! (for tests); [`serve`] binds and runs it.

pub mod api;
pub mod cas;
pub mod metrics;
pub mod pack;
pub mod problem;
pub mod store;
pub mod worker;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::codegen::Generator;
use crate::registry::Registry;
use crate::vendor::Sources;

/// How the service runs.
#[derive(Debug, Clone)]
pub struct Config {
    pub addr: SocketAddr,
    /// SQLite database, artifacts and build directories live here.
    pub data: PathBuf,
    /// Keys accepted in `x-api-key` for writes.
    pub api_keys: Vec<String>,
    /// Build workers (concurrent builds).
    pub workers: usize,
    pub build_timeout: Duration,
    /// Cargo target directory shared by all builds.
    pub target_dir: PathBuf,
    /// The `braid` executable that runs builds (this one).
    pub braid_exe: PathBuf,
    /// Largest request body accepted.
    pub max_body: usize,
}

impl Config {
    /// Workers for this machine: half the cores (a build is itself
    /// parallel), at least one.
    pub fn default_workers() -> usize {
        std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1))
    }
}

/// Shared by handlers and workers.
pub struct AppState {
    pub config: Config,
    pub store: Arc<store::Store>,
    pub cas: cas::Cas,
    pub registry: Registry,
    pub generator: Generator,
    pub sources: Sources,
    pub metrics: metrics::Metrics,
    /// Wakes idle workers when a job is queued.
    pub wake: tokio::sync::Notify,
    /// Identifies the toolchain in build keys: a new toolchain builds anew.
    pub toolchain: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Store(#[from] store::StoreError),
    #[error(transparent)]
    Cas(#[from] cas::CasError),
    #[error(transparent)]
    Sources(#[from] crate::vendor::VendorError),
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
}

/// Opens the data directory (recovering from a crash) and builds the state.
pub fn open(config: Config) -> Result<Arc<AppState>, ServeError> {
    let io = |path: &PathBuf| {
        let path = path.clone();
        move |source| ServeError::Io { path, source }
    };
    std::fs::create_dir_all(&config.data).map_err(io(&config.data))?;
    let store = store::Store::open(&config.data.join("braid.sqlite"))?;
    let (retried, failed) = store.recover()?;
    if retried + failed > 0 {
        tracing::warn!("recovered from a crash: {retried} interrupted build(s) queued again, {failed} marked failed");
    }
    let cas = cas::Cas::open(&config.data.join("artifacts"))?;
    cas.sweep();
    // Build directories of interrupted jobs: their jobs start over.
    let builds = config.data.join("builds");
    let _ = std::fs::remove_dir_all(&builds);
    let toolchain = toolchain();
    Ok(Arc::new(AppState {
        store: Arc::new(store),
        cas,
        registry: Registry::builtin(),
        generator: Generator::new(),
        sources: Sources::locate(None)?,
        metrics: metrics::Metrics::default(),
        wake: tokio::sync::Notify::new(),
        toolchain,
        config,
    }))
}

/// Braid's version and the compiler's: part of every build key.
fn toolchain() -> String {
    let rustc = std::process::Command::new("rustc")
        .arg("-V")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    format!(
        "braid {} / {rustc} / wasm-bindgen {}",
        crate::codegen::BRAID_VERSION,
        crate::wasm_pkg::WASM_BINDGEN_VERSION
    )
}

/// Binds `config.addr`, starts the workers and serves until Ctrl-C.
/// Prints `braid serve: listening on http://ADDR` once ready.
pub async fn serve(config: Config) -> Result<(), ServeError> {
    let addr = config.addr;
    let workers = config.workers;
    let state = open(config)?;
    worker::spawn(state.clone(), workers);
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|source| ServeError::Bind { addr, source })?;
    let local = listener.local_addr().map_err(|source| ServeError::Bind { addr, source })?;
    eprintln!("braid serve: listening on http://{local}");
    axum::serve(listener, api::app(state))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|source| ServeError::Io { path: PathBuf::from("(socket)"), source })
}
