//! The Makefile's steps that are more than one command, written once in
//! Rust: the operations built for a bare-metal target and linted on wasm32
//! (each with the features its manifest declares), and the tests of the
//! shared backends against a private PostgreSQL or Garage, started for the
//! run and stopped, with their directory removed, whatever the result; the
//! crates users install, packaged and installed from their packages.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context as _, Result};

/// The bare-metal target that proves `no_std` (a crate pulling in std fails
/// there with E0463).
pub const NOSTD_TARGET: &str = "thumbv7em-none-eabihf";
/// Loopback ports of the private servers, below the ephemeral range.
pub const POSTGRES_PORT: u16 = 25432;
pub const GARAGE_PORT: u16 = 23900;

/// An operation crate of the workspace, as its committed manifest declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    pub name: String,
    /// `native`, `nostd`, `wasm`.
    pub targets: Vec<String>,
    /// Its config-value features (`hasher-blake3`, ...), without `std` and `wasm`.
    pub values: Vec<String>,
}

/// Every operation of the workspace (a member with a `manifest.json`), by name.
pub fn operations(root: &Path) -> Result<Vec<Operation>> {
    let mut out = Vec::new();
    for dir in crate::members(root)? {
        let path = dir.join("manifest.json");
        if !path.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let manifest: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        let strings = |key: &str| -> Vec<String> {
            manifest[key].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(str::to_string)).collect()
        };
        let name = manifest["name"].as_str().with_context(|| format!("{}: no name", path.display()))?.to_string();
        let values = strings("features").into_iter().filter(|f| f != "std" && f != "wasm").collect();
        out.push(Operation { name, targets: strings("targets"), values });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn supporting<'a>(ops: &'a [Operation], target: &'a str) -> impl Iterator<Item = &'a Operation> + 'a {
    ops.iter().filter(move |op| op.targets.iter().any(|t| t == target))
}

/// Runs `cmd` in `root`, failing with the command line when it fails.
fn run(root: &Path, cmd: &mut Command) -> Result<()> {
    cmd.current_dir(root);
    let shown = format!("{cmd:?}");
    let status = cmd.status().with_context(|| format!("starting {shown}"))?;
    if !status.success() {
        bail!("{shown} failed ({status})");
    }
    Ok(())
}

/// `braid-support` and every operation whose manifest says `nostd`, built
/// for [`NOSTD_TARGET`] with default features off but every config value
/// on (so all of its code is compiled), warnings denied.
pub fn nostd(root: &Path) -> Result<()> {
    run(
        root,
        cargo().args(["build", "--quiet", "-p", "braid-support", "--no-default-features", "--target", NOSTD_TARGET]),
    )?;
    for op in supporting(&operations(root)?, "nostd") {
        println!("no_std: {} ({NOSTD_TARGET})", op.name);
        let mut cmd = cargo();
        cmd.args(["build", "--quiet", "-p", &op.name, "--no-default-features", "--features", &op.values.join(",")])
            .args(["--target", NOSTD_TARGET, "--target-dir", "target/nostd"])
            .env("RUSTFLAGS", "-D warnings");
        run(root, &mut cmd)?;
    }
    Ok(())
}

/// Clippy of the code `#[operation]` generates for the `wasm` feature, on
/// wasm32, for every operation that supports wasm, and of braid-support's
/// Wasm allocator (which only compiles there), warnings denied.
pub fn lint_wasm(root: &Path) -> Result<()> {
    let all = operations(root)?;
    let ops: Vec<&Operation> = supporting(&all, "wasm").collect();
    let mut cmd = cargo();
    cmd.args(["clippy", "--quiet", "--target", "wasm32-unknown-unknown"]);
    for op in &ops {
        cmd.args(["-p", &op.name]);
    }
    cmd.args(["-p", "braid-support"]);
    let mut features: Vec<String> = ops.iter().map(|op| format!("{}/wasm", op.name)).collect();
    features.push("braid-support/wasm-allocator".into());
    cmd.args(["--features", &features.join(","), "--", "-D", "warnings"]);
    run(root, &mut cmd)
}

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

