//! The HTTP API: routes, handlers and the OpenAPI document generated from
//! them (utoipa). Every error is a [`Problem`]; ids in paths are checked
//! against their exact format before any lookup, so `../` and encoded
//! traversal never reach the store or the file system. Request bodies are
//! read whole, within the body timeout, before a handler runs; CPU-heavy
//! work (checking manifests, generating crates, hashing artifacts) runs on
//! blocking threads, a bounded number at once ([`Checks`]).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::extract::{DefaultBodyLimit, MatchedPath, Path, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use http_body_util::BodyExt as _;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::sync::Semaphore;
use utoipa::OpenApi;

use crate::problem::Problem;
use crate::store::{Artifact, Job, Submission};
use crate::AppState;
use braid::build::{self, Target};
use braid::diagnostic::Diagnostic;
use braid::lockfile::LockSeed;
use braid::manifest::{validate, Workflow};

type ApiResult = Result<Response, Problem>;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Braid publish service",
        description = "Validate, generate, build and download fused workflow crates and npm packages."
    ),
    paths(
        list_operations,
        get_operation,
        validate_manifest,
        generate_crate,
        submit_workflow,
        get_job,
        get_workflow,
        get_artifact,
        healthz,
        metrics
    ),
    components(schemas(Problem, Job, Artifact, SubmitRequest, Submitted, WorkflowInfo, OperationInfo, Valid))
)]
pub struct ApiDoc;

/// The route templates: the `route` label of the request metrics.
const ROUTES: [&str; 11] = [
    "/v1/openapi.json",
    "/v1/operations",
    "/v1/operations/{name}",
    "/v1/validate",
    "/v1/generate",
    "/v1/workflows",
    "/v1/workflows/{id}",
    "/v1/jobs/{id}",
    "/v1/artifacts/{cid}",
    "/healthz",
    "/metrics",
];

/// The router, with state; no socket (tests can call it directly).
pub fn app(state: Arc<AppState>) -> Router {
    let [openapi_doc, operations, operation, validate_path, generate, workflows, workflow, job, artifact, health, metrics_path] =
        ROUTES;
    let routes = Router::new()
        .route(openapi_doc, get(openapi))
        .route(operations, get(list_operations))
        .route(operation, get(get_operation))
        .route(validate_path, post(validate_manifest))
        .route(generate, post(generate_crate))
        .route(workflows, post(submit_workflow))
        .route(workflow, get(get_workflow))
        .route(job, get(get_job))
        .route(artifact, get(get_artifact))
        .route(health, get(healthz))
        .route(metrics_path, get(metrics));
    harden(routes, state)
}

/// What every route gets: problem answers for unknown paths and methods,
/// the body limits, the request metrics, and a 500 problem for a handler
/// that panics (the `braid` binary unwinds, so the service goes on).
fn harden(routes: Router<Arc<AppState>>, state: Arc<AppState>) -> Router {
    routes
        .fallback(|| async { Problem::not_found("no such endpoint; GET /v1/openapi.json describes the API") })
        .method_not_allowed_fallback(|| async {
            Problem::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "this endpoint does not take that method; see /v1/openapi.json",
            )
        })
        .layer(DefaultBodyLimit::max(state.config.max_body))
        .layer(middleware::from_fn_with_state(state.clone(), read_body))
        .layer(middleware::from_fn_with_state(state.clone(), count))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(|_| {
            Problem::internal("a handler panicked").into_response()
        }))
        .with_state(state)
}

/// Counts the request by method, route template and status (closed sets).
async fn count(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .and_then(|m| ROUTES.iter().find(|r| **r == m.as_str()))
        .copied()
        .unwrap_or("unmatched");
    let response = next.run(request).await;
    state.metrics.request(&method, route, response.status().as_u16());
    response
}

fn too_large() -> Problem {
    Problem::new(StatusCode::PAYLOAD_TOO_LARGE, "the request body is too large; a manifest is at most 1 MiB")
}

