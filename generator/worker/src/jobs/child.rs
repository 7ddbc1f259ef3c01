//! A job's child process (`braid build`, `braid ops check`): started under a small `sh` in a
//! process group of its own that it takes down with it when the server
//! dies (`PR_SET_PDEATHSIG`), even by `kill -9`; waited for within the
//! job's time limit or until the job is interrupted (the server shuts
//! down, the job's lease is lost), whichever comes first. Every way it ends that is not its own exit
//! kills the whole group (cargo, rustc, build scripts), and so does
//! dropping it.

use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;

use tokio::process::{ChildStderr, ChildStdout, Command};

use super::runner::{Interrupt, Ran};

/// The child: `sh` runs the program in the background and, on SIGTERM (the
/// parent-death signal [`Child::spawn`] sets), kills its whole process group.
const SUPERVISOR: &str = r#"trap 'kill -s KILL 0' TERM; "$@" & wait $!"#;

/// `program` to run as a supervised child: give it its arguments and
/// environment, then [`Child::spawn`] it. Its stdin is empty, its stdout
/// and stderr are piped.
pub(super) fn command(program: &Path) -> Command {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(SUPERVISOR)
        .arg("braid-child")
        .arg(program)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    cmd
}

/// How a child ended.
pub(super) enum Ended {
    Exited(ExitStatus),
    /// It ran past its time limit and was killed.
    TimedOut,
    /// Its job was interrupted ([`Ran::Stopped`] or [`Ran::Lost`]): it was killed.
    Interrupted(Ran),
}

/// A running child and the process group it leads.
pub(super) struct Child {
    child: tokio::process::Child,
    group: Group,
}

impl Child {
    /// Starts `cmd` (from [`command`]) so that it dies with the server;
    /// also returns its stdout and stderr.
    pub(super) fn spawn(mut cmd: Command) -> std::io::Result<(Self, ChildStdout, ChildStderr)> {
        // SAFETY: the hook runs in the forked child before exec and is
        // async-signal-safe (braid's `process::dies_with_parent`).
        unsafe {
            cmd.pre_exec(braid::process::dies_with_parent(libc::SIGTERM));
        }
        let mut child = cmd.spawn()?;
        let group = Group(child.id());
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        Ok((Self { child, group }, stdout, stderr))
    }

    /// Waits until the child exits, `timeout` passes or its job is
    /// interrupted; in the last two cases its whole process group is
    /// killed and reaped first.
    pub(super) async fn wait(mut self, interrupt: &Interrupt, timeout: Duration) -> std::io::Result<Ended> {
        let ended = tokio::select! {
            status = tokio::time::timeout(timeout, self.child.wait()) => match status {
                Ok(status) => Ended::Exited(status?),
                Err(_) => Ended::TimedOut,
            },
            why = interrupt.wait() => Ended::Interrupted(why),
        };
        if !matches!(ended, Ended::Exited(_)) {
            self.group.kill();
            let _ = self.child.wait().await;
        }
        self.group.disarm();
        Ok(ended)
    }
}

/// The process group a child leads; killed when dropped unless disarmed
/// once the child was waited for.
struct Group(Option<u32>);

impl Group {
    fn kill(&self) {
        if let Some(pid) = self.0 {
            // SAFETY: kill(2) with a negative pid signals the process group
            // the child leads (process_group(0)); it touches no memory of ours.
            unsafe {
                libc::kill(-(pid as i32), libc::SIGKILL);
            }
        }
    }

    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}
