//! The HTTP API: routes, handlers and the OpenAPI document generated from
//! them (utoipa). Every error is a [`Problem`]; ids in paths are checked
//! against their exact format before any lookup, so `../` and encoded
//! traversal never reach the store or the file system.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use utoipa::OpenApi;

use super::problem::Problem;
use super::store::{Artifact, Job, Submission};
use super::AppState;
use crate::build::{self, Target};
use crate::manifest::{validate, Workflow};

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

/// The router, with state; no socket (tests can call it directly).
pub fn app(state: Arc<AppState>) -> Router {
    let limit = state.config.max_body;
    Router::new()
        .route("/v1/openapi.json", get(openapi))
        .route("/v1/operations", get(list_operations))
        .route("/v1/operations/{name}", get(get_operation))
        .route("/v1/validate", post(validate_manifest))
        .route("/v1/generate", post(generate_crate))
        .route("/v1/workflows", post(submit_workflow))
        .route("/v1/workflows/{id}", get(get_workflow))
        .route("/v1/jobs/{id}", get(get_job))
        .route("/v1/artifacts/{cid}", get(get_artifact))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .fallback(|| async { Problem::not_found("no such endpoint; GET /v1/openapi.json describes the API") })
        .method_not_allowed_fallback(|| async {
            Problem::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "this endpoint does not take that method; see /v1/openapi.json",
            )
        })
        .layer(DefaultBodyLimit::max(limit))
        .layer(middleware::from_fn_with_state(state.clone(), count))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(|_| {
            Problem::internal("a handler panicked").into_response()
        }))
        .with_state(state)
}

async fn count(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let method = request.method().to_string();
    let response = next.run(request).await;
    state.metrics.request(&method, response.status().as_u16());
    response
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

fn operation_info(op: &crate::registry::RegisteredOperation) -> OperationInfo {
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
            crate::diagnostic::quote(&name)
        ))
    })?;
    Ok(Json(json!({ "name": op.info.name, "versions": [operation_info(op)] })).into_response())
}

/// Reads a JSON request body: content type, size and syntax checked.
fn json_body(headers: &HeaderMap, body: Result<Bytes, BytesRejection>) -> Result<String, Problem> {
    let body = body.map_err(|e| match e.status() {
        StatusCode::PAYLOAD_TOO_LARGE => {
            Problem::new(StatusCode::PAYLOAD_TOO_LARGE, "the request body is too large; a manifest is at most 1 MiB")
        }
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
    String::from_utf8(body.to_vec()).map_err(|_| Problem::bad_request("the body is not UTF-8 text"))
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

fn check(state: &AppState, text: &str) -> Result<Workflow, Problem> {
    if serde_json::from_str::<Value>(text).is_err() {
        let d = validate(text, &state.registry).err().unwrap_or_default();
        return Err(Problem::bad_request(format!(
            "the body is not JSON: {}",
            d.first().map_or("unreadable", |d| d.message.as_str())
        )));
    }
    validate(text, &state.registry).map_err(Problem::invalid_manifest)
}

/// Validates a manifest (the body); 422 lists every diagnostic with its JSON pointer.
#[utoipa::path(post, path = "/v1/validate", request_body(content = Object, content_type = "application/json"),
    responses((status = 200, body = Valid), (status = 422, body = Problem), (status = 400, body = Problem)))]
async fn validate_manifest(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let text = json_body(&headers, body)?;
    let w = check(&state, &text)?;
    Ok(Json(Valid { valid: true, id: w.id, targets: w.targets }).into_response())
}

/// The crate generated from a manifest (the body), as `.tar.gz`, without building it.
#[utoipa::path(post, path = "/v1/generate", request_body(content = Object, content_type = "application/json"),
    responses((status = 200, content_type = "application/gzip", body = Vec<u8>), (status = 422, body = Problem)))]
async fn generate_crate(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let text = json_body(&headers, body)?;
    let workflow = check(&state, &text)?;
    let state2 = state.clone();
    let bytes = tokio::task::spawn_blocking(move || -> Result<Vec<u8>, String> {
        let dir = state2.config.data.join("tmp").join(uuid::Uuid::new_v4().simple().to_string());
        let result = (|| {
            crate::project::write(&workflow, &state2.generator, &state2.sources, &dir).map_err(|e| e.to_string())?;
            super::pack::tar_gz(&dir, &crate::codegen::crate_name(&workflow.manifest.name)).map_err(|e| e.to_string())
        })();
        let _ = std::fs::remove_dir_all(&dir);
        result
    })
    .await
    .map_err(Problem::internal)?
    .map_err(Problem::internal)?;
    Ok(([(header::CONTENT_TYPE, "application/gzip")], bytes).into_response())
}

