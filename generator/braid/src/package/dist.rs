//! A build's distribution: every file the publish service serves of a
//! build, made once, by the process that built it (`braid build --dist`),
//! into `DIR/dist/` and listed in the report ([`Dist`]): the generated crate
//! as `crate.tar.gz`, each JS target's package as `pkg-<target>.tgz` (npm
//! pack layout) and their module as `<crate>.wasm`, the component as
//! `<crate>.component.wasm` with its `world.wit`, the HTTP function as
//! `<crate>.http.wasm`, each operation's own web package (`--targets
//! steps`) as `steps-<operation>.tgz`, and the packages of the
//! Cargo and npm registries (a `.crate` per crate, one npm package for
//! every JS platform) with their registry entries. The service stores and
//! records them; it packs nothing itself.
//!
//! Archives are deterministic ([`crate::archive::tar`]): the same build gives
//! the same bytes, and so the same content ids.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::fsutil::{self, FsError};
use crate::manifest::Workflow;
use crate::target::{JsTarget, Target};

#[derive(Debug, thiserror::Error)]
pub enum DistError {
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error("{0:?} is not a plain file name; a distribution's files are named by the crate and its version")]
    BadName(String),
    #[error(transparent)]
    Scope(#[from] super::npm::NpmPackageError),
}

/// What `braid build --dist` made, in the report (`report.json`, and the
/// `report` event the service reads).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dist {
    /// Every file under `DIR/dist/`, by name.
    pub files: Vec<DistFile>,
    /// The registry packages among them.
    pub packages: Vec<RegistryPackage>,
    /// Registry packages that could not be made, and why (the build is no
    /// less good without them).
    pub skipped: Vec<String>,
}

/// A file of the distribution: `DIR/dist/<name>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DistFile {
    /// A plain file name: `crate.tar.gz`, `pkg-node.tgz`, `wf_x.wasm`,
    /// `wf_x-0.1.0.crate`, `npm-wf_x-0.1.0.tgz`, ...
    pub name: String,
    /// CIDv1 (raw, blake3, base32) of its bytes.
    pub cid: String,
    pub size: u64,
    pub media_type: String,
}

/// A package of one of the service's registries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegistryPackage {
    /// `cargo` or `npm`.
    pub ecosystem: String,
    pub name: String,
    pub version: String,
    /// Its archive, a [`DistFile`] of the same distribution.
    pub file: String,
    /// Cargo: its line of the sparse index; npm: its `package.json`.
    pub entry: String,
    /// Cargo: the `.crate`'s SHA-256 (hex); npm: the tarball's `integrity`.
    pub digest: String,
}

const GZIP: &str = "application/gzip";
const WASM: &str = "application/wasm";

/// Makes the distribution of the build of `workflow` in `out` (its crate
/// `crate_name`, built for `targets`) into `out/dist/`, the npm package
/// under `npm_scope` if given.
/// How the name of a distribution's component ends, after its crate name:
/// what the service looks for to run a build.
pub const COMPONENT_SUFFIX: &str = ".component.wasm";

/// How the name of a distribution's HTTP function (`--targets http`) ends.
pub const HTTP_SUFFIX: &str = ".http.wasm";

/// The name of the component in the distribution of crate `crate_name`.
pub fn component_artifact(crate_name: &str) -> String {
    format!("{crate_name}{COMPONENT_SUFFIX}")
}

/// The name of operation `operation`'s own web package (`--targets
/// steps`) in a distribution.
pub fn steps_artifact(operation: &str) -> String {
    format!("steps-{operation}.tgz")
}

