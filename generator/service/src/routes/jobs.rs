//! `GET /v1/jobs/{id}`: a build job's state, progress, log tail and error
//! (the last two for callers with a key only).

use std::sync::Arc;

use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;
use braid_store::ids::JobId;
use braid_store::Job;

use super::auth::{withhold, Reader};
use super::params::Param;
use super::ApiResult;
use crate::problem::Problem;
use crate::AppState;

/// A build job: state, progress, the end of its log, the error if it failed.
#[utoipa::path(get, path = "/v1/jobs/{id}", params(("id" = String, Path)),
    responses((status = 200, body = Job), (status = 400, body = Problem), (status = 404, body = Problem)))]
pub(super) async fn get_job(State(state): State<Arc<AppState>>, reader: Reader, Param(id): Param<JobId>) -> ApiResult {
    let job = state.store.job(&id).await?;
    let mut job = job.ok_or_else(|| Problem::not_found("no job with this id"))?;
    if !reader.keyed {
        withhold(&mut job.log_tail, &mut job.error);
    }
    Ok(Json(job).into_response())
}
