//! Build workers: a bounded pool that takes jobs from the persisted queue
//! and runs each as a `braid build` child process in its own process group
//! (so a timeout kills cargo and everything under it), streams its progress
//! and log into the job, then packs the outputs into the artifact store and
//! records them in one transaction.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use tokio::io::{AsyncBufReadExt, BufReader};

use super::store::{Artifact, Claimed};
use super::{pack, AppState};

/// Starts `n` workers.
pub fn spawn(state: Arc<AppState>, n: usize) {
    for i in 0..n {
        let state = state.clone();
        tokio::spawn(async move {
            loop {
                let store = state.store.clone();
                let claimed = tokio::task::spawn_blocking(move || store.claim()).await;
                match claimed {
                    Ok(Ok(Some(job))) => {
                        tracing::info!(worker = i, job = %job.job_id, "build started");
                        run(&state, job).await;
                    }
                    Ok(Ok(None)) => {
                        // Woken by a submission, or poll now and then.
                        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), state.wake.notified()).await;
                    }
                    Ok(Err(e)) => {
                        tracing::error!("claiming a job: {e}");
                        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                    }
                    Err(e) => tracing::error!("worker task: {e}"),
                }
            }
        });
    }
}

async fn run(state: &Arc<AppState>, job: Claimed) {
    state.metrics.builds_started.fetch_add(1, Ordering::Relaxed);
    let start = Instant::now();
    let result = build(state, &job).await;
    let ms = start.elapsed().as_millis() as u64;
    let store = state.store.clone();
    let recorded = match result {
        Ok((report, artifacts)) => {
            state.metrics.build_finished(ms, true);
            tokio::task::spawn_blocking(move || store.succeed(&job.job_id, &job.workflow_id, &report, &artifacts)).await
        }
        Err(error) => {
            state.metrics.build_finished(ms, false);
            tracing::warn!(job = %job.job_id, "build failed: {}", error.lines().next().unwrap_or_default());
            tokio::task::spawn_blocking(move || store.fail(&job.job_id, &job.workflow_id, &error)).await
        }
    };
    match recorded {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::error!("recording a finished build: {e}"),
        Err(e) => tracing::error!("recording a finished build: {e}"),
    }
}

/// Runs the build; returns the report and the stored artifacts, or the
/// error with the end of the log.
async fn build(state: &Arc<AppState>, job: &Claimed) -> Result<(serde_json::Value, Vec<Artifact>), String> {
    let dir = state.config.data.join("builds").join(&job.job_id);
    let _ = tokio::fs::remove_dir_all(&dir).await;
    tokio::fs::create_dir_all(&dir).await.map_err(|e| format!("{}: {e}", dir.display()))?;
    let manifest = dir.join("manifest.json");
    tokio::fs::write(&manifest, &job.manifest).await.map_err(|e| format!("{}: {e}", manifest.display()))?;
    let out = dir.join("out");

    let mut cmd = tokio::process::Command::new(&state.config.braid_exe);
    cmd.arg("build")
        .arg(&manifest)
        .arg("-o")
        .arg(&out)
        .arg("--targets")
        .arg(job.targets.join(","))
        .arg("--target-dir")
        .arg(&state.config.target_dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|e| format!("cannot start {}: {e}", state.config.braid_exe.display()))?;
    let pid = child.id();
    let stderr = child.stderr.take().expect("stderr is piped");
    let store = state.store.clone();
    let job_id = job.job_id.clone();
    let logger = tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        let mut log = String::new();
        let mut progress = String::from("starting");
        while let Ok(Some(line)) = lines.next_line().await {
            if line.starts_with('[') {
                progress = line.clone();
            }
            log.push_str(&line);
            log.push('\n');
            let (store, job_id, progress, log) = (store.clone(), job_id.clone(), progress.clone(), log.clone());
            let _ = tokio::task::spawn_blocking(move || store.progress(&job_id, &progress, &log)).await;
        }
        log
    });
    let status = match tokio::time::timeout(state.config.build_timeout, child.wait()).await {
        Ok(status) => status.map_err(|e| format!("waiting for the build: {e}"))?,
        Err(_) => {
            if let Some(pid) = pid {
                kill_group(pid);
            }
            let _ = child.wait().await;
            let log = logger.await.unwrap_or_default();
            return Err(format!(
                "the build took longer than {} s and was stopped\n{}",
                state.config.build_timeout.as_secs(),
                super::store::tail(&log, 2048)
            ));
        }
    };
    let log = logger.await.unwrap_or_default();
    if !status.success() {
        return Err(format!("braid build failed ({status})\n{}", super::store::tail(&log, 4096)));
    }
    let state2 = state.clone();
    let packed = tokio::task::spawn_blocking(move || collect(&state2, &out)).await.map_err(|e| e.to_string())??;
    let _ = tokio::fs::remove_dir_all(&dir).await;
    Ok(packed)
}

/// Packs `out/` into artifacts in the store.
fn collect(state: &AppState, out: &Path) -> Result<(serde_json::Value, Vec<Artifact>), String> {
    let report_path = out.join("report.json");
    let report: serde_json::Value = std::fs::read_to_string(&report_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .ok_or_else(|| format!("{} is missing or unreadable", report_path.display()))?;
    let crate_name = report["crate_name"].as_str().unwrap_or("workflow").to_string();
    let mut artifacts = Vec::new();
    let mut put = |name: String, bytes: Vec<u8>, media_type: &str| -> Result<(), String> {
        let cid = state.cas.put(&bytes).map_err(|e| e.to_string())?;
        artifacts.push(Artifact { name, cid, size: bytes.len() as u64, media_type: media_type.into() });
        Ok(())
    };
    let crate_tar = pack::tar_gz(&out.join("crate"), &crate_name).map_err(|e| format!("packing the crate: {e}"))?;
    put("crate.tar.gz".into(), crate_tar, "application/gzip")?;
    let mut wasm: Option<PathBuf> = None;
    for target in ["node", "web", "bundler"] {
        let dir = out.join("pkg").join(target);
        if dir.is_dir() {
            let tgz = pack::tar_gz(&dir, "package").map_err(|e| format!("packing pkg/{target}: {e}"))?;
            put(format!("pkg-{target}.tgz"), tgz, "application/gzip")?;
            wasm.get_or_insert(dir.join(format!("{crate_name}_bg.wasm")));
        }
    }
    if let Some(path) = wasm {
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        put(format!("{crate_name}.wasm"), bytes, "application/wasm")?;
    }
    Ok((report, artifacts))
}

fn kill_group(pid: u32) {
    // SAFETY: kill(2) with a negative pid signals the process group the
    // child leads (process_group(0)); it touches no memory of ours.
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
}
