//! `GET /healthz` (can the service write: the data directory and the
//! database file) and `GET /metrics` (Prometheus text).

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use braid_store::Kind;
use serde_json::json;

use super::ApiResult;
use crate::AppState;

/// Health: 200 `{"status": "ok"}`, or 503 `{"status": "degraded",
/// "problems": [...]}` when the artifact store takes no write (a full disk,
/// a read-only mount, an S3 store out of reach) or the database file was deleted or replaced.
#[utoipa::path(get, path = "/healthz", responses((status = 200, body = Object), (status = 503, body = Object)))]
pub(super) async fn healthz(State(state): State<Arc<AppState>>) -> Response {
    let cas = state.cas.clone();
    // Not under the CPU-heavy slots: health must answer when the service is busy.
    let probe = tokio::task::spawn_blocking(move || cas.probe()).await;
    let mut problems = Vec::new();
    match probe {
        Ok(Ok(())) => {}
        Ok(Err(e)) => problems.push(format!("the artifact store takes no writes: {e}")),
        Err(e) => problems.push(format!("the write probe failed: {e}")),
    }
    if let Err(e) = state.store.check().await {
        problems.push(e.to_string());
    }
    if problems.is_empty() {
        return Json(json!({ "status": "ok" })).into_response();
    }
    (StatusCode::SERVICE_UNAVAILABLE, Json(json!({ "status": "degraded", "problems": problems }))).into_response()
}

/// Prometheus metrics: requests, jobs by state, build durations, cache hits.
#[utoipa::path(get, path = "/metrics", responses((status = 200, content_type = "text/plain", body = String)))]
pub(super) async fn metrics(State(state): State<Arc<AppState>>) -> ApiResult {
    let jobs = state.store.job_counts(Kind::BUILD).await?;
    Ok((
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        // The jobs' metrics, then the HTTP app's: the 0.0.4 text format
        // has no trailer, so the two are one document.
        state.metrics.render(&jobs) + &state.app_metrics.render(&state.executor.deployment_runs()),
    )
        .into_response())
}
