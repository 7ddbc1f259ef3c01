//! `POST /v1/validate` and `POST /v1/generate`: a manifest checked as sent,
//! and the crate generated from it (in memory: no file written, no process
//! started). Also what publishing shares with them: reading a JSON body,
//! the bound on a generated crate's size, and the operations' lock.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRequest, Request, State};
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use braid::lockfile::LockSeed;
use braid::manifest::Workflow;
use braid::registry::RegisteredOperation;
use braid::schema::Platform;
use braid_store::ids::WorkflowId;
use serde::Serialize;

use super::heavy::heavy;
use super::ApiResult;
use crate::problem::Problem;
use crate::AppState;

/// A request body sent as `application/json` (415 otherwise), within the
/// size limit (413); its syntax is the checker's to judge.
pub(super) struct JsonBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = Problem;

    async fn from_request(request: Request, state: &S) -> Result<Self, Problem> {
        let essence = super::media::content_type(request.headers());
        // The size was checked when the body was read (`layers::read_body`).
        let body = Bytes::from_request(request, state).await.map_err(|e| Problem::new(e.status(), e.body_text()))?;
        if essence != "application/json" {
            return Err(Problem::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!("send the body as application/json (got {essence:?})"),
            ));
        }
        Ok(Self(body))
    }
}

/// The manifest is valid.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Valid {
    valid: bool,
    /// The workflow id: CIDv1 of the manifest's canonical JSON.
    id: WorkflowId,
    /// Targets its operations allow: of native, nostd, wasm.
    #[schema(value_type = Vec<String>)]
    targets: Vec<Platform>,
    /// What `run` takes and gives: `text: String, salt: Bytes -> Cid`.
    signature: String,
    /// The external inputs, in the order `run` takes them.
    inputs: Vec<ValidInput>,
    /// The workflow's output type.
    output: String,
}

/// An external input of a valid manifest.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ValidInput {
    /// Its name, when the manifest names its inputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    /// Its type, as the manifest's operations write it (`Bytes`, `Vec<Cid>`).
    #[serde(rename = "type")]
    ty: String,
}

impl Valid {
    fn of(w: &Workflow) -> Result<Self, Problem> {
        let inputs = w.external_inputs();
        let inputs = inputs.iter().enumerate();
        Ok(Self {
            valid: true,
            id: WorkflowId::of(w).map_err(Problem::internal)?,
            targets: w.targets.clone(),
            signature: w.signature(),
            inputs: inputs
                .map(|(slot, ty)| ValidInput { name: w.input_name(slot).map(str::to_owned), ty: ty.to_string() })
                .collect(),
            output: w.output().to_string(),
        })
    }
}

/// Validates a manifest as sent: size and UTF-8 (a diagnostic at the bad
/// byte, as the CLI gives), then JSON, then the checks (CPU-heavy: call it
/// inside [`heavy`]).
fn check(state: &AppState, bytes: &[u8]) -> Result<Workflow, Problem> {
    let text = braid::manifest::text(bytes).map_err(Problem::invalid_manifest)?;
    if serde_json::from_str::<serde::de::IgnoredAny>(text).is_err() {
        let d = braid_worker::operations::validate(state, text).err().unwrap_or_default();
        return Err(Problem::bad_request(format!(
            "the body is not JSON: {}",
            d.first().map_or("unreadable", |d| d.message.as_str())
        )));
    }
    braid_worker::operations::validate(state, text).map_err(Problem::invalid_manifest)
}

/// Most lock seeds kept; past it the oldest half goes (each is a few
/// hundred packages).
const MAX_LOCK_SEEDS: usize = 64;

