//! The staging directory where generated crates are compiled: one per cargo
//! target directory, reused by every build. Vendored crates sit in
//! directories named by their content (`vendor::dir_name`), so crates that
//! differ under one name (another braid's runtime, another registry's
//! operation) never overwrite each other here, and cargo keeps each compiled. The Wasm build's compiler flags
//! name the crate's directory (`--remap-path-prefix`, so the `.wasm` holds
//! no absolute path); built where each workflow was generated, those flags
//! would differ for every workflow, and cargo rebuilds every crate of the
//! target, registry crates included, when the flags change. In one fixed
//! directory the flags, and the vendored crates' paths, stay the same, so a
//! new workflow over operations already built compiles only its own crate.
//! Syncing writes only the files whose bytes changed. A lock file
//! serialises builds that share a target directory (cargo would serialise
//! their compiling on its own lock anyway).

use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};

use crate::fsutil::{self, FsError};

/// A locked staging directory holding a copy of one generated crate.
#[derive(Debug)]
pub struct Staging {
    dir: PathBuf,
    // Held for the life of the value; the OS releases it when dropped.
    _lock: File,
}

impl Staging {
    /// Locks the staging directory of `target_dir` (waiting for other
    /// builds) and makes it a copy of `crate_dir`.
    pub fn sync(crate_dir: &Path, target_dir: &Path) -> Result<Self, FsError> {
        let dir = target_dir.join("braid-staging");
        fsutil::create_dir_all(&dir)?;
        let lock_path = target_dir.join("braid-staging.lock");
        let lock = File::create(&lock_path).map_err(fsutil::at(&lock_path))?;
        lock.lock().map_err(fsutil::at(&lock_path))?;
        let wanted: BTreeSet<PathBuf> = fsutil::walk(crate_dir)?.into_iter().collect();
        for rel in &wanted {
            fsutil::write_if_changed(&dir.join(rel), &fsutil::read(&crate_dir.join(rel))?)?;
        }
        // Files of an earlier crate go, except whole vendored crates this one
        // does not use: they stay (unreferenced, so not compiled) so that a
        // later workflow using them again finds them unchanged.
        let used: BTreeSet<String> = wanted.iter().filter_map(|rel| vendored_crate(rel)).collect();
        for rel in fsutil::walk(&dir)? {
            let keep = vendored_crate(&rel).is_some_and(|name| !used.contains(&name));
            if !keep && !wanted.contains(&rel) {
                let path = dir.join(&rel);
                std::fs::remove_file(&path).map_err(fsutil::at(&path))?;
            }
        }
        Ok(Self { dir, _lock: lock })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// `vendor/<name>/...` -> `<name>`.
fn vendored_crate(rel: &Path) -> Option<String> {
    let mut parts = rel.components();
    match (parts.next(), parts.next(), parts.next()) {
        (Some(v), Some(name), Some(_)) if v.as_os_str() == "vendor" => Some(name.as_os_str().to_string_lossy().into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn unchanged_files_keep_their_mtime_and_stale_ones_go() {
        let tmp = std::env::temp_dir().join(format!("braid-staging-test-{}", std::process::id()));
        let (a, b, target) = (tmp.join("a"), tmp.join("b"), tmp.join("target"));
        write(&a, "Cargo.toml", "a");
        write(&a, "src/lib.rs", "a");
        write(&a, "vendor/op_x/src/lib.rs", "x");
        write(&a, "vendor/op_y/src/lib.rs", "y");
        write(&a, "vendor/op_y/src/old.rs", "old");
        write(&b, "Cargo.toml", "b");
        write(&b, "src/lib.rs", "b");
        write(&b, "vendor/op_y/src/lib.rs", "y");

        let staged = |rel: &str| target.join("braid-staging").join(rel);
        let mtime = |rel: &str| std::fs::metadata(staged(rel)).unwrap().modified().unwrap();
        drop(Staging::sync(&a, &target).unwrap());
        let before = mtime("vendor/op_y/src/lib.rs");
        std::thread::sleep(std::time::Duration::from_millis(20));
        let s = Staging::sync(&b, &target).unwrap();
        assert_eq!(std::fs::read_to_string(s.dir().join("src/lib.rs")).unwrap(), "b");
        assert_eq!(mtime("vendor/op_y/src/lib.rs"), before, "an unchanged file was rewritten");
        assert!(!staged("vendor/op_y/src/old.rs").exists(), "a stale file of a used crate stayed");
        assert!(staged("vendor/op_x/src/lib.rs").exists(), "an unused vendored crate was removed");
        drop(s);
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
