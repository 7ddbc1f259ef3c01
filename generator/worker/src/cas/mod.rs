//! The content-addressed artifact store: each artifact is an object named
//! by the CIDv1 (raw, blake3, base32) of its bytes, computed with Braid's
//! own operations, written whole or not at all and verified again when
//! read. Objects are named by [`ContentId`]s only, which are checked CIDs,
//! so no name from a request can point elsewhere. Two backends behind
//! [`Cas`]: a directory ([`dir`]: the default `<data>/artifacts`, or one
//! every process of a deployment mounts) and an S3-compatible bucket
//! ([`s3`]). Every call blocks: callers run it off the async threads.

pub mod dir;
pub mod s3;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use braid_store::ids::ContentId;

#[derive(Debug, thiserror::Error)]
pub enum CasError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("artifact {0} is corrupt in the store (its bytes no longer hash to its name)")]
    Corrupt(String),
    #[error(transparent)]
    S3(#[from] s3::S3Error),
}

/// Where the artifacts are kept: `--store`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A directory (created if missing).
    Dir(PathBuf),
    /// A bucket of an S3-compatible store.
    S3(s3::Bucket),
}

impl Location {
    /// `s3://BUCKET?endpoint=URL&region=REGION`, or a directory's path.
    pub fn parse(s: &str) -> Result<Self, s3::S3Error> {
        // A URL: `s3://`, or a mistake (`http://`) that must not become a directory.
        if s.contains("://") {
            return s3::Bucket::parse(s).map(Self::S3);
        }
        Ok(Self::Dir(PathBuf::from(s)))
    }
}

#[derive(Debug)]
enum Backend {
    Dir(dir::Dir),
    S3(s3::S3),
}

#[derive(Debug, Clone)]
pub struct Cas {
    backend: Arc<Backend>,
    /// When [`Cas::probe`] last succeeded.
    probed: Arc<Mutex<Option<Instant>>>,
}

impl Cas {
    /// Opens the store at `location` (an S3 store's credentials come from
    /// `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`).
    pub fn open(location: &Location) -> Result<Self, CasError> {
        let backend = match location {
            Location::Dir(path) => Backend::Dir(dir::Dir::open(path)?),
            Location::S3(bucket) => Backend::S3(s3::S3::open(bucket.clone())?),
        };
        Ok(Self { backend: Arc::new(backend), probed: Default::default() })
    }

    /// Stores `bytes`, returning their CID. Storing the same bytes twice is
    /// a no-op; a reader never sees a partial object.
    pub fn put(&self, bytes: &[u8]) -> Result<ContentId, CasError> {
        let cid = ContentId::of(bytes);
        match &*self.backend {
            Backend::Dir(d) => d.put(&cid, bytes)?,
            Backend::S3(s) => s.put(&s3::artifact_key(&cid), bytes)?,
        }
        Ok(cid)
    }

    /// The bytes of `cid`, checked against their name; `None` if absent.
    pub fn get(&self, cid: &ContentId) -> Result<Option<Vec<u8>>, CasError> {
        let bytes = match &*self.backend {
            Backend::Dir(d) => d.get(cid)?,
            Backend::S3(s) => s.get(&s3::artifact_key(cid))?,
        };
        match bytes {
            Some(bytes) if ContentId::of(&bytes) != *cid => Err(CasError::Corrupt(cid.to_string())),
            bytes => Ok(bytes),
        }
    }

    /// Those of `cids` whose object is missing or damaged; the damaged ones
    /// are removed. An object unreadable for another reason (the store out
    /// of reach) is logged and left alone. From an S3 store, where each
    /// read is a round trip, all are read at once.
    pub fn damaged(&self, cids: &[ContentId]) -> Vec<ContentId> {
        let damaged = |cid: &ContentId| match self.get(cid) {
            Ok(Some(_)) => false,
            Ok(None) => true,
            Err(CasError::Corrupt(_)) => {
                self.remove(cid);
                true
            }
            Err(e) => {
                tracing::error!("checking artifact {cid}: {e}");
                false
            }
        };
        match &*self.backend {
            Backend::Dir(_) => cids.iter().filter(|cid| damaged(cid)).cloned().collect(),
            Backend::S3(_) => std::thread::scope(|scope| {
                let checks: Vec<_> = cids.iter().map(|cid| (cid, scope.spawn(move || damaged(cid)))).collect();
                checks
                    .into_iter()
                    .filter_map(|(cid, check)| check.join().unwrap_or(false).then(|| cid.clone()))
                    .collect()
            }),
        }
    }

    /// Removes the object of `cid` (found damaged), so that a rebuild
    /// writes it anew. Best effort: a failure is logged.
    pub fn remove(&self, cid: &ContentId) {
        let removed = match &*self.backend {
            Backend::Dir(d) => {
                d.remove(cid);
                Ok(())
            }
            Backend::S3(s) => s.delete(&s3::artifact_key(cid)),
        };
        if let Err(e) = removed {
            tracing::error!("removing the damaged artifact {cid}: {e}");
        }
    }

    /// Whether the store takes a write: a small object written and removed;
    /// the error says why not (e.g. no space left, the bucket unreachable;
    /// for an S3 store without its address, which is logged).
    /// One probe at a time (health checks do not pile up behind a store
    /// that does not answer), and a success counts for a second (they do
    /// not each write an object). A failure is not kept: the next check
    /// sees a store that is back at once.
    pub fn probe(&self) -> Result<(), String> {
        let mut probed = self.probed.lock().unwrap_or_else(|e| e.into_inner());
        if probed.is_some_and(|at| at.elapsed() < Duration::from_secs(1)) {
            return Ok(());
        }
        let found = match &*self.backend {
            // Where the store is (its directory, its endpoints) is for the
            // log only.
            Backend::Dir(d) => d.probe().map_err(|e| {
                tracing::warn!("the artifact store takes no writes: {e}");
                match e {
                    CasError::Io { source, .. } => source.to_string(),
                    other => other.to_string(),
                }
            }),
            Backend::S3(s) => s.probe().map_err(|e| {
                tracing::warn!("the artifact store takes no writes: {e}");
                e.brief()
            }),
        };
        if found.is_ok() {
            *probed = Some(Instant::now());
        }
        found
    }

    /// Removes what a crash left behind (a directory's temporary files; an
    /// S3 store has none: an interrupted PUT leaves no object).
    pub fn sweep(&self) {
        if let Backend::Dir(d) = &*self.backend {
            d.sweep();
        }
    }
}
