//! `/v1/deployments`: names that point at a build, so that a client calls
//! one URL (`POST /v1/deployments/{name}/run`) while the workflow behind it
//! changes; pointing a name at an earlier build is a rollback. A name
//! belongs to the API key that made it: another key can neither move nor
//! remove it. Reads need no key, as the rest of the API's.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{Extensions, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use braid_engine::Limits;
use braid_store::ids::{BuildId, WorkflowId};
use braid_store::{Deployed, Deployment, DeploymentLimits, DeploymentVersion};
use serde::{Deserialize, Serialize};

use super::auth::{publisher_owner, Writer};
use super::check::JsonBody;
use super::ApiResult;
use crate::execute::Target;
use crate::problem::Problem;
use crate::AppState;

/// What a name is to point at: a workflow's newest runnable build, or a
/// build.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeployRequest {
    /// The build of this workflow that succeeded last with a component.
    #[schema(value_type = Option<String>)]
    workflow_id: Option<WorkflowId>,
    /// This build (it must have a component).
    #[schema(value_type = Option<String>)]
    build_id: Option<BuildId>,
    /// The deployment's own budgets, each at most the service's; left out,
    /// those it had (none for a new name); `{}` clears them.
    limits: Option<DeploymentLimits>,
}

/// A deployment, and its history (the newest first).
#[derive(Serialize, utoipa::ToSchema)]
pub struct DeploymentInfo {
    #[serde(flatten)]
    deployment: Deployment,
    /// Where it runs: `POST` the inputs there.
    run: String,
    history: Vec<DeploymentVersion>,
}

/// Every deployment.
#[derive(Serialize, utoipa::ToSchema)]
pub struct DeploymentList {
    deployments: Vec<Deployment>,
}

/// Whether `name` may name a deployment: a DNS label (ASCII letters, digits
/// and `-`, 1 to 63, not starting or ending with `-`), compared in lower case.
fn check_name(name: &str) -> Result<(), Problem> {
    let ok = (1..=63).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if ok {
        return Ok(());
    }
    let shown: String = name.chars().take(64).collect();
    Err(Problem::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        format!(
            "`{shown}` cannot name a deployment: use 1 to 63 ASCII letters, digits and `-`, not starting or ending \
             with `-` (names compare in lower case)"
        ),
    ))
}

/// Who the request's key is: the fingerprint a bare key owns by (the key
/// itself is never stored). The key was checked already ([`Writer`]).
fn owner(headers: &HeaderMap) -> String {
    publisher_owner(headers.get("x-api-key").and_then(|v| v.to_str().ok()).unwrap_or("")).0
}

fn info(deployment: Deployment, history: Vec<DeploymentVersion>) -> DeploymentInfo {
    let run = format!("/v1/deployments/{}/run", deployment.name);
    DeploymentInfo { deployment, run, history }
}

/// Points `name` at a workflow's newest runnable build or at a build: makes
/// the deployment, moves it (each move a version in its history), or moves
/// it back (a rollback). Needs the key that made it.
#[utoipa::path(put, path = "/v1/deployments/{name}", params(("name" = String, Path, description = "the deployment's name"),
        ("x-api-key" = String, Header, description = "API key: the one that made the deployment, if it exists")),
    request_body = DeployRequest,
    responses((status = 200, body = DeploymentInfo), (status = 401, body = Problem), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 422, body = Problem)))]
pub(super) async fn put_deployment(
    _: Writer,
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> ApiResult {
    check_name(&name)?;
    let request: DeployRequest = serde_json::from_slice(&body).map_err(|e| {
        Problem::bad_request(format!("expected {{\"workflow_id\": \"...\"}} or {{\"build_id\": \"...\"}}: {e}"))
    })?;
    if let Some(limits) = &request.limits {
        let service = state.executor.config();
        let checked = check_limits(limits, service.limits, service.slots);
        checked.map_err(|why| Problem::new(StatusCode::UNPROCESSABLE_ENTITY, why))?;
    }
    let build = match (request.workflow_id, request.build_id) {
        (Some(workflow), None) => {
            let suffix = braid::package::dist::COMPONENT_SUFFIX;
            let row = state.store.newest_build_with(&workflow, suffix).await?.ok_or_else(|| {
                Problem::not_found(format!(
                    "workflow {workflow} has no build with a component: submit it with \"targets\": [\"component\"] \
                     and wait for its build"
                ))
            })?;
            row.id
        }
        (None, Some(build)) => {
            // The build must exist and have a component: what runs.
            state
                .executor
                .component(&state.store, &Target::Build(build.clone()))
                .await
                .map_err(super::run::exec_problem)?;
            build
        }
        _ => return Err(Problem::bad_request("give exactly one of `workflow_id` and `build_id`")),
    };
    let deployment = match state.store.deploy(&name, &owner(&headers), &build, request.limits).await? {
        Deployed::Set(deployment) => deployment,
        Deployed::Owned(_) => return Err(owned(&name)),
    };
    state.executor.deployment_changed(&name);
    let history = state.store.deployment_versions(&name).await?;
    Ok(Json(info(deployment, history)).into_response())
}

fn owned(name: &str) -> Problem {
    Problem::new(StatusCode::FORBIDDEN, format!("the deployment `{name}` belongs to another key"))
}

/// A deployment: the build it points at, and its history.
#[utoipa::path(get, path = "/v1/deployments/{name}", params(("name" = String, Path, description = "the deployment's name")),
    responses((status = 200, body = DeploymentInfo), (status = 404, body = Problem)))]
