//! One server per data directory: `braid serve` holds an exclusive lock on
//! `<data>/braid.lock` for as long as it runs (the OS releases it when the
//! process dies, even by `kill -9`) and writes its pid and address into it,
//! so a second server on the same directory stops at once and names the
//! first. An empty database file in a directory that holds a service's
//! data was truncated, not new ([`check_database`]).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("the data directory {data} is in use by another braid serve ({holder}); stop it or choose another --data")]
    Held { data: PathBuf, holder: String },
    #[error(
        "{database} is empty (0 bytes) while its data directory holds a service's data: the database was truncated. \
         Restore it from a back-up; or, to start over with no builds, remove it"
    )]
    Truncated { database: PathBuf },
}

/// A database file of zero bytes where the directory holds more than the
/// lock and that file (artifacts, a registry, builds): truncated while the
/// server was stopped, which SQLite would take for a new, empty database,
/// forgetting every build. Refused; a new directory's empty file is fine.
pub fn check_database(data: &Path, database: &Path) -> Result<(), LockError> {
    let empty = std::fs::metadata(database).is_ok_and(|m| m.len() == 0);
    if !empty {
        return Ok(());
    }
    let io = |source| LockError::Io { path: data.to_path_buf(), source };
    let ours = |name: &str| name == "braid.lock" || name.starts_with("braid.sqlite");
    let holds_data =
        std::fs::read_dir(data).map_err(io)?.filter_map(Result::ok).any(|e| !ours(&e.file_name().to_string_lossy()));
    if holds_data {
        return Err(LockError::Truncated { database: database.to_path_buf() });
    }
    Ok(())
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
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
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

    #[test]
    fn a_truncated_database_is_refused_unless_the_directory_is_new() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let database = dir.join("braid.sqlite");
        // A new directory: nothing yet, or an empty file beside the lock.
        check_database(&dir, &database).unwrap();
        std::fs::write(&database, b"").unwrap();
        std::fs::write(dir.join("braid.lock"), b"").unwrap();
        check_database(&dir, &database).unwrap();
        // With the service's data beside it, an empty file was truncated.
        std::fs::create_dir_all(dir.join("artifacts")).unwrap();
        let err = check_database(&dir, &database).unwrap_err().to_string();
        assert!(
            err.contains("is empty (0 bytes)") && err.contains("was truncated") && err.contains("back-up"),
            "{err}"
        );
        std::fs::write(&database, b"SQLite format 3\0").unwrap();
        check_database(&dir, &database).unwrap();
        std::fs::remove_dir_all(dir).unwrap();
    }
}
