//! Reading an untrusted `.tar.gz` upload: [`unpack_tar_gz`] reads it in
//! memory under [`Limits`], refusing anything but plain files with plain
//! relative paths, and [`write_files`] puts the files in a new directory
//! without following links.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use crate::fsutil::{self, FsError};

/// Caps on what [`unpack_tar_gz`] accepts. The defaults fit any operation
/// crate's source (sources, a manifest, a README, a few test vectors) many
/// times over, while an upload that hits one costs the service at most a
/// few tens of MiB of memory and no disk:
///
/// - `compressed_bytes`: 8 MiB, the upload as sent;
/// - `unpacked_bytes`: 64 MiB, every byte the gzip stream yields (file
///   data, tar headers and padding), counted while decompressing: a gzip
///   bomb stops there;
/// - `file_bytes`: 16 MiB for one file;
/// - `files`: 2,000 regular files;
/// - `depth`: 16 components in a path (`src/lib.rs` has 2) below the
///   single top-level directory; checked on the stored path, which may
///   have that directory, so 17 there;
/// - `path_bytes`: 255 bytes in a normalized path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub compressed_bytes: u64,
    pub unpacked_bytes: u64,
    pub file_bytes: u64,
    pub files: usize,
    pub depth: usize,
    pub path_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            compressed_bytes: 8 << 20,
            unpacked_bytes: 64 << 20,
            file_bytes: 16 << 20,
            files: 2_000,
            depth: 16,
            path_bytes: 255,
        }
    }
}