pub(super) async fn get_deployment(State(state): State<Arc<AppState>>, Path(name): Path<String>) -> ApiResult {
    let deployment = state.store.deployment(&name).await?.ok_or_else(|| no_such(&name))?;
    let history = state.store.deployment_versions(&name).await?;
    Ok(Json(info(deployment, history)).into_response())
}

fn no_such(name: &str) -> Problem {
    let shown: String = name.chars().take(64).collect();
    Problem::not_found(format!("no deployment is named `{shown}`"))
}

/// Every deployment, by name.
#[utoipa::path(get, path = "/v1/deployments", responses((status = 200, body = DeploymentList)))]
pub(super) async fn list_deployments(State(state): State<Arc<AppState>>) -> ApiResult {
    Ok(Json(DeploymentList { deployments: state.store.deployments().await? }).into_response())
}

/// Removes a deployment and its history. Needs the key that made it.
#[utoipa::path(delete, path = "/v1/deployments/{name}", params(("name" = String, Path, description = "the deployment's name"),
        ("x-api-key" = String, Header, description = "API key: the one that made the deployment")),
    responses((status = 204), (status = 401, body = Problem), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub(super) async fn delete_deployment(
    _: Writer,
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> ApiResult {
    match state.store.undeploy(&name, &owner(&headers)).await? {
        None => Err(no_such(&name)),
        Some(Err(_)) => Err(owned(&name)),
        Some(Ok(())) => {
            state.executor.deployment_changed(&name);
            Ok(StatusCode::NO_CONTENT.into_response())
        }
    }
}

/// Runs the build a deployment points at, with the run endpoint's contract
/// (inputs, output, problems, `Server-Timing`). A run started while the
/// name moves runs the old build or the new one.
#[utoipa::path(post, path = "/v1/deployments/{name}/run", params(("name" = String, Path, description = "the deployment's name")),
    request_body(content = Vec<u8>, description = "as for POST /v1/builds/{id}/run"),
    responses((status = 200, description = "the output"), (status = 400, body = Problem), (status = 401, body = Problem),
        (status = 404, body = Problem), (status = 413, body = Problem), (status = 422, body = Problem),
        (status = 429, body = Problem), (status = 503, body = Problem)))]
pub(super) async fn run_deployment(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    extensions: Extensions,
    body: Bytes,
) -> ApiResult {
    // (The key was checked before the body was read: `layers::admit`.) The
    // deployment is read once: the run is of the build it points at now,
    // within its budgets.
    let (build, limits) = state.executor.deployment(&state.store, &name).await.map_err(super::run::exec_problem)?;
    let label = state.app_metrics.deployment_label(&name);
    let running = state.executor.deployment_run(&name, limits.concurrent);
    let _running = running.inspect_err(|_| state.app_metrics.deployment_refused(&label))?;
    let budgets = budgets(&limits, state.executor.config().limits);
    super::run::run(state, Target::Build(build), budgets, Some(label), headers, extensions, body).await
}

/// A deployment's budgets: each of its limits as set, the service's where
/// it is not.
fn budgets(limits: &DeploymentLimits, service: Limits) -> Limits {
    let mib = |n: Option<u64>, default: usize| n.map_or(default, |n| (n as usize).saturating_mul(1 << 20));
    Limits {
        time: limits.time_ms.map_or(service.time, std::time::Duration::from_millis),
        memory_bytes: mib(limits.memory_mib, service.memory_bytes),
        input_bytes: mib(limits.input_mib, service.input_bytes),
        output_bytes: mib(limits.output_mib, service.output_bytes),
    }
}

/// Why a deployment's limits cannot be set under the service's, if they cannot:
/// each must be positive and at most the service's own (its budgets,
/// and its `slots`: runs at once).
fn check_limits(asked: &DeploymentLimits, limits: Limits, slots: usize) -> Result<(), String> {
    let mib = |bytes: usize| (bytes >> 20) as u64;
    let given = [
        ("time_ms", asked.time_ms, limits.time.as_millis() as u64, "--time-limit"),
        ("memory_mib", asked.memory_mib, mib(limits.memory_bytes), "--memory-limit"),
        ("input_mib", asked.input_mib, mib(limits.input_bytes), "--input-limit"),
        ("output_mib", asked.output_mib, mib(limits.output_bytes), "--output-limit"),
        ("concurrent", asked.concurrent, slots as u64, "--run-slots"),
    ];
    for (key, value, max, flag) in given {
        match value {
            Some(0) => return Err(format!("limits.{key} is 0: give a positive number, or leave it out")),
            Some(n) if n > max => {
                return Err(format!("limits.{key} is {n}, over this service's {max} ({flag}); give at most {max}"));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_dns_labels() {
        for good in ["photo-proof", "Photo-Proof", "a", "v2", &"x".repeat(63)] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "-a", "a-", "a_b", "a.b", "é", "a b", &"x".repeat(64)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
