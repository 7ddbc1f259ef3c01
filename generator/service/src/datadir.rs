//! One server per data directory: `braid serve` holds an exclusive lock on
//! `<data>/braid.lock` for as long as it runs (the OS releases it when the
//! process dies, even by `kill -9`) and writes its pid and address into it,
//! so a second server on the same directory stops at once and names the
//! first.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("the data directory {data} is in use by another braid serve ({holder}); stop it or choose another --data")]
    Held { data: PathBuf, holder: String },
}

/// The held lock; released when dropped (or when the process ends).
#[derive(Debug)]
pub struct DataLock {
    file: File,
    path: PathBuf,
}

impl DataLock {
    /// Takes the lock of `data` without waiting.
    pub fn acquire(data: &Path) -> Result<Self, LockError> {
        let path = data.join("braid.lock");
        let io = |source| LockError::Io { path: path.clone(), source };
        let mut file =
            OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.split_whitespace().collect::<Vec<_>>().join(" ");
                let holder = if holder.is_empty() { "pid unknown".to_string() } else { holder };
                return Err(LockError::Held { data: data.to_path_buf(), holder });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        let lock = Self { file, path };
        lock.record("starting")?;
        Ok(lock)
    }

    /// Writes `pid <pid>, address <address>` into the lock file.
    pub fn record(&self, address: &str) -> Result<(), LockError> {
        let io = |source| LockError::Io { path: self.path.clone(), source };
        let mut file = &self.file;
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        writeln!(file, "pid {}, address {address}", std::process::id()).map_err(io)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_and_told_who_holds_it() {
        let dir = std::env::temp_dir().join(format!("braid-datalock-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let first = DataLock::acquire(&dir).unwrap();
        first.record("http://127.0.0.1:1234").unwrap();
        let err = DataLock::acquire(&dir).unwrap_err().to_string();
        assert!(err.contains(&format!("pid {}, address http://127.0.0.1:1234", std::process::id())), "{err}");
        drop(first);
        // Other tests of this process spawn commands: a child forked while
        // the lock file was open shares its lock until it execs (O_CLOEXEC
        // closes it then), so the release may take a moment to be seen.
        let mut again = DataLock::acquire(&dir);
        for _ in 0..100 {
            if again.is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            again = DataLock::acquire(&dir);
        }
        again.unwrap();
        std::fs::remove_dir_all(dir).unwrap();
    }
}
