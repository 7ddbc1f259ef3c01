//! The crates users install or depend on, as a registry would have them:
//! packaged by `cargo package`, verified, and `braid-cli` installed from
//! its package with `cargo install`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context as _, Result};

use crate::tasks::{cargo, run};

/// The crates a user installs or depends on, in the order `cargo package`
/// needs no registry for: each one's path dependencies come before it.
pub const PACKAGES: &[&str] = &[
    "braid-schema",
    "braid-macro-support",
    "braid-support",
    "braid-macros",
    "braid",
    "braid-engine",
    "braid-store",
    "braid-worker",
    "braid-service",
    "braid-cli",
];

/// The crate `cargo install` installs.
const CLI: &str = "braid-cli";

/// Every crate of [`PACKAGES`] packaged (`target/package/<name>-<version>.crate`)
/// and each built from its package once, against the packages of the others:
///
/// - without `install`, by `cargo package`'s verification, every crate;
/// - with `install`, `braid-cli` installed from its package with
///   `cargo install` (debug, into `target/package/install`), its path
///   dependencies patched to theirs, builds it and every package it
///   depends on; `cargo package` verifies the rest (`braid-macros`) and
///   `braid` (whose `build.rs` reads the `embedded.tar` only a package has),
///   with what they depend on. Verifying the crates the install builds
///   anyway built each a second time, with the features of that crate
///   alone: this step took 7 min 5 s on a fresh clone then, 2 min 13 s now.
///   The installed `braid` then generates a crate (its templates and
///   runtime crates come from the package's `embedded.tar`).
pub fn package(root: &Path, install: bool) -> Result<()> {
    let target = target_dir(root)?;
    // Built with the workspace's features, as `cargo test --workspace`
    // builds it (so that build reuses this one): `cargo run -p braid`
    // resolved braid's alone, and compiled braid and its dependencies
    // once more for it (56 s on 2 cores).
    run(root, cargo().args(["build", "--quiet", "--workspace", "--example", "embedded_tar"]))?;
    let tar = root.join("generator/braid/embedded.tar");
    run(root, Command::new(target.join("debug/examples/embedded_tar")).arg(&tar))?;
    let crates = crates(root)?;
    forget_extracted_packages(&crates)?;
    forget_packaged_builds(&target)?;
    let verified = if install { verified_before_install(&crates) } else { PACKAGES.iter().copied().collect() };
    if verified.len() < PACKAGES.len() {
        run(root, cargo_package(PACKAGES.iter().copied()).arg("--no-verify"))?;
    }
    run(root, &mut cargo_package(PACKAGES.iter().copied().filter(|name| verified.contains(name))))?;
    if !install {
        println!("package: {} packaged and verified", PACKAGES.join(", "));
        return Ok(());
    }
    let installed = target.join("package/install");
    let sources = unpack(&target, &crates, &installed.join("src"))?;
    let mut cmd = cargo();
    cmd.args(["install", "--quiet", "--locked", "--debug", "--force", "--path"]).arg(&sources[CLI]);
    cmd.arg("--root").arg(&installed).arg("--target-dir").arg(&target);
    for (name, dir) in sources.iter().filter(|(name, _)| *name != CLI) {
        cmd.arg("--config").arg(format!("patch.crates-io.{name}.path={:?}", dir.display().to_string()));
    }
    run(root, &mut cmd)?;
    let scratch = tempfile::tempdir()?;
    let out = scratch.path().join("crate");
    let braid = installed.join("bin/braid");
    run(root, Command::new(&braid).arg("--version"))?;
    run(
        root,
        Command::new(&braid)
            .args(["generate", "workflows/cidv1_from_bytes.json", "-o"])
            .arg(&out)
            .env("BRAID_HOME", scratch.path().join("home")),
    )?;
    let lib = out.join("src/lib.rs");
    let text =
        std::fs::read_to_string(&lib).with_context(|| format!("the installed braid wrote no {}", lib.display()))?;
    if !text.contains("@generated") {
        bail!("{} is not a generated crate", lib.display());
    }
    println!(
        "package: {} packaged; {} verified; {CLI} and the rest built from their packages by cargo install, \
         and the installed braid generating",
        PACKAGES.join(", "),
        PACKAGES.iter().filter(|name| verified.contains(*name)).copied().collect::<Vec<_>>().join(", "),
    );
    Ok(())
}

