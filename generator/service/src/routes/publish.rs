//! `POST /v1/operations`: publish an operation crate (a `.tar.gz` of its
//! directory, with a publisher key); `GET /v1/publishes/{id}`: its job.
//!
//! The upload is read in memory under limits and refused whole if any
//! entry is unsafe ([`braid::archive::unpack_tar_gz`]); the manifest is
//! derived from the sources at once (errors name the file and line, 422),
//! and a name and version taken with other sources is a 409. Then the
//! upload goes in the artifact store, and a job, taken by any process that
//! builds, builds the crate for its targets in the sandbox and registers
//! it ([`braid_worker::jobs::publish`], [`braid_worker::operations`]).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use braid_store::ids::JobId;
use braid_store::{Kind, NewPublish, Publish, PublishSubmission};
use braid_worker::operations::{self, UploadError};
use serde::Serialize;

use super::auth::{withhold, Publisher, Reader};
use super::heavy::heavy;
use super::params::Param;
use super::ApiResult;
use crate::problem::Problem;
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
    publisher: Publisher,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> ApiResult {
    let content_type = super::media::content_type(&headers);
    if !matches!(content_type.as_str(), "application/gzip" | "application/x-gzip" | "application/octet-stream") {
        return Err(Problem::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("send a .tar.gz of the crate as application/gzip (got {content_type:?})"),
        ));
    }
    // Where this process builds, it checks uploads; elsewhere `braid worker`s do.
    if let (Err(why), true) = (&state.sandbox, state.config.workers > 0) {
        return Err(Problem::unavailable(format!("this service cannot build published operations: {why}"), None));
    }
    let scratch = state.config.data.join("tmp").join(format!("upload-{}", uuid::Uuid::new_v4().simple()));
    let (prepared, body) = heavy(&state, move || {
        let result = operations::unpack(&body, &scratch);
        let _ = std::fs::remove_dir_all(&scratch);
        result.map(|p| (p, body)).map_err(|e| match e {
            UploadError::Archive(_) => Problem::bad_request(e.to_string()),
            UploadError::Crate(_) => Problem::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()),
            UploadError::Io(e) => Problem::internal(e),
        })
    })
    .await??;
    let m = &prepared.manifest;
    if let Some(why) = operations::reserved(&m.name) {
        return Err(Problem::new(StatusCode::FORBIDDEN, format!("{} cannot be published here: {why}", m.name)));
    }
    // Names have owners: the first publisher of a name takes it.
    let owners = state.store.claim_name(&m.name, &publisher.owner).await?;
    if !owners.contains(&publisher.owner) {
        return Err(Problem::new(
            StatusCode::FORBIDDEN,
            format!(
                "{} belongs to other publishers (owners: {}); only they publish its versions. \
                 Choose another name, or ask the operator to add {} as an owner (`braid serve --owner {}={}`)",
                m.name,
                owners.join(", "),
                publisher.owner,
                m.name,
                publisher.owner
            ),
        ));
    }
    let answer = |state: &str, job: Option<JobId>| Published {
        name: m.name.clone(),
        version: m.version.clone(),
        version_id: prepared.version_id.clone(),
        state: state.into(),
        job,
    };
    let registry = operations::synced_registry(&state.env).await;
    if let Some(taken) = registry.versions(&m.name).iter().find(|op| op.manifest.version == m.version) {
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
    // The upload is in the store before the job exists, so that no
    // publisher takes a job whose sources it cannot read.
    let cas = state.clone();
    let source = heavy(&state, move || cas.cas.put(&body))
        .await?
        .map_err(|e| Problem::unavailable(format!("storing the upload: {e}"), None))?;
    let new = NewPublish {
        name: m.name.clone(),
        version: m.version.clone(),
        version_id: prepared.version_id.clone(),
        source,
    };
    let id = JobId::new_random();
    let id = match state.store.submit_publish(&id, &new).await? {
        PublishSubmission::Queued(id) | PublishSubmission::Joined(id) => id,
    };
    state.wake.notify(Kind::PUBLISH);
    let location = format!("/v1/publishes/{}", id.as_str());
    let mut response = (StatusCode::ACCEPTED, Json(answer("queued", Some(id)))).into_response();
    if let Ok(value) = header::HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    Ok(response)
}

/// A publish job: state, step, log tail, the error if it failed (the last
/// two for callers with a key only: the uploaded build script writes them).
#[utoipa::path(get, path = "/v1/publishes/{id}", params(("id" = String, Path)),
    responses((status = 200, body = Publish), (status = 400, body = Problem), (status = 404, body = Problem)))]
pub(super) async fn get_publish(
    State(state): State<Arc<AppState>>,
    reader: Reader,
    Param(id): Param<JobId>,
) -> ApiResult {
    let job = state.store.publish(&id).await?;
    let mut job = job.ok_or_else(|| Problem::not_found("no publish job with this id"))?;
    if !reader.keyed {
        withhold(&mut job.log_tail, &mut job.error);
    }
    Ok(Json(job).into_response())
}
