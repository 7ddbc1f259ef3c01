//! Braid's state (`braid-store`): builds (one row per build id, each
//! knowing its workflow id), the one job queue every kind of job shares
//! ([`queue`]), artifacts, publish jobs, registered operations, the
//! registries' packages and deployments, in SQLite (one process) or
//! PostgreSQL (a deployment), and the validated [`ids`] they are keyed by.
//!
//! A crate of its own, apart from braid-service, so that the seam shows:
//! it knows neither HTTP (no axum) nor how a job is run; the service's
//! routes, its job runner and `braid worker` all ask it the same way.
//!
//! Every query is written once, in the SQL both databases speak, and runs
//! through sqlx's `Any` driver: the two backends differ only where the
//! databases do, in [`Backend`] (the clock, row locks, advisory locks). Why
//! sqlx: one async API for both databases, a pool, and a migrator
//! ([`schema`]) that versions and checksums every step; the `postgres` and
//! `rusqlite` crates it replaced needed each query and each migration
//! system written twice.
//!
//! SQLite is opened with one connection (WAL): the store is the only
//! writer, and a transaction is never interleaved with another. Before
//! every write its file is checked to still be the one opened: a file
//! deleted or replaced under the server would otherwise take every later
//! write silently into an unlinked inode.

mod builds;
mod deployments;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod ids;
mod packages;
mod publishes;
pub mod queue;
mod rows;
mod schema;
mod state;
#[cfg(test)]
mod tests;

pub use builds::{BuildRow, Claimed, Job, NewBuild, Submission, WorkflowRow};
pub use deployments::{name_key as deployment_key, Deployed, Deployment, DeploymentLimits, DeploymentVersion};
pub use packages::{Ecosystem, Package};
pub use publishes::{NewPublish, Publish, PublishSubmission, PublishedOperation};
pub use queue::Kind;
pub use state::{BuildState, JobState};

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use sqlx::any::AnyPoolOptions;
use sqlx::{Any, AnyPool, Transaction};

use crate::ids::ContentId;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sql(#[from] sqlx::Error),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// The database file is no longer the one the server opened.
    #[error("the database file {0} was deleted or replaced while the server ran; it takes no writes until the server is restarted")]
    Gone(String),
    /// Written by a newer server: this one does not know its schema.
    #[error("the database has schema version {found}, newer than the {supported} this braid knows; run a braid at least as new as the one that wrote it")]
    TooNew { found: i64, supported: i64 },
    #[error("migrating the database's schema: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    #[error("the database URL is not valid ({0}); it looks like postgres://USER:PASSWORD@HOST:PORT/DATABASE")]
    Url(String),
    #[error("cannot reach the database at {url}: {source}")]
    Unreachable { url: String, source: sqlx::Error },
    /// A row that does not parse: a damaged database.
    #[error("a damaged row in the database: {0}")]
    Damaged(String),
}

impl StoreError {
    /// The database could not write for lack of space.
    pub fn is_disk_full(&self) -> bool {
        match self {
            // SQLITE_FULL; PostgreSQL's disk_full.
            StoreError::Sql(sqlx::Error::Database(e)) => matches!(e.code().as_deref(), Some("13" | "53100")),
            _ => false,
        }
    }
}

/// How many times a job interrupted by a crash is started again.
pub const MAX_ATTEMPTS: i64 = 2;

/// Where the state is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite file, for one process.
    File(PathBuf),
    /// A PostgreSQL database (`postgres://user:password@host:port/db`),
    /// shared by any number of API processes and workers.
    Postgres(String),
}

/// The service's state, wherever it is kept (see the module's docs).
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    /// This process, in the leases it holds: `host:pid:random`.
    owner: String,
    /// How long a claimed job stays this process's without a heartbeat.
    lease: i64,
}

/// What differs between the two databases, and only that.
enum Backend {
    Sqlite(DbFile),
    Postgres,
}

/// The SQLite file opened, to notice it deleted or replaced.
struct DbFile {
    path: PathBuf,
    /// Device and inode of the file opened.
    identity: (u64, u64),
    /// Set once the file is found deleted or replaced; never cleared.
    gone: AtomicBool,
}