/// Why an archive was refused, naming the entry where there is one.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("the archive is {size} bytes; the limit is {limit} bytes compressed")]
    CompressedTooLarge { size: u64, limit: u64 },
    #[error("the archive unpacks to more than {limit} bytes (a gzip bomb?)")]
    UnpackedTooLarge { limit: u64 },
    #[error("`{path}` is {size} bytes; the limit for one file is {limit} bytes")]
    FileTooLarge { path: String, size: u64, limit: u64 },
    #[error("the archive holds more than {limit} files")]
    TooManyFiles { limit: usize },
    #[error("`{path}` has {depth} path components; the limit is {limit} (plus one top-level directory)")]
    TooDeep { path: String, depth: usize, limit: usize },
    #[error("`{path}` is a path of {len} bytes; the limit is {limit}")]
    PathTooLong { path: String, len: usize, limit: usize },
    #[error("`{path}` is an absolute path; entries must be relative")]
    AbsolutePath { path: String },
    #[error("`{path}` has a `..` component")]
    ParentDir { path: String },
    #[error("`{path}`: {reason}")]
    BadPath { path: String, reason: &'static str },
    #[error("the path `{path}` is not UTF-8")]
    NonUtf8Path { path: String },
    #[error("`{path}` is a symbolic link (to `{target}`); an operation's source has only files")]
    Symlink { path: String, target: String },
    #[error("`{path}` is a hard link (to `{target}`); an operation's source has only files")]
    HardLink { path: String, target: String },
    #[error("`{path}` is a device file")]
    Device { path: String },
    #[error("`{path}` is a FIFO")]
    Fifo { path: String },
    #[error("`{path}` is a tar entry of type {kind}; only files and directories are accepted")]
    UnsupportedEntry { path: String, kind: String },
    #[error("`{path}` appears twice")]
    Duplicate { path: String },
    #[error("`{path}` is a file and also a directory of `{inner}`")]
    FileAndDirectory { path: String, inner: String },
    #[error("not a gzip'd tar archive: {0}")]
    Malformed(String),
    #[error(transparent)]
    Fs(#[from] FsError),
}

/// Reads an untrusted gzip'd tar held in memory and returns its regular
/// files, sorted by normalized path (`/`-separated, relative, no `.`
/// components, no trailing or doubled `/`). Directory entries are checked
/// and skipped, a pax global header (as `git archive` writes) skipped; any
/// other entry type, any unsafe or duplicate path and any limit exceeded
/// refuses the whole archive.
///
/// The single top-level directory rule: when every file's path has at
/// least two components and all start with the same one (as
/// `tar czf x.tar.gz mycrate/` makes), that first component is removed,
/// so `mycrate/Cargo.toml` becomes `Cargo.toml`. Otherwise paths stay as
/// they are.
pub fn unpack_tar_gz(bytes: &[u8], limits: &Limits) -> Result<Vec<(String, Vec<u8>)>, ArchiveError> {
    let size = bytes.len() as u64;
    if size > limits.compressed_bytes {
        return Err(ArchiveError::CompressedTooLarge { size, limit: limits.compressed_bytes });
    }
    let exceeded = std::cell::Cell::new(false);
    let reader =
        Budget { inner: flate2::read::GzDecoder::new(bytes), left: limits.unpacked_bytes, exceeded: &exceeded };
    let too_large = || ArchiveError::UnpackedTooLarge { limit: limits.unpacked_bytes };
    // The tar crate wraps our reader's error in its own: the flag tells.
    let io_error =
        |e: std::io::Error| if exceeded.get() { too_large() } else { ArchiveError::Malformed(e.to_string()) };

    let mut archive = tar::Archive::new(reader);
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut read = 0u64; // file bytes so far
    for entry in archive.entries().map_err(io_error)? {
        let mut entry = entry.map_err(io_error)?;
        let raw = entry.path_bytes().into_owned();
        let path = normalize(&raw, limits)?;
        let kind = entry.header().entry_type();
        let link = || entry.link_name_bytes().map(|l| String::from_utf8_lossy(&l).into_owned()).unwrap_or_default();
        match kind {
            tar::EntryType::Regular if path == "." => {
                return Err(ArchiveError::BadPath { path, reason: "a file with no name" })
            }
            tar::EntryType::Regular => {}
            tar::EntryType::Directory | tar::EntryType::XGlobalHeader => continue,
            tar::EntryType::Symlink => return Err(ArchiveError::Symlink { target: link(), path }),
            tar::EntryType::Link => return Err(ArchiveError::HardLink { target: link(), path }),
            tar::EntryType::Char | tar::EntryType::Block => return Err(ArchiveError::Device { path }),
            tar::EntryType::Fifo => return Err(ArchiveError::Fifo { path }),
            other => return Err(ArchiveError::UnsupportedEntry { path, kind: format!("{other:?}") }),
        }
        if files.len() >= limits.files {
            return Err(ArchiveError::TooManyFiles { limit: limits.files });
        }
        let size = entry.size();
        if size > limits.file_bytes {
            return Err(ArchiveError::FileTooLarge { path, size, limit: limits.file_bytes });
        }
        if files.contains_key(&path) {
            return Err(ArchiveError::Duplicate { path });
        }
        // Never more room than the budget has left: the reader's budget
        // bounds what is read, whatever the headers claim.
        let left = limits.unpacked_bytes.saturating_sub(read);
        if size > left {
            return Err(too_large());
        }
        let mut data = Vec::with_capacity(size as usize);
        (&mut entry).take(size).read_to_end(&mut data).map_err(io_error)?;
        read += data.len() as u64;
        files.insert(path, data);
    }
    if exceeded.get() {
        return Err(too_large());
    }
    for path in files.keys() {
        // A file whose path is also a directory of another file.
        if let Some(inner) = files.range(format!("{path}/")..).next().map(|(p, _)| p) {
            if inner.starts_with(&format!("{path}/")) {
                return Err(ArchiveError::FileAndDirectory { path: path.clone(), inner: inner.clone() });
            }
        }
    }
    Ok(strip_top_level(files))
}

/// A relative, normalized path from a tar entry's, or why not.
fn normalize(raw: &[u8], limits: &Limits) -> Result<String, ArchiveError> {
    let Ok(text) = std::str::from_utf8(raw) else {
        return Err(ArchiveError::NonUtf8Path { path: String::from_utf8_lossy(raw).into_owned() });
    };
    let path = || text.to_string();
    if text.starts_with('/') {
        return Err(ArchiveError::AbsolutePath { path: path() });
    }
    if text.contains('\\') {
        return Err(ArchiveError::BadPath { path: path(), reason: "a `\\` in a path" });
    }
    if text.chars().any(char::is_control) {
        return Err(ArchiveError::BadPath { path: path(), reason: "a control character in a path" });
    }
    let mut parts = Vec::new();
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(ArchiveError::ParentDir { path: path() }),
            part => parts.push(part),
        }
    }
    if parts.is_empty() {
        // `./` itself, as `tar czf x.tar.gz .` writes first.
        return Ok(".".to_string());
    }
    if parts.len() > limits.depth + 1 {
        return Err(ArchiveError::TooDeep { path: path(), depth: parts.len(), limit: limits.depth });
    }
    let normalized = parts.join("/");
    if normalized.len() > limits.path_bytes {
        return Err(ArchiveError::PathTooLong { path: path(), len: normalized.len(), limit: limits.path_bytes });
    }
    Ok(normalized)
}

