//! Operations published to a deployment, on every process: an upload (a
//! `.tar.gz` of the crate) is kept in the artifact store under its content
//! id, the operations registered from uploads are listed in the database,
//! and each process takes those its own registry (`<data>/registry`) lacks
//! from the store ([`sync`]) before it validates or builds a workflow. So
//! an operation published through one `braid serve` is usable through all
//! of them, built by any `braid worker`, and survives the loss of every
//! data directory.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use braid::registry::{self, Origin, Prepared, Registry, RegistryError};
use braid_store::ids::ContentId;
use braid_store::PublishedOperation;

use crate::Env;

/// Why an upload cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// Not an archive, or one with unsafe or too many entries.
    #[error("the upload is not a usable crate archive: {0}")]
    Archive(String),
    /// Not an operation crate (the error names the file and line, relative
    /// to the crate: never where the server unpacked it).
    #[error("{0}")]
    Crate(String),
    #[error("{0}")]
    Io(String),
}

/// Why no publisher may take the operation name `name`, if none may:
/// the built-in operations' names (a higher version of `op_cid` would be
/// what every workflow asking for `op_cid ^0.1` gets), the runtime's
/// (`braid-*`), and the `wf_` prefix, which names workflows' crates and
/// packages in the registries.
pub fn reserved(name: &str) -> Option<String> {
    if !braid::schema::is_crate_name(name) {
        return Some("an operation's name is a crate name: an ASCII letter, then letters, digits, `-` and `_`".into());
    }
    // Compared as cargo compares crate names: `OP_CID` is `op_cid`.
    let lower = braid::schema::name_key(name);
    if braid::registry::Registry::is_builtin_name(&lower) {
        return Some("it is the name of an operation that ships with Braid (reserved)".into());
    }
    if lower.starts_with("braid_") || lower == "braid" {
        return Some("names starting with `braid` are reserved for Braid's own crates".into());
    }
    if lower.starts_with("wf_") {
        return Some("the `wf_` prefix names workflows' crates and packages; choose another name".into());
    }
    None
}

/// Unpacks an upload into `dir` (under the archive limits, refused whole
/// if any entry is unsafe) and derives its manifest from the sources.
pub fn unpack(upload: &[u8], dir: &Path) -> Result<Prepared, UploadError> {
    let limits = braid::archive::Limits { compressed_bytes: u64::MAX, ..Default::default() };
    let files = braid::archive::unpack_tar_gz(upload, &limits).map_err(|e| UploadError::Archive(e.to_string()))?;
    braid::archive::write_files(dir, &files).map_err(|e| UploadError::Io(e.to_string()))?;
    if !dir.join("Cargo.toml").is_file() {
        return Err(UploadError::Crate(
            "the upload has no Cargo.toml at its root (or in its one top directory): \
             archive the operation crate's directory"
                .into(),
        ));
    }
    // Errors name files relative to the crate (`src/lib.rs:3:1`); one that
    // names the unpacked directory names the upload instead.
    let relative = |e: RegistryError| {
        let text = e.to_string();
        UploadError::Crate(
            text.replace(&format!("{}/", dir.display()), "").replace(&dir.display().to_string(), "the upload"),
        )
    };
    let crate_files = registry::read_crate(dir).map_err(relative)?;
    registry::prepare(crate_files, "the uploaded crate").map_err(relative)
}

/// The upload `source` from the store, unpacked into `dir` (emptied
/// first) and prepared; refused unless it is the operation `version_id`
/// names.
pub fn fetch(env: &Env, source: &ContentId, version_id: &str, dir: &Path) -> Result<Prepared, String> {
    let upload = env
        .cas
        .get(source)
        .map_err(|e| format!("reading the upload {source} from the store: {e}"))?
        .ok_or_else(|| format!("the upload {source} is missing from the store"))?;
    let _ = std::fs::remove_dir_all(dir);
    let prepared = unpack(&upload, dir).map_err(|e| e.to_string())?;
    if prepared.version_id != version_id {
        return Err(format!("the upload {source} is version id {}, not {version_id}", prepared.version_id));
    }
    Ok(prepared)
}