/// Reads the whole request body within `--body-timeout` (408 after it) and
/// at most `--max-body` bytes (413), so a client that sends slowly holds a
/// connection for a bounded time and handlers never wait on the network.
async fn read_body(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let limit = state.config.max_body;
    let declared = parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large().into_response();
    }
    let read = http_body_util::Limited::new(body, limit).collect();
    let bytes = match tokio::time::timeout(state.config.body_timeout, read).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => return too_large().into_response(),
        Ok(Err(e)) => return Problem::bad_request(format!("the request body could not be read: {e}")).into_response(),
        Err(_) => {
            let mut response = Problem::new(
                StatusCode::REQUEST_TIMEOUT,
                format!("the request body took longer than {} s to arrive", state.config.body_timeout.as_secs()),
            )
            .into_response();
            response.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
            return response;
        }
    };
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// Bounds the CPU-heavy requests: `running` at once on blocking threads,
/// up to `queued` more waiting for them; beyond that, 503 + `Retry-After`.
pub struct Checks {
    running: Arc<Semaphore>,
    admitted: Arc<Semaphore>,
    limit: usize,
}

impl Checks {
    pub fn new(running: usize, queued: usize) -> Self {
        let running = running.max(1);
        Self {
            running: Arc::new(Semaphore::new(running)),
            admitted: Arc::new(Semaphore::new(running + queued)),
            limit: running + queued,
        }
    }
}

/// Runs `work` on a blocking thread under [`Checks`].
async fn heavy<T: Send + 'static>(state: &AppState, work: impl FnOnce() -> T + Send + 'static) -> Result<T, Problem> {
    let admitted = state.checks.admitted.clone().try_acquire_owned().map_err(|_| {
        Problem::unavailable(
            format!("the server is busy ({} heavy requests in progress or waiting); retry shortly", state.checks.limit),
            Some(1),
        )
    })?;
    let running = state.checks.running.clone().acquire_owned().await.map_err(Problem::internal)?;
    tokio::task::spawn_blocking(move || {
        let _slots = (admitted, running);
        work()
    })
    .await
    .map_err(Problem::internal)
}

async fn openapi() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}

/// An operation in the registry.
#[derive(Serialize, utoipa::ToSchema)]
pub struct OperationInfo {
    name: String,
    version: String,
    /// CIDv1 (raw, blake3) of the manifest's canonical JSON.
    version_id: String,
    #[schema(value_type = Object)]
    manifest: Value,
}

fn operation_info(op: &braid::registry::RegisteredOperation) -> OperationInfo {
    OperationInfo {
        name: op.info.name.into(),
        version: op.info.version.into(),
        version_id: op.version_id.clone(),
        manifest: serde_json::to_value(&op.manifest).unwrap_or_default(),
    }
}

/// Every operation in the registry.
#[utoipa::path(get, path = "/v1/operations", responses((status = 200, body = [OperationInfo])))]
async fn list_operations(State(state): State<Arc<AppState>>) -> Json<Vec<OperationInfo>> {
    Json(state.registry.iter().map(operation_info).collect())
}

/// One operation: its versions (with manifests and version ids).
#[utoipa::path(get, path = "/v1/operations/{name}", params(("name" = String, Path)),
    responses((status = 200, body = Object), (status = 404, body = Problem)))]
async fn get_operation(State(state): State<Arc<AppState>>, name: Result<Path<String>, PathRejection>) -> ApiResult {
    let Path(name) = name.map_err(|e| Problem::bad_request(e.body_text()))?;
    let op = state.registry.get(&name).ok_or_else(|| {
        Problem::not_found(format!(
            "no operation named {:?}; GET /v1/operations lists them",
            braid::diagnostic::quote(&name)
        ))
    })?;
    Ok(Json(json!({ "name": op.info.name, "versions": [operation_info(op)] })).into_response())
}

