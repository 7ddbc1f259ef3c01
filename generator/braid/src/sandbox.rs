//! Running cargo on code nobody vetted: build scripts and proc-macros of
//! operations published to a service, and of workflows that use them, run
//! under bubblewrap (`bwrap`) with no network, the system read-only, only
//! their own build and target directories writable, `/tmp`, `/run`, the
//! home directory (but cargo's and rustup's) and every directory the caller
//! hides (a service's data directory) replaced by empty read-only ones, a
//! clean environment, their own PID namespace, a memory limit and a
//! deadline.
//!
//! They run with no capabilities and as an unprivileged user, whoever
//! starts them ([`Identity`]): as root, bwrap sets the sandbox up and
//! util-linux's `setpriv` then drops to [`SANDBOX_UID`] (`nobody`) with
//! every capability gone, so a build script can neither remount, unmount
//! nor mount anything (a user namespace of its own gives it no power over
//! the sandbox's mounts, which the kernel locks), nor read what root alone
//! may read; the directories it may write are handed to that user first.
//! As any other user, bwrap's own user namespace runs them as that user
//! with no capabilities and no further user namespaces.
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

/// The user (and group) builds run as when the caller is root: `nobody`,
/// which owns nothing on a host. The directories a build may write are
/// handed to it before each run.
pub const SANDBOX_UID: u32 = 65534;
pub const SANDBOX_GID: u32 = 65534;