/// `cargo package` of `names`, dirty or not: this checks what would be
/// packaged, not a release.
fn cargo_package<'a>(names: impl Iterator<Item = &'a str>) -> Command {
    let mut cmd = cargo();
    cmd.args(["package", "--quiet", "--allow-dirty"]);
    for name in names {
        cmd.args(["-p", name]);
    }
    cmd
}

/// A crate of [`PACKAGES`], as its `Cargo.toml` says.
#[derive(Debug)]
struct Crate {
    version: String,
    /// The crates of [`PACKAGES`] it depends on (`[dependencies]`, not
    /// dev or build dependencies: what building it from its package builds).
    depends_on: BTreeSet<String>,
}

/// Every crate of [`PACKAGES`], from the workspace's manifests.
fn crates(root: &Path) -> Result<BTreeMap<String, Crate>> {
    let mut out = BTreeMap::new();
    for dir in crate::members(root)? {
        let path = dir.join("Cargo.toml");
        let manifest: toml::Table = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?
            .parse()
            .with_context(|| format!("parsing {}", path.display()))?;
        let package = manifest.get("package").with_context(|| format!("{}: no [package]", path.display()))?;
        let Some(name) = package.get("name").and_then(|n| n.as_str()).filter(|n| PACKAGES.contains(n)) else {
            continue;
        };
        let version = package.get("version").and_then(|v| v.as_str()).context("a version")?.to_string();
        let depends_on = manifest
            .get("dependencies")
            .and_then(|d| d.as_table())
            .into_iter()
            .flatten()
            .map(|(key, spec)| spec.get("package").and_then(|p| p.as_str()).unwrap_or(key).to_string())
            .filter(|dep| PACKAGES.contains(&dep.as_str()))
            .collect();
        out.insert(name.to_string(), Crate { version, depends_on });
    }
    if let Some(missing) = PACKAGES.iter().find(|name| !out.contains_key(**name)) {
        bail!("{missing} is not a member of the workspace");
    }
    Ok(out)
}