/// Reads a JSON request body: content type, size and syntax checked.
fn json_body(headers: &HeaderMap, body: Result<Bytes, BytesRejection>) -> Result<Bytes, Problem> {
    let body = body.map_err(|e| match e.status() {
        StatusCode::PAYLOAD_TOO_LARGE => too_large(),
        status => Problem::new(status, e.body_text()),
    })?;
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    if essence != "application/json" {
        return Err(Problem::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("send the body as application/json (got {:?})", content_type),
        ));
    }
    Ok(body)
}

/// The manifest is valid.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Valid {
    valid: bool,
    /// CIDv1 of the manifest's canonical JSON.
    id: String,
    /// Targets its operations allow.
    targets: Vec<String>,
}

/// Validates a manifest as sent: size and UTF-8 (a diagnostic at the bad
/// byte, as the CLI gives), then JSON, then the checks (CPU-heavy: call it
/// inside [`heavy`]).
fn check(state: &AppState, bytes: &[u8]) -> Result<Workflow, Problem> {
    let text = braid::manifest::text(bytes).map_err(Problem::invalid_manifest)?;
    if serde_json::from_str::<serde::de::IgnoredAny>(text).is_err() {
        let d = validate(text, &state.registry).err().unwrap_or_default();
        return Err(Problem::bad_request(format!(
            "the body is not JSON: {}",
            d.first().map_or("unreadable", |d| d.message.as_str())
        )));
    }
    validate(text, &state.registry).map_err(Problem::invalid_manifest)
}

/// The operations' lock, resolved once per registry (the first call runs
/// cargo; a failure is not kept, so a later call tries again).
pub async fn lock_seed(state: &Arc<AppState>) -> Result<&LockSeed, Problem> {
    state
        .lock_seed
        .get_or_try_init(|| async {
            let s = state.clone();
            tokio::task::spawn_blocking(move || {
                let ops: Vec<&str> = s.registry.iter().map(|op| op.info.name).collect();
                let scratch = s.config.data.join("tmp").join(format!("lock-seed-{}", uuid::Uuid::new_v4().simple()));
                LockSeed::resolve(&s.sources, &ops, &scratch)
            })
            .await
            .map_err(Problem::internal)?
            .map_err(|e| {
                tracing::error!("resolving the operations' dependencies: {e}");
                Problem::unavailable("the service could not prepare lock files yet; try again later", Some(30))
            })
        })
        .await
}

/// Every file of the generated crate but its lock, refused when larger
/// than `--max-crate-bytes` (CPU-heavy: call it inside [`heavy`]). The lock
/// is left out of the bound: its size depends only on the registry.
fn crate_files(state: &AppState, workflow: &Workflow) -> Result<Vec<braid::codegen::File>, Problem> {
    let files = braid::project::files(workflow, &state.generator, &state.sources).map_err(Problem::internal)?;
    let size: usize = files.iter().map(|f| f.contents.len()).sum();
    let max = state.config.max_crate_bytes;
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
async fn validate_manifest(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let text = json_body(&headers, body)?;
    let s = state.clone();
    let w = heavy(&state, move || check(&s, &text)).await??;
    Ok(Json(Valid { valid: true, id: w.id, targets: w.targets }).into_response())
}

/// The crate generated from a manifest (the body), as `.tar.gz`, without building it.
#[utoipa::path(post, path = "/v1/generate", request_body(content = Object, content_type = "application/json"),
    responses((status = 200, content_type = "application/gzip", body = Vec<u8>), (status = 422, body = Problem),
        (status = 503, body = Problem, description = "busy: retry after Retry-After seconds")))]
async fn generate_crate(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let text = json_body(&headers, body)?;
    lock_seed(&state).await?;
    let s = state.clone();
    // In memory: no files written, no process started.
    let bytes = heavy(&state, move || {
        let workflow = check(&s, &text)?;
        let mut files = crate_files(&s, &workflow)?;
        let seed = s.lock_seed.get().expect("resolved above");
        files.push(braid::project::lock_file(&workflow, seed).map_err(Problem::internal)?);
        let name = braid::codegen::crate_name(&workflow.manifest.name);
        crate::pack::tar_gz_entries(files.iter().map(|f| (f.path.as_str(), f.contents.as_bytes())), &name)
            .map_err(Problem::internal)
    })
    .await??;
    Ok(([(header::CONTENT_TYPE, "application/gzip")], bytes).into_response())
}

