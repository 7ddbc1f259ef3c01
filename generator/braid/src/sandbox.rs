//! Running cargo on code nobody vetted: build scripts and proc-macros of
//! operations published to a service, and of workflows that use them, run
//! under bubblewrap (`bwrap`) with no network, the system read-only, only
//! their own build and target directories writable, `/tmp`, `/run`, the
//! home directory (but cargo's and rustup's) and every directory the caller
//! hides (a service's data directory) replaced by empty read-only ones, a
//! clean environment, their own PID namespace, a memory limit and a
//! deadline.
//!
//! Dependencies are fetched first, outside the sandbox ([`Sandbox::fetch`]:
//! `cargo fetch` downloads and unpacks crates but runs none of their
//! code); the build inside then works offline with cargo's home read-only.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::fsutil::{self, FsError};
use crate::process::{self, ProcessError};

/// Address space a sandboxed process may map by default: 4 GiB. rustc and
/// the linker stay well under it for operation crates (the largest
/// generated crates at Braid's limits peak near 600 MiB).
pub const DEFAULT_MEMORY_BYTES: u64 = 4 << 30;

/// Longest a sandboxed command may run by default: 10 minutes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "bubblewrap (`bwrap`) is needed to build code that is not yours, and {0}; \
         install it (Debian, Ubuntu: `apt-get install bubblewrap`; Fedora: `dnf install bubblewrap`)"
    )]
    Unavailable(String),
    #[error(transparent)]
    Fs(#[from] FsError),
}

/// Where sandboxed commands may write, what they may not see, and their
/// limits.
#[derive(Debug, Clone)]
pub struct Sandbox {
    bwrap: PathBuf,
    writable: Vec<PathBuf>,
    hidden: Vec<PathBuf>,
    memory_bytes: u64,
    timeout: Duration,
    /// Whether sandboxed commands share the host's network.
    network: bool,
}

