//! The service's background jobs, every kind under one runner
//! ([`runner`]): [`build`] (workflows, each a `braid build` process) and
//! [`publish`] (operation uploads checked in the sandbox and registered).
//! And what the kinds share: recording how a job ended (retried until the
//! store takes it), the server's paths taken out of their logs
//! ([`Redact`]), and the cargo target directory of code nobody vetted
//! ([`third_party_target_dir`]).

pub mod build;
mod child;
pub mod publish;
pub mod runner;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use braid_store::StoreError;

use crate::Env;

/// Starts this process's runners: `workers` for builds, and one for
/// publish checks where they can run here (each takes one of the
/// `workers` slots while it runs).
pub fn spawn(env: &Arc<Env>, workers: usize) -> Vec<tokio::task::JoinHandle<()>> {
    let mut runners = runner::spawn::<build::Build>(env, workers);
    if publish::PublishCheck::runs_here(env) {
        runners.extend(runner::spawn::<publish::PublishCheck>(env, 1));
    }
    runners
}

/// The cargo target directory for builds that compile the operations with
/// these version ids (none: the shared one).
pub fn third_party_target_dir(shared: &Path, version_ids: &[&str]) -> PathBuf {
    if version_ids.is_empty() {
        return shared.to_path_buf();
    }
    let mut ids = version_ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let key = braid::content_id(ids.join("\n").as_bytes());
    // After the shared `bafkr4i`: 16 characters of base32, 80 bits.
    shared.join("third-party").join(&key[7..23])
}

/// Records how a job ended, retrying (1 s, 2 s, ... 30 s apart) until the
/// store takes it: a full disk may have room again once the build's files
/// are gone. Gives up only when the database is gone or the server stops
/// (the job is then `running` in the store, and the next start retries it).
pub(crate) async fn record<F, W>(env: &Arc<Env>, write: W)
where
    F: Future<Output = Result<(), StoreError>> + Send,
    W: Fn(Arc<Env>) -> F,
{
    let mut stop = env.shutdown.subscribe();
    let mut delay = Duration::from_secs(1);
    loop {
        let e = match write(env.clone()).await {
            Ok(()) => return,
            Err(e) => e,
        };
        if env.store.is_gone() {
            tracing::error!("recording a finished job: {e}");
            return;
        }
        tracing::error!("recording a finished job: {e}; trying again in {} s", delay.as_secs());
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = stopped(&mut stop) => return,
        }
        delay = (delay * 2).min(Duration::from_secs(30));
    }
}

/// Returns once the server shuts down.
pub(crate) async fn stopped(stop: &mut tokio::sync::watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopped| *stopped).await;
}

/// Makes the server's absolute paths in a build's log and error relative to
/// the build directory, or names them: `<data>`, `<target-dir>`, `<braid>`
/// (the operations' sources), `~` (the home directory).
pub(crate) struct Redact {
    /// (prefix, replacement), longest prefix first.
    rules: Vec<(String, String)>,
}

impl Redact {
    pub(crate) fn new(config: &crate::Config, build_dir: &Path) -> Self {
        let mut named: Vec<(PathBuf, &str)> = vec![
            (build_dir.to_path_buf(), "."),
            (config.data.clone(), "<data>"),
            (config.target_dir.clone(), "<target-dir>"),
        ];
        if let Some(home) = std::env::var_os("HOME") {
            named.push((PathBuf::from(home), "~"));
        }
        let mut rules = Vec::new();
        for (path, name) in named {
            for p in [path.canonicalize().ok(), std::path::absolute(&path).ok(), Some(path)].into_iter().flatten() {
                let p = p.to_string_lossy().trim_end_matches('/').to_string();
                if p.len() > 1 && !rules.iter().any(|(q, _)| *q == p) {
                    rules.push((p, name.to_string()));
                }
            }
        }
        rules.sort_by_key(|(prefix, _)| std::cmp::Reverse(prefix.len()));
        Self { rules }
    }

    pub(crate) fn apply(&self, text: &str) -> String {
        let mut text = text.to_string();
        for (prefix, name) in &self.rules {
            text = replace_path(&text, prefix, name);
        }
        text
    }
}

/// Replaces `prefix` where it is a whole path or the start of one (followed
/// by `/` or by a character that cannot continue a file name in a log).
fn replace_path(text: &str, prefix: &str, name: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        let after = &rest[at + prefix.len()..];
        let whole = after.chars().next().is_none_or(|c| !(c.is_alphanumeric() || "_-.".contains(c)));
        out.push_str(&rest[..at]);
        if whole {
            if name == "." && after.starts_with('/') {
                rest = &after[1..];
                continue;
            }
            out.push_str(name);
        } else {
            out.push_str(prefix);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Why a job's work (a build, a publish check) made nothing.
enum Outcome {
    Failed(String),
    /// The server is shutting down, or another process took the job over.
    Interrupted(runner::Ran),
}

impl From<String> for Outcome {
    fn from(error: String) -> Self {
        Outcome::Failed(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_relative_to_the_build_or_named() {
        let mut config = crate::Config::for_tests(PathBuf::from("/srv/braid-data"));
        config.target_dir = PathBuf::from("/var/cache/braid/target");
        let r = Redact::new(&config, Path::new("/srv/braid-data/builds/abc.1"));
        let home = std::env::var("HOME").unwrap_or_default();
        let log = format!(
            "error: /srv/braid-data/builds/abc.1/out/crate/src/lib.rs:3\n\
             built in /srv/braid-data/builds/abc.1; report: /srv/braid-data/builds/abc.1/out/report.json\n\
             /srv/braid-data/artifacts/x.tmp: No space left on device\n\
             --> /var/cache/braid/target/braid-staging/src/lib.rs and {home}/.cargo/registry/x.rs\n\
             /srv/braid-data2/y is another directory"
        );
        let shown = r.apply(&log);
        assert_eq!(
            shown,
            "error: out/crate/src/lib.rs:3\n\
             built in .; report: out/report.json\n\
             <data>/artifacts/x.tmp: No space left on device\n\
             --> <target-dir>/braid-staging/src/lib.rs and ~/.cargo/registry/x.rs\n\
             /srv/braid-data2/y is another directory"
        );
    }
}
