//! The content-addressed artifact store: each artifact is a file named by
//! the CIDv1 (raw, blake3, base32) of its bytes, computed with Braid's own
//! operations, written atomically (temporary file, fsync, rename; the
//! temporary file is removed when any step fails) and verified again when
//! read. Files are named by [`ContentId`]s only, which are checked CIDs,
//! so no name from a request can point elsewhere.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::ids::ContentId;

#[derive(Debug, thiserror::Error)]
pub enum CasError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("artifact {0} is corrupt on disk (its bytes no longer hash to its name)")]
    Corrupt(String),
}

#[derive(Debug, Clone)]
pub struct Cas {
    dir: PathBuf,
    /// When [`Cas::probe`] last succeeded.
    probed: std::sync::Arc<std::sync::Mutex<Option<std::time::Instant>>>,
}

impl Cas {
    pub fn open(dir: &Path) -> Result<Self, CasError> {
        std::fs::create_dir_all(dir).map_err(|source| CasError::Io { path: dir.to_path_buf(), source })?;
        Ok(Self { dir: dir.to_path_buf(), probed: Default::default() })
    }

    /// A [`ContentId`] is checked to be a CID (no `/`, no `..`), so it is
    /// always a plain file name in the store's directory.
    fn path(&self, cid: &ContentId) -> PathBuf {
        self.dir.join(cid.as_str())
    }

    /// Stores `bytes`, returning their CID. Storing the same bytes twice is
    /// a no-op; a reader never sees a partial file.
    pub fn put(&self, bytes: &[u8]) -> Result<ContentId, CasError> {
        let cid = ContentId::of(bytes);
        let path = self.path(&cid);
        if path.exists() {
            return Ok(cid);
        }
        let tmp = self.dir.join(format!(".{cid}.{}.tmp", uuid::Uuid::new_v4().simple()));
        let written = (|| {
            let mut file = std::fs::File::create(&tmp)?;
            file.write_all(bytes)?;
            file.sync_all()?;
            std::fs::rename(&tmp, &path)
        })();
        if let Err(source) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(CasError::Io { path: tmp, source });
        }
        Ok(cid)
    }

    /// Removes the file of `cid` (found damaged), so that a rebuild writes it
    /// anew.
    pub fn remove(&self, cid: &ContentId) {
        let _ = std::fs::remove_file(self.path(cid));
    }

    /// Whether the store's directory takes a write: a small file written,
    /// synced and removed. The error says why not (e.g. no space left). A
    /// success counts for a second, so that frequent health checks do not
    /// each write and sync a file.
    pub fn probe(&self) -> std::io::Result<()> {
        let recent =
            |at: &Option<std::time::Instant>| at.is_some_and(|t| t.elapsed() < std::time::Duration::from_secs(1));
        if recent(&self.probed.lock().unwrap_or_else(|e| e.into_inner())) {
            return Ok(());
        }
        self.probe_now()?;
        *self.probed.lock().unwrap_or_else(|e| e.into_inner()) = Some(std::time::Instant::now());
        Ok(())
    }

    fn probe_now(&self) -> std::io::Result<()> {
        let tmp = self.dir.join(format!(".probe.{}.tmp", uuid::Uuid::new_v4().simple()));
        let written = (|| {
            let mut file = std::fs::File::create(&tmp)?;
            file.write_all(&[0u8; 4096])?;
            file.sync_all()
        })();
        let _ = std::fs::remove_file(&tmp);
        written
    }

    /// The bytes of `cid`, checked against their name; `None` if absent.
    pub fn get(&self, cid: &ContentId) -> Result<Option<Vec<u8>>, CasError> {
        let path = self.path(cid);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(CasError::Io { path, source }),
        };
        if ContentId::of(&bytes) != *cid {
            return Err(CasError::Corrupt(cid.to_string()));
        }
        Ok(Some(bytes))
    }

    /// Removes temporary files a crash left behind: those an hour old (the
    /// directory may be shared with processes writing now).
    pub fn sweep(&self) {
        let old = |e: &std::fs::DirEntry| {
            e.metadata().and_then(|m| m.modified()).is_ok_and(|t| t.elapsed().is_ok_and(|age| age.as_secs() > 3600))
        };
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for e in entries.flatten() {
                if e.file_name().to_string_lossy().ends_with(".tmp") && old(&e) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_and_verifies() {
        let dir = std::env::temp_dir().join(format!("braid-cas-{}", uuid::Uuid::new_v4().simple()));
        let cas = Cas::open(&dir).unwrap();
        let cid = cas.put(b"hello").unwrap();
        assert_eq!(cas.put(b"hello").unwrap(), cid);
        assert_eq!(cas.get(&cid).unwrap().unwrap(), b"hello");
        assert!(cas.get(&ContentId::of(b"absent")).unwrap().is_none());
        std::fs::write(dir.join(cid.as_str()), b"tampered").unwrap();
        assert!(matches!(cas.get(&cid), Err(CasError::Corrupt(_))));
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// On a full disk (a real one: a 64 KiB tmpfs, which needs root; the
    /// test says so and passes where it cannot mount) a failed write leaves
    /// no temporary file, and the space it took is free again.
    #[test]
    fn a_write_that_fails_leaves_no_temporary_file() {
        let dir = std::env::temp_dir().join(format!("braid-cas-full-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(&dir)
            .stderr(std::process::Stdio::null())
            .status();
        if !mounted.is_ok_and(|s| s.success()) {
            eprintln!("skipped: mounting a tmpfs needs root");
            std::fs::remove_dir_all(&dir).unwrap();
            return;
        }
        let cas = Cas::open(&dir.join("artifacts")).unwrap();
        let result = cas.put(&vec![7u8; 1 << 20]);
        let leftovers: Vec<_> =
            std::fs::read_dir(dir.join("artifacts")).unwrap().flatten().map(|e| e.file_name()).collect();
        let probe = cas.probe();
        let _ = std::process::Command::new("umount").arg(&dir).status();
        let _ = std::fs::remove_dir_all(&dir);
        let err = result.unwrap_err().to_string();
        assert!(err.contains("No space left on device"), "{err}");
        assert!(leftovers.is_empty(), "{leftovers:?}");
        assert!(probe.is_ok(), "the space of the failed write is free again: {probe:?}");
    }
}