pub fn dist(
    out: &Path,
    workflow: &Workflow,
    crate_name: &str,
    targets: &[Target],
    npm_scope: Option<&str>,
) -> Result<Dist, DistError> {
    if let Some(scope) = npm_scope {
        super::npm::check_scope(scope)?;
    }
    let dir = out.join("dist");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(fsutil::at(&dir))?;
    }
    fsutil::create_dir_all(&dir)?;
    let mut dist = Dist::default();
    let add = |dist: &mut Dist, name: String, bytes: &[u8], media_type: &str| -> Result<(), DistError> {
        if !is_plain_name(&name) {
            return Err(DistError::BadName(name));
        }
        fsutil::write(&dir.join(&name), bytes)?;
        let cid = braid_schema::content_id(bytes);
        dist.files.push(DistFile { name, cid, size: bytes.len() as u64, media_type: media_type.into() });
        Ok(())
    };
    add(&mut dist, "crate.tar.gz".into(), &tarball_dir(&out.join("crate"), crate_name)?, GZIP)?;
    let js: Vec<JsTarget> =
        targets.iter().filter_map(|t| if let Target::Js(j) = t { Some(*j) } else { None }).collect();
    for target in &js {
        let pkg = out.join("pkg").join(target.name());
        add(&mut dist, format!("pkg-{}.tgz", target.name()), &tarball_dir(&pkg, "package")?, GZIP)?;
    }
    if let Some(first) = js.first() {
        let wasm = fsutil::read(&out.join("pkg").join(first.name()).join(format!("{crate_name}_bg.wasm")))?;
        add(&mut dist, format!("{crate_name}.wasm"), &wasm, WASM)?;
    }
    if targets.contains(&Target::Component) {
        let component = out.join("component");
        add(
            &mut dist,
            component_artifact(crate_name),
            &fsutil::read(&component.join(format!("{crate_name}.wasm")))?,
            WASM,
        )?;
        add(&mut dist, "world.wit".into(), &fsutil::read(&component.join("world.wit"))?, "text/plain; charset=utf-8")?;
    }
    if targets.contains(&Target::Http) {
        let http = out.join("http").join(format!("{crate_name}.wasm"));
        add(&mut dist, format!("{crate_name}{HTTP_SUFFIX}"), &fsutil::read(&http)?, WASM)?;
    }
    if targets.contains(&Target::Steps) {
        for op in &workflow.operations {
            let pkg = out.join(crate::target::STEPS_DIR).join(op.name());
            add(&mut dist, steps_artifact(op.name()), &tarball_dir(&pkg, "package")?, GZIP)?;
        }
    }
    // A build of operations' own packages alone (the editor's previews)
    // puts nothing in the registries: nobody depends on its crate.
    if targets.iter().all(|t| *t == Target::Steps) {
        return Ok(dist);
    }
    match super::cargo::packages(&out.join("crate")) {
        Ok(crates) => {
            for c in crates {
                let file = format!("{}-{}.crate", c.name, c.version);
                add(&mut dist, file.clone(), &c.bytes, GZIP)?;
                let (ecosystem, entry, digest) = ("cargo".to_string(), c.index_line, c.cksum);
                dist.packages.push(RegistryPackage {
                    ecosystem,
                    name: c.name,
                    version: c.version,
                    file,
                    entry,
                    digest,
                });
            }
        }
        Err(e) => dist.skipped.push(format!("{crate_name} is not in the Cargo registry: {e}")),
    }
    if [JsTarget::Node, JsTarget::Web].iter().all(|t| js.contains(t)) {
        match super::npm::unified(&out.join("pkg"), workflow, crate_name, npm_scope) {
            Ok(npm) => {
                let entries: Vec<(&str, &[u8])> = npm.files.iter().map(|(p, b)| (p.as_str(), b.as_slice())).collect();
                let tgz = tarball(&entries, "package");
                let file = format!("npm-{crate_name}-{}.tgz", npm.version);
                add(&mut dist, file.clone(), &tgz, GZIP)?;
                let (ecosystem, entry, digest) = ("npm".to_string(), npm.package_json.to_string(), integrity(&tgz));
                dist.packages.push(RegistryPackage {
                    ecosystem,
                    name: npm.name,
                    version: npm.version,
                    file,
                    entry,
                    digest,
                });
            }
            Err(e) => dist.skipped.push(format!("{crate_name} is not in the npm registry: {e}")),
        }
    }
    Ok(dist)
}

/// Whether `name` can name a file of a distribution: not empty, not
/// hidden, ASCII letters, digits and `._+-@` only (no path).
pub fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._+-@".contains(&b))
}

/// Files (path relative to the archive's root, bytes) as a gzip'd tar
/// below `prefix/`, as npm packs a package (npm's time, best compression).
pub fn tarball(files: &[(&str, &[u8])], prefix: &str) -> Vec<u8> {
    let layout = crate::archive::Layout { prefix: Some(prefix), mtime: crate::archive::NPM_MTIME };
    crate::archive::gzip(&crate::archive::tar(files, layout), true)
}

/// [`tarball`] of the files under `dir` (recursively).
pub fn tarball_dir(dir: &Path, prefix: &str) -> Result<Vec<u8>, FsError> {
    let files = fsutil::walk(dir)?
        .into_iter()
        .map(|rel| Ok((rel.to_string_lossy().replace('\\', "/"), fsutil::read(&dir.join(&rel))?)))
        .collect::<Result<Vec<_>, FsError>>()?;
    let entries: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (p.as_str(), b.as_slice())).collect();
    Ok(tarball(&entries, prefix))
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
    fn tarballs_are_deterministic_and_readable() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("package.json"), "{}").unwrap();
        std::fs::write(dir.join("src/a.js"), "x").unwrap();
        let a = tarball_dir(dir, "package").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(10));
        std::fs::write(dir.join("src/a.js"), "x").unwrap(); // new mtime, same bytes
        assert_eq!(a, tarball_dir(dir, "package").unwrap());
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(a.as_slice()));
        let names: Vec<String> =
            archive.entries().unwrap().map(|e| e.unwrap().path().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["package/package.json", "package/src/a.js"]);
        let in_memory: [(&str, &[u8]); 2] = [("src/a.js", b"x"), ("package.json", b"{}")];
        assert_eq!(a, tarball(&in_memory, "package"), "the same bytes without a directory");
    }

    #[test]
    fn file_names_are_plain() {
        for ok in ["crate.tar.gz", "pkg-node.tgz", "wf_x-0.1.0+build.1.crate", "npm-wf_x-0.1.0.tgz"] {
            assert!(is_plain_name(ok), "{ok}");
        }
        for bad in ["", ".hidden", "../x", "a/b", "a\\b", "x y", "é"] {
            assert!(!is_plain_name(bad), "{bad}");
        }
    }

    #[test]
    fn integrity_is_npms() {
        // `printf 'a tarball' | openssl dgst -sha512 -binary | base64`
        assert_eq!(
            integrity(b"a tarball"),
            "sha512-/66rIPQC0mxTIVr+G7zGhn/yVrGoqm95T8XcQ++xgCksw1T5z9NWITDJZBfWwJD2T5D21wicFcMZTGAkuKEYAg=="
        );
    }
}
