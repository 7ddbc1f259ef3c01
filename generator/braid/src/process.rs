//! Running the tools a build needs (cargo, wasm-bindgen, wasm-opt): one
//! place that finds cargo (`$CARGO`, as cargo sets it for build scripts and
//! tests, else `cargo` on the PATH) and turns a failed command into an
//! error that shows the command line, the exit status and its output; and
//! the one way a child is made to die with the process that started it
//! ([`dies_with_parent`]), for the sandbox's builds and the service's jobs.

use std::path::PathBuf;
use std::process::{Command, Output};

/// A command that could not start or that failed.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("cannot run `{command}`: {source}")]
    Spawn { command: String, source: std::io::Error },
    #[error("`{command}` failed ({status}):\n{output}")]
    Failed { command: String, status: String, output: String },
    #[error("`{command}` took longer than {seconds} s and was stopped")]
    TimedOut { command: String, seconds: u64 },
}

/// What a child runs before `exec` (a `pre_exec` hook) so that it gets
/// `signal` when the process that started it dies, even by `kill -9`
/// (Linux's `PR_SET_PDEATHSIG`), and does not start at all if that process
/// died before the signal was set (the child would then outlive it).
/// Async-signal-safe: `prctl` and `getppid` only; it allocates only on the
/// error path, where the child is about to exit anyway.
pub fn dies_with_parent(signal: libc::c_int) -> impl Fn() -> std::io::Result<()> + Send + Sync + 'static {
    let parent = std::process::id();
    move || {
        #[cfg(target_os = "linux")]
        // SAFETY: prctl(2) with PR_SET_PDEATHSIG takes a signal number and
        // touches no memory.
        if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        #[cfg(not(target_os = "linux"))]
        let _ = signal;
        // SAFETY: getppid(2) cannot fail and touches no memory.
        if unsafe { libc::getppid() } as u32 != parent {
            return Err(std::io::Error::other("the process that started it exited"));
        }
        Ok(())
    }
}

/// `cargo`, as the user's environment names it.
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// The program `name` in one of the directories `extra`, else on the PATH.
pub fn which(name: &str, extra: &[PathBuf]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    extra.iter().cloned().chain(std::env::split_paths(&path)).map(|dir| dir.join(name)).find(|p| p.is_file())
}

/// The command line, for messages.
pub fn describe(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Lines of a failed command's output kept in its error: the end, where
/// compilers say what went wrong.
const TAIL_LINES: usize = 40;

/// Runs `cmd` to completion, capturing its output; an error unless it
/// exits with success.
pub fn output(cmd: &mut Command) -> Result<Output, ProcessError> {
    let out = cmd.output().map_err(|source| ProcessError::Spawn { command: describe(cmd), source })?;
    check(&describe(cmd), out)
}

/// `out`, or the error of `command` failing with it: the exit status and
/// the end of its output.
pub fn check(command: &str, out: Output) -> Result<Output, ProcessError> {
    if out.status.success() {
        return Ok(out);
    }
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = text.lines().collect();
    Err(ProcessError::Failed {
        command: command.to_string(),
        status: out.status.to_string(),
        output: lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_command_shows_its_line_status_and_output() {
        let e = output(Command::new("sh").args(["-c", "echo oops >&2; exit 3"])).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("`sh -c echo oops >&2; exit 3` failed (exit status: 3)"), "{text}");
        assert!(text.ends_with("\noops"), "{text}");
        assert!(matches!(output(&mut Command::new("/nonexistent/tool")), Err(ProcessError::Spawn { .. })));
        assert_eq!(output(Command::new("sh").args(["-c", "printf ok"])).unwrap().stdout, b"ok");
    }
}