/// Keys of the advisory locks that serialize writes where several
/// processes share the database ([`Store::serialize`]).
#[derive(Debug, Clone, Copy)]
enum Lock {
    Submit = 0x6272_0002,
    Publish = 0x6272_0003,
    Packages = 0x6272_0004,
    Deploy = 0x6272_0005,
}

/// An artifact of a build.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct Artifact {
    /// `crate.tar.gz`, `pkg-node.tgz`, `pkg-web.tgz`, `pkg-bundler.tgz`,
    /// `<crate name>.wasm`, or, for the component target,
    /// `<crate name>.component.wasm` and `world.wit`.
    pub name: String,
    /// CIDv1 (raw, blake3, base32) of the bytes; `GET /v1/artifacts/{cid}`.
    pub cid: ContentId,
    pub size: u64,
    pub media_type: String,
}

pub(crate) fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// Milliseconds since the epoch (orders events within a second).
pub(crate) fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// Keeps the end of a log.
pub fn tail(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_string();
    }
    let mut cut = text.len() - max_bytes;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    text[cut..].to_string()
}

impl Store {
    /// Opens (or creates) the database, waiting up to `connect_timeout` for
    /// it, and brings its schema up to date; refuses one written by a newer
    /// server. `lease`: how long a job this process claims stays its own
    /// without a heartbeat.
    pub async fn open(location: &Location, lease: Duration, connect_timeout: Duration) -> Result<Self, StoreError> {
        sqlx::any::install_default_drivers();
        let (pool, backend) = match location {
            Location::File(path) => {
                let url = sqlite_url(path)?;
                let pool = AnyPoolOptions::new()
                    .max_connections(1)
                    // (A file does not drop connections: no ping per query.)
                    .test_before_acquire(false)
                    .acquire_timeout(connect_timeout)
                    .after_connect(|conn, _| {
                        Box::pin(async move {
                            sqlx::raw_sql("PRAGMA busy_timeout = 10000; PRAGMA synchronous = NORMAL")
                                .execute(conn)
                                .await
                                .map(drop)
                        })
                    })
                    .connect(&url)
                    .await?;
                sqlx::raw_sql("PRAGMA journal_mode = WAL").execute(&pool).await?;
                let identity = file_identity(path).map_err(|source| StoreError::Io { path: path.clone(), source })?;
                (pool, Backend::Sqlite(DbFile { path: path.clone(), identity, gone: AtomicBool::new(false) }))
            }
            Location::Postgres(url) => {
                if !url.starts_with("postgres://") && !url.starts_with("postgresql://") {
                    return Err(StoreError::Url(format!("{url:?} is not a postgres:// URL")));
                }
                let pool = AnyPoolOptions::new()
                    .max_connections(8)
                    .acquire_timeout(connect_timeout)
                    .connect(url)
                    .await
                    .map_err(|e| match e {
                        sqlx::Error::Configuration(e) => StoreError::Url(e.to_string()),
                        source => StoreError::Unreachable { url: redact_password(url), source },
                    })?;
                (pool, Backend::Postgres)
            }
        };
        let store = Self { pool, backend, owner: process_name(), lease: lease.as_secs().max(1) as i64 };
        schema::migrate(&store).await?;
        Ok(store)
    }

    /// How long a claimed job stays this process's without a heartbeat.
    pub fn lease(&self) -> Duration {
        Duration::from_secs(self.lease as u64)
    }

    /// Whether several processes may share this store (PostgreSQL).
    pub fn is_shared(&self) -> bool {
        matches!(self.backend, Backend::Postgres)
    }

    /// The store no longer takes writes and will not again until the
    /// server restarts (the SQLite file was deleted or replaced).
    pub fn is_gone(&self) -> bool {
        match &self.backend {
            Backend::Sqlite(file) => file.gone.load(Ordering::Relaxed),
            Backend::Postgres => false,
        }
    }

