//! The cache of precompiled components on disk. A precompiled component is
//! native code that wasmtime maps and runs as it is, so a file here is
//! loaded only if this cache wrote it, for exactly that component and that
//! engine: each file ends with a MAC (BLAKE3 in keyed mode) over the
//! component's CID, the engine's key and the code, under a secret key kept
//! in the cache directory, readable by its owner only. The directory must
//! be the current user's and writable by nobody else, or it is refused. A
//! file that fails its check (swapped for another component's, truncated,
//! patched, written by someone else) is deleted, and the component is
//! compiled again: a run never fails because of the cache. The directory is
//! bounded: past its size, the files used least recently go.

use std::fs::{self, OpenOptions};
use std::io::{Read as _, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Bytes of a MAC, at the end of each file.
const TAG: usize = blake3::OUT_LEN;
/// The secret key's file in the cache directory.
const KEY_FILE: &str = "cache.key";
/// Files written by this cache end with this (the key file does not).
const EXTENSION: &str = "cwasm";

/// Why a cache directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(
        "{path} is not safe for precompiled code: {why}; give the cache a directory of this user's own that only it \
         can write"
    )]
    Unsafe { path: PathBuf, why: String },
}

/// A directory of precompiled components, each bound to its component and
/// engine by a MAC ([the module](self)).
#[derive(Debug)]
pub struct PrecompiledCache {
    dir: PathBuf,
    key: [u8; 32],
    max_bytes: u64,
}

impl PrecompiledCache {
    /// The cache in `dir` (made, owner-only, if missing), holding at most
    /// `max_bytes` of files. Refused when `dir` or its key is not this
    /// user's alone.
    pub fn open(dir: &Path, max_bytes: u64) -> Result<Self, CacheError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| CacheError::Io { path, source }
        };
        fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(io(dir))?;
        let meta = fs::symlink_metadata(dir).map_err(io(dir))?;
        let unsafe_because = |why: String| CacheError::Unsafe { path: dir.to_path_buf(), why };
        if !meta.is_dir() {
            return Err(unsafe_because("it is not a directory (a link?)".into()));
        }
        check_owner(&meta).map_err(unsafe_because)?;
        if meta.mode() & 0o022 != 0 {
            // Ours, made under a loose umask by an earlier braid: made
            // owner-only (what others left in it fails its MAC anyway).
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(io(dir))?;
        }
        let key_path = dir.join(KEY_FILE);
        let key = match read_key(&key_path) {
            Ok(key) => key,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => new_key(&key_path).map_err(io(&key_path))?,
            // Not a key (a write cut short long ago): a new one, which only
            // makes the files under the old one compile again.
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                fs::remove_file(&key_path).map_err(io(&key_path))?;
                new_key(&key_path).map_err(io(&key_path))?
            }
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                return Err(CacheError::Unsafe { path: key_path, why: e.to_string() });
            }
            Err(e) => return Err(CacheError::Io { path: key_path, source: e }),
        };
        Ok(Self { dir: dir.to_path_buf(), key, max_bytes })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, cid: &str, engine: &str) -> PathBuf {
        self.dir.join(format!("{cid}.{engine}.{EXTENSION}"))
    }

    /// The MAC of `code` as the precompiled form of component `cid` for
    /// engine `engine` (each length-prefixed: no two inputs share bytes).
    fn tag(&self, cid: &str, engine: &str, code: &[u8]) -> blake3::Hash {
        let mut mac = blake3::Hasher::new_keyed(&self.key);
        for part in [cid.as_bytes(), engine.as_bytes(), code] {
            mac.update(&(part.len() as u64).to_le_bytes());
            mac.update(part);
        }
        mac.finalize()
    }

    /// The precompiled code of component `cid` for engine `engine`, if this
    /// cache wrote it; a file that fails its check is deleted. A hit counts
    /// as a use for eviction.
    pub fn read(&self, cid: &str, engine: &str) -> Option<Vec<u8>> {
        let path = self.path(cid, engine);
        let mut file = OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(&path).ok()?;
        let mut bytes = Vec::new();
        let checked = file.read_to_end(&mut bytes).is_ok() && bytes.len() >= TAG && {
            let (code, tag) = bytes.split_at(bytes.len() - TAG);
            // (blake3::Hash compares in constant time.)
            <[u8; TAG]>::try_from(tag).is_ok_and(|tag| self.tag(cid, engine, code) == blake3::Hash::from_bytes(tag))
        };
        if !checked {
            self.remove(cid, engine);
            return None;
        }
        let _ = file.set_modified(SystemTime::now());
        bytes.truncate(bytes.len() - TAG);
        Some(bytes)
    }

    /// Keeps `code` as the precompiled form of component `cid` for engine
    /// `engine`, then evicts past the bound. Best effort: a cache that
    /// cannot be written only means compiling again.
    pub fn write(&self, cid: &str, engine: &str, code: &[u8]) {
        let path = self.path(cid, engine);
        let tmp = unique_tmp(&path);
        let Ok(mut file) = OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp) else { return };
        let written = file
            .write_all(code)
            .and_then(|()| file.write_all(self.tag(cid, engine, code).as_bytes()))
            .and_then(|()| fs::rename(&tmp, &path));
        if written.is_err() {
            // (This call's own file: `create_new` made it.)
            let _ = fs::remove_file(&tmp);
        }
        self.evict();
    }

    /// Deletes the file of component `cid` for engine `engine`.
    pub fn remove(&self, cid: &str, engine: &str) {
        let _ = fs::remove_file(self.path(cid, engine));
    }

    /// Deletes the files used least recently until the rest fit the bound.
    fn evict(&self) {
        let Ok(entries) = fs::read_dir(&self.dir) else { return };
        let mut files: Vec<(SystemTime, u64, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == EXTENSION))
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                Some((meta.modified().ok()?, meta.len(), e.path()))
            })
            .collect();
        let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
        files.sort();
        for (_, len, path) in files {
            if total <= self.max_bytes {
                break;
            }
            if fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
    }
}

