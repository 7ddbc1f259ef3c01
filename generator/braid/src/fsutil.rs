//! The filesystem as the compiler uses it: every error carries its path
//! ([`FsError`]), directories are listed recursively in a stable order, and
//! files are written only when their bytes change (so cargo's mtime-based
//! freshness sees an unchanged crate as unchanged).

use std::path::{Path, PathBuf};

/// A file to write into a crate: its path relative to the crate's root,
/// and its text (what code generation and vendoring produce).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    pub path: String,
    pub contents: String,
}

/// An I/O error on `path`.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct FsError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Attaches `path` to an I/O error: `.map_err(fsutil::at(path))`.
pub fn at(path: &Path) -> impl FnOnce(std::io::Error) -> FsError + '_ {
    move |source| FsError { path: path.to_path_buf(), source }
}

pub fn read(path: &Path) -> Result<Vec<u8>, FsError> {
    std::fs::read(path).map_err(at(path))
}

pub fn read_to_string(path: &Path) -> Result<String, FsError> {
    std::fs::read_to_string(path).map_err(at(path))
}

pub fn create_dir_all(path: &Path) -> Result<(), FsError> {
    std::fs::create_dir_all(path).map_err(at(path))
}

/// Writes `bytes` to `path`, creating its parent directories.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), FsError> {
    if let Some(parent) = path.parent() {
        create_dir_all(parent)?;
    }
    std::fs::write(path, bytes).map_err(at(path))
}

/// Writes `bytes` unless `path` already holds exactly them (its mtime then
/// stays, and cargo rebuilds nothing); true if written. Written to a
/// temporary file then renamed, so a reader never sees half a file.
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<bool, FsError> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(false);
    }
    // Unique per process and write: two files of one directory, or two
    // processes writing the same file, never share a temporary file.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.braid-tmp-{}-{n}", std::process::id()));
    write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).map_err(at(path))?;
    Ok(true)
}

/// Every file under `root` (not directories), relative to it, sorted.
/// Symbolic links are listed as files, never followed.
pub fn walk(root: &Path) -> Result<Vec<PathBuf>, FsError> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(root).follow_links(false).sort_by_file_name() {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(root).to_path_buf();
            FsError { path, source: e.into() }
        })?;
        if !entry.file_type().is_dir() {
            out.push(entry.path().strip_prefix(root).expect("listed under root").to_path_buf());
        }
    }
    out.sort();
    Ok(out)
}

/// Whether `dir` has no entry.
pub fn is_empty_dir(dir: &Path) -> Result<bool, FsError> {
    Ok(std::fs::read_dir(dir).map_err(at(dir))?.next().is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_lists_files_sorted_and_relative_and_errors_name_the_path() {
        let dir = std::env::temp_dir().join(format!("braid-fsutil-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        write(&dir.join("b/z.txt"), b"z").unwrap();
        write(&dir.join("a.txt"), b"a").unwrap();
        write(&dir.join("b/c/d.txt"), b"d").unwrap();
        let listed: Vec<String> = walk(&dir).unwrap().iter().map(|p| p.display().to_string()).collect();
        assert_eq!(listed, ["a.txt", "b/c/d.txt", "b/z.txt"]);
        assert!(!write_if_changed(&dir.join("a.txt"), b"a").unwrap());
        assert!(write_if_changed(&dir.join("a.txt"), b"A").unwrap());
        assert_eq!(read(&dir.join("a.txt")).unwrap(), b"A");
        let missing = dir.join("missing");
        let e = walk(&missing).unwrap_err();
        assert_eq!(e.path, missing);
        assert!(e.to_string().starts_with(&missing.display().to_string()), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
