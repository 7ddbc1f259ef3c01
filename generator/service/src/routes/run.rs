//! `POST /v1/builds/{id}/run` and `POST /v1/workflows/{id}/run`: a built
//! workflow's component run on the request's inputs ([`crate::execute`]).
//! The inputs: JSON, an array in order or an object by input name (bytes
//! as base64); `multipart/form-data`, a part per input by name (raw bytes
//! for a `Bytes` input, text for a `String`, JSON for the rest); or, for a
//! workflow of one `Bytes` input, the raw body. The body may be as large
//! as the run's input limit (`--input-limit`), not `--max-body`. The
//! answer: the output as JSON, or its raw bytes for a `Bytes` output with
//! `Accept: application/octet-stream`; the instantiation's and the whole
//! run's times in `Server-Timing` (on failures too). Runs need an API key
//! unless the operator opened them (`--public-run`).

use std::sync::Arc;

use crate::metrics::RunOutcome;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, Extensions, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use braid_engine::wire::{self, InputsError};
use braid_engine::{Input, Output, RunError, Shape};
use braid_store::ids::{BuildId, WorkflowId};

use super::params::Param;
use super::ApiResult;
use crate::execute::{server_timing, ExecError, Loaded, Target};
use crate::problem::Problem;
use crate::AppState;

/// Runs a build's component.
#[utoipa::path(post, path = "/v1/builds/{id}/run", params(("id" = String, Path, description = "build id")),
    request_body(content = Vec<u8>, description = "the inputs: JSON (an array, or an object by input name; bytes as base64), multipart/form-data (a part per input, by name), or the raw bytes of a workflow's one Bytes input"),
    responses((status = 200, description = "the output, as JSON (raw bytes with Accept: application/octet-stream for a Bytes output)"),
        (status = 400, body = Problem), (status = 401, body = Problem), (status = 404, body = Problem),
        (status = 413, body = Problem), (status = 422, body = Problem), (status = 429, body = Problem, description = "over the key's rate (--run-rate-per-key)"), (status = 503, body = Problem)))]
pub(super) async fn run_build(
    State(state): State<Arc<AppState>>,
    Param(id): Param<BuildId>,
    headers: HeaderMap,
    extensions: Extensions,
    body: Bytes,
) -> ApiResult {
    // (The key was checked before the body was read: `layers::admit`.)
    let limits = state.executor.config().limits;
    run(state, Target::Build(id), limits, None, headers, extensions, body).await
}

/// Runs the build of a workflow that succeeded last with a component.
#[utoipa::path(post, path = "/v1/workflows/{id}/run", params(("id" = String, Path, description = "workflow id")),
    request_body(content = Vec<u8>, description = "as for POST /v1/builds/{id}/run"),
    responses((status = 200, description = "the output"), (status = 400, body = Problem), (status = 401, body = Problem),
        (status = 404, body = Problem), (status = 413, body = Problem), (status = 422, body = Problem), (status = 429, body = Problem, description = "over the key's rate (--run-rate-per-key)"), (status = 503, body = Problem)))]
pub(super) async fn run_workflow(
    State(state): State<Arc<AppState>>,
    Param(id): Param<WorkflowId>,
    headers: HeaderMap,
    extensions: Extensions,
    body: Bytes,
) -> ApiResult {
    // (The key was checked before the body was read: `layers::admit`.)
    let limits = state.executor.config().limits;
    run(state, Target::Workflow(id), limits, None, headers, extensions, body).await
}

/// A run's inputs as sent.
enum Sent {
    /// JSON: an array in order or an object by input name.
    Json(Bytes),
    /// `multipart/form-data`: one part per input, by name.
    Parts(Vec<(String, Bytes)>),
    /// The raw bytes of a workflow's one `Bytes` input.
    Raw(Bytes),
}

impl Sent {
    /// The bytes sent.
    fn len(&self) -> usize {
        match self {
            Self::Json(body) | Self::Raw(body) => body.len(),
            Self::Parts(parts) => parts.iter().map(|(name, part)| name.len() + part.len()).sum(),
        }
    }

    /// What the request sent, by its `Content-Type`.
    /// `extensions` are the request's: among them the body limit the
    /// router set, which the multipart reader honours (its own default
    /// would stop at 2 MiB, under `--input-limit`).
    async fn read(headers: &HeaderMap, extensions: Extensions, body: Bytes) -> Result<Self, Problem> {
        match super::media::content_type(headers).as_str() {
            "application/json" => return Ok(Self::Json(body)),
            "multipart/form-data" => {}
            _ => return Ok(Self::Raw(body)),
        }
        let mut request = axum::http::Request::new(axum::body::Body::from(body));
        *request.headers_mut() = headers.clone();
        *request.extensions_mut() = extensions;
        let bad = |text: String| Problem::bad_request(format!("the multipart body cannot be read: {text}"));
        let mut form = <axum::extract::Multipart as axum::extract::FromRequest<()>>::from_request(request, &())
            .await
            .map_err(|e| bad(e.body_text()))?;
        let mut parts = Vec::new();
        while let Some(field) = form.next_field().await.map_err(|e| bad(e.body_text()))? {
            let name = field.name().unwrap_or_default().to_string();
            parts.push((name, field.bytes().await.map_err(|e| bad(e.body_text()))?));
        }
        Ok(Self::Parts(parts))
    }
}