/// `Err(why)` unless the current user owns what `meta` describes.
fn check_owner(meta: &fs::Metadata) -> Result<(), String> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() == me {
        Ok(())
    } else {
        Err(format!("it belongs to user {}, not to this one ({me})", meta.uid()))
    }
}

/// The key in `path`: 32 bytes, this user's, readable by nobody else.
fn read_key(path: &Path) -> std::io::Result<[u8; 32]> {
    let mut file = OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(path)?;
    let meta = file.metadata()?;
    let denied = |why: String| std::io::Error::new(std::io::ErrorKind::PermissionDenied, why);
    check_owner(&meta).map_err(denied)?;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(denied(format!("others can read or write it (mode {:o})", meta.mode() & 0o777)));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    <[u8; 32]>::try_from(bytes.as_slice())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "it is not a 32-byte key"))
}

/// A new random key, written to `path` whole or not at all (owner-only,
/// written aside and linked into place; if another process linked one
/// first, that one).
fn new_key(path: &Path) -> std::io::Result<[u8; 32]> {
    let mut key = [0; 32];
    getrandom::fill(&mut key).map_err(std::io::Error::other)?;
    let tmp = unique_tmp(path);
    let mut file = OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
    let linked = file.write_all(&key).and_then(|()| file.sync_all()).and_then(|()| fs::hard_link(&tmp, path));
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(key),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read_key(path),
        Err(e) => Err(e),
    }
}

/// A name beside `path` that no other writer of this process or another
/// uses: the process id and a counter.
fn unique_tmp(path: &Path) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp{}-{n}", std::process::id()));
    path.with_file_name(name)
}

