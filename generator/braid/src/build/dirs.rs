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

/// The user's own cache of precompiled components (native code, so never
/// in a shared temporary directory): `$XDG_CACHE_HOME/braid/precompiled`
/// or `~/.cache/braid/precompiled`; none without a home.
pub fn precompiled_dir() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
        .or_else(|| std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache.join("braid/precompiled"))
}

/// Everything Braid caches for builds into `target_dir`, for `braid cache`
/// and `braid clean`: the target directory, [`run_dir`] and
/// [`precompiled_dir`].
pub fn cache_dirs(target_dir: &Path) -> Vec<PathBuf> {
    [target_dir.to_path_buf(), run_dir(target_dir)].into_iter().chain(precompiled_dir()).collect()
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
