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

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, Extensions, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use braid_engine::{Input, RunError, Type};

use super::ApiResult;
use crate::execute::server_timing;
use crate::ids::{BuildId, ContentId, WorkflowId};
use crate::problem::Problem;
use crate::store::{BuildRow, BuildState};
use crate::AppState;

/// How the name of a build's component artifact ends (after its crate name).
const COMPONENT: &str = ".component.wasm";

/// The component artifact of a build, if it has one.
fn component(row: &BuildRow) -> Option<ContentId> {
    let name = format!("{}{COMPONENT}", braid::codegen::crate_name(&row.name));
    (row.state == BuildState::Succeeded)
        .then(|| row.artifacts.iter().find(|a| a.name == name).map(|a| a.cid.clone()))
        .flatten()
}

const NO_COMPONENT: &str = "has no component to run: submit the workflow with \"targets\": [\"component\"] \
     (POST /v1/workflows), wait for its build, then run it";

/// Runs a build's component.
#[utoipa::path(post, path = "/v1/builds/{id}/run", params(("id" = String, Path, description = "build id")),
    request_body(content = Vec<u8>, description = "the inputs: JSON (an array, or an object by input name; bytes as base64), multipart/form-data (a part per input, by name), or the raw bytes of a workflow's one Bytes input"),
    responses((status = 200, description = "the output, as JSON (raw bytes with Accept: application/octet-stream for a Bytes output)"),
        (status = 400, body = Problem), (status = 401, body = Problem), (status = 404, body = Problem),
        (status = 413, body = Problem), (status = 422, body = Problem), (status = 503, body = Problem)))]
pub(super) async fn run_build(
    State(state): State<Arc<AppState>>,
    id: BuildId,
    headers: HeaderMap,
    extensions: Extensions,
    body: Bytes,
) -> ApiResult {
    // (The key was checked before the body was read: `layers::admit`.)
    let cid = match state.executor.component_of(&id) {
        Some(cid) => cid,
        None => {
            let row = state.store.build(&id).await?;
            let row = row.ok_or_else(|| Problem::not_found("no build with this id"))?;
            let cid = component(&row).ok_or_else(|| Problem::not_found(format!("build {} {NO_COMPONENT}", row.id)))?;
            state.executor.remember_component(row.id, cid.clone());
            cid
        }
    };
    run(state, cid, headers, extensions, body).await
}

/// Runs the build of a workflow that succeeded last with a component.
#[utoipa::path(post, path = "/v1/workflows/{id}/run", params(("id" = String, Path, description = "workflow id")),
    request_body(content = Vec<u8>, description = "as for POST /v1/builds/{id}/run"),
    responses((status = 200, description = "the output"), (status = 400, body = Problem), (status = 401, body = Problem),
        (status = 404, body = Problem), (status = 413, body = Problem), (status = 422, body = Problem), (status = 503, body = Problem)))]