/// Every crate of [`PACKAGES`] packaged and verified (each built from its
/// package alone, its path dependencies from theirs, which cargo puts in a
/// registry of its own under `target/package/`); then, with `install`,
/// `braid-cli` installed from its package with `cargo install` (debug,
/// into `target/package/install`), its path dependencies patched to the
/// packaged ones, and the installed `braid` made to generate a crate (its
/// templates and runtime crates come from the package's `embedded.tar`).
pub fn package(root: &Path, install: bool) -> Result<()> {
    let tar = root.join("generator/braid/embedded.tar");
    run(root, cargo().args(["run", "--quiet", "-p", "braid", "--example", "embedded_tar", "--"]).arg(&tar))?;
    let versions = versions(root)?;
    let target = target_dir(root)?;
    forget_extracted_packages(&versions)?;
    forget_packaged_builds(&target)?;
    let mut cmd = cargo();
    // Dirty or not: this checks what would be packaged, not a release.
    cmd.args(["package", "--quiet", "--allow-dirty"]);
    for name in PACKAGES {
        cmd.args(["-p", name]);
    }
    run(root, &mut cmd)?;
    if !install {
        return Ok(());
    }
    let packaged = |name: &str| target.join(format!("package/{name}-{}", versions[name]));
    let installed = target.join("package/install");
    let mut cmd = cargo();
    cmd.args(["install", "--quiet", "--locked", "--debug", "--force", "--path"]).arg(packaged("braid-cli"));
    cmd.arg("--root").arg(&installed).arg("--target-dir").arg(&target);
    for name in PACKAGES.iter().filter(|name| **name != "braid-cli") {
        cmd.arg("--config").arg(format!("patch.crates-io.{name}.path={:?}", packaged(name).display().to_string()));
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
        "package: {} packaged and verified; braid-cli installed from its package and generating",
        PACKAGES.join(", ")
    );
    Ok(())
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
fn forget_extracted_packages(versions: &BTreeMap<String, String>) -> Result<()> {
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
            let extracted = registry.path().join(format!("{name}-{}", versions[*name]));
            if extracted.exists() {
                std::fs::remove_dir_all(&extracted).with_context(|| format!("removing {}", extracted.display()))?;
            }
        }
    }
    Ok(())
}

/// Each workspace member's version, by package name.
fn versions(root: &Path) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for dir in crate::members(root)? {
        let path = dir.join("Cargo.toml");
        let manifest: toml::Table =
            std::fs::read_to_string(&path)?.parse().with_context(|| format!("{}", path.display()))?;
        let package = manifest.get("package").context("a [package]")?;
        if let (Some(name), Some(version)) = (package.get("name"), package.get("version")) {
            out.insert(name.as_str().unwrap_or_default().to_string(), version.as_str().unwrap_or_default().to_string());
        }
    }
    Ok(out)
}

/// The shared backend's store tests against a private PostgreSQL.
pub fn test_postgres(root: &Path) -> Result<()> {
    let server = Server::start(root, "postgres", POSTGRES_PORT)?;
    let env = BTreeMap::from([("BRAID_TEST_POSTGRES".to_string(), server.url.clone())]);
    // braid-store's tests of each scenario on PostgreSQL, each named so.
    let result = run(root, ignored_lib_tests("postgres").envs(&env));
    server.stop(result)
}

/// The S3 artifact store's and the compile cache's tests against a private
/// three-node Garage.
pub fn test_s3(root: &Path) -> Result<()> {
    let server = Server::start(root, "garage", GARAGE_PORT)?;
    let result = (|| {
        let mut env = server.env()?;
        env.insert("BRAID_TEST_S3".to_string(), server.url.clone());
        run(root, ignored_lib_tests("cas::s3").envs(&env))?;
        run(root, ignored_lib_tests("compile_cache").envs(&env))
    })();
    server.stop(result)
}