impl Sandbox {
    /// A sandbox with nothing writable yet, if `bwrap` is on the PATH and
    /// can start one here (user namespaces may be disabled).
    pub fn detect() -> Result<Self, SandboxError> {
        let bwrap =
            process::which("bwrap", &[]).ok_or_else(|| SandboxError::Unavailable("it is not on the PATH".into()))?;
        let probe = Command::new(&bwrap)
            .args(["--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--", "true"])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| SandboxError::Unavailable(format!("`{}` cannot run: {e}", bwrap.display())))?;
        if !probe.status.success() {
            let why = String::from_utf8_lossy(&probe.stderr).trim().to_string();
            return Err(SandboxError::Unavailable(format!("it cannot start a sandbox here: {why}")));
        }
        Ok(Sandbox {
            bwrap,
            writable: Vec::new(),
            hidden: Vec::new(),
            memory_bytes: DEFAULT_MEMORY_BYTES,
            timeout: DEFAULT_TIMEOUT,
            network: false,
        })
    }

    /// Lets sandboxed commands write in `dir` (created if missing).
    pub fn writable(mut self, dir: &Path) -> Result<Self, SandboxError> {
        fsutil::create_dir_all(dir)?;
        self.writable.push(dir.canonicalize().map_err(fsutil::at(dir))?);
        Ok(self)
    }

    /// Hides `dir` (if it exists): sandboxed commands see it empty and
    /// read-only, except for the writable directories inside it.
    pub fn hide(mut self, dir: &Path) -> Self {
        if let Ok(dir) = dir.canonicalize() {
            self.hidden.push(dir);
        }
        self
    }

    /// Lets sandboxed commands use the host's network: for a compile cache
    /// in a remote store ([`crate::compile_cache`]). Only for code you
    /// trust: it could reach any host, with the cache's credentials.
    pub fn share_network(mut self) -> Self {
        self.network = true;
        self
    }

    pub fn memory_bytes(mut self, bytes: u64) -> Self {
        self.memory_bytes = bytes;
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Downloads what the crate at `manifest_path` needs, outside the
    /// sandbox (no code of the crates runs), so that builds inside can be
    /// offline.
    pub fn fetch(&self, manifest_path: &Path) -> Result<(), ProcessError> {
        let mut cmd = process::cargo();
        cmd.args(["fetch", "--quiet", "--manifest-path"]).arg(manifest_path);
        process::output(&mut cmd).map(drop)
    }

    /// `cmd` (program, arguments, working directory and the variables it
    /// sets) as a `bwrap` command line. The sandboxed process sees only
    /// the variables `cmd` sets and the few cargo needs.
    pub fn command(&self, cmd: &Command) -> Command {
        let mut bwrap = Command::new(&self.bwrap);
        bwrap.args(["--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/"]);
        if self.network {
            bwrap.arg("--share-net");
        }
        bwrap.args(["--dev", "/dev", "--proc", "/proc"]);
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let cargo_home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".cargo")))
            .and_then(|p| p.canonicalize().ok());
        let rustup_home = std::env::var_os("RUSTUP_HOME")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".rustup")))
            .and_then(|p| p.canonicalize().ok());
        // Empty, then made read-only once the writable directories are in.
        let mut hidden: Vec<PathBuf> = ["/tmp", "/var/tmp", "/run"].iter().map(PathBuf::from).collect();
        hidden.extend(home.and_then(|h| h.canonicalize().ok()));
        hidden.extend(self.hidden.iter().cloned());
        hidden.retain(|d| d.is_dir());
        // A directory inside another hidden one is hidden with it (and
        // would not exist under the other's empty tmpfs).
        hidden.sort();
        hidden.dedup_by(|inner, outer| inner.starts_with(outer));
        for dir in &hidden {
            bwrap.arg("--tmpfs").arg(dir);
        }
        // Cargo's and rustup's homes stay visible (read-only) in a hidden home.
        for dir in cargo_home.iter().chain(&rustup_home) {
            bwrap.arg("--ro-bind").arg(dir).arg(dir);
        }
        for dir in &self.writable {
            bwrap.arg("--bind").arg(dir).arg(dir);
        }
        for dir in &hidden {
            bwrap.arg("--remount-ro").arg(dir);
        }
        let tmp = self.writable.first().map(|d| d.join(".tmp"));
        let mut env: Vec<(OsString, OsString)> = vec![
            ("PATH".into(), std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into())),
            ("CARGO_NET_OFFLINE".into(), "true".into()),
        ];
        for key in ["RUSTUP_TOOLCHAIN", "CARGO", "RUSTC", "LANG"] {
            env.extend(std::env::var_os(key).map(|v| (key.into(), v)));
        }
        env.extend(cargo_home.map(|d| ("CARGO_HOME".into(), d.into_os_string())));
        env.extend(rustup_home.map(|d| ("RUSTUP_HOME".into(), d.into_os_string())));
        if let Some(tmp) = &tmp {
            let _ = std::fs::create_dir_all(tmp);
            env.push(("TMPDIR".into(), tmp.clone().into_os_string()));
            env.push(("HOME".into(), tmp.clone().into_os_string()));
        }
        for (key, value) in cmd.get_envs() {
            match value {
                Some(v) => env.push((key.to_os_string(), v.to_os_string())),
                None => env.retain(|(k, _)| k != key),
            }
        }
        // Credentials (a compile cache's) go through bwrap's own environment,
        // which it hands on: `--setenv` values show in process listings. The
        // rest by `--setenv`: a setuid bwrap's environment loses TMPDIR.
        let (secret, plain): (Vec<_>, Vec<_>) =
            env.into_iter().partition(|(k, _)| k.to_str().is_some_and(|k| k.starts_with("AWS_")));
        bwrap.env_clear().envs(secret);
        for (key, value) in plain {
            bwrap.arg("--setenv").arg(key).arg(value);
        }
        if let Some(dir) = cmd.get_current_dir() {
            bwrap.arg("--chdir").arg(dir);
        }
        bwrap.arg("--").arg(cmd.get_program()).args(cmd.get_args());
        bwrap
    }

    /// Runs `cmd` in `sandbox` if there is one, else as it is
    /// ([`process::output`]).
    pub fn output_in(sandbox: Option<&Sandbox>, cmd: &mut Command) -> Result<Output, ProcessError> {
        match sandbox {
            Some(sandbox) => sandbox.output(cmd),
            None => process::output(cmd),
        }
    }

    /// Runs `cmd` in the sandbox to completion, capturing its output: an
    /// error unless it exits with success within the sandbox's time limit.
    pub fn output(&self, cmd: &Command) -> Result<Output, ProcessError> {
        let mut bwrap = self.command(cmd);
        bwrap.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let memory = self.memory_bytes;
        // SAFETY: runs in the forked child before exec and calls only
        // async-signal-safe functions (setrlimit, prctl).
        unsafe {
            use std::os::unix::process::CommandExt;
            bwrap.pre_exec(move || {
                let limit = libc::rlimit { rlim_cur: memory as libc::rlim_t, rlim_max: memory as libc::rlim_t };
                if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The sandbox dies with whoever started it.
                #[cfg(target_os = "linux")]
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let command = process::describe(cmd);
        let child = bwrap.spawn().map_err(|source| ProcessError::Spawn { command: command.clone(), source })?;
        let pid = child.id() as libc::pid_t;
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        let out = match rx.recv_timeout(self.timeout) {
            Ok(out) => out,
            Err(_) => {
                // SAFETY: `pid` is our child, not yet reaped (the waiter
                // has not returned); bwrap's sandbox dies with it.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                let _ = waiter.join();
                return Err(ProcessError::TimedOut { command, seconds: self.timeout.as_secs() });
            }
        };
        let _ = waiter.join();
        let out = out.map_err(|source| ProcessError::Spawn { command: command.clone(), source })?;
        process::check(&command, out)
    }
}