/// The registry with every operation published to the deployment so far
/// (blocking: it asks the database, and fetches what is new from the
/// store). An embedded store has one process, which registers what it
/// publishes itself and took in the rest when it started: its registry is
/// up to date without asking.
pub fn synced(env: &Env) -> Arc<Registry> {
    if env.store.is_shared() {
        sync(env);
    }
    env.registry()
}

/// [`synced`] off the async threads.
pub async fn synced_registry(env: &Arc<Env>) -> Arc<Registry> {
    let syncing = env.clone();
    tokio::task::spawn_blocking(move || synced(&syncing)).await.unwrap_or_else(|_| env.registry())
}

/// `text` validated against [`synced`] (blocking), and counted
/// (`braid_manifests_validated`): how this process validates every
/// manifest, once per request that sends one.
pub fn validate(env: &Env, text: &str) -> Result<braid::manifest::Workflow, Vec<braid::diagnostic::Diagnostic>> {
    env.metrics.manifest_validated();
    braid::manifest::validate(text, &synced(env))
}

/// How long an upload that could not be fetched is left before the next try.
const RETRY_AFTER: Duration = Duration::from_secs(10);

/// Takes into this process's registry every published operation it lacks
/// (one sync at a time; a query when there is none). What cannot be taken
/// is logged: an upload the store did not give is tried again after
/// [`RETRY_AFTER`], an operation that clashes with one registered here by
/// hand is not. Whether it took any in (then the Cargo registry has them
/// too).
pub fn sync(env: &Env) -> bool {
    let listed = match env.store.blocking(env.store.operations()) {
        Ok(listed) => listed,
        Err(e) => {
            tracing::warn!("listing the published operations: {e}");
            return false;
        }
    };
    let mut settled = env.published.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let registry = env.registry();
    let missing: Vec<PublishedOperation> = listed
        .into_iter()
        .filter(|op| match settled.get(&op.version_id) {
            Some(None) => false,
            Some(Some(failed)) if failed.elapsed() < RETRY_AFTER => false,
            _ => registry.by_version_id(&op.version_id).is_none(),
        })
        .collect();
    if missing.is_empty() {
        return false;
    }
    let mut registry = match Registry::open(&env.config.data) {
        Ok(registry) => registry,
        Err(e) => {
            tracing::error!("opening the operation registry: {e}");
            return false;
        }
    };
    let mut added = 0;
    for op in missing {
        let scratch = env.config.data.join("tmp").join(format!("published-{}", uuid::Uuid::new_v4().simple()));
        let what = format!("{} {} ({})", op.name, op.version, op.version_id);
        let fetched = fetch(env, &op.source, &op.version_id, &scratch);
        let _ = std::fs::remove_dir_all(&scratch);
        match fetched {
            // Perhaps a store out of reach for now: tried again later.
            Err(e) => {
                tracing::warn!("taking in the published operation {what}: {e}");
                settled.insert(op.version_id, Some(Instant::now()));
            }
            Ok(prepared) => {
                match registry.add(prepared, Origin::Published) {
                    Ok(_) => added += 1,
                    Err(e) => tracing::error!("the published operation {what} cannot be registered here: {e}"),
                }
                settled.insert(op.version_id, None);
            }
        }
    }
    if added > 0 {
        tracing::info!("{added} published operation(s) taken into this process's registry");
        *env.registry.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(registry);
        crate::packages::add_operations(env);
    }
    added > 0
}

#[cfg(test)]
mod tests {
    use super::reserved;

    /// Reserved names are compared as cargo compares crate names, and a
    /// name that is not a crate name is refused.
    #[test]
    fn reserved_names_in_any_case_and_spelling() {
        for name in ["op_cid", "OP_CID", "Op-Cid", "wf_x", "WF-x", "braid", "Braid_support", "BRAID-x"] {
            assert!(reserved(name).is_some(), "{name} passed");
        }
        for name in ["op\u{212a}", "opé", "1op", "", "op x"] {
            assert!(reserved(name).is_some_and(|why| why.contains("crate name")), "{name:?} passed");
        }
        assert_eq!(reserved("op_mine"), None);
        assert_eq!(reserved("Op-Mine"), None);
    }
}