/// Removes the one top-level directory all files share, if they do.
fn strip_top_level(files: BTreeMap<String, Vec<u8>>) -> Vec<(String, Vec<u8>)> {
    let top = |p: &str| p.split_once('/').map(|(top, _)| top.to_string());
    let first = files.keys().next().and_then(|p| top(p));
    let shared = first.filter(|first| files.keys().all(|p| top(p).as_ref() == Some(first)));
    match shared {
        Some(top) => files.into_iter().map(|(p, bytes)| (p[top.len() + 1..].to_string(), bytes)).collect(),
        None => files.into_iter().collect(),
    }
}

/// Writes `files` (as [`unpack_tar_gz`] returns them) under `dir`, which
/// must not exist yet: it is created, then every directory and file below
/// it, files with `create_new` (never replacing or following anything
/// already there) and mode 0644. Paths are checked again as in
/// [`unpack_tar_gz`] (relative, no `..`).
pub fn write_files(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<(), ArchiveError> {
    let limits = Limits { depth: usize::MAX - 1, path_bytes: usize::MAX, ..Limits::default() };
    if let Some(parent) = dir.parent() {
        fsutil::create_dir_all(parent)?;
    }
    std::fs::create_dir(dir).map_err(fsutil::at(dir))?;
    for (path, bytes) in files {
        let rel = normalize(path.as_bytes(), &limits)?;
        if rel == "." {
            return Err(ArchiveError::BadPath { path: path.clone(), reason: "an empty path" });
        }
        let target = dir.join(&rel);
        let mut at = dir.to_path_buf();
        let (dirs, _) = rel.rsplit_once('/').unwrap_or(("", ""));
        for part in dirs.split('/').filter(|p| !p.is_empty()) {
            at.push(part);
            match std::fs::create_dir(&at) {
                Ok(()) => {}
                // Made for an earlier file: a real directory, never a link.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let meta = std::fs::symlink_metadata(&at).map_err(fsutil::at(&at))?;
                    if !meta.is_dir() {
                        return Err(FsError { path: at, source: e }.into());
                    }
                }
                Err(e) => return Err(FsError { path: at, source: e }.into()),
            }
        }
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o644).custom_flags(libc::O_NOFOLLOW);
        }
        let mut file = options.open(&target).map_err(fsutil::at(&target))?;
        std::io::Write::write_all(&mut file, bytes).map_err(fsutil::at(&target))?;
    }
    Ok(())
}

/// A reader that yields at most `left` bytes, then fails (and says so in
/// `exceeded`) rather than reach the end quietly.
struct Budget<'a, R> {
    inner: R,
    left: u64,
    exceeded: &'a std::cell::Cell<bool>,
}