    /// Whether the store takes writes now; why not if it does not.
    pub async fn check(&self) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Sqlite(file) => file.check(),
            Backend::Postgres => sqlx::raw_sql("SELECT 1").execute(&self.pool).await.map(drop).map_err(Into::into),
        }
    }

    /// Runs a store call to its end from code on a blocking thread (code
    /// that packs, hashes or builds between its store calls). Not from an
    /// async task: it would block the runtime's thread.
    pub fn blocking<T>(&self, call: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Handle::current().block_on(call)
    }

    /// Runs one statement that writes, as its own transaction: refused once
    /// the SQLite file is gone. How many rows it changed.
    async fn write(&self, statement: sqlx::query::Query<'_, Any, sqlx::any::AnyArguments>) -> Result<u64, StoreError> {
        if let Backend::Sqlite(file) = &self.backend {
            file.check()?;
        }
        Ok(statement.execute(&self.pool).await?.rows_affected())
    }

    /// A transaction that writes: refused once the SQLite file is gone.
    async fn writer(&self) -> Result<Transaction<'static, Any>, StoreError> {
        if let Backend::Sqlite(file) = &self.backend {
            file.check()?;
        }
        Ok(self.pool.begin().await?)
    }

    /// Serializes the transaction `tx` with every other one taking the same
    /// lock for the same `subject`, in any process, until it ends. SQLite
    /// has one connection, so its transactions are serialized already.
    async fn serialize(&self, tx: &mut Transaction<'static, Any>, lock: Lock, subject: &str) -> Result<(), StoreError> {
        if let Backend::Postgres = self.backend {
            sqlx::query("SELECT pg_advisory_xact_lock($1, hashtext($2))")
                .bind(lock as i32)
                .bind(subject)
                .execute(&mut **tx)
                .await?;
        }
        Ok(())
    }

    /// The database's clock in seconds, as SQL: leases are timed by it, so
    /// that the hosts of a deployment need not agree on the time.
    fn clock(&self) -> &'static str {
        match self.backend {
            Backend::Sqlite(_) => "CAST(strftime('%s', 'now') AS INTEGER)",
            Backend::Postgres => "EXTRACT(EPOCH FROM clock_timestamp())::BIGINT",
        }
    }

    /// What locks the rows a `SELECT` reads until the transaction ends
    /// (nothing in SQLite, whose transactions are serialized), skipping
    /// those another transaction holds if `skip_locked`.
    fn for_update(&self, skip_locked: bool) -> &'static str {
        match (&self.backend, skip_locked) {
            (Backend::Sqlite(_), _) => "",
            (Backend::Postgres, false) => " FOR UPDATE",
            (Backend::Postgres, true) => " FOR UPDATE SKIP LOCKED",
        }
    }
}

impl DbFile {
    /// Refuses writes once the file on disk is not the one opened (checked
    /// on every write, so the first write after a deletion already fails).
    fn check(&self) -> Result<(), StoreError> {
        let name = || self.path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        if self.gone.load(Ordering::Relaxed) {
            return Err(StoreError::Gone(name()));
        }
        if file_identity(&self.path).ok() != Some(self.identity) {
            if !self.gone.swap(true, Ordering::Relaxed) {
                tracing::error!(
                    "{} was deleted or replaced while the server ran: refusing every write from now on; restart the server",
                    self.path.display()
                );
            }
            return Err(StoreError::Gone(name()));
        }
        Ok(())
    }
}

/// `sqlite://PATH?mode=rwc`, the path percent-encoded.
fn sqlite_url(path: &Path) -> Result<String, StoreError> {
    let absolute = std::path::absolute(path).map_err(|source| StoreError::Io { path: path.to_path_buf(), source })?;
    let url = url::Url::from_file_path(&absolute).map_err(|()| StoreError::Url(absolute.display().to_string()))?;
    Ok(format!("sqlite://{}?mode=rwc", url.path()))
}

/// The URL without its password, for messages.
fn redact_password(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

/// `host:pid:random`: this process, in the leases it holds.
fn process_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    format!("{}:{}:{}", host.trim(), std::process::id(), &uuid::Uuid::new_v4().simple().to_string()[..8])
}

fn file_identity(path: &Path) -> std::io::Result<(u64, u64)> {
    let meta = std::fs::metadata(path)?;
    Ok((meta.dev(), meta.ino()))
}

/// Records artifacts (their bytes are in the artifact store already).
async fn insert_artifacts(tx: &mut Transaction<'static, Any>, artifacts: &[Artifact]) -> Result<(), StoreError> {
    for a in artifacts {
        sqlx::query("INSERT INTO artifacts (cid, size, media_type) VALUES ($1, $2, $3) ON CONFLICT (cid) DO NOTHING")
            .bind(a.cid.as_str())
            .bind(a.size as i64)
            .bind(&a.media_type)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}
