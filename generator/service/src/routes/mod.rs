//! The HTTP API: the router, its route table (also the `route` label of
//! the request metrics) and the OpenAPI document generated from the
//! handlers (utoipa). One module per resource; what every route shares is
//! in [`layers`] (body limits, metrics, problems for unknown routes and
//! panics), [`heavy`] (the bound on CPU-heavy requests) and [`auth`] (API
//! keys). Ids in paths are typed (`params::Param` of a
//! [`braid_store::ids`] id): a malformed one is a 400 problem before a
//! handler runs.

mod artifacts;
mod auth;
mod builds;
mod cargo;
mod check;
mod deployments;
mod editor;
mod health;
pub mod heavy;
pub mod hosts;
mod jobs;
mod layers;
mod media;
mod npm;
mod operations;
mod params;
mod publish;
mod run;
mod workflows;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use utoipa::OpenApi;

pub use auth::publisher_owner;
pub use check::lock_seed;

use crate::problem::Problem;
use crate::AppState;

type ApiResult = Result<Response, Problem>;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Braid publish service",
        description = "Validate, generate, build and download fused workflow crates and npm packages."
    ),
    paths(
        operations::list_operations,
        operations::get_operation,
        publish::publish_operation,
        publish::get_publish,
        check::validate_manifest,
        check::generate_crate,
        workflows::submit_workflow,
        workflows::list_workflows,
        workflows::get_workflow,
        builds::get_build,
        run::run_build,
        run::run_workflow,
        deployments::put_deployment,
        deployments::get_deployment,
        deployments::list_deployments,
        deployments::delete_deployment,
        deployments::run_deployment,
        jobs::get_job,
        artifacts::get_artifact,
        health::healthz,
        health::metrics
    ),
    components(schemas(
        Problem,
        braid_store::Job,
        braid_store::Artifact,
        braid_store::JobState,
        braid_store::BuildState,
        workflows::SubmitRequest,
        workflows::Submitted,
        workflows::WorkflowInfo,
        workflows::WorkflowList,
        workflows::WorkflowSummary,
        builds::BuildInfo,
        operations::OperationInfo,
        publish::Published,
        braid_store::Publish,
        check::Valid,
        check::ValidInput,
        deployments::DeployRequest,
        deployments::DeploymentInfo,
        deployments::DeploymentList,
        braid_store::Deployment,
        braid_store::DeploymentLimits,
        braid_store::DeploymentVersion
    ))
)]
pub struct ApiDoc;

/// The route templates: the `route` label of the request metrics.
const ROUTES: [&str; 26] = [
    "/v1/openapi.json",
    "/v1/operations",
    "/v1/operations/{name}",
    "/v1/validate",
    "/v1/generate",
    "/v1/workflows",
    "/v1/workflows/{id}",
    "/v1/builds/{id}",
    "/v1/builds/{id}/run",
    "/v1/workflows/{id}/run",
    "/v1/jobs/{id}",
    "/v1/artifacts/{cid}",
    "/v1/publishes/{id}",
    "/healthz",
    "/metrics",
    "/cargo/index/config.json",
    "/cargo/index/{*path}",
    "/cargo/crates/{name}/{version}/download",
    "/npm/{name}",
    "/npm/{name}/-/{file}",
    "/",
    "/editor",
    "/editor/{file}",
    "/v1/deployments",
    "/v1/deployments/{name}",
    "/v1/deployments/{name}/run",
];

/// The routes that run workflows: their bodies are inputs, up to
/// `--input-limit`, behind a key unless `--public-run`.
const RUNS: [&str; 3] = [ROUTES[8], ROUTES[9], ROUTES[25]];

/// The router, with state; no socket (tests call it directly).
pub fn app(state: Arc<AppState>) -> Router {
    let [openapi_doc, operations, operation, validate, generate, workflows, workflow, build, build_run, workflow_run, job, artifact, publish, health, metrics, cargo_config, cargo_index, cargo_download, npm_document, npm_tarball, root, editor_page, editor_file, deployment_list, deployment, deployment_run] =
        ROUTES;
    let routes = Router::new()
        .route(openapi_doc, get(openapi))
        .route(operations, get(operations::list_operations).post(publish::publish_operation))
        .route(operation, get(operations::get_operation))
        .route(validate, post(check::validate_manifest))
        .route(generate, post(check::generate_crate))
        .route(workflows, get(workflows::list_workflows).post(workflows::submit_workflow))
        .route(workflow, get(workflows::get_workflow))
        .route(build, get(builds::get_build))
        .route(build_run, post(run::run_build))
        .route(workflow_run, post(run::run_workflow))
        .route(job, get(jobs::get_job))
        .route(artifact, get(artifacts::get_artifact))
        .route(publish, get(publish::get_publish))
        .route(health, get(health::healthz))
        .route(metrics, get(health::metrics))
        .route(cargo_config, get(cargo::config))
        .route(cargo_index, get(cargo::index_file))
        .route(cargo_download, get(cargo::download))
        .route(npm_document, get(npm::document))
        .route(npm_tarball, get(npm::tarball))
        .route(root, get(editor::page))
        .route(editor_page, get(editor::page))
        .route(editor_file, get(editor::file))
        .route(deployment_list, get(deployments::list_deployments))
        .route(
            deployment,
            get(deployments::get_deployment).put(deployments::put_deployment).delete(deployments::delete_deployment),
        )
        .route(deployment_run, post(deployments::run_deployment));
    layers::harden(routes, state)
}

async fn openapi() -> axum::Json<utoipa::openapi::OpenApi> {
    axum::Json(ApiDoc::openapi())
}
