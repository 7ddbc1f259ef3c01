//! The artifact store's directory backend: one file per object, named by
//! its CID, written atomically (temporary file, fsync, rename; the
//! temporary file is removed when any step fails).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use braid_store::ids::ContentId;

use super::CasError;

#[derive(Debug)]
pub(super) struct Dir {
    dir: PathBuf,
}

impl Dir {
    pub(super) fn open(dir: &Path) -> Result<Self, CasError> {
        std::fs::create_dir_all(dir).map_err(|source| CasError::Io { path: dir.to_path_buf(), source })?;
        Ok(Self { dir: dir.to_path_buf() })
    }

    /// A [`ContentId`] is checked to be a CID (no `/`, no `..`), so it is
    /// always a plain file name in the store's directory.
    fn path(&self, cid: &ContentId) -> PathBuf {
        self.dir.join(cid.as_str())
    }

    pub(super) fn put(&self, cid: &ContentId, bytes: &[u8]) -> Result<(), CasError> {
        let path = self.path(cid);
        if path.exists() {
            return Ok(());
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
        Ok(())
    }

    pub(super) fn remove(&self, cid: &ContentId) {
        let _ = std::fs::remove_file(self.path(cid));
    }

    /// A small file written, synced and removed.
    pub(super) fn probe(&self) -> Result<(), CasError> {
        let tmp = self.dir.join(format!(".probe.{}.tmp", uuid::Uuid::new_v4().simple()));
        let written = (|| {
            let mut file = std::fs::File::create(&tmp)?;
            file.write_all(&[0u8; 4096])?;
            file.sync_all()
        })();
        let _ = std::fs::remove_file(&tmp);
        written.map_err(|source| CasError::Io { path: self.dir.clone(), source })
    }

    /// The bytes of `cid` as they are on disk; `None` if absent.
    pub(super) fn get(&self, cid: &ContentId) -> Result<Option<Vec<u8>>, CasError> {
        let path = self.path(cid);
        match std::fs::read(&path) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(CasError::Io { path, source }),
        }
    }

    /// Removes temporary files a crash left behind: those an hour old (the
    /// directory may be shared with processes writing now).
    pub(super) fn sweep(&self) {
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
    use braid_store::ids::ContentId;

    use crate::cas::{Cas, CasError, Location};

    #[test]
    fn stores_and_verifies() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let cas = Cas::open(&Location::Dir(dir.clone())).unwrap();
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
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
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
        let cas = Cas::open(&Location::Dir(dir.join("artifacts"))).unwrap();
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