/// `POST /v1/workflows`. Describes the body in the OpenAPI document; the
/// handler reads it as [`SubmitBody`], keeping the manifest's own text.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct SubmitRequest {
    #[schema(value_type = Object)]
    manifest: Value,
    /// Of native, nostd, node, web, bundler; default: every target the operations allow.
    targets: Option<Vec<String>>,
}

/// [`SubmitRequest`] as read: the manifest's own text, as the client sent it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SubmitBody<'a> {
    #[serde(borrow)]
    manifest: &'a serde_json::value::RawValue,
    targets: Option<Vec<String>>,
}

/// Moves diagnostics about the manifest text that starts at byte `offset`
/// of `body` to line and column of `body` itself.
fn relocate(diagnostics: &mut [Diagnostic], body: &str, offset: usize) {
    let before = &body[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    for d in diagnostics {
        if d.line == Some(1) {
            d.column = d.column.map(|c| c + column - 1);
        }
        d.line = d.line.map(|l| l + line - 1);
    }
}

/// A submission's answer: a job to poll (202) or the finished build (200).
#[derive(Serialize, utoipa::ToSchema)]
pub struct Submitted {
    #[serde(skip_serializing_if = "Option::is_none")]
    job_id: Option<String>,
    workflow_id: String,
    state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    artifacts: Option<Vec<Artifact>>,
}

fn authorize(state: &AppState, headers: &HeaderMap) -> Result<(), Problem> {
    match headers.get("x-api-key").map(|v| v.to_str().unwrap_or("")) {
        None => Err(Problem::new(StatusCode::UNAUTHORIZED, "this endpoint needs an API key in the x-api-key header")),
        Some(key) if state.config.api_keys.iter().any(|k| constant_time_eq(k.as_bytes(), key.as_bytes())) => Ok(()),
        Some(_) => Err(Problem::new(StatusCode::FORBIDDEN, "the x-api-key is not valid for this service")),
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Builds a workflow. 202 with a job when new (identical submissions join
/// it); 200 with the artifacts when the same canonical manifest was already
/// built with the same operations, targets and toolchain. Needs `x-api-key`.
#[utoipa::path(post, path = "/v1/workflows", request_body = SubmitRequest,
    params(("x-api-key" = String, Header, description = "API key")),
    responses((status = 200, body = Submitted), (status = 202, body = Submitted), (status = 401, body = Problem),
        (status = 403, body = Problem), (status = 422, body = Problem),
        (status = 503, body = Problem, description = "busy, disk full, or the database is gone")))]
async fn submit_workflow(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult {
    authorize(&state, &headers)?;
    let text = json_body(&headers, body)?;
    let s = state.clone();
    let checked = heavy(&state, move || -> Result<_, Problem> {
        let text = braid::manifest::utf8(&text).map_err(Problem::invalid_manifest)?;
        let request: SubmitBody = serde_json::from_str(text).map_err(|e| {
            Problem::bad_request(format!("expected {{\"manifest\": {{...}}, \"targets\": [...]}}: {e}"))
        })?;
        // The manifest's own bytes are checked (their size, line and column),
        // not a re-serialization of them.
        let manifest = request.manifest.get();
        let workflow = validate(manifest, &s.registry).map_err(|mut d| {
            let offset = (manifest.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
            relocate(&mut d, text, offset);
            Problem::invalid_manifest(d)
        })?;
        let targets = match &request.targets {
            None => build::default_targets(&workflow),
            Some(names) => names
                .iter()
                .map(|t| {
                    Target::parse(t).ok_or_else(|| {
                        Problem::new(
                            StatusCode::UNPROCESSABLE_ENTITY,
                            format!("unknown target {t:?}; expected native, nostd, node, web or bundler"),
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
        };
        let mut targets = targets;
        targets.sort();
        targets.dedup();
        if targets.is_empty() {
            return Err(Problem::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "`targets` is empty; leave it out for every allowed target",
            ));
        }
        build::check_targets(&workflow, &targets)
            .map_err(|e| Problem::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()))?;
        // Refused now rather than by the build: the crate would be too large.
        crate_files(&s, &workflow)?;
        let target_names: Vec<String> = targets.iter().map(|t| t.name().to_string()).collect();
        let operations: serde_json::Map<String, Value> = workflow
            .operations
            .iter()
            .map(|op| (op.info.name.to_string(), Value::from(op.version_id.clone())))
            .collect();
        let manifest = serde_json::to_value(&workflow.manifest).map_err(Problem::internal)?;
        let key = json!({
            "manifest": manifest,
            "targets": target_names,
            "operations": operations,
            "toolchain": s.toolchain,
        });
        let workflow_id = braid::content_id(braid_support::json::canonical(&key).as_bytes());
        let canonical_manifest = braid_support::json::canonical(&key["manifest"]);
        Ok((workflow_id, workflow.manifest.name, canonical_manifest, target_names))
    })
    .await??;
    let (workflow_id, name, canonical_manifest, names) = checked;
    let id = workflow_id.clone();
    let submit = move |store: &crate::store::Store| store.submit(&id, &name, &canonical_manifest, &names);
    let submit = Arc::new(submit);
    let again = submit.clone();
    let mut submission = with_store(&state, move |store| submit(store)).await?;
    if let Submission::Built { artifacts } = &submission {
        // An artifact damaged or gone on disk is forgotten, and the
        // workflow built again, rather than pointed at.
        let bad = damaged(&state, artifacts).await?;
        if !bad.is_empty() {
            tracing::warn!(workflow = %workflow_id, "rebuilding: artifacts damaged or missing on disk: {bad:?}");
            with_store(&state, move |store| store.forget_artifacts(&bad)).await?;
            submission = with_store(&state, move |store| again(store)).await?;
        }
    }
    let (status, body) = match submission {
        Submission::Built { artifacts } => {
            state.metrics.cache_hits.fetch_add(1, Ordering::Relaxed);
            (
                StatusCode::OK,
                Submitted { job_id: None, workflow_id, state: "succeeded".into(), artifacts: Some(artifacts) },
            )
        }
        Submission::Joined { job_id, state: job_state } => {
            state.metrics.joined.fetch_add(1, Ordering::Relaxed);
            (StatusCode::ACCEPTED, Submitted { job_id: Some(job_id), workflow_id, state: job_state, artifacts: None })
        }
        Submission::Queued { job_id } => {
            state.wake.notify_one();
            (
                StatusCode::ACCEPTED,
                Submitted { job_id: Some(job_id), workflow_id, state: "queued".into(), artifacts: None },
            )
        }
    };
    Ok((status, Json(body)).into_response())
}

/// Runs a store call off the async threads (SQLite blocks).
async fn with_store<T, F>(state: &AppState, f: F) -> Result<T, Problem>
where
    T: Send + 'static,
    F: FnOnce(&crate::store::Store) -> Result<T, crate::store::StoreError> + Send + 'static,
{
    let store = state.store.clone();
    tokio::task::spawn_blocking(move || f(&store)).await.map_err(Problem::internal)?.map_err(Problem::from_store)
}

/// The artifacts among `artifacts` whose file is missing or no longer
/// hashes to its CID; their files are removed.
async fn damaged(state: &AppState, artifacts: &[Artifact]) -> Result<Vec<String>, Problem> {
    let cas = state.cas.clone();
    let cids: Vec<String> = artifacts.iter().map(|a| a.cid.clone()).collect();
    heavy(state, move || {
        cids.into_iter()
            .filter(|cid| match cas.get(cid) {
                Ok(Some(_)) => false,
                Ok(None) => true,
                Err(crate::cas::CasError::Corrupt(_)) => {
                    cas.remove(cid);
                    true
                }
                // Unreadable for another reason: left alone, not rebuilt.
                Err(e) => {
                    tracing::error!("checking artifact {cid}: {e}");
                    false
                }
            })
            .collect()
    })
    .await
}

fn is_job_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A build job: state, progress, the end of its log, the error if it failed.
#[utoipa::path(get, path = "/v1/jobs/{id}", params(("id" = String, Path)),
    responses((status = 200, body = Job), (status = 400, body = Problem), (status = 404, body = Problem)))]
async fn get_job(State(state): State<Arc<AppState>>, id: Result<Path<String>, PathRejection>) -> ApiResult {
    let Path(id) = id.map_err(|e| Problem::bad_request(e.body_text()))?;
    if !is_job_id(&id) {
        return Err(Problem::bad_request("a job id is 32 lowercase hex digits, as POST /v1/workflows returns it"));
    }
    let job = with_store(&state, move |store| store.job(&id)).await?;
    let job = job.ok_or_else(|| Problem::not_found("no job with this id"))?;
    Ok(Json(job).into_response())
}

/// A workflow build.
#[derive(Serialize, utoipa::ToSchema)]
pub struct WorkflowInfo {
    id: String,
    name: String,
    /// `building`, `succeeded` or `failed`.
    state: String,
    #[schema(value_type = Object)]
    manifest: Value,
    targets: Vec<String>,
    #[schema(value_type = Object)]
    sizes_bytes: Value,
    #[schema(value_type = Object)]
    timings_ms: Value,
    artifacts: Vec<Artifact>,
}

/// A workflow build with its artifacts.
#[utoipa::path(get, path = "/v1/workflows/{id}", params(("id" = String, Path)),
    responses((status = 200, body = WorkflowInfo), (status = 400, body = Problem), (status = 404, body = Problem)))]
async fn get_workflow(State(state): State<Arc<AppState>>, id: Result<Path<String>, PathRejection>) -> ApiResult {
    let Path(id) = id.map_err(|e| Problem::bad_request(e.body_text()))?;
    if !crate::cas::is_cid(&id) {
        return Err(Problem::bad_request("a workflow id is a CIDv1 (bafkr4i...), as POST /v1/workflows returns it"));
    }
    let row = with_store(&state, move |store| store.workflow(&id)).await?;
    let row = row.ok_or_else(|| Problem::not_found("no workflow with this id"))?;
    let report = row.report.unwrap_or_default();
    Ok(Json(WorkflowInfo {
        id: row.id,
        name: row.name,
        state: row.state,
        manifest: serde_json::from_str(&row.manifest).unwrap_or_default(),
        targets: row.targets,
        sizes_bytes: report.get("sizes_bytes").cloned().unwrap_or_else(|| json!({})),
        timings_ms: report.get("timings_ms").cloned().unwrap_or_else(|| json!({})),
        artifacts: row.artifacts,
    })
    .into_response())
}

/// An artifact's bytes, verified against its content id (the `ETag`).
#[utoipa::path(get, path = "/v1/artifacts/{cid}", params(("cid" = String, Path)),
    responses((status = 200, body = Vec<u8>), (status = 304, description = "If-None-Match: the bytes were verified and are unchanged"),
        (status = 400, body = Problem), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn get_artifact(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    cid: Result<Path<String>, PathRejection>,
) -> ApiResult {
    let Path(cid) = cid.map_err(|e| Problem::bad_request(e.body_text()))?;
    if !crate::cas::is_cid(&cid) {
        return Err(Problem::bad_request("an artifact id is a CIDv1 (bafkr4i..., 59 characters)"));
    }
    let etag = format!("\"{cid}\"");
    let c = cid.clone();
    let media_type = with_store(&state, move |store| store.artifact(&c)).await?;
    let media_type = media_type.ok_or_else(|| Problem::not_found("no artifact with this id"))?;
    // Verified before a 304 too: a client must not keep a CID whose bytes
    // the server no longer has.
    let cas = state.cas.clone();
    let c = cid.clone();
    let bytes = match heavy(&state, move || cas.get(&c)).await? {
        Ok(Some(bytes)) => bytes,
        Ok(None) | Err(crate::cas::CasError::Corrupt(_)) => {
            tracing::error!("artifact {cid} is damaged or missing on disk: removed; its workflows build again");
            state.cas.remove(&cid);
            let c = vec![cid.clone()];
            with_store(&state, move |store| store.forget_artifacts(&c)).await?;
            return Err(Problem::not_found(
                "this artifact was damaged on the server and has been removed; submit its workflow again to rebuild it",
            ));
        }
        Err(e) => return Err(Problem::internal(e)),
    };
    if headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) == Some(etag.as_str()) {
        return Ok((StatusCode::NOT_MODIFIED, [(header::ETAG, etag)]).into_response());
    }
    Ok(([(header::CONTENT_TYPE, media_type), (header::ETAG, etag)], bytes).into_response())
}

/// Health: 200 `{"status": "ok"}`, or 503 `{"status": "degraded",
/// "problems": [...]}` when the data directory takes no write (a full disk,
/// a read-only mount) or the database file was deleted or replaced.
#[utoipa::path(get, path = "/healthz", responses((status = 200, body = Object), (status = 503, body = Object)))]
async fn healthz(State(state): State<Arc<AppState>>) -> Response {
    let cas = state.cas.clone();
    // Not under `Checks`: health must answer when the service is busy.
    let probe = tokio::task::spawn_blocking(move || cas.probe()).await;
    let mut problems = Vec::new();
    match probe {
        Ok(Ok(())) => {}
        Ok(Err(e)) => problems.push(format!("the data directory takes no writes: {e}")),
        Err(e) => problems.push(format!("the write probe failed: {e}")),
    }
    let store = state.store.clone();
    if let Ok(Err(e)) = tokio::task::spawn_blocking(move || store.check_file()).await {
        problems.push(e.to_string());
    }
    if problems.is_empty() {
        return Json(json!({ "status": "ok" })).into_response();
    }
    (StatusCode::SERVICE_UNAVAILABLE, Json(json!({ "status": "degraded", "problems": problems }))).into_response()
}

/// Prometheus metrics: requests, jobs by state, build durations, cache hits.
#[utoipa::path(get, path = "/metrics", responses((status = 200, content_type = "text/plain", body = String)))]
async fn metrics(State(state): State<Arc<AppState>>) -> ApiResult {
    let jobs = with_store(&state, move |store| store.job_counts()).await?;
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], state.metrics.render(&jobs)).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Request as HttpRequest;
    use tower::ServiceExt as _;

    async fn call(app: &Router, method: &str, uri: &str, body: &str) -> Response {
        let request = HttpRequest::builder()
            .method(method)
            .uri(uri)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap();
        app.clone().oneshot(request).await.unwrap()
    }

    const MANIFEST: &str = r#"{"name":"t","version":"0.1.0","segments":[{"inputs":[-1],"sequence":[{"operation":"op_multihash"},{"operation":"op_cid"}]}]}"#;

    /// While heavy requests hold every slot (blocked on blocking threads),
    /// another is refused at once with 503 + Retry-After, and health and
    /// reads still answer: the async threads are free.
    #[tokio::test(flavor = "current_thread")]
    async fn heavy_requests_are_capped_and_leave_the_async_threads_free() {
        let dir = std::env::temp_dir().join(format!("braid-api-{}", uuid::Uuid::new_v4().simple()));
        let state = crate::open(crate::Config::for_tests(dir.clone())).unwrap();
        let app = app(state.clone());
        let (release_running, running) = std::sync::mpsc::channel::<()>();
        let (release_queued, queued) = std::sync::mpsc::channel::<()>();
        let s = state.clone();
        let first = tokio::spawn(async move { heavy(&s, move || running.recv().is_ok()).await });
        let s = state.clone();
        let second = tokio::spawn(async move { heavy(&s, move || queued.recv().is_ok()).await });
        while state.checks.admitted.available_permits() > 0 {
            tokio::task::yield_now().await;
        }
        let busy = call(&app, "POST", "/v1/validate", MANIFEST).await;
        assert_eq!(busy.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(busy.headers()[header::RETRY_AFTER], "1");
        assert_eq!(busy.headers()[header::CONTENT_TYPE], "application/problem+json");
        let problem: Value = serde_json::from_slice(&busy.into_body().collect().await.unwrap().to_bytes()).unwrap();
        assert!(problem["detail"].as_str().unwrap().contains("busy"), "{problem}");
        assert_eq!(call(&app, "GET", "/healthz", "").await.status(), StatusCode::OK);
        assert_eq!(call(&app, "GET", "/v1/operations", "").await.status(), StatusCode::OK);
        release_running.send(()).unwrap();
        release_queued.send(()).unwrap();
        assert!(first.await.unwrap().unwrap() && second.await.unwrap().unwrap());
        assert_eq!(call(&app, "POST", "/v1/validate", MANIFEST).await.status(), StatusCode::OK);
        drop(app);
        drop(state);
        std::fs::remove_dir_all(dir).unwrap();
    }

    fn test_state() -> (Arc<AppState>, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("braid-api-{}", uuid::Uuid::new_v4().simple()));
        (crate::open(crate::Config::for_tests(dir.clone())).unwrap(), dir)
    }

    async fn problem(response: Response) -> Value {
        serde_json::from_slice(&response.into_body().collect().await.unwrap().to_bytes()).unwrap()
    }

    /// A handler that panics gets a 500 problem, and the next request is
    /// served (with `panic = "abort"` the process died instead).
    #[tokio::test(flavor = "current_thread")]
    async fn a_panicking_handler_is_a_500_and_the_service_goes_on() {
        let (state, dir) = test_state();
        let routes: Router<Arc<AppState>> = Router::new()
            .route("/boom", get(|| async { panic!("a bug") as &'static str }))
            .route("/healthz", get(healthz));
        let app = harden(routes, state.clone());
        let response = call(&app, "GET", "/boom", "").await;
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/problem+json");
        assert!(!problem(response).await["detail"].as_str().unwrap().contains("a bug"));
        assert_eq!(call(&app, "GET", "/healthz", "").await.status(), StatusCode::OK);
        drop((app, state));
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// Bodies that are not UTF-8 were a bare 400 here and a silent U+FFFD
    /// in the CLI; both now give the diagnostic at the bad byte.
    #[tokio::test(flavor = "current_thread")]
    async fn bodies_that_are_not_utf8_get_a_diagnostic_at_the_byte() {
        let (state, dir) = test_state();
        let app = app(state.clone());
        let mut body = MANIFEST.as_bytes().to_vec();
        let at = MANIFEST.find("\"t\"").unwrap() + 1;
        body[at] = 0xff;
        for uri in ["/v1/validate", "/v1/generate"] {
            let request = HttpRequest::builder()
                .method("POST")
                .uri(uri)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body.clone()))
                .unwrap();
            let response = app.clone().oneshot(request).await.unwrap();
            assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY, "{uri}");
            let problem = problem(response).await;
            let d = &problem["diagnostics"][0];
            assert!(d["message"].as_str().unwrap().contains(&format!("invalid byte at offset {at}")), "{problem}");
            assert_eq!(d["column"], at + 1, "{problem}");
        }
        drop((app, state));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn diagnostics_point_into_the_body_as_sent() {
        let body = "{\"targets\": null,\n  \"manifest\": {\"name\": 1}}";
        let offset = body.find("{\"name").unwrap();
        let mut d = vec![Diagnostic::new("/name", "x"), Diagnostic::new("/", "y")];
        (d[0].line, d[0].column) = (Some(1), Some(10));
        (d[1].line, d[1].column) = (Some(2), Some(3));
        relocate(&mut d, body, offset);
        assert_eq!((d[0].line, d[0].column), (Some(2), Some(24)));
        assert_eq!(&body.lines().nth(1).unwrap()[23..24], "1");
        assert_eq!((d[1].line, d[1].column), (Some(3), Some(3)));
    }
}