impl<R: Read> Read for Budget<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.exceeded.get() {
            return Err(std::io::Error::other("unpacked size limit exceeded"));
        }
        // One byte past the budget tells "more" from "exactly the limit".
        let want = buf.len().min(usize::try_from(self.left.saturating_add(1)).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        if n as u64 > self.left {
            self.exceeded.set(true);
            return Err(std::io::Error::other("unpacked size limit exceeded"));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{pack, source_id};
    use super::*;
    use std::io::Write;

    fn files(list: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
        list.iter().map(|(p, b)| (p.to_string(), b.as_bytes().to_vec())).collect()
    }

    fn gzip(tar: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(tar).unwrap();
        gz.finish().unwrap()
    }

    /// A raw header: `name` written byte for byte (the tar crate's
    /// set_path refuses `..` and absolute paths, as it should).
    fn header(name: &[u8], kind: tar::EntryType, size: u64) -> tar::Header {
        let mut h = tar::Header::new_gnu();
        h.as_old_mut().name[..name.len()].copy_from_slice(name);
        h.set_entry_type(kind);
        h.set_size(size);
        h.set_mode(0o644);
        h
    }

    /// A gzip'd tar of raw entries (header, data).
    fn hostile(entries: Vec<(tar::Header, Vec<u8>)>) -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        for (mut h, data) in entries {
            h.set_cksum();
            tar.append(&h, data.as_slice()).unwrap();
        }
        gzip(&tar.into_inner().unwrap())
    }

    fn unpack(bytes: &[u8]) -> Result<Vec<(String, Vec<u8>)>, ArchiveError> {
        unpack_tar_gz(bytes, &Limits::default())
    }

    #[test]
    fn archive_round_trips_through_pack_and_unpack() {
        let long = format!("src/{}/deep.rs", "d".repeat(120));
        let mut input = files(&[("src/lib.rs", "pub fn f() {}\n"), ("Cargo.toml", "[package]\n"), ("empty", "")]);
        input.push((long.clone(), vec![0, 1, 2, 255]));
        let out = unpack(&gzip(&pack(&input))).unwrap();
        let mut expected = input.clone();
        expected.sort();
        assert_eq!(out, expected);
        assert!(out.iter().any(|(p, _)| *p == long), "long names survive");
    }

    #[test]
    fn archive_pack_is_deterministic_and_order_independent() {
        let a = files(&[("b.rs", "b"), ("a/x.rs", "x"), ("Cargo.toml", "c")]);
        let mut b = a.clone();
        b.reverse();
        assert_eq!(pack(&a), pack(&a));
        assert_eq!(pack(&a), pack(&b));
        assert_eq!(source_id(&a), source_id(&b));
        assert!(source_id(&a).starts_with('b'), "{}", source_id(&a));
        assert_ne!(source_id(&a), source_id(&files(&[("b.rs", "B"), ("a/x.rs", "x"), ("Cargo.toml", "c")])));
        // The header fields the doc promises.
        let mut archive = tar::Archive::new(std::io::Cursor::new(pack(&a)));
        let paths: Vec<String> = archive
            .entries()
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let h = e.header();
                assert_eq!(
                    (h.mode().unwrap(), h.mtime().unwrap(), h.uid().unwrap(), h.gid().unwrap()),
                    (0o644, 0, 0, 0)
                );
                assert_eq!((h.username().unwrap(), h.groupname().unwrap()), (Some(""), Some("")));
                assert_eq!(h.entry_type(), tar::EntryType::Regular);
                e.path().unwrap().display().to_string()
            })
            .collect();
        assert_eq!(paths, ["Cargo.toml", "a/x.rs", "b.rs"]);
    }

    #[test]
    fn archive_strips_one_shared_top_level_directory_only() {
        let mut tar = tar::Builder::new(Vec::new());
        let mut dir = tar::Header::new_gnu();
        dir.set_entry_type(tar::EntryType::Directory);
        dir.set_size(0);
        tar.append_data(&mut dir, "mycrate/", std::io::empty()).unwrap();
        for (path, body) in [("mycrate/Cargo.toml", "c"), ("mycrate/src/lib.rs", "l"), ("./mycrate//README", "r")] {
            let mut h = tar::Header::new_gnu();
            h.set_size(body.len() as u64);
            tar.append_data(&mut h, path, body.as_bytes()).unwrap();
        }
        let out = unpack(&gzip(&tar.into_inner().unwrap())).unwrap();
        assert_eq!(out, files(&[("Cargo.toml", "c"), ("README", "r"), ("src/lib.rs", "l")]));
        // Two top-level entries: kept as they are.
        let kept = files(&[("a/x", "1"), ("b/y", "2")]);
        assert_eq!(unpack(&gzip(&pack(&kept))).unwrap(), kept);
        let kept = files(&[("Cargo.toml", "c"), ("src/lib.rs", "l")]);
        assert_eq!(unpack(&gzip(&pack(&kept))).unwrap(), kept);
    }

    #[test]
    fn archive_refuses_parent_dir_components() {
        let e = unpack(&hostile(vec![(header(b"src/../../etc/cron.d/x", tar::EntryType::Regular, 1), b"x".to_vec())]))
            .unwrap_err();
        assert!(matches!(&e, ArchiveError::ParentDir { path } if path == "src/../../etc/cron.d/x"), "{e}");
        assert!(e.to_string().contains("src/../../etc/cron.d/x"), "{e}");
    }

    #[test]
    fn archive_refuses_absolute_paths() {
        let e =
            unpack(&hostile(vec![(header(b"/etc/passwd", tar::EntryType::Regular, 1), b"x".to_vec())])).unwrap_err();
        assert!(matches!(&e, ArchiveError::AbsolutePath { path } if path == "/etc/passwd"), "{e}");
    }

    #[test]
    fn archive_refuses_symlinks_and_hard_links() {
        let mut link = header(b"crate/passwd", tar::EntryType::Symlink, 0);
        link.set_link_name("/etc/passwd").unwrap();
        let e = unpack(&hostile(vec![(link, vec![])])).unwrap_err();
        assert!(
            matches!(&e, ArchiveError::Symlink { path, target } if path == "crate/passwd" && target == "/etc/passwd")
        );
        assert!(e.to_string().contains("crate/passwd"), "{e}");

        let mut hard = header(b"crate/shadow", tar::EntryType::Link, 0);
        hard.set_link_name("crate/lib.rs").unwrap();
        let file = header(b"crate/lib.rs", tar::EntryType::Regular, 1);
        let e = unpack(&hostile(vec![(file, b"x".to_vec()), (hard, vec![])])).unwrap_err();
        assert!(
            matches!(&e, ArchiveError::HardLink { path, target } if path == "crate/shadow" && target == "crate/lib.rs")
        );
    }

    #[test]
    fn archive_refuses_devices_fifos_and_other_entry_types() {
        let mut dev = header(b"crate/null", tar::EntryType::Char, 0);
        dev.set_device_major(1).unwrap();
        dev.set_device_minor(3).unwrap();
        let e = unpack(&hostile(vec![(dev, vec![])])).unwrap_err();
        assert!(matches!(&e, ArchiveError::Device { path } if path == "crate/null"), "{e}");
        let e = unpack(&hostile(vec![(header(b"crate/sda", tar::EntryType::Block, 0), vec![])])).unwrap_err();
        assert!(matches!(&e, ArchiveError::Device { .. }), "{e}");
        let e = unpack(&hostile(vec![(header(b"crate/pipe", tar::EntryType::Fifo, 0), vec![])])).unwrap_err();
        assert!(matches!(&e, ArchiveError::Fifo { path } if path == "crate/pipe"), "{e}");
        let e = unpack(&hostile(vec![(header(b"crate/c", tar::EntryType::Continuous, 0), vec![])])).unwrap_err();
        assert!(matches!(&e, ArchiveError::UnsupportedEntry { path, .. } if path == "crate/c"), "{e}");
    }

    #[test]
    fn archive_refuses_duplicates_non_utf8_and_file_directory_clashes() {
        let twice = vec![
            (header(b"a/x", tar::EntryType::Regular, 1), b"1".to_vec()),
            (header(b"a/./x", tar::EntryType::Regular, 1), b"2".to_vec()),
        ];
        let e = unpack(&hostile(twice)).unwrap_err();
        assert!(matches!(&e, ArchiveError::Duplicate { path } if path == "a/x"), "{e}");
        let e = unpack(&hostile(vec![(header(b"a/\xff", tar::EntryType::Regular, 1), b"1".to_vec())])).unwrap_err();
        assert!(matches!(e, ArchiveError::NonUtf8Path { .. }), "{e}");
        let clash = files(&[("a/x", "file"), ("a/x/y", "inner")]);
        let e = unpack(&gzip(&pack(&clash))).unwrap_err();
        assert!(matches!(&e, ArchiveError::FileAndDirectory { path, inner } if path == "a/x" && inner == "a/x/y"));
        let e = unpack(&hostile(vec![(header(b"a\\..\\x", tar::EntryType::Regular, 1), b"1".to_vec())])).unwrap_err();
        assert!(matches!(e, ArchiveError::BadPath { .. }), "{e}");
    }

    /// A gzip'd tar of one header claiming `size` bytes of zeroes, and
    /// those zeroes (compressed about 1000:1).
    fn zero_bomb(name: &[u8], kind: tar::EntryType, size: u64) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let mut h = header(name, kind, size);
        h.set_cksum();
        gz.write_all(h.as_bytes()).unwrap();
        let zeroes = vec![0u8; 1 << 20];
        let mut left = size.next_multiple_of(512);
        while left > 0 {
            let n = left.min(zeroes.len() as u64);
            gz.write_all(&zeroes[..n as usize]).unwrap();
            left -= n;
        }
        gz.finish().unwrap()
    }

    #[test]
    fn archive_stops_a_gzip_bomb_at_the_unpacked_limit() {
        let limits = Limits::default();
        let size = limits.unpacked_bytes + 1;
        let bomb = zero_bomb(b"bomb", tar::EntryType::Regular, size);
        assert!((bomb.len() as u64) < limits.compressed_bytes / 8, "{} bytes", bomb.len());
        // The declared size is over the per-file limit, then (that limit
        // raised) over the total: refused before a byte is read.
        let e = unpack_tar_gz(&bomb, &limits).unwrap_err();
        assert!(matches!(&e, ArchiveError::FileTooLarge { path, .. } if path == "bomb"), "{e}");
        let e = unpack_tar_gz(&bomb, &Limits { file_bytes: u64::MAX, ..limits }).unwrap_err();
        assert!(matches!(e, ArchiveError::UnpackedTooLarge { limit } if limit == limits.unpacked_bytes), "{e}");
        // A GNU long name the tar crate reads whole into memory, before any
        // check of ours sees an entry: the budget of the reader stops it.
        let bomb = zero_bomb(b"././@LongLink", tar::EntryType::GNULongName, size);
        let e = unpack_tar_gz(&bomb, &limits).unwrap_err();
        assert!(matches!(e, ArchiveError::UnpackedTooLarge { .. }), "{e}");
        // Many files, each within the limit, together over it.
        let small = Limits { unpacked_bytes: 1 << 20, ..limits };
        let many: Vec<(String, Vec<u8>)> = (0..8).map(|i| (format!("f{i}"), vec![0u8; 256 << 10])).collect();
        let e = unpack_tar_gz(&gzip(&pack(&many)), &small).unwrap_err();
        assert!(matches!(e, ArchiveError::UnpackedTooLarge { .. }), "{e}");
    }

    #[test]
    fn archive_refuses_too_large_too_many_too_deep_and_too_long() {
        let limits = Limits::default();
        let e = unpack(&vec![0u8; (limits.compressed_bytes + 1) as usize]).unwrap_err();
        assert!(matches!(e, ArchiveError::CompressedTooLarge { .. }), "{e}");
        let many: Vec<(String, Vec<u8>)> = (0..=limits.files).map(|i| (format!("f{i}"), vec![])).collect();
        let e = unpack(&gzip(&pack(&many))).unwrap_err();
        assert!(matches!(e, ArchiveError::TooManyFiles { limit: 2_000 }), "{e}");
        let deep = format!("{}f", "d/".repeat(limits.depth + 1));
        let e = unpack(&gzip(&pack(&[(deep.clone(), vec![])]))).unwrap_err();
        assert!(matches!(&e, ArchiveError::TooDeep { path, .. } if *path == deep), "{e}");
        // Within the depth limit plus the top-level directory: accepted.
        let ok = format!("top/{}f", "d/".repeat(limits.depth - 1));
        assert_eq!(unpack(&gzip(&pack(&[(ok, vec![])]))).unwrap().len(), 1);
        let long = "x".repeat(limits.path_bytes + 1);
        let e = unpack(&gzip(&pack(&[(long, vec![])]))).unwrap_err();
        assert!(matches!(e, ArchiveError::PathTooLong { .. }), "{e}");
        let e = unpack(b"not gzip at all").unwrap_err();
        assert!(matches!(e, ArchiveError::Malformed(_)), "{e}");
    }

    #[test]
    fn archive_writes_files_into_a_new_directory_only() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let dir = root.join("crate");
        let input = files(&[("Cargo.toml", "c"), ("src/lib.rs", "l"), ("src/a/b.rs", "b")]);
        write_files(&dir, &input).unwrap();
        let listed: Vec<String> = fsutil::walk(&dir).unwrap().iter().map(|p| p.display().to_string()).collect();
        assert_eq!(listed, ["Cargo.toml", "src/a/b.rs", "src/lib.rs"]);
        assert_eq!(std::fs::read(dir.join("src/a/b.rs")).unwrap(), b"b");
        // Never into an existing directory, never a path out of it.
        assert!(matches!(write_files(&dir, &input), Err(ArchiveError::Fs(_))));
        let e = write_files(&root.join("other"), &files(&[("../escape", "x")])).unwrap_err();
        assert!(matches!(e, ArchiveError::ParentDir { .. }), "{e}");
        assert!(!root.join("escape").exists());
        let e = write_files(&root.join("abs"), &files(&[("/tmp/escape", "x")])).unwrap_err();
        assert!(matches!(e, ArchiveError::AbsolutePath { .. }), "{e}");
        // Two entries for one path: the second is refused, not written over.
        let e = write_files(&root.join("twice"), &files(&[("a", "1"), ("a", "2")])).unwrap_err();
        assert!(matches!(e, ArchiveError::Fs(_)), "{e}");
        assert_eq!(std::fs::read(root.join("twice/a")).unwrap(), b"1");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