/// Runs `target` on the request's inputs within `limits` (the service's,
/// or a deployment's), counted in the metrics (under `deployment` too, a
/// label of [`braid_worker::metrics::Metrics::deployment_label`], for a run of one).
pub(super) async fn run(
    state: Arc<AppState>,
    target: Target,
    limits: braid_engine::Limits,
    deployment: Option<String>,
    headers: HeaderMap,
    extensions: Extensions,
    body: Bytes,
) -> ApiResult {
    let sent = Sent::read(&headers, extensions, body).await?;
    let raw_out = super::media::accepts_exactly(&headers, "application/octet-stream");
    let executor = &state.executor;
    let cid = executor.component(&state.store, &target).await.map_err(exec_problem)?;
    let Loaded { program, source } = executor.program(&state.cas, &cid).await.map_err(exec_problem)?;
    state.app_metrics.program(source);
    // Slots are shared fairly between keys, taken only once the program is
    // loaded. A key the service does not know is no tenant of its own
    // (public runs, where no key was checked, share one).
    let sent_key = headers.get("x-api-key").and_then(|v| v.to_str().ok()).unwrap_or("");
    let tenant = if super::auth::is_api_key(&state, sent_key) { sent_key } else { "" };
    executor.admit(tenant)?;
    let _slot = executor.slot(tenant).await?;
    let engine = executor.engine().map_err(exec_problem)?;
    // Decoding a large JSON or multipart body is work for a blocking thread.
    let inputs = match sent {
        sent if matches!(sent, Sent::Raw(_)) || sent.len() <= 64 << 10 => inputs(program.shapes(), sent)?,
        sent => {
            let program = program.clone();
            tokio::task::spawn_blocking(move || inputs(program.shapes(), sent)).await.map_err(Problem::internal)??
        }
    };
    let (output, timings) = program.run_within(&engine, inputs, limits).await;
    state.app_metrics.run(timings.total, outcome(output.as_ref().err()), deployment.as_deref());
    let timing = (axum::http::HeaderName::from_static("server-timing"), server_timing(timings));
    let output = match output {
        Ok(output) => output,
        Err(error) => return Ok(([timing], problem(error)).into_response()),
    };
    let (media_type, body) = match output {
        Output::Bytes(bytes) if raw_out => ("application/octet-stream", bytes),
        output => ("application/json", output.into_json_text().into_bytes()),
    };
    // Held against the bound on unread outputs until the client takes it.
    let body = match executor.hold(tenant, Bytes::from(body)) {
        Ok(body) => axum::body::Body::new(body),
        Err(busy) => return Ok(([timing], busy).into_response()),
    };
    Ok(([(header::CONTENT_TYPE, media_type.to_string()), timing], body).into_response())
}

/// The request's inputs for a workflow of parameters `params`, read as
/// every host of a workflow reads them ([`wire::inputs`]).
fn inputs(params: &[(String, Shape)], sent: Sent) -> Result<Vec<Input>, Problem> {
    let sent = match &sent {
        Sent::Json(body) => wire::Sent::Json(body),
        Sent::Parts(parts) => {
            wire::Sent::Parts(parts.iter().map(|(name, part)| (name.clone(), part.to_vec())).collect())
        }
        Sent::Raw(body) => wire::Sent::Raw(body.to_vec()),
    };
    wire::inputs(params, sent).map_err(|e| match e {
        InputsError::Bad(why) => Problem::bad_request(why),
        InputsError::Unsupported(why) => Problem::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, why),
    })
}

/// A failed run as the caller sees it: what they sent is wrong (400, 413),
/// or the workflow failed or went over a budget (422).
/// Why a run could not start, as a problem document.
pub(super) fn exec_problem(error: ExecError) -> Problem {
    match error {
        ExecError::NoBuild | ExecError::NoComponent(_) | ExecError::ComponentMissing | ExecError::NoDeployment(_) => {
            Problem::not_found(error.to_string())
        }
        ExecError::Store(e) => e.into(),
        ExecError::OverBudget(detail) => Problem::new(StatusCode::UNPROCESSABLE_ENTITY, detail),
        ExecError::Cas(_) | ExecError::Load { .. } | ExecError::Engine(_) => Problem::internal(error.to_string()),
    }
}

fn problem(error: RunError) -> Problem {
    let status = match &error {
        RunError::BadInput(_) => StatusCode::BAD_REQUEST,
        RunError::InputTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    };
    let detail = match &error {
        RunError::Workflow { kind, message } => format!("the workflow failed ({kind}): {message}"),
        other => other.to_string(),
    };
    Problem::new(status, detail)
}

/// How a run ended, as the metrics label it.
fn outcome(error: Option<&RunError>) -> RunOutcome {
    match error {
        None => RunOutcome::Ok,
        Some(RunError::Workflow { .. }) => RunOutcome::Failed,
        Some(RunError::Time(_)) => RunOutcome::Time,
        Some(RunError::Memory(_)) => RunOutcome::Memory,
        Some(RunError::OutputTooLarge { .. }) => RunOutcome::Output,
        Some(RunError::InputTooLarge { .. } | RunError::BadInput(_)) => RunOutcome::Input,
        Some(RunError::Trap(_)) => RunOutcome::Trap,
    }
}