pub(super) async fn run_workflow(
    State(state): State<Arc<AppState>>,
    id: WorkflowId,
    headers: HeaderMap,
    extensions: Extensions,
    body: Bytes,
) -> ApiResult {
    // (The key was checked before the body was read: `layers::admit`.)
    let row = state.store.newest_build_with(&id, COMPONENT).await?;
    let cid =
        row.as_ref().and_then(component).ok_or_else(|| Problem::not_found(format!("workflow {id} {NO_COMPONENT}")))?;
    run(state, cid, headers, extensions, body).await
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

async fn run(
    state: Arc<AppState>,
    cid: ContentId,
    headers: HeaderMap,
    extensions: Extensions,
    body: Bytes,
) -> ApiResult {
    let sent = Sent::read(&headers, extensions, body).await?;
    let raw_out = super::media::accepts_exactly(&headers, "application/octet-stream");
    // Slots are shared fairly between keys (public runs share one tenant).
    let tenant = headers.get("x-api-key").and_then(|v| v.to_str().ok()).unwrap_or("");
    let _slot = state.executor.slots.acquire(tenant).await?;
    // Loaded, the program runs here; loading it reads the store and may
    // compile, so it is done on a blocking thread.
    let (program, source) = match state.executor.loaded(&cid) {
        Some(program) => (program, "memory"),
        None => {
            let state = state.clone();
            tokio::task::spawn_blocking(move || {
                state.executor.program(&cid, || match state.cas.get(&cid) {
                    Ok(Some(bytes)) => Ok(bytes),
                    Ok(None) => Err(Problem::not_found(
                        "the build's component is missing from the store; submit its workflow again",
                    )),
                    Err(e) => Err(Problem::internal(e)),
                })
            })
            .await
            .map_err(Problem::internal)??
        }
    };
    state.metrics.program(source);
    let engine = state.executor.engine()?;
    // Decoding a large JSON or multipart body is work for a blocking thread.
    let inputs = match sent {
        sent if matches!(sent, Sent::Raw(_)) || sent.len() <= 64 << 10 => inputs(program.params(), sent)?,
        sent => {
            let program = program.clone();
            tokio::task::spawn_blocking(move || inputs(program.params(), sent)).await.map_err(Problem::internal)??
        }
    };
    let (output, timings) = program.run_timed(&engine, inputs).await;
    state.metrics.run(timings.total, output.as_ref().err());
    let ty = program.output();
    let timing = (axum::http::HeaderName::from_static("server-timing"), server_timing(timings));
    let output = match output {
        Ok(output) => output,
        Err(error) => return Ok(([timing], problem(error)).into_response()),
    };
    let bytes_out = braid_engine::is_bytes(ty);
    if raw_out && bytes_out {
        let bytes = output.into_bytes().unwrap_or_default();
        return Ok(([(header::CONTENT_TYPE, "application/octet-stream".to_string()), timing], bytes).into_response());
    }
    let text = output.to_json_text();
    Ok(([(header::CONTENT_TYPE, "application/json".to_string()), timing], text).into_response())
}

/// The request's inputs for `params`.
fn inputs(params: &[(String, Type)], sent: Sent) -> Result<Vec<Input>, Problem> {
    let place = |name: &str| format!("input {}", braid_engine::camel(name));
    match sent {
        Sent::Raw(body) => match params {
            [(_, ty)] if braid_engine::is_bytes(ty) => Ok(vec![Input::Bytes(body.to_vec())]),
            _ => Err(Problem::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!(
                    "this workflow takes {} input(s) ({}): send them as JSON (Content-Type: application/json), \
                     an array in order or an object by name, or as multipart/form-data by name; only a workflow \
                     of one Bytes input takes a raw body",
                    params.len(),
                    names(params)
                ),
            )),
        },
        // A part is the raw bytes of a Bytes input, the text of a String
        // one, and JSON for any other.
        Sent::Parts(parts) => by_name(params, parts)?
            .into_iter()
            .zip(params)
            .map(|(part, (name, ty))| Input::from_bytes(part.to_vec(), ty, &place(name)))
            .collect::<Result<_, String>>()
            .map_err(Problem::bad_request),
        Sent::Json(body) => {
            let value: serde_json::Value = serde_json::from_slice(&body)
                .map_err(|e| Problem::bad_request(format!("the body is not JSON: {e}")))?;
            let given: Vec<serde_json::Value> = match value {
                serde_json::Value::Array(items) => items,
                serde_json::Value::Object(object) => by_name(params, object.into_iter().collect())?,
                _ => {
                    return Err(Problem::bad_request(
                        "the inputs are a JSON array (in order) or an object (by input name)",
                    ));
                }
            };
            if given.len() != params.len() {
                return Err(Problem::bad_request(format!(
                    "this workflow takes {} input(s) ({}), found {}",
                    params.len(),
                    names(params),
                    given.len()
                )));
            }
            given
                .iter()
                .zip(params)
                .map(|(value, (name, ty))| Input::from_json(value, ty, &place(name)))
                .collect::<Result<_, _>>()
                .map_err(Problem::bad_request)
        }
    }
}

/// `given` (by input name, camelCase) in the order of `params`: each once,
/// none missing, none unknown.
fn by_name<T>(params: &[(String, Type)], mut given: Vec<(String, T)>) -> Result<Vec<T>, Problem> {
    let shown = |name: &str| name.chars().take(64).collect::<String>();
    let mut ordered = Vec::with_capacity(params.len());
    for (name, _) in params {
        let key = braid_engine::camel(name);
        let mut found = given.iter().enumerate().filter(|(_, (n, _))| *n == key).map(|(i, _)| i);
        let (Some(at), None) = (found.next(), found.next()) else {
            let count = given.iter().filter(|(n, _)| *n == key).count();
            return Err(Problem::bad_request(if count == 0 {
                format!("the input `{key}` is missing; this workflow takes {}", names(params))
            } else {
                format!("the input `{key}` is given {count} times; give it once")
            }));
        };
        ordered.push(given.swap_remove(at).1);
    }
    if let Some((extra, _)) = given.first() {
        return Err(Problem::bad_request(format!(
            "unknown input `{}`; this workflow takes {}",
            shown(extra),
            names(params)
        )));
    }
    Ok(ordered)
}

fn names(params: &[(String, Type)]) -> String {
    params.iter().map(|(n, _)| braid_engine::camel(n)).collect::<Vec<_>>().join(", ")
}

/// A failed run as the caller sees it: what they sent is wrong (400, 413),
/// or the workflow failed or went over a budget (422).
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
