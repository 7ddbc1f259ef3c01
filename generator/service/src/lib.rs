//! The publish service, `braid serve`: an HTTP/JSON API under `/v1` that
//! validates, generates and builds workflows and serves their artifacts by
//! content id. State lives in SQLite under the data directory (or in
//! PostgreSQL, shared with other `braid serve` and `braid worker`
//! processes: [`work`]), artifacts in a content-addressed store beside it
//! (or in a directory or S3 bucket they share), builds run in a bounded worker pool fed
//! by the persisted queue. [`routes::app`] builds the router without a
//! socket (for tests); [`serve`] locks the data directory, binds and runs it
//! until SIGINT or SIGTERM.

pub mod admission;
pub mod conn;
pub mod execute;
pub mod fair;
pub mod held;
pub mod metrics;
pub mod problem;
pub mod rate;
pub mod routes;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use braid::codegen::Generator;
use braid_worker::{jobs, stop, Env};

/// How `braid serve` runs: what its jobs and its HTTP app share
/// (`worker`, braid-worker's [`braid_worker::Config`]), and the HTTP app's
/// own settings.
#[derive(Debug, Clone)]
pub struct Config {
    pub worker: braid_worker::Config,
    pub http: HttpConfig,
}

/// The HTTP app's own settings: its address, keys, request limits and how
/// built workflows run.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    pub addr: SocketAddr,
    /// Keys accepted in `x-api-key` for writes.
    pub api_keys: Vec<String>,
    /// Keys accepted in `x-api-key` for publishing operations (`POST
    /// /v1/operations`), apart from build keys; none: publishing is off.
    /// `OWNER=KEY` names the key's owner; a bare key owns names as
    /// `key-<its SHA-256, 16 hex digits>` (see [`routes::publisher_owner`]).
    pub publisher_keys: Vec<String>,
    /// Largest operation upload (a `.tar.gz` of the crate), in bytes.
    pub max_upload: usize,
    /// Largest request body accepted.
    pub max_body: usize,
    /// CPU-heavy requests (validate, generate, publish, artifact reads)
    /// running at once, off the async threads.
    pub max_checks: usize,
    /// Heavy requests waiting for one of those; beyond, 503.
    pub check_queue: usize,
    /// Largest generated crate, all its files together, in bytes.
    pub max_crate_bytes: usize,
    /// Connection limits: header, idle timeouts and the connection cap.
    pub limits: conn::Limits,
    /// Time to send a whole request body.
    pub body_timeout: Duration,
    /// The service's address as clients reach it, without a trailing `/`;
    /// `None`: `http://` and each request's `Host`.
    pub public_url: Option<String>,
    /// How built workflows run (`POST .../run`).
    pub run: execute::RunConfig,
}

/// The largest operation upload by default: 8 MiB (compressed).
pub const MAX_UPLOAD: usize = 8 << 20;

impl Config {
    /// A configuration for unit tests: `data`, one worker, short limits.
    #[cfg(test)]
    pub(crate) fn for_tests(data: std::path::PathBuf) -> Self {
        let http = HttpConfig {
            addr: "127.0.0.1:0".parse().expect("an address"),
            api_keys: vec!["k".into()],
            publisher_keys: vec!["p".into()],
            max_checks: 1,
            check_queue: 1,
            limits: conn::Limits {
                header_timeout: Duration::from_secs(1),
                idle_timeout: Duration::from_secs(1),
                first_byte_timeout: Duration::from_secs(1),
                max_connections: 4,
                max_connections_per_client: 4,
            },
            body_timeout: Duration::from_secs(1),
            ..HttpConfig::default()
        };
        Self { worker: braid_worker::Config::for_tests(data), http }
    }
}

impl Default for HttpConfig {
    /// Every setting at its default.
    fn default() -> Self {
        Self {
            addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            api_keys: Vec::new(),
            publisher_keys: Vec::new(),
            max_upload: MAX_UPLOAD,
            max_body: 2 << 20,
            max_checks: Self::default_checks(),
            check_queue: 64,
            max_crate_bytes: 16 << 20,
            limits: conn::Limits {
                header_timeout: Duration::from_secs(10),
                idle_timeout: Duration::from_secs(60),
                first_byte_timeout: Duration::from_secs(5),
                max_connections: 512,
                max_connections_per_client: 64,
            },
            body_timeout: Duration::from_secs(30),
            public_url: None,
            run: execute::RunConfig::default(),
        }
    }
}

