//! Archives: [`tar`], the one deterministic tar writer (an operation's
//! source, whose content id names it: [`pack`], [`source_id`]; a
//! generated crate's `.crate`s and tarballs; npm packages), and reading an
//! untrusted upload back ([`unpack_tar_gz`], in `unpack.rs`).

mod unpack;

pub use self::unpack::{unpack_tar_gz, write_files, ArchiveError, Limits};

/// How [`tar`] lays out an archive: where its entries go and when they
/// were written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout<'a> {
    /// Every path below `prefix/` (`package/` for npm, `<crate>/` for a
    /// crate's sources), or at the root.
    pub prefix: Option<&'a str>,
    /// Every entry's modification time, in seconds since 1970.
    pub mtime: u64,
}

impl Layout<'_> {
    /// At the root, time 0: the archive behind an operation's source id.
    pub const SOURCE: Layout<'static> = Layout { prefix: None, mtime: 0 };
}

/// The time npm itself stamps on packed files (1985-10-26T08:15:00Z).
pub const NPM_MTIME: u64 = 499_162_500;

/// The one deterministic tar writer: `files` (path, bytes) sorted by path,
/// regular files only, mode 0644, uid and gid 0, no user names, laid out
/// as `layout` says. The same files give the same bytes, whatever their
/// order.
pub fn tar(files: &[(&str, &[u8])], layout: Layout<'_>) -> Vec<u8> {
    let mut sorted = files.to_vec();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    let mut builder = tar::Builder::new(Vec::new());
    for (path, bytes) in sorted {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(layout.mtime);
        header.set_uid(0);
        header.set_gid(0);
        let path = match layout.prefix {
            Some(prefix) => format!("{prefix}/{path}"),
            None => path.to_string(),
        };
        builder.append_data(&mut header, path, bytes).expect("writing a tar to memory cannot fail");
    }
    builder.into_inner().expect("writing a tar to memory cannot fail")
}

/// `bytes` gzip'd, deterministically (the header has no name and time 0),
/// at the best compression (`best`, npm packages) or the default.
pub fn gzip(bytes: &[u8], best: bool) -> Vec<u8> {
    let level = if best { flate2::Compression::best() } else { flate2::Compression::default() };
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), level);
    std::io::Write::write_all(&mut gz, bytes).expect("writing to memory cannot fail");
    gz.finish().expect("writing to memory cannot fail")
}

/// [`tar`] of an operation's source files ([`Layout::SOURCE`]).
pub fn pack(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let entries: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (p.as_str(), b.as_slice())).collect();
    tar(&entries, Layout::SOURCE)
}

/// [`pack`], gzip'd: what `braid ops publish` uploads.
pub fn pack_gz(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    gzip(&pack(files), false)
}

/// The content id of the files' [`pack`]: an operation's `source`.
pub fn source_id(files: &[(String, Vec<u8>)]) -> String {
    braid_schema::content_id(&pack(files))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of each kind of archive never change: an operation's
    /// source id, and every CID of a build's packages, depend on them.
    #[test]
    fn archives_keep_their_bytes() {
        let files = [("b/c.txt", &b"second"[..]), ("a.txt", &b"first"[..])];
        let owned: Vec<(String, Vec<u8>)> = files.iter().map(|(p, b)| (p.to_string(), b.to_vec())).collect();
        let cid = |bytes: &[u8]| braid_schema::content_id(bytes);
        assert_eq!(cid(&pack(&owned)), "bafkr4igcsv3zlvw7j4eggka5j64puzu7vpdj3kp3d7ly2tubgdl5aefosu");
        assert_eq!(cid(&pack_gz(&owned)), "bafkr4icu4qmfi3byzkucs67uv6rws6sy6ywqntsniu3bpmye4b2kkkv6pe");
        let npm = Layout { prefix: Some("package"), mtime: NPM_MTIME };
        assert_eq!(
            cid(&super::gzip(&tar(&files, npm), true)),
            "bafkr4idco3kdy5lfhe3rkbsswdbnbdv3zzus3xqqarfln2mqaln2qcz6ke"
        );
    }
}