/// The ignored unit tests whose names hold `filter` (they need a server),
/// in whichever crate of the workspace they are. `--workspace` rather than
/// `-p` the crate: cargo resolves features over the packages it is asked
/// for, so `-p braid-service` alone is another build of most dependencies
/// (1 min 45 s of `make test`), while the workspace's test binaries are
/// the ones `make test-rust` built.
fn ignored_lib_tests(filter: &str) -> Command {
    let mut cmd = cargo();
    cmd.args(["test", "--quiet", "--workspace", "--lib", filter, "--", "--ignored"]);
    cmd
}

/// `cargo`, without the variables `cargo xtask` set for this program (its
/// package's `CARGO_MANIFEST_DIR`, `CARGO_PKG_*`): build scripts that watch
/// them, as ring's does, would run again, and the next cargo of `make test`
/// would rebuild what depends on them (half a minute, twice).
fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if ["CARGO_PKG_", "CARGO_MANIFEST_", "CARGO_CRATE_NAME", "CARGO_BIN_NAME", "CARGO_PRIMARY_PACKAGE"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
        {
            cmd.env_remove(name.as_ref());
        }
    }
    cmd
}

/// A private server started by `scripts/<script>.sh start DIR PORT` in a
/// fresh directory under the system's temporary directory (not the
/// checkout: in one CI run Garage, whose metadata is SQLite, did not start
/// inside it).
struct Server {
    script: PathBuf,
    /// Removed when the server is dropped.
    dir: tempfile::TempDir,
    url: String,
}

impl Server {
    fn start(root: &Path, script: &str, port: u16) -> Result<Self> {
        let dir = tempfile::Builder::new().prefix(&format!("braid-{script}-")).tempdir()?;
        // PostgreSQL, started by root, runs as its own user, which must
        // reach the cluster directory inside this one.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))?;
        }
        let mut server = Self { script: root.join("scripts").join(format!("{script}.sh")), dir, url: String::new() };
        let out = Command::new(&server.script)
            .arg("start")
            .arg(server.cluster())
            .arg(port.to_string())
            .output()
            .with_context(|| format!("starting {}", server.script.display()))?;
        if !out.status.success() {
            let failed = format!(
                "{} start failed ({}):\n{}",
                server.script.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            let _ = server.stop(Ok(()));
            bail!(failed);
        }
        server.url = String::from_utf8(out.stdout)?.trim().to_string();
        Ok(server)
    }

    fn cluster(&self) -> PathBuf {
        self.dir.path().join("cluster")
    }

    /// What `scripts/<script>.sh env DIR` prints, as variables.
    fn env(&self) -> Result<BTreeMap<String, String>> {
        let out = Command::new(&self.script).arg("env").arg(self.cluster()).output()?;
        if !out.status.success() {
            bail!("{} env failed: {}", self.script.display(), String::from_utf8_lossy(&out.stderr));
        }
        Ok(String::from_utf8(out.stdout)?
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect())
    }

    /// Stops the server (its directory goes with `self`); `result`, or the
    /// stop's own failure when the run itself passed.
    fn stop(self, result: Result<()>) -> Result<()> {
        let stopped = Command::new(&self.script).arg("stop").arg(self.cluster()).status();
        match (result, stopped) {
            (Err(e), _) => Err(e),
            (Ok(()), Ok(s)) if s.success() => Ok(()),
            (Ok(()), Ok(s)) => bail!("{} stop failed ({s})", self.script.display()),
            (Ok(()), Err(e)) => Err(e).context(format!("stopping {}", self.script.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_operations_come_with_their_targets_and_config_values() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let ops = operations(root).unwrap();
        let multihash = ops.iter().find(|op| op.name == "op_multihash").expect("op_multihash is an operation");
        assert!(multihash.targets.iter().any(|t| t == "nostd"), "{multihash:?}");
        assert!(multihash.values.contains(&"hasher-blake3".to_string()), "{multihash:?}");
        assert!(!multihash.values.iter().any(|v| v == "std" || v == "wasm"), "{multihash:?}");
        assert!(ops.windows(2).all(|w| w[0].name < w[1].name), "sorted by name");
        assert!(!ops.iter().any(|op| op.name == "braid-support"), "the runtime has no manifest.json");
    }
}
