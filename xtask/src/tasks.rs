//! The Makefile's steps that are more than one command, written once in
//! Rust: the operations built for a bare-metal target and linted on wasm32
//! (each with the features its manifest declares), and the tests of the
//! shared backends against a private PostgreSQL or Garage, started for the
//! run and stopped, with their directory removed, whatever the result.

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
pub(crate) fn run(root: &Path, cmd: &mut Command) -> Result<()> {
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
pub(crate) fn cargo() -> Command {
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
        let ops = operations(&crate::workspace_root()).unwrap();
        let multihash = ops.iter().find(|op| op.name == "op_multihash").expect("op_multihash is an operation");
        assert!(multihash.targets.iter().any(|t| t == "nostd"), "{multihash:?}");
        assert!(multihash.values.contains(&"hasher-blake3".to_string()), "{multihash:?}");
        assert!(!multihash.values.iter().any(|v| v == "std" || v == "wasm"), "{multihash:?}");
        assert!(ops.windows(2).all(|w| w[0].name < w[1].name), "sorted by name");
        assert!(!ops.iter().any(|op| op.name == "braid-support"), "the runtime has no manifest.json");
    }
}
