//! `POST /v1/builds/{id}/run` and `POST /v1/workflows/{id}/run`: a built
//! workflow's component run on the request's inputs ([`crate::execute`]).
//! The inputs: the raw body when the workflow takes one `Bytes` input and
//! the body is not JSON; otherwise JSON, an array in order or an object by
//! input name (bytes as base64). The answer: the output as JSON, or its
//! raw bytes for a `Bytes` output with `Accept: application/octet-stream`;
//! the run's time in `Server-Timing`. Runs need an API key unless the
//! operator opened them (`--public-run`).

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use braid_engine::{RunError, Type, Val};

use super::auth::Writer;
use super::heavy::with_store;
use super::ApiResult;
use crate::execute::server_timing;
use crate::ids::{BuildId, ContentId, WorkflowId};
use crate::problem::Problem;
use crate::store::{BuildRow, BuildState};
use crate::AppState;

/// The component artifact of a build, if it has one.
fn component(row: &BuildRow) -> Option<ContentId> {
    let name = format!("{}.component.wasm", braid::codegen::crate_name(&row.name));
    (row.state == BuildState::Succeeded)
        .then(|| row.artifacts.iter().find(|a| a.name == name).map(|a| a.cid.clone()))
        .flatten()
}

const NO_COMPONENT: &str = "has no component to run: submit the workflow with \"targets\": [\"component\"] \
     (POST /v1/workflows), wait for its build, then run it";

/// Runs a build's component.
#[utoipa::path(post, path = "/v1/builds/{id}/run", params(("id" = String, Path, description = "build id")),
    request_body(content = Vec<u8>, description = "the inputs: JSON (an array, or an object by input name; bytes as base64), or the raw bytes of a workflow's one Bytes input"),
    responses((status = 200, description = "the output, as JSON (raw bytes with Accept: application/octet-stream for a Bytes output)"),
        (status = 400, body = Problem), (status = 401, body = Problem), (status = 404, body = Problem),
        (status = 413, body = Problem), (status = 422, body = Problem), (status = 503, body = Problem)))]
pub(super) async fn run_build(
    State(state): State<Arc<AppState>>,
    id: BuildId,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    authorize(&state, &headers).await?;
    let row = with_store(&state, move |store| store.build(&id)).await?;
    let row = row.ok_or_else(|| Problem::not_found("no build with this id"))?;
    let cid = component(&row).ok_or_else(|| Problem::not_found(format!("build {} {NO_COMPONENT}", row.id)))?;
    run(state, cid, headers, body).await
}

/// Runs the newest build of a workflow that has a component.
#[utoipa::path(post, path = "/v1/workflows/{id}/run", params(("id" = String, Path, description = "workflow id")),
    request_body(content = Vec<u8>, description = "as for POST /v1/builds/{id}/run"),
    responses((status = 200, description = "the output"), (status = 400, body = Problem), (status = 401, body = Problem),
        (status = 404, body = Problem), (status = 413, body = Problem), (status = 422, body = Problem), (status = 503, body = Problem)))]
pub(super) async fn run_workflow(
    State(state): State<Arc<AppState>>,
    id: WorkflowId,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    authorize(&state, &headers).await?;
    let lookup = id.clone();
    let rows = with_store(&state, move |store| store.builds_of(&lookup)).await?;
    if rows.is_empty() {
        return Err(Problem::not_found("no workflow with this id has been submitted; POST /v1/workflows builds one"));
    }
    let cid =
        rows.iter().find_map(component).ok_or_else(|| Problem::not_found(format!("workflow {id} {NO_COMPONENT}")))?;
    run(state, cid, headers, body).await
}

/// A key, unless runs are public.
async fn authorize(state: &Arc<AppState>, headers: &HeaderMap) -> Result<(), Problem> {
    if state.executor.config().public {
        return Ok(());
    }
    let mut parts = axum::http::Request::new(()).into_parts().0;
    parts.headers = headers.clone();
    <Writer as axum::extract::FromRequestParts<Arc<AppState>>>::from_request_parts(&mut parts, state).await.map(drop)
}

async fn run(state: Arc<AppState>, cid: ContentId, headers: HeaderMap, body: Bytes) -> ApiResult {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json"));
    let raw_out = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) == Some("application/octet-stream");
    let work = state.clone();
    let ran = state
        .executor
        .slots
        .bounded("runs", move || -> Result<_, Problem> {
            let state = work;
            let program = state.executor.program(&cid, || match state.cas.get(&cid) {
                Ok(Some(bytes)) => Ok(bytes),
                Ok(None) => Err(Problem::not_found(
                    "the build's component is missing from the store; submit its workflow again",
                )),
                Err(e) => Err(Problem::internal(e)),
            })?;
            let engine = state.executor.engine()?;
            let inputs = inputs(program.params(), json, &body)?;
            let start = Instant::now();
            let output = program.run(&engine, inputs);
            state.metrics.run(start.elapsed(), output.as_ref().err());
            Ok((output, start.elapsed(), program.output().clone()))
        })
        .await??;
    let (output, took, ty) = ran;
    let output = output.map_err(problem)?;
    let timing = (axum::http::HeaderName::from_static("server-timing"), server_timing(took));
    let bytes_out = matches!(&ty, Type::List(l) if l.ty() == Type::U8);
    if raw_out && bytes_out {
        let bytes = braid_engine::val_bytes(&output).unwrap_or_default();
        return Ok(([(header::CONTENT_TYPE, "application/octet-stream".to_string()), timing], bytes).into_response());
    }
    let text = braid_engine::to_json_text(&output);
    Ok(([(header::CONTENT_TYPE, "application/json".to_string()), timing], text).into_response())
}

/// The request's inputs for `params`.
fn inputs(params: &[(String, Type)], json: bool, body: &[u8]) -> Result<Vec<Val>, Problem> {
    if !json {
        return match params {
            [(_, Type::List(list))] if list.ty() == Type::U8 => Ok(vec![braid_engine::bytes_val(body.to_vec())]),
            _ => Err(Problem::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!(
                    "this workflow takes {} input(s) ({}): send them as JSON (Content-Type: application/json), \
                     an array in order or an object by name; only a workflow of one Bytes input takes a raw body",
                    params.len(),
                    names(params)
                ),
            )),
        };
    }
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| Problem::bad_request(format!("the body is not JSON: {e}")))?;
    let given: Vec<serde_json::Value> = match value {
        serde_json::Value::Array(items) => items,
        serde_json::Value::Object(mut object) => {
            let mut items = Vec::new();
            for (name, _) in params {
                let key = braid_engine::camel(name);
                items.push(object.remove(&key).ok_or_else(|| {
                    Problem::bad_request(format!("the input `{key}` is missing; this workflow takes {}", names(params)))
                })?);
            }
            if let Some(extra) = object.keys().next() {
                let extra: String = extra.chars().take(64).collect();
                return Err(Problem::bad_request(format!(
                    "unknown input `{extra}`; this workflow takes {}",
                    names(params)
                )));
            }
            items
        }
        _ => return Err(Problem::bad_request("the inputs are a JSON array (in order) or an object (by input name)")),
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
        .map(|(value, (name, ty))| braid_engine::from_json(value, ty, &format!("input {}", braid_engine::camel(name))))
        .collect::<Result<_, _>>()
        .map_err(Problem::bad_request)
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