/// Who the sandboxed process is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// The caller is root: bwrap (in the host's user namespace, to set up
    /// the mounts) keeps only what `setpriv` needs to switch to
    /// [`SANDBOX_UID`], and `setpriv` drops those too.
    Nobody { setpriv: PathBuf },
    /// The caller is an ordinary user: the sandbox runs as that user, in a
    /// user namespace of bwrap's, with no capabilities and no nested user
    /// namespaces.
    Caller,
}

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
    identity: Identity,
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
        // SAFETY: geteuid cannot fail and touches no memory.
        let identity = if unsafe { libc::geteuid() } == 0 {
            let setpriv = process::which("setpriv", &[]).ok_or_else(|| {
                SandboxError::Unavailable(
                    "running as root, builds drop to an unprivileged user with util-linux's `setpriv`, \
                     which is not on the PATH (Debian, Ubuntu: `apt-get install util-linux`)"
                        .into(),
                )
            })?;
            Identity::Nobody { setpriv }
        } else {
            Identity::Caller
        };
        let sandbox = Sandbox {
            bwrap,
            identity,
            writable: Vec::new(),
            hidden: Vec::new(),
            memory_bytes: DEFAULT_MEMORY_BYTES,
            timeout: DEFAULT_TIMEOUT,
            network: false,
        };
        // The sandbox as builds get it, around `true`.
        let probe = sandbox
            .command(&Command::new("true"))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| SandboxError::Unavailable(format!("`{}` cannot run: {e}", sandbox.bwrap.display())))?;
        if !probe.status.success() {
            let why = String::from_utf8_lossy(&probe.stderr).trim().to_string();
            return Err(SandboxError::Unavailable(format!("it cannot start a sandbox here: {why}")));
        }
        Ok(sandbox)
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
        match self.identity {
            // No user namespace: one of root's would map the sandbox to
            // root on the host. `setpriv` below needs these three.
            Identity::Nobody { .. } => {
                bwrap.args(["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]);
                bwrap.args(["--cap-drop", "ALL"]);
                for cap in ["CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP"] {
                    bwrap.args(["--cap-add", cap]);
                }
            }
            Identity::Caller => {
                bwrap.args(["--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL"]);
            }
        }
        match (&self.identity, self.network) {
            (Identity::Nobody { .. }, false) => {
                bwrap.arg("--unshare-net");
            }
            (Identity::Caller, true) => {
                bwrap.arg("--share-net");
            }
            _ => {}
        }
        bwrap.args(["--die-with-parent", "--new-session", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
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
        // What is mounted inside a hidden directory gets its parents made
        // there open to all (bwrap would copy the host's modes, and the
        // sandbox's user could not walk through a private one such as
        // root's home); the sandbox sees nothing else in them.
        let mounted: Vec<&PathBuf> = cargo_home.iter().chain(&rustup_home).chain(&self.writable).collect();
        let mut parents: Vec<&Path> = mounted
            .iter()
            .flat_map(|dir| dir.ancestors().skip(1))
            .filter(|p| hidden.iter().any(|h| p.starts_with(h) && p != h))
            .collect();
        parents.sort();
        parents.dedup();
        for dir in parents {
            bwrap.args(["--perms", "0755", "--dir"]).arg(dir);
        }
        // Cargo's and rustup's homes stay visible (read-only) in a hidden home.
        for dir in cargo_home.iter().chain(&rustup_home) {
            bwrap.arg("--ro-bind").arg(dir).arg(dir);
        }
        // Outer directories first: a bind would hide those inside it.
        let mut writable: Vec<&PathBuf> = self.writable.iter().collect();
        writable.sort();
        for dir in writable {
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
        bwrap.arg("--");
        if let Identity::Nobody { setpriv } = &self.identity {
            bwrap.arg(setpriv);
            bwrap.arg(format!("--reuid={SANDBOX_UID}")).arg(format!("--regid={SANDBOX_GID}"));
            bwrap.args(["--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--"]);
        }
        bwrap.arg(cmd.get_program()).args(cmd.get_args());
        bwrap
    }

    /// Hands the writable directories (and everything in them) to the
    /// sandbox's user, when that is not the caller: what the caller wrote
    /// there since the last run (sources, a lock file) must be writable
    /// inside. Symbolic links are changed, never followed.
    fn hand_over(&self) -> Result<(), FsError> {
        if !matches!(self.identity, Identity::Nobody { .. }) {
            return Ok(());
        }
        // What vanishes meanwhile (another build in the same target
        // directory removing its temporary files) needs nothing.
        fn gone(e: &std::io::Error) -> bool {
            e.kind() == std::io::ErrorKind::NotFound
        }
        fn chown_tree(path: &Path) -> Result<(), FsError> {
            use std::os::unix::fs::MetadataExt as _;
            let meta = match std::fs::symlink_metadata(path) {
                Err(e) if gone(&e) => return Ok(()),
                other => other.map_err(fsutil::at(path))?,
            };
            if meta.uid() != SANDBOX_UID || meta.gid() != SANDBOX_GID {
                match std::os::unix::fs::lchown(path, Some(SANDBOX_UID), Some(SANDBOX_GID)) {
                    Err(e) if gone(&e) => return Ok(()),
                    other => other.map_err(fsutil::at(path))?,
                }
            }
            if meta.is_dir() {
                let entries = match std::fs::read_dir(path) {
                    Err(e) if gone(&e) => return Ok(()),
                    other => other.map_err(fsutil::at(path))?,
                };
                for entry in entries.flatten() {
                    chown_tree(&entry.path())?;
                }
            }
            Ok(())
        }
        for dir in &self.writable {
            fsutil::create_dir_all(&dir.join(".tmp"))?;
            chown_tree(dir)?;
        }
        Ok(())
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
        let command = process::describe(cmd);
        self.hand_over().map_err(|e| ProcessError::Spawn {
            command: command.clone(),
            source: std::io::Error::new(e.source.kind(), e.to_string()),
        })?;
        let mut bwrap = self.command(cmd);
        bwrap.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let memory = self.memory_bytes;
        // The sandbox dies with whoever started it.
        let dies_with_parent = process::dies_with_parent(libc::SIGKILL);
        // SAFETY: runs in the forked child before exec and calls only
        // async-signal-safe functions (setrlimit; prctl and getppid).
        unsafe {
            use std::os::unix::process::CommandExt;
            bwrap.pre_exec(move || {
                let limit = libc::rlimit { rlim_cur: memory as libc::rlim_t, rlim_max: memory as libc::rlim_t };
                if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                dies_with_parent()
            });
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What a hostile build script tries, each line printing `ESCAPED`
    /// when it works: reading root's secrets, unmounting the sandbox's
    /// layers, remounting `/` read-write, mounting, the same from a user
    /// namespace of its own, writing outside its directory, and the
    /// network. Then it writes in its own directory, which must work.
    const HOSTILE: &str = r#"
cat /etc/shadow >/dev/null 2>&1 && echo "ESCAPED read /etc/shadow"
umount -l /tmp 2>/dev/null && echo "ESCAPED umount /tmp"
umount -l "$WRITABLE" 2>/dev/null && echo "ESCAPED umount the writable directory"
mount -o remount,rw,bind / 2>/dev/null && echo "ESCAPED remount / read-write"
mount -o remount,rw /tmp 2>/dev/null && echo "ESCAPED remount /tmp read-write"
mount -t tmpfs none "$WRITABLE" 2>/dev/null && echo "ESCAPED mount a tmpfs"
unshare -rm sh -c 'umount -l /tmp || mount -o remount,rw,bind / || mount -o remount,rw /tmp' 2>/dev/null && echo "ESCAPED from a user namespace"
touch "$OUTSIDE" 2>/dev/null && echo "ESCAPED write outside"
touch /braid-sandbox-escape 2>/dev/null && echo "ESCAPED write /"
bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT" 2>/dev/null && echo "ESCAPED network"
echo inside > "$WRITABLE/inside" || echo "FAILED write inside"
echo "uid=$(id -u) caps=$(grep CapEff /proc/self/status | cut -f2)"
"#;

    /// Runs [`HOSTILE`] in a sandbox as this process's user; asserts every
    /// attempt failed, on the host too. Returns the sandbox's uid.
    fn hostile_attempts_fail() -> u32 {
        let sandbox = Sandbox::detect().expect("bubblewrap works here (scripts/setup.sh installs it)");
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().to_path_buf();
        // The sandbox's user (nobody, when the tests run as root) goes through it.
        std::fs::set_permissions(&base, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let (writable, outside) = (base.join("writable"), base.join("outside"));
        let sandbox = sandbox.writable(&writable).unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(HOSTILE).env("WRITABLE", &writable).env("OUTSIDE", &outside);
        cmd.env("PORT", listener.local_addr().unwrap().port().to_string());
        let out = sandbox.output(&cmd).unwrap_or_else(|e| panic!("the sandbox did not run: {e}"));
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(!stdout.contains("ESCAPED") && !stdout.contains("FAILED"), "{stdout}");
        assert!(listener.accept().is_err(), "the sandbox reached a host's port");
        assert!(!outside.exists() && !Path::new("/braid-sandbox-escape").exists());
        assert_eq!(std::fs::read_to_string(writable.join("inside")).unwrap(), "inside\n");
        let uid: u32 = stdout.split("uid=").nth(1).and_then(|s| s.split(' ').next()).unwrap().parse().unwrap();
        assert!(stdout.contains("caps=0000000000000000"), "{stdout}");
        std::fs::remove_dir_all(&base).unwrap();
        uid
    }

    #[test]
    fn a_hostile_build_step_fails_at_everything_and_runs_unprivileged() {
        let uid = hostile_attempts_fail();
        // SAFETY: geteuid cannot fail.
        let me = unsafe { libc::geteuid() };
        if me != 0 {
            assert_eq!(uid, me, "as a user, the sandbox runs as that user");
            return;
        }
        assert_eq!(uid, SANDBOX_UID, "as root, the sandbox runs as nobody");
        // The same as an ordinary user: this test again, as `nobody`.
        if std::env::var_os("BRAID_SANDBOX_TEST_AS_USER").is_some() {
            return;
        }
        let out = Command::new("setpriv")
            .args([format!("--reuid={SANDBOX_UID}"), format!("--regid={SANDBOX_GID}"), "--clear-groups".into()])
            .arg(std::env::current_exe().unwrap())
            .args(["--exact", "sandbox::tests::a_hostile_build_step_fails_at_everything_and_runs_unprivileged"])
            .args(["--nocapture", "--test-threads=1"])
            .env("BRAID_SANDBOX_TEST_AS_USER", "1")
            .env("HOME", "/nonexistent")
            .env("TMPDIR", "/tmp")
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && text.contains("1 passed"), "as nobody:\n{text}");
    }
}