impl HttpConfig {
    /// Heavy requests at once: one per core.
    pub fn default_checks() -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// The HTTP app's state: the [`Env`] it shares with the jobs (through
/// `Deref`: `state.store`), and what only requests use: its settings, the
/// generator, the build keys' toolchain, the admission of heavy requests,
/// the lock seeds and the executor.
pub struct AppState {
    pub env: Arc<Env>,
    pub http: HttpConfig,
    /// The HTTP app's metrics; the jobs' are the `Env`'s (`state.env.metrics`).
    pub app_metrics: metrics::AppMetrics,
    pub generator: Generator,
    /// Identifies the toolchain in build keys: a new toolchain builds anew.
    pub toolchain: String,
    /// Bounds the CPU-heavy requests.
    pub checks: admission::Slots,
    /// The operations' resolved locks (see [`braid::lockfile`]), by the
    /// version ids of the operations each covers: one for the newest
    /// version of every operation, others for workflows pinning older ones.
    pub lock_seeds: tokio::sync::Mutex<std::collections::BTreeMap<String, Arc<braid::lockfile::LockSeed>>>,
    /// Runs built workflows.
    pub executor: execute::Executor,
}

impl std::ops::Deref for AppState {
    type Target = Env;

    fn deref(&self) -> &Env {
        &self.env
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Open(#[from] braid_worker::OpenError),
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
}

impl AppState {
    /// The HTTP app around `env` (blocking: it asks `rustc` its version).
    pub fn new(env: Arc<Env>, http: HttpConfig) -> Arc<Self> {
        let config = &env.config;
        Arc::new(Self {
            generator: Generator::new(),
            toolchain: toolchain(),
            checks: admission::Slots::new(http.max_checks, http.check_queue),
            lock_seeds: tokio::sync::Mutex::new(std::collections::BTreeMap::new()),
            executor: execute::Executor::new(
                http.run,
                &config.data,
                config.database != braid_worker::Database::Embedded,
                env.builds.clone(),
            ),
            http,
            app_metrics: metrics::AppMetrics::default(),
            env,
        })
    }
}

/// The environment ([`Env::open`]) and the HTTP app around it: what
/// `braid serve` and the tests serve.
pub async fn open(config: Config) -> Result<Arc<AppState>, ServeError> {
    Ok(app(Env::open(config.worker).await?, config.http).await)
}

/// [`AppState::new`] off the async threads.
async fn app(env: Arc<Env>, http: HttpConfig) -> Arc<AppState> {
    tokio::task::spawn_blocking(move || AppState::new(env, http)).await.expect("making the app's state does not panic")
}

/// Braid's version, the compiler's and the component format: part of
/// every build key.
fn toolchain() -> String {
    let rustc = std::process::Command::new("rustc")
        .arg("-V")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    format!(
        "braid {} / {rustc} / wasm-bindgen {} / component {}",
        braid::codegen::BRAID_VERSION,
        braid::package::js::WASM_BINDGEN_VERSION,
        braid::target::COMPONENT_FORMAT
    )
}

/// Locks the data directory, binds `config.addr`, starts the workers and
/// serves until `stop` (SIGINT or SIGTERM, taken before this is called);
/// then stops accepting, lets open requests finish, stops running builds
/// (their jobs wait in the queue for the next start) and returns. Prints
/// `braid serve: listening on http://ADDR` once ready; a stop asked for
/// before that returns without listening or building.
pub async fn serve(config: Config, stop: stop::Stop) -> Result<(), ServeError> {
    let addr = config.http.addr;
    let workers = config.worker.workers;
    let limits = config.http.limits;
    let Some(env) = braid_worker::start(config.worker, &stop, "braid serve: stopped before listening").await? else {
        return Ok(());
    };
    let state = app(env, config.http).await;
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|source| ServeError::Bind { addr, source })?;
    let local = listener.local_addr().map_err(|source| ServeError::Bind { addr, source })?;
    state.data_lock.record(&format!("http://{local}")).map_err(braid_worker::OpenError::from)?;
    let runners = jobs::spawn(&state.env, workers);
    if workers == 0 {
        eprintln!("braid serve: no workers here (--workers 0): `braid worker` processes build");
    }
    // The lock seed now, so that the first /v1/generate does not wait for it.
    let early = state.clone();
    tokio::spawn(async move {
        let newest = early.registry().newest();
        if let Err(e) = routes::lock_seed(&early, &newest).await {
            tracing::warn!("preparing lock files: {}", e.detail);
        }
    });
    eprintln!("braid serve: listening on http://{local}");
    let shutdown = state.shutdown.clone();
    let stopping = async move {
        stop.wait().await;
        eprintln!("braid serve: shutting down");
        let _ = shutdown.send(true);
    };
    conn::serve(listener, routes::app(state.clone()), limits, stopping).await;
    braid_worker::wind_down("braid serve", &state, runners).await;
    Ok(())
}
