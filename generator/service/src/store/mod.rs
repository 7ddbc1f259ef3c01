//! The service's state behind the [`Store`] traits (builds, one row per
//! build id, each knowing its workflow id; jobs, the persisted queue;
//! artifacts; publish jobs; the registries' packages), and its embedded
//! backend, [`Sqlite`] (WAL); [`Postgres`] is the shared one. The SQLite
//! schema is versioned ([`migrations`]). Submissions run in an immediate
//! transaction, so identical manifests arriving together get one job.
//! Before every write the database file is checked to still be the one
//! opened: a file deleted or replaced under the server would otherwise take
//! every later write silently into an unlinked inode.

mod builds;
mod columns;
#[cfg(test)]
pub(crate) mod fixtures;
mod migrations;
mod packages;
mod postgres;
mod publishes;
mod state;
#[cfg(test)]
mod tests;

pub use builds::{BuildRow, Builds, Claimed, Job, NewBuild, Submission, WorkflowRow};
pub use migrations::LATEST as SCHEMA_VERSION;
pub use packages::{Ecosystem, Package, Packages};
pub use postgres::Postgres;
pub use publishes::{NewPublish, Publish, PublishSubmission, PublishedOperation, Publishes};
pub use state::{BuildState, JobState};

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection};
use serde::Serialize;

use crate::ids::ContentId;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// The database file is no longer the one the server opened.
    #[error("the database file {0} was deleted or replaced while the server ran; it takes no writes until the server is restarted")]
    Gone(String),
    /// Written by a newer server: this one does not know its schema.
    #[error("the database has schema version {found}, newer than the {supported} this braid knows; run a braid at least as new as the one that wrote it")]
    TooNew { found: i64, supported: i64 },
    #[error("migrating the database to schema version {version}: {source}")]
    Migration { version: i64, source: rusqlite::Error },
    #[error("PostgreSQL: {0}")]
    Postgres(#[from] ::postgres::Error),
    #[error("PostgreSQL: {0}")]
    Pool(#[from] r2d2::Error),
    #[error("migrating the PostgreSQL schema to version {version}: {source}")]
    PgMigration { version: i64, source: ::postgres::Error },
    #[error("the database URL is not valid ({0}); it looks like postgres://USER:PASSWORD@HOST:PORT/DATABASE")]
    Url(String),
    /// A row that does not parse: a damaged database.
    #[error("a damaged row in the database: {0}")]
    Damaged(String),
}

impl StoreError {
    /// SQLite could not write for lack of space.
    pub fn is_disk_full(&self) -> bool {
        match self {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => e.code == rusqlite::ErrorCode::DiskFull,
            StoreError::Postgres(e) => e.code() == Some(&::postgres::error::SqlState::DISK_FULL),
            _ => false,
        }
    }
}

/// How many times a build interrupted by a crash is started again.
pub const MAX_ATTEMPTS: i64 = 2;

/// The embedded backend: one SQLite file (WAL) under the data directory.
pub struct Sqlite {
    conn: Mutex<Connection>,
    path: PathBuf,
    /// Device and inode of the file opened.
    identity: (u64, u64),
    /// Set once the file is found deleted or replaced; never cleared.
    gone: AtomicBool,
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

/// Records artifacts (their bytes are in the artifact store already).
fn insert_artifacts(tx: &rusqlite::Transaction<'_>, artifacts: &[Artifact]) -> Result<(), StoreError> {
    for a in artifacts {
        tx.execute(
            "INSERT OR IGNORE INTO artifacts (cid, size, media_type) VALUES (?1, ?2, ?3)",
            params![a.cid, a.size as i64, a.media_type],
        )?;
    }
    Ok(())
}

/// The service's state, wherever it is kept: [`Sqlite`] (embedded, one
/// process) or [`Postgres`] (shared by any number of API processes and
/// workers). Every method is blocking: call it off the async threads.
pub trait Store: Builds + Publishes + Packages + Send + Sync {}

impl<T: Builds + Publishes + Packages + Send + Sync> Store for T {}

impl Sqlite {
    /// Opens (or creates) the database and brings its schema up to date;
    /// refuses one written by a newer server.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        migrations::migrate(&mut conn)?;
        let identity = file_identity(path).map_err(|source| StoreError::Io { path: path.to_path_buf(), source })?;
        Ok(Self { conn: Mutex::new(conn), path: path.to_path_buf(), identity, gone: AtomicBool::new(false) })
    }

    /// The file was deleted or replaced since the server opened it.
    pub fn is_gone(&self) -> bool {
        self.gone.load(Ordering::Relaxed)
    }

    /// Refuses writes once the file on disk is not the one opened (checked
    /// on every write, so the first write after a deletion already fails).
    pub fn check_file(&self) -> Result<(), StoreError> {
        let name = || self.path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        if self.is_gone() {
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

    pub(super) fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent
        // (transactions roll back), so a poisoned lock is still usable.
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The connection, for a write: the file is checked first.
    pub(super) fn writer(&self) -> Result<std::sync::MutexGuard<'_, Connection>, StoreError> {
        let conn = self.conn();
        self.check_file()?;
        Ok(conn)
    }
}

fn file_identity(path: &Path) -> std::io::Result<(u64, u64)> {
    let meta = std::fs::metadata(path)?;
    Ok((meta.dev(), meta.ino()))
}