/// `names` and every crate of [`PACKAGES`] they depend on, directly or not.
fn with_dependencies<'a>(crates: &'a BTreeMap<String, Crate>, names: &[&'a str]) -> BTreeSet<&'a str> {
    let mut out = BTreeSet::new();
    let mut todo = names.to_vec();
    while let Some(name) = todo.pop() {
        if out.insert(name) {
            todo.extend(crates[name].depends_on.iter().map(String::as_str));
        }
    }
    out
}

/// What `cargo package` verifies when `cargo install` of [`CLI`] follows:
/// `braid`, every crate the install does not build, and what they depend
/// on (`cargo package` verifies a crate only against packages it made in
/// the same run).
fn verified_before_install(crates: &BTreeMap<String, Crate>) -> BTreeSet<&str> {
    let installed = with_dependencies(crates, &[CLI]);
    let mut roots: Vec<&str> = PACKAGES.iter().copied().filter(|name| !installed.contains(name)).collect();
    roots.push("braid");
    with_dependencies(crates, &roots)
}

/// Every `.crate` of [`PACKAGES`] unpacked into `into` (emptied first), as
/// a registry would unpack it: the directory of each, by name.
fn unpack(target: &Path, crates: &BTreeMap<String, Crate>, into: &Path) -> Result<BTreeMap<String, PathBuf>> {
    if into.exists() {
        std::fs::remove_dir_all(into).with_context(|| format!("removing {}", into.display()))?;
    }
    std::fs::create_dir_all(into).with_context(|| format!("creating {}", into.display()))?;
    let mut out = BTreeMap::new();
    for name in PACKAGES {
        let stem = format!("{name}-{}", crates[*name].version);
        let file = target.join(format!("package/{stem}.crate"));
        let gz = std::fs::File::open(&file).with_context(|| format!("opening {}", file.display()))?;
        tar::Archive::new(flate2::read::GzDecoder::new(gz))
            .unpack(into)
            .with_context(|| format!("unpacking {}", file.display()))?;
        let dir = into.join(&stem);
        if !dir.join("Cargo.toml").is_file() {
            bail!("{} holds no {stem}/Cargo.toml", file.display());
        }
        out.insert(name.to_string(), dir);
    }
    Ok(out)
}

/// The workspace's target directory, as cargo has it (`CARGO_TARGET_DIR`
/// and `build.target-dir` included).
fn target_dir(root: &Path) -> Result<PathBuf> {
    let output = cargo()
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root)
        .output()
        .context("running cargo metadata")?;
    if !output.status.success() {
        bail!("cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).context("reading cargo metadata")?;
    let dir = metadata["target_directory"].as_str().context("cargo metadata gave no target_directory")?;
    Ok(PathBuf::from(dir))
}

/// Removes cargo's record of having built [`PACKAGES`] from the registry
/// of packages (`target/debug/.fingerprint/<name>-<hash>/`), so that their
/// verification builds them again. Cargo takes a crate from a registry to
/// be what its version says, and records none of its source files: a
/// package of this checkout verified before, whose sources changed since
/// under the same version, was found fresh and its dependents built
/// against the old one (`braid-support` against a `braid-schema` without a
/// function added since). Those records are the ones listing no source
/// file; one taken for such by mistake costs a rebuild, never a stale one.
/// (Cargo's fingerprints are not a stable interface: should they change,
/// this finds nothing to forget and the verification fails as before.)
fn forget_packaged_builds(target: &Path) -> Result<()> {
    let fingerprints = target.join("debug/.fingerprint");
    let Ok(entries) = std::fs::read_dir(&fingerprints) else {
        return Ok(());
    };
    for entry in entries {
        let dir = entry?.path();
        let name = dir.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let Some((package, _hash)) = name.rsplit_once('-') else { continue };
        if !PACKAGES.contains(&package) {
            continue;
        }
        // The library's dep-info (`dep-lib-<crate name>`).
        let dep_info = std::fs::read_dir(&dir)
            .with_context(|| format!("reading {}", dir.display()))?
            .filter_map(|e| e.ok())
            .find(|e| e.file_name().to_string_lossy().starts_with("dep-lib-"));
        let Some(bytes) = dep_info.and_then(|e| std::fs::read(e.path()).ok()) else { continue };
        if !bytes.windows(3).any(|w| w == b".rs") {
            std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
        }
    }
    Ok(())
}

/// Removes what an earlier `cargo package` of a checkout at the same path
/// left extracted of [`PACKAGES`] under `$CARGO_HOME/registry/src/`.
/// Cargo verifies a package against the others through a registry of its
/// own under `target/package/`, named by that directory's path, and
/// extracts each `.crate` it takes from there once: a directory already
/// there is trusted, so a fresh clone at a path packaged before (as CI's
/// is, every run) built against the crates of that earlier run, whose
/// version is the same, and failed on anything added since. Registries
/// other than crates.io are the directories whose names start with `-`;
/// nothing of crates.io is touched.
fn forget_extracted_packages(crates: &BTreeMap<String, Crate>) -> Result<()> {
    let home = match std::env::var_os("CARGO_HOME") {
        Some(home) => PathBuf::from(home),
        None => PathBuf::from(std::env::var_os("HOME").context("neither CARGO_HOME nor HOME is set")?).join(".cargo"),
    };
    let Ok(registries) = std::fs::read_dir(home.join("registry/src")) else {
        return Ok(());
    };
    for registry in registries {
        let registry = registry?;
        if !registry.file_name().to_string_lossy().starts_with('-') {
            continue;
        }
        for name in PACKAGES {
            let extracted = registry.path().join(format!("{name}-{}", crates[*name].version));
            if extracted.exists() {
                std::fs::remove_dir_all(&extracted).with_context(|| format!("removing {}", extracted.display()))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every crate is built from its package, by the install or by the
    /// verification, and `braid` is verified.
    #[test]
    fn every_package_is_built_from_its_package_once_with_install() {
        let crates = crates(&crate::workspace_root()).unwrap();
        let verified = verified_before_install(&crates);
        let installed = with_dependencies(&crates, &[CLI]);
        assert!(verified.contains("braid"));
        for name in PACKAGES {
            assert!(verified.contains(name) || installed.contains(name), "{name} is never built from its package");
        }
        // The point of not verifying everything: the install's own crates.
        for name in ["braid-engine", "braid-service", CLI] {
            assert!(!verified.contains(name), "{name} is verified and installed");
        }
    }

    #[test]
    fn dependencies_are_followed_through_the_graph() {
        let crate_of =
            |deps: &[&str]| Crate { version: "0.1.0".into(), depends_on: deps.iter().map(|d| d.to_string()).collect() };
        let crates = BTreeMap::from([
            ("a".to_string(), crate_of(&["b"])),
            ("b".to_string(), crate_of(&["c"])),
            ("c".to_string(), crate_of(&[])),
            ("d".to_string(), crate_of(&["c"])),
        ]);
        assert_eq!(with_dependencies(&crates, &["a"]), BTreeSet::from(["a", "b", "c"]));
        assert_eq!(with_dependencies(&crates, &["d"]), BTreeSet::from(["c", "d"]));
    }
}
