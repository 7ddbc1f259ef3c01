//! The files this `braid` ships, embedded by `build.rs`: its templates, and
//! the workspace it was built from (the runtime crates, the built-in
//! operations, the root `Cargo.toml` and `Cargo.lock`). The one place the
//! compiler reads them; [`packed`] is what `cargo xtask package` puts in a
//! package for its `build.rs` to embed again.

mod generated {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

pub use self::generated::FILES;

/// The workspace file `rel` (relative to its root), if braid ships it.
pub fn file(rel: &str) -> Option<&'static [u8]> {
    FILES.iter().find(|(p, _)| *p == rel).map(|(_, b)| *b)
}

/// The template at `rel` under `templates/` (`lib.rs.hbs`, `op/Cargo.toml.hbs`).
///
/// # Panics
/// When braid was built without it, or it is not UTF-8: a bug in the
/// build, which every test that renders finds.
pub fn template(rel: &str) -> &'static str {
    let path = format!("templates/{rel}");
    let bytes = generated::TEMPLATES.iter().find(|(p, _)| *p == path).map(|(_, b)| *b);
    std::str::from_utf8(bytes.unwrap_or_else(|| panic!("braid was built without its template {path}")))
        .unwrap_or_else(|_| panic!("the template {path} is not UTF-8"))
}

/// Every embedded file, templates included, as one deterministic tar:
/// `embedded.tar`, what `build.rs` reads where the workspace is not there.
pub fn packed() -> Vec<u8> {
    let files: Vec<(&str, &[u8])> = FILES.iter().chain(generated::TEMPLATES).copied().collect();
    crate::archive::tar(&files, crate::archive::Layout::SOURCE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_and_workspace_files_are_embedded() {
        assert!(template("lib.rs.hbs").contains("{{"));
        assert!(template("op/Cargo.toml.hbs").contains("[package]"));
        assert!(file("Cargo.lock").is_some_and(|lock| lock.starts_with(b"# This file is automatically")));
        assert!(file("operations/support/src/wasm.js").is_some());
        assert!(FILES.iter().all(|(p, _)| !p.starts_with("templates/")), "templates are not workspace files");
    }

    #[test]
    fn the_package_tar_holds_every_file_once() {
        let tar = packed();
        let mut archive = ::tar::Archive::new(&tar[..]);
        let paths: Vec<String> =
            archive.entries().unwrap().map(|e| e.unwrap().path().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(paths.len(), FILES.len() + generated::TEMPLATES.len());
        assert!(paths.iter().any(|p| p == "templates/world.wit.hbs"), "{paths:?}");
        assert_eq!(packed(), tar, "deterministic");
    }
}
