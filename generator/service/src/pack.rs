//! Deterministic archives of build outputs: the generated crate as
//! `crate.tar.gz` (under `<crate name>/`) and each npm package as a `.tgz`
//! in `npm pack` layout (under `package/`), installable with
//! `npm install ./file.tgz`. Entries are sorted, with fixed times, owners
//! and modes, so the same build gives the same bytes (and the same CID).

use std::path::Path;

/// Packs the files under `dir` (recursively, sorted) below `prefix/`, as
/// npm packs a package: [`braid::archive::tar`] at npm's time, gzip'd at
/// the best compression.
pub fn tar_gz(dir: &Path, prefix: &str) -> std::io::Result<Vec<u8>> {
    let files = braid::fsutil::walk(dir).map_err(|e| std::io::Error::new(e.source.kind(), e.to_string()))?;
    let entries = files
        .into_iter()
        .map(|rel| std::fs::read(dir.join(&rel)).map(|bytes| (rel.to_string_lossy().replace('\\', "/"), bytes)))
        .collect::<std::io::Result<Vec<_>>>()?;
    Ok(tar_gz_entries(entries.iter().map(|(rel, bytes)| (rel.as_str(), bytes.as_slice())), prefix))
}

/// Packs files given as (path relative to the archive's root, bytes) like
/// [`tar_gz`] of a directory holding them, without writing them anywhere.
pub fn tar_gz_entries<'a>(entries: impl IntoIterator<Item = (&'a str, &'a [u8])>, prefix: &str) -> Vec<u8> {
    let entries: Vec<(&str, &[u8])> = entries.into_iter().collect();
    let layout = braid::archive::Layout { prefix: Some(prefix), mtime: braid::archive::NPM_MTIME };
    braid::archive::gzip(&braid::archive::tar(&entries, layout), true)
}

/// npm's `integrity` of a tarball: `sha512-` and the base64 of its SHA-512.
pub fn integrity(bytes: &[u8]) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    format!("sha512-{}", base64::engine::general_purpose::STANDARD.encode(sha2::Sha512::digest(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archives_are_deterministic_and_readable() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("package.json"), "{}").unwrap();
        std::fs::write(dir.join("src/a.js"), "x").unwrap();
        let a = tar_gz(&dir, "package").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(10));
        std::fs::write(dir.join("src/a.js"), "x").unwrap(); // new mtime, same bytes
        assert_eq!(a, tar_gz(&dir, "package").unwrap());
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(a.as_slice()));
        let names: Vec<String> =
            archive.entries().unwrap().map(|e| e.unwrap().path().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["package/package.json", "package/src/a.js"]);
        let in_memory: [(&str, &[u8]); 2] = [("src/a.js", b"x"), ("package.json", b"{}")];
        assert_eq!(a, tar_gz_entries(in_memory, "package"), "the same bytes without a directory");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
