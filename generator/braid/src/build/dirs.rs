//! Where builds keep what they cache: the shared cargo target directory,
//! `braid run`'s crates beside it, and their size on disk.

use std::path::{Path, PathBuf};

use crate::fsutil::{self, FsError};

/// The default shared target directory: `$BRAID_TARGET_DIR`, else
/// `$XDG_CACHE_HOME/braid/target`, else `~/.cache/braid/target`.
pub fn default_target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("BRAID_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("braid/target")
}

/// Where `braid run` keeps the crates and runners it builds next to the
/// cargo target directory `target_dir` (their artifacts go into it).
pub fn run_dir(target_dir: &Path) -> PathBuf {
    target_dir.parent().unwrap_or(target_dir).join("run")
}

/// Everything Braid caches for builds into `target_dir`, for `braid cache`
/// and `braid clean`: the target directory and [`run_dir`].
pub fn cache_dirs(target_dir: &Path) -> [PathBuf; 2] {
    [target_dir.to_path_buf(), run_dir(target_dir)]
}

/// The bytes of the files under `dir` (0 when it does not exist).
pub fn disk_usage(dir: &Path) -> Result<u64, FsError> {
    if !dir.exists() {
        return Ok(0);
    }
    let mut total = 0;
    for rel in fsutil::walk(dir)? {
        let path = dir.join(rel);
        total += std::fs::symlink_metadata(&path).map_err(fsutil::at(&path))?.len();
    }
    Ok(total)
}