/// A lock seed covering `operations`: the one resolved for the newest
/// version of every operation when they are among those, else one for
/// exactly these. Each is resolved once (the first call runs cargo; a
/// failure is not kept, so a later call tries again).
pub async fn lock_seed(state: &Arc<AppState>, operations: &[RegisteredOperation]) -> Result<Arc<LockSeed>, Problem> {
    let newest = state.registry().newest();
    let covered = operations.iter().all(|op| newest.iter().any(|n| n.version_id == op.version_id));
    let set: Vec<RegisteredOperation> = if covered { newest } else { operations.to_vec() };
    let key = set.iter().map(|op| op.version_id.as_str()).collect::<Vec<_>>().join(",");
    let mut seeds = state.lock_seeds.lock().await;
    if let Some(seed) = seeds.get(&key) {
        return Ok(seed.clone());
    }
    let scratch = state.config.data.join("tmp").join(format!("lock-seed-{}", uuid::Uuid::new_v4().simple()));
    let seed = tokio::task::spawn_blocking(move || LockSeed::resolve(&set, &scratch))
        .await
        .map_err(Problem::internal)?
        .map_err(|e| {
            tracing::error!("resolving the operations' dependencies: {e}");
            Problem::unavailable("the service could not prepare lock files yet; try again later", Some(30))
        })?;
    if seeds.len() >= MAX_LOCK_SEEDS {
        let drop: Vec<String> = seeds.keys().take(MAX_LOCK_SEEDS / 2).cloned().collect();
        for k in drop {
            seeds.remove(&k);
        }
    }
    let seed = Arc::new(seed);
    seeds.insert(key, seed.clone());
    Ok(seed)
}

/// Every file of the generated crate but its lock, refused when larger
/// than `--max-crate-bytes` (CPU-heavy: call it inside [`heavy`]). The lock
/// is left out of the bound: its size depends only on the registry.
pub(super) fn crate_files(state: &AppState, workflow: &Workflow) -> Result<Vec<braid::codegen::File>, Problem> {
    state.app_metrics.crate_rendered();
    let files = braid::project::files(workflow, &state.generator).map_err(Problem::internal)?;
    let size: usize = files.iter().map(|f| f.contents.len()).sum();
    let max = state.http.max_crate_bytes;
    if size > max {
        return Err(Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "the crate generated from this manifest would be {size} bytes; this service generates at most {max} \
                 (--max-crate-bytes): use fewer inputs or operations"
            ),
        ));
    }
    Ok(files)
}

/// Validates a manifest (the body); 422 lists every diagnostic with its JSON pointer.
#[utoipa::path(post, path = "/v1/validate", request_body(content = Object, content_type = "application/json"),
    responses((status = 200, body = Valid), (status = 422, body = Problem), (status = 400, body = Problem),
        (status = 503, body = Problem, description = "busy: retry after Retry-After seconds")))]
pub(super) async fn validate_manifest(State(state): State<Arc<AppState>>, JsonBody(text): JsonBody) -> ApiResult {
    let s = state.clone();
    let w = heavy(&state, move || check(&s, &text)).await??;
    Ok(Json(Valid::of(&w)?).into_response())
}

/// The crate generated from a manifest (the body), as `.tar.gz`, without building it.
#[utoipa::path(post, path = "/v1/generate", request_body(content = Object, content_type = "application/json"),
    responses((status = 200, content_type = "application/gzip", body = Vec<u8>), (status = 422, body = Problem),
        (status = 503, body = Problem, description = "busy: retry after Retry-After seconds")))]
pub(super) async fn generate_crate(State(state): State<Arc<AppState>>, JsonBody(text): JsonBody) -> ApiResult {
    let s = state.clone();
    let workflow = heavy(&state, move || check(&s, &text)).await??;
    let seed = lock_seed(&state, &workflow.crates).await?;
    let s = state.clone();
    // In memory: no files written, no process started (but the first
    // resolution of a set of operations).
    let bytes = heavy(&state, move || {
        let mut files = crate_files(&s, &workflow)?;
        files.push(braid::project::lock_file(&workflow, &seed).map_err(Problem::internal)?);
        let name = braid::codegen::crate_name(&workflow.manifest.name);
        let entries: Vec<(&str, &[u8])> = files.iter().map(|f| (f.path.as_str(), f.contents.as_bytes())).collect();
        Ok::<_, Problem>(braid::package::dist::tarball(&entries, &name))
    })
    .await??;
    Ok(([(header::CONTENT_TYPE, "application/gzip")], bytes).into_response())
}
