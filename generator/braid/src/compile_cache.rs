//! The compile cache: rustc behind sccache, whose cache lives in a store
//! every builder shares (an S3 bucket: `SCCACHE_BUCKET` and the other
//! `SCCACHE_*` variables, credentials in `AWS_*`), so that a fresh
//! machine's first build is not cold. sccache caches the dependencies'
//! libraries, not build scripts, proc-macros or the workflow's own cdylib
//! (it cannot); hits need the same toolchain and the same absolute paths
//! (cargo's home, the target directory) on every builder.
//!
//! Each build process talks to an sccache server of its own, on a Unix
//! socket in a directory of its own (mode 0700, under the host's temporary
//! directory): inside a sandbox, which is given that directory, the server
//! lives and dies with it; outside, it is stopped at the end. No other
//! sandbox sees the directory (theirs hide the temporary directory), so
//! no build of code nobody vetted can ask the server to run anything.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::process;

#[derive(Debug, thiserror::Error)]
pub enum CompileCacheError {
    #[error("the compile cache needs sccache on the PATH (scripts/setup.sh installs it)")]
    NoSccache,
    #[error("the compile cache needs SCCACHE_BUCKET (and SCCACHE_ENDPOINT for a store other than AWS S3) set")]
    NoBucket,
    #[error("cannot create the compile cache's socket directory in {0}: {1}")]
    Dir(PathBuf, std::io::Error),
}

/// sccache as a `RUSTC_WRAPPER`, configured from the environment.
#[derive(Debug, Clone)]
pub struct CompileCache {
    sccache: PathBuf,
    vars: Vec<(OsString, OsString)>,
    /// Holds the server's socket; removed by [`CompileCache::stop`].
    dir: PathBuf,
}

/// Variables sccache's S3 backend reads, passed on as they are.
fn passed(key: &str) -> bool {
    (key.starts_with("SCCACHE_") && !matches!(key, "SCCACHE_SERVER_UDS" | "SCCACHE_IGNORE_SERVER_IO_ERROR"))
        || matches!(key, "AWS_ACCESS_KEY_ID" | "AWS_SECRET_ACCESS_KEY" | "AWS_SESSION_TOKEN" | "AWS_REGION")
}

impl CompileCache {
    /// sccache from the PATH, its bucket and credentials from the
    /// environment; its server's socket in a new private directory.
    pub fn from_env() -> Result<Self, CompileCacheError> {
        let sccache = process::which("sccache", &[]).ok_or(CompileCacheError::NoSccache)?;
        if std::env::var_os("SCCACHE_BUCKET").is_none_or(|b| b.is_empty()) {
            return Err(CompileCacheError::NoBucket);
        }
        let dir = private_dir().map_err(|e| CompileCacheError::Dir(std::env::temp_dir(), e))?;
        let socket = dir.join("server.sock");
        let mut vars: Vec<(OsString, OsString)> = vec![
            ("RUSTC_WRAPPER".into(), sccache.clone().into_os_string()),
            // sccache cannot cache incremental builds.
            ("CARGO_INCREMENTAL".into(), "0".into()),
            ("SCCACHE_SERVER_UDS".into(), socket.into_os_string()),
            // A store out of reach: compile without the cache, not fail.
            ("SCCACHE_IGNORE_SERVER_IO_ERROR".into(), "1".into()),
            // Cargo keeps `rustc -vV` through the wrapper in the target
            // directory, a failure too: it would outlive an outage.
            ("CARGO_CACHE_RUSTC_INFO".into(), "0".into()),
        ];
        vars.extend(std::env::vars_os().filter(|(k, _)| k.to_str().is_some_and(passed)));
        vars.sort();
        Ok(Self { sccache, vars, dir })
    }

    /// The directory of the server's socket: a sandbox running a build
    /// through the cache must have it writable.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Makes `cmd` (a cargo command) compile through the cache.
    pub fn apply(&self, cmd: &mut Command) {
        for (key, value) in &self.vars {
            cmd.env(key, value);
        }
    }

    /// Whether sccache reaches its store: a server started and stopped
    /// here (sccache fails every compile when its server cannot start, so
    /// a build checks first and goes without the cache). The error is
    /// sccache's.
    pub fn check(&self) -> Result<(), String> {
        let mut start = Command::new(&self.sccache);
        start.arg("--start-server").stdin(Stdio::null());
        self.apply(&mut start);
        let probe = self.dir.join("check.sock");
        start.env("SCCACHE_SERVER_UDS", &probe);
        let out = start.output().map_err(|e| format!("{}: {e}", self.sccache.display()))?;
        let mut stop = Command::new(&self.sccache);
        stop.arg("--stop-server").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        self.apply(&mut stop);
        let _ = stop.env("SCCACHE_SERVER_UDS", &probe).status();
        let _ = std::fs::remove_file(&probe);
        if out.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        Err(stderr.lines().find(|l| l.contains("error")).unwrap_or("sccache's server did not start").trim().to_string())
    }

    /// Stops this process's sccache server, if one runs outside a sandbox
    /// (best effort: it would stop by itself after its idle timeout), and
    /// removes its directory.
    pub fn stop(&self) {
        let mut cmd = Command::new(&self.sccache);
        cmd.arg("--stop-server").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        self.apply(&mut cmd);
        let _ = cmd.status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A new directory only this user may enter, under the temporary
/// directory, with a random name (a short path: socket paths are limited
/// to 108 bytes).
fn private_dir() -> std::io::Result<PathBuf> {
    use std::io::Read as _;
    use std::os::unix::fs::DirBuilderExt as _;
    let mut random = [0u8; 8];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut random)?;
    let name: String = random.iter().map(|b| format!("{b:02x}")).collect();
    let dir = std::env::temp_dir().join(format!("braid-sccache-{name}"));
    // Fails if the name exists: never a directory someone else made.
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a real S3 store: `make test-s3` sets BRAID_TEST_S3 (a
    /// `--store` URL) and the credentials. The cache on a store out of
    /// reach is found out before a build, which then goes without it; on
    /// the real one it works.
    #[test]
    #[ignore = "needs sccache and an S3 store: make test-s3"]
    fn found_out_when_its_store_is_out_of_reach() {
        let url = std::env::var("BRAID_TEST_S3").expect("BRAID_TEST_S3: a --store URL");
        let endpoint = url.split("endpoint=").nth(1).and_then(|e| e.split([',', '&']).next()).expect("an endpoint");
        let cache_at = |endpoint: &str| {
            // SAFETY: the only test reading these variables (`make test-s3` runs it alone).
            unsafe {
                std::env::set_var("SCCACHE_BUCKET", "braid");
                std::env::set_var("SCCACHE_ENDPOINT", endpoint);
                std::env::set_var("SCCACHE_REGION", "garage");
                std::env::set_var("SCCACHE_S3_USE_SSL", "false");
                std::env::set_var("SCCACHE_S3_KEY_PREFIX", "sccache-test/");
            }
            CompileCache::from_env().unwrap()
        };
        let dead = cache_at("http://127.0.0.1:9");
        let err = dead.check().unwrap_err();
        assert!(err.contains("error"), "{err}");
        dead.stop();
        let cache = cache_at(endpoint);
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(std::fs::metadata(cache.dir()).unwrap().permissions().mode() & 0o777, 0o700);
        cache.check().unwrap();
        // The check's server is stopped and its socket removed.
        assert_eq!(std::fs::read_dir(cache.dir()).unwrap().count(), 0);
        cache.stop();
        assert!(!cache.dir().exists() && !dead.dir().exists());
    }
}
