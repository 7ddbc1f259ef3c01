//! `GET /v1/builds/{id}`: one build of a workflow (its targets, state,
//! sizes, timings and artifacts), by its build id.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;
use braid::target::Target;
use braid_store::ids::{BuildId, WorkflowId};
use braid_store::{Artifact, BuildRow, BuildState};
use serde::Serialize;

use super::params::Param;
use super::ApiResult;
use crate::problem::Problem;
use crate::AppState;

/// A build of a workflow.
#[derive(Serialize, utoipa::ToSchema)]
pub struct BuildInfo {
    /// CIDv1 of the build's key: manifest, targets, operations, toolchain.
    id: BuildId,
    /// The workflow built: CIDv1 of its manifest.
    workflow_id: WorkflowId,
    /// The workflow's name.
    name: String,
    state: BuildState,
    #[schema(value_type = Vec<String>)]
    targets: Vec<Target>,
    /// From the build's report; empty until it succeeded.
    sizes_bytes: BTreeMap<String, u64>,
    timings_ms: BTreeMap<String, u64>,
    /// The version id of every crate it was built on (its operations and
    /// the registered crates they depend on), by crate name: the versions
    /// its submission resolved. Empty until it succeeded, and for builds
    /// made before braid reported them.
    operations: BTreeMap<String, String>,
    artifacts: Vec<Artifact>,
}

pub(super) fn build_info(row: BuildRow) -> BuildInfo {
    let (sizes_bytes, timings_ms, operations) =
        row.report.map(|r| (r.sizes_bytes, r.timings_ms, r.operations)).unwrap_or_default();
    BuildInfo {
        id: row.id,
        workflow_id: row.workflow_id,
        name: row.name,
        state: row.state,
        targets: row.targets,
        sizes_bytes,
        timings_ms,
        operations,
        artifacts: row.artifacts,
    }
}

/// A build with its artifacts.
#[utoipa::path(get, path = "/v1/builds/{id}", params(("id" = String, Path, description = "build id, as POST /v1/workflows returns it")),
    responses((status = 200, body = BuildInfo), (status = 400, body = Problem), (status = 404, body = Problem)))]
pub(super) async fn get_build(State(state): State<Arc<AppState>>, Param(id): Param<BuildId>) -> ApiResult {
    let row = state.store.build(&id).await?;
    let row = row.ok_or_else(|| Problem::not_found("no build with this id"))?;
    Ok(Json(build_info(row)).into_response())
}
