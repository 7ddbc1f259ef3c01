//! `POST /v1/operations`: publish an operation crate (a `.tar.gz` of its
//! directory, with a publisher key); `GET /v1/publishes/{id}`: its job.
//!
//! The upload is read in memory under limits and refused whole if any
//! entry is unsafe ([`braid::archive::unpack_tar_gz`]); the manifest is
//! derived from the sources at once (errors name the file and line, 422),
//! and a name and version taken with other sources is a 409. Then a job
//! builds the crate for its targets in the sandbox and registers it
//! ([`crate::publisher`]).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use serde::Serialize;

use super::auth::Publisher;
use super::heavy::{heavy, with_store};
use super::ApiResult;
use crate::ids::JobId;
use crate::problem::Problem;
use crate::publisher::job_dir;
use crate::store::{NewPublish, Publish, PublishSubmission};
use crate::AppState;

/// What an upload led to.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Published {
    name: String,
    version: String,
    /// The version id the operation has once registered (its sources included).
    version_id: String,
    /// `registered` (the same sources already are), or `queued` / `running`: follow `job`.
    state: String,
    /// The publish job; `GET /v1/publishes/{id}`.
    job: Option<JobId>,
}

/// Publishes an operation crate: the body is a `.tar.gz` of its directory
/// (`Content-Type: application/gzip`); needs a publisher key in `x-api-key`.
#[utoipa::path(post, path = "/v1/operations", request_body(content = Vec<u8>, content_type = "application/gzip"),
    responses((status = 202, body = Published), (status = 200, body = Published), (status = 400, body = Problem),
        (status = 401, body = Problem), (status = 403, body = Problem), (status = 409, body = Problem),
        (status = 413, body = Problem), (status = 422, body = Problem), (status = 503, body = Problem)))]
pub(super) async fn publish_operation(
    State(state): State<Arc<AppState>>,
    _key: Publisher,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> ApiResult {
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !matches!(content_type, "application/gzip" | "application/x-gzip" | "application/octet-stream") {
        return Err(Problem::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("send a .tar.gz of the crate as application/gzip (got {content_type:?})"),
        ));
    }
    if let Err(why) = &state.sandbox {
        return Err(Problem::unavailable(format!("this service cannot build published operations: {why}"), None));
    }
    let scratch = state.config.data.join("tmp").join(format!("upload-{}", uuid::Uuid::new_v4().simple()));
    let (prepared, scratch) = heavy(&state, move || {
        let result = unpack(&body, &scratch);
        if result.is_err() {
            let _ = std::fs::remove_dir_all(&scratch);
        }
        result.map(|p| (p, scratch))
    })
    .await??;
    let m = &prepared.manifest;
    let answer = |state: &str, job: Option<JobId>| Published {
        name: m.name.clone(),
        version: m.version.clone(),
        version_id: prepared.version_id.clone(),
        state: state.into(),
        job,
    };
    let registry = state.registry();
    if let Some(taken) = registry.versions(&m.name).iter().find(|op| op.manifest.version == m.version) {
        let _ = std::fs::remove_dir_all(&scratch);
        if taken.version_id == prepared.version_id {
            return Ok((StatusCode::OK, Json(answer("registered", None))).into_response());
        }
        return Err(Problem::new(
            StatusCode::CONFLICT,
            format!(
                "{} {} is registered already with other sources (version id {}); bump the version to publish a change",
                m.name, m.version, taken.version_id
            ),
        ));
    }
    let new = NewPublish { name: m.name.clone(), version: m.version.clone(), version_id: prepared.version_id.clone() };
    // The files go in the job's directory before the job exists, so the
    // publisher never takes a job whose files are not there yet.
    let id = JobId::new_random();
    let dir = job_dir(&state.config.data, &id);
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::rename(&scratch, dir.join("src")))
        .map_err(|e| Problem::internal(format!("storing the upload: {e}")))?;
    let submitted = with_store(&state, move |store| store.submit_publish(&id, &new)).await;
    let id = match submitted {
        Ok(PublishSubmission::Queued(id)) => id,
        Ok(PublishSubmission::Joined(other)) => {
            let _ = std::fs::remove_dir_all(&dir);
            other
        }
        Err(problem) => {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(problem);
        }
    };
    state.publish_wake.notify_one();
    let location = format!("/v1/publishes/{}", id.as_str());
    let mut response = (StatusCode::ACCEPTED, Json(answer("queued", Some(id)))).into_response();
    if let Ok(value) = header::HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    Ok(response)
}

/// Unpacks the upload into `scratch` and derives its manifest.
fn unpack(body: &[u8], scratch: &std::path::Path) -> Result<braid::registry::Prepared, Problem> {
    let limits = braid::archive::Limits { compressed_bytes: u64::MAX, ..Default::default() };
    let files = braid::archive::unpack_tar_gz(body, &limits)
        .map_err(|e| Problem::bad_request(format!("the upload is not a usable crate archive: {e}")))?;
    braid::archive::write_files(scratch, &files).map_err(Problem::internal)?;
    let unprocessable =
        |e: braid::registry::RegistryError| Problem::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string());
    let crate_files = braid::registry::read_crate(scratch).map_err(unprocessable)?;
    // Errors name files relative to the crate (`src/lib.rs:3:1`).
    braid::registry::prepare(crate_files, "the uploaded crate").map_err(unprocessable)
}

/// A publish job: state, step, log tail, the error if it failed.
#[utoipa::path(get, path = "/v1/publishes/{id}", params(("id" = String, Path)),
    responses((status = 200, body = Publish), (status = 400, body = Problem), (status = 404, body = Problem)))]
pub(super) async fn get_publish(State(state): State<Arc<AppState>>, id: JobId) -> ApiResult {
    let job = with_store(&state, move |store| store.publish(&id)).await?;
    let job = job.ok_or_else(|| Problem::not_found("no publish job with this id"))?;
    Ok(Json(job).into_response())
}
