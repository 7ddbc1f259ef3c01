//! Checking that an operation crate builds, alone, for every platform its
//! manifest declares, before it enters the registry: native (`std`),
//! `nostd` (default features off, every config value compiled in, on a
//! bare-metal target) and `wasm` (its `wasm` feature on wasm32). The crate
//! is vendored as a generated crate would vendor it (linked to this braid's
//! runtime crates and to the registered crates it depends on, seeded with
//! Braid's lock), so what passes here builds in workflows.

use std::path::{Path, PathBuf};
use std::process::Command;

use braid_schema::Platform;

use crate::fsutil::{self, FsError};
use crate::process::{self, ProcessError};
use crate::registry::{Prepared, Registry, RegistryError};
use crate::sandbox::Sandbox;
use crate::target::{NOSTD_TRIPLE, WASM_TRIPLE};
use crate::vendor::{self, VendorError};

#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error(transparent)]
    Vendor(#[from] VendorError),
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Generate(#[from] crate::project::GenerateError),
    #[error("fetching the crate's dependencies: {0}")]
    Fetch(ProcessError),
    #[error("{name} {version} does not build for {platform}, which its manifest declares:\n{source}")]
    Build { name: String, version: String, platform: Platform, source: ProcessError },
}

/// Where and how the checks run.
pub struct Check<'a> {
    /// A directory for the vendored crate (created; reused per source).
    pub work_dir: PathBuf,
    /// Cargo's target directory.
    pub target_dir: PathBuf,
    /// Builds run in this sandbox (dependencies fetched first, outside).
    pub sandbox: Option<&'a Sandbox>,
    /// The registry whose crates it may depend on.
    pub registry: &'a Registry,
}

/// The cargo commands that build `prepared` for each declared platform,
/// in the vendored crate at `manifest_path`.
pub fn commands(prepared: &Prepared, manifest_path: &Path, target_dir: &Path) -> Vec<(Platform, Command)> {
    let m = &prepared.manifest;
    let mut out = Vec::new();
    for &platform in &m.targets {
        let mut cmd = process::cargo();
        cmd.args(["build", "--quiet", "--manifest-path"]).arg(manifest_path).arg("--target-dir").arg(target_dir);
        // A check asks whether the crate builds: debug information would
        // only cost link time and disk in the service's target directory.
        cmd.env("CARGO_PROFILE_DEV_DEBUG", "false");
        match platform {
            Platform::Native => {}
            Platform::Nostd => {
                let values: Vec<&str> =
                    m.features.iter().map(String::as_str).filter(|f| *f != "std" && *f != "wasm").collect();
                cmd.args(["--no-default-features", "--target", NOSTD_TRIPLE]);
                if !values.is_empty() {
                    cmd.arg("--features").arg(values.join(","));
                }
            }
            Platform::Wasm => {
                cmd.args(["--features", "wasm", "--target", WASM_TRIPLE]);
            }
        }
        out.push((platform, cmd));
    }
    out
}

/// Vendors `prepared` under `check.work_dir` and builds it for each
/// platform its manifest declares.
pub fn check(prepared: &Prepared, check: &Check<'_>) -> Result<(), CheckError> {
    let name = &prepared.manifest.name;
    let dir = vendor::dir_name(name, prepared.manifest.source.as_deref().unwrap_or_default());
    let version = prepared.manifest.version.parse().map_err(|e: semver::Error| VendorError::Manifest {
        path: "Cargo.toml".into(),
        reason: format!("version {:?}: {e}", prepared.manifest.version),
    })?;
    let deps = check.registry.dependencies(&[(name, &version, &prepared.files)])?;
    let this = vendor::ToVendor { name, dir: &dir, files: &prepared.files };
    let files = crate::registry::vendor_files_with(&[this], &deps)?;
    for file in &files {
        fsutil::write_if_changed(&check.work_dir.join(&file.path), file.contents.as_bytes())?;
    }
    let crate_dir = check.work_dir.join("vendor").join(&dir);
    // A workspace of its own, so no enclosing directory's claims it.
    let manifest = crate_dir.join("Cargo.toml");
    let mut text = fsutil::read_to_string(&manifest)?;
    if !text.contains("\n[workspace]") {
        text.push_str("\n[workspace]\n");
        fsutil::write(&manifest, text.as_bytes())?;
    }
    let lock = crate_dir.join("Cargo.lock");
    if !lock.exists() {
        fsutil::write(&lock, vendor::seed_lockfile().as_bytes())?;
    }
    if let Some(sandbox) = check.sandbox {
        sandbox.fetch(&manifest).map_err(CheckError::Fetch)?;
    }
    for (platform, mut cmd) in commands(prepared, &manifest, &check.target_dir) {
        Sandbox::output_in(check.sandbox, &mut cmd).map_err(|source| CheckError::Build {
            name: name.clone(),
            version: prepared.manifest.version.clone(),
            platform,
            source,
        })?;
    }
    Ok(())
}