/// The key file of the cache in `dir`.
#[cfg(test)]
fn key_path(dir: &Path) -> PathBuf {
    dir.join(KEY_FILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(dir: &Path) -> PrecompiledCache {
        PrecompiledCache::open(dir, 1 << 20).unwrap()
    }

    #[test]
    fn what_it_wrote_reads_back_and_nothing_else_does() {
        let tmp = tempfile::tempdir().unwrap();
        let c = cache(tmp.path());
        c.write("a", "e1", b"code of a");
        c.write("b", "e1", b"code of b");
        assert_eq!(c.read("a", "e1").as_deref(), Some(&b"code of a"[..]));
        assert_eq!(c.read("a", "e2"), None, "another engine's key");
        // Swapped: b's file under a's name.
        fs::copy(c.path("b", "e1"), c.path("a", "e1")).unwrap();
        assert_eq!(c.read("a", "e1"), None, "another component's file was taken");
        assert!(!c.path("a", "e1").exists(), "the swapped file stays");
        // Patched: one byte of the code changed.
        let mut bytes = fs::read(c.path("b", "e1")).unwrap();
        bytes[0] ^= 1;
        fs::write(c.path("b", "e1"), &bytes).unwrap();
        assert_eq!(c.read("b", "e1"), None, "a patched file was taken");
        assert!(!c.path("b", "e1").exists());
        // Truncated, and shorter than a tag.
        for len in [20, 3] {
            c.write("c", "e1", b"code of c, long enough");
            let file = OpenOptions::new().write(true).open(c.path("c", "e1")).unwrap();
            file.set_len(len).unwrap();
            assert_eq!(c.read("c", "e1"), None, "a file truncated to {len} bytes was taken");
        }
        // Written with another cache's key (another user, another data directory).
        let other = tempfile::tempdir().unwrap();
        let forger = cache(other.path());
        forger.write("d", "e1", b"forged");
        fs::copy(forger.path("d", "e1"), c.path("d", "e1")).unwrap();
        assert_eq!(c.read("d", "e1"), None, "a file under another key was taken");
    }

    #[test]
    fn the_key_is_kept_owner_only_and_reused() {
        let tmp = tempfile::tempdir().unwrap();
        cache(tmp.path()).write("a", "e", b"x");
        let mode = fs::metadata(key_path(tmp.path())).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(cache(tmp.path()).read("a", "e").as_deref(), Some(&b"x"[..]), "a new process, the same key");
        // A key cut short is replaced: what it bound compiles again.
        fs::write(key_path(tmp.path()), b"short").unwrap();
        let renewed = cache(tmp.path());
        assert_eq!(renewed.read("a", "e"), None, "a file under the old key was taken");
        assert_eq!(fs::read(key_path(tmp.path())).unwrap().len(), 32);
        // A key others can read is refused, not used.
        fs::set_permissions(key_path(tmp.path()), fs::Permissions::from_mode(0o644)).unwrap();
        let refused = PrecompiledCache::open(tmp.path(), 1 << 20).unwrap_err();
        assert!(matches!(refused, CacheError::Unsafe { .. }), "{refused}");
    }

    #[test]
    fn a_directory_of_someone_else_or_a_link_is_refused_and_ours_made_owner_only() {
        let tmp = tempfile::tempdir().unwrap();
        let loose = tmp.path().join("loose");
        fs::create_dir(&loose).unwrap();
        fs::set_permissions(&loose, fs::Permissions::from_mode(0o1777)).unwrap();
        PrecompiledCache::open(&loose, 1 << 20).unwrap();
        assert_eq!(fs::metadata(&loose).unwrap().permissions().mode() & 0o7777, 0o700, "ours, made owner-only");
        // Someone else's (where this test may give a directory away: as root).
        let theirs = tmp.path().join("theirs");
        fs::create_dir(&theirs).unwrap();
        fs::set_permissions(&theirs, fs::Permissions::from_mode(0o700)).unwrap();
        if std::os::unix::fs::chown(&theirs, Some(4242), Some(4242)).is_ok() {
            let refused = PrecompiledCache::open(&theirs, 1 << 20).unwrap_err();
            assert!(refused.to_string().contains("belongs to user 4242"), "{refused}");
        }
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(tmp.path(), &link).unwrap();
        assert!(PrecompiledCache::open(&link, 1 << 20).is_err(), "a link was followed");
    }

    #[test]
    fn the_files_used_least_recently_go_past_the_bound() {
        let tmp = tempfile::tempdir().unwrap();
        let c = PrecompiledCache::open(tmp.path(), 250).unwrap();
        let old = SystemTime::now() - std::time::Duration::from_secs(60);
        for (i, cid) in ["a", "b"].into_iter().enumerate() {
            c.write(cid, "e", &[0; 64]);
            let file = fs::File::options().write(true).open(c.path(cid, "e")).unwrap();
            file.set_modified(old + std::time::Duration::from_secs(i as u64)).unwrap();
        }
        assert!(c.read("a", "e").is_some(), "a is used: now the newest");
        c.write("c", "e", &[0; 64]);
        c.write("d", "e", &[0; 64]);
        assert!(c.read("b", "e").is_none(), "b, used least recently, stays");
        assert!(c.read("d", "e").is_some());
        let total: u64 = fs::read_dir(tmp.path())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == EXTENSION))
            .map(|e| e.metadata().unwrap().len())
            .sum();
        assert!(total <= 250, "{total} bytes kept");
    }
}
