//! `GET /v1/operations` and `GET /v1/operations/{name}`: the registry.

use std::sync::Arc;

use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;
use braid_store::ids::OperationName;
use braid_worker::operations::synced_registry;
use serde::Serialize;
use serde_json::{json, Value};

use super::params::Param;
use super::ApiResult;
use crate::problem::Problem;
use crate::AppState;

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
        name: op.name().into(),
        version: op.manifest.version.clone(),
        version_id: op.version_id.clone(),
        manifest: serde_json::to_value(&op.manifest).unwrap_or_default(),
    }
}

/// Every operation in the registry.
#[utoipa::path(get, path = "/v1/operations", responses((status = 200, body = [OperationInfo])))]
pub(super) async fn list_operations(State(state): State<Arc<AppState>>) -> Json<Vec<OperationInfo>> {
    Json(synced_registry(&state.env).await.iter().map(operation_info).collect())
}

/// One operation: its versions, newest first (with manifests and version ids).
#[utoipa::path(get, path = "/v1/operations/{name}", params(("name" = String, Path)),
    responses((status = 200, body = Object), (status = 400, body = Problem), (status = 404, body = Problem)))]
pub(super) async fn get_operation(State(state): State<Arc<AppState>>, Param(name): Param<OperationName>) -> ApiResult {
    let registry = synced_registry(&state.env).await;
    let versions: Vec<OperationInfo> = registry.versions(name.as_str()).iter().map(operation_info).collect();
    if versions.is_empty() {
        return Err(Problem::not_found(format!(
            "no operation named {name:?}; GET /v1/operations lists them",
            name = name.as_str()
        )));
    }
    Ok(Json(json!({ "name": name.as_str(), "versions": versions })).into_response())
}