/// `POST /v1/workflows`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitRequest {
    #[schema(value_type = Object)]
    manifest: Value,
    /// Of native, nostd, node, web, bundler; default: every target the operations allow.
    targets: Option<Vec<String>>,
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
        (status = 403, body = Problem), (status = 422, body = Problem)))]
async fn submit_workflow(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult {
    authorize(&state, &headers)?;
    let text = json_body(&headers, body)?;
    let request: SubmitRequest = serde_json::from_str(&text)
        .map_err(|e| Problem::bad_request(format!("expected {{\"manifest\": {{...}}, \"targets\": [...]}}: {e}")))?;
    let manifest_text = serde_json::to_string_pretty(&request.manifest).map_err(Problem::internal)?;
    let workflow = check(&state, &manifest_text)?;
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
    let target_names: Vec<String> = targets.iter().map(|t| t.name().to_string()).collect();
    let operations: serde_json::Map<String, Value> =
        workflow.operations.iter().map(|op| (op.info.name.to_string(), Value::from(op.version_id.clone()))).collect();
    let key = json!({
        "manifest": serde_json::to_value(&workflow.manifest).map_err(Problem::internal)?,
        "targets": target_names,
        "operations": operations,
        "toolchain": state.toolchain,
    });
    let workflow_id = crate::op_manifest::version_id(braid_support::json::canonical(&key).as_bytes());
    let canonical_manifest =
        braid_support::json::canonical(&serde_json::to_value(&workflow.manifest).map_err(Problem::internal)?);
    let (id, name) = (workflow_id.clone(), workflow.manifest.name.clone());
    let names = target_names.clone();
    let submission = with_store(&state, move |store| store.submit(&id, &name, &canonical_manifest, &names)).await?;
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
    F: FnOnce(&super::store::Store) -> Result<T, super::store::StoreError> + Send + 'static,
{
    let store = state.store.clone();
    tokio::task::spawn_blocking(move || f(&store)).await.map_err(Problem::internal)?.map_err(Problem::internal)
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
    if !super::cas::is_cid(&id) {
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
    responses((status = 200, body = Vec<u8>), (status = 400, body = Problem), (status = 404, body = Problem)))]
async fn get_artifact(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    cid: Result<Path<String>, PathRejection>,
) -> ApiResult {
    let Path(cid) = cid.map_err(|e| Problem::bad_request(e.body_text()))?;
    if !super::cas::is_cid(&cid) {
        return Err(Problem::bad_request("an artifact id is a CIDv1 (bafkr4i..., 59 characters)"));
    }
    let etag = format!("\"{cid}\"");
    let c = cid.clone();
    let media_type = with_store(&state, move |store| store.artifact(&c)).await?;
    let media_type = media_type.ok_or_else(|| Problem::not_found("no artifact with this id"))?;
    if headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) == Some(etag.as_str()) {
        return Ok((StatusCode::NOT_MODIFIED, [(header::ETAG, etag)]).into_response());
    }
    let cas = state.cas.clone();
    let bytes = tokio::task::spawn_blocking(move || cas.get(&cid))
        .await
        .map_err(Problem::internal)?
        .map_err(Problem::internal)?;
    let bytes = bytes.ok_or_else(|| Problem::not_found("no artifact with this id"))?;
    Ok(([(header::CONTENT_TYPE, media_type), (header::ETAG, etag)], bytes).into_response())
}

/// Liveness.
#[utoipa::path(get, path = "/healthz", responses((status = 200, body = Object)))]
async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

/// Prometheus metrics: requests, jobs by state, build durations, cache hits.
#[utoipa::path(get, path = "/metrics", responses((status = 200, content_type = "text/plain", body = String)))]
async fn metrics(State(state): State<Arc<AppState>>) -> ApiResult {
    let jobs = with_store(&state, move |store| store.job_counts()).await?;
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], state.metrics.render(&jobs)).into_response())
}
