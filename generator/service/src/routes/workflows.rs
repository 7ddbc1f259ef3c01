//! `POST /v1/workflows` (publish: a manifest checked as sent, then its
//! build answered from an earlier one, joined while under way, or queued),
//! `GET /v1/workflows` (the list, by id, a page at a time, optionally of
//! one name) and `GET /v1/workflows/{id}` (a workflow, by the CID of its
//! manifest, with its builds). A workflow id names the manifest alone; a build id
//! names a build of it ([`braid::build::build_key`]).

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use braid::build;
use braid::diagnostic::Diagnostic;
use braid::registry::Origin;
use braid::target::Target;
use braid_store::ids::{BuildId, ContentId, JobId, WorkflowId};
use braid_store::{Artifact, JobState, Kind, NewBuild, Submission};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::auth::Writer;
use super::builds::{build_info, BuildInfo};
use super::check::{crate_files, JsonBody};
use super::heavy::heavy;
use super::params::Param;
use super::ApiResult;
use crate::problem::Problem;
use crate::AppState;

/// `POST /v1/workflows`. Describes the body in the OpenAPI document; the
/// handler reads it as [`SubmitBody`], keeping the manifest's own text.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct SubmitRequest {
    #[schema(value_type = Object)]
    manifest: Value,
    /// Of native, nostd, node, web, bundler, component, http, steps (each
    /// operation alone as a web package, for the editor's previews);
    /// default: every target the operations allow but component, http and steps.
    #[schema(value_type = Option<Vec<String>>)]
    targets: Option<Vec<Target>>,
}

/// [`SubmitRequest`] as read: the manifest's own text, as the client sent it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SubmitBody<'a> {
    #[serde(borrow)]
    manifest: &'a serde_json::value::RawValue,
    targets: Option<Vec<String>>,
}

/// Moves diagnostics about the manifest text that starts at byte `offset`
/// of `body` to line and column of `body` itself.
pub(super) fn relocate(diagnostics: &mut [Diagnostic], body: &str, offset: usize) {
    let before = &body[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    for d in diagnostics {
        if d.line == Some(1) {
            d.column = d.column.map(|c| c + column - 1);
        }
        d.line = d.line.map(|l| l + line - 1);
    }
}

/// A submission's answer: a job to poll (202) or the finished build (200).
#[derive(Serialize, utoipa::ToSchema)]
pub struct Submitted {
    /// The job building it; `GET /v1/jobs/{id}`. Absent when already built.
    #[serde(skip_serializing_if = "Option::is_none")]
    job_id: Option<JobId>,
    /// The workflow: CIDv1 of the manifest's canonical JSON; `GET /v1/workflows/{id}`.
    workflow_id: WorkflowId,
    /// This build of it (manifest, targets, operations, toolchain); `GET /v1/builds/{id}`.
    build_id: BuildId,
    /// The job's state, or `succeeded` when already built.
    state: JobState,
    #[serde(skip_serializing_if = "Option::is_none")]
    artifacts: Option<Vec<Artifact>>,
}

/// Checks a submission's body (CPU-heavy: call it inside [`heavy`]): the
/// manifest as sent (diagnostics at lines and columns of the body), the
/// targets, and the size of the crate it generates.
fn checked(state: &AppState, body: &[u8]) -> Result<NewBuild, Problem> {
    let text = braid::manifest::utf8(body).map_err(Problem::invalid_manifest)?;
    let request: SubmitBody = serde_json::from_str(text)
        .map_err(|e| Problem::bad_request(format!("expected {{\"manifest\": {{...}}, \"targets\": [...]}}: {e}")))?;
    // The manifest's own bytes are checked (their size, line and column),
    // not a re-serialization of them.
    let manifest = request.manifest.get();
    let workflow = braid_worker::operations::validate(state, manifest).map_err(|mut d| {
        let offset = (manifest.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
        relocate(&mut d, text, offset);
        Problem::invalid_manifest(d)
    })?;
    let mut targets = match &request.targets {
        None => build::default_targets(&workflow),
        Some(names) => names
            .iter()
            .map(|t| t.parse::<Target>().map_err(|e| Problem::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string())))
            .collect::<Result<Vec<_>, _>>()?,
    };
    targets.sort();
    targets.dedup();
    if targets.is_empty() {
        return Err(Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "`targets` is empty; leave it out for every allowed target",
        ));
    }
    build::check_targets(&workflow, &targets)
        .map_err(|e| Problem::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()))?;
    // Refused now rather than by the build: the crate would be too large.
    crate_files(state, &workflow)?;
    let id = BuildId::parse(&build::build_key(&workflow, &targets, &state.toolchain)).map_err(Problem::internal)?;
    let third_party =
        workflow.crates.iter().filter(|c| c.origin != Origin::Builtin).map(|c| c.version_id.clone()).collect();
    Ok(NewBuild {
        id,
        workflow_id: WorkflowId::of(&workflow).map_err(Problem::internal)?,
        operations: workflow.crate_versions(),
        name: workflow.manifest.name,
        manifest: workflow.canonical,
        targets,
        third_party,
    })
}

/// Builds a workflow. 202 with a job when new (identical submissions join
/// it); 200 with the artifacts when the same canonical manifest was already
/// built with the same operations, targets and toolchain. Needs `x-api-key`.
#[utoipa::path(post, path = "/v1/workflows", request_body = SubmitRequest,
    params(("x-api-key" = String, Header, description = "API key")),
    responses((status = 200, body = Submitted), (status = 202, body = Submitted), (status = 401, body = Problem),
        (status = 403, body = Problem), (status = 422, body = Problem),
        (status = 503, body = Problem, description = "busy, disk full, or the database is gone")))]
pub(super) async fn submit_workflow(
    _: Writer,
    State(state): State<Arc<AppState>>,
    JsonBody(text): JsonBody,
) -> ApiResult {
    let s = state.clone();
    let build = heavy(&state, move || checked(&s, &text)).await??;
    let mut submission = state.store.submit(&build).await?;
    if let Submission::Built { artifacts } = &submission {
        // An artifact damaged or gone on disk is forgotten, and the
        // build runs again, rather than pointed at.
        let bad = damaged(&state, artifacts).await?;
        if !bad.is_empty() {
            tracing::warn!(build = %build.id, "rebuilding: artifacts damaged or missing on disk: {bad:?}");
            state.store.forget_artifacts(&bad).await?;
            state.builds.tell();
            submission = state.store.submit(&build).await?;
        }
    }
    let (workflow_id, build_id) = (build.workflow_id.clone(), build.id.clone());
    let (status, body) = match submission {
        Submission::Built { artifacts } => {
            state.app_metrics.cache_hit();
            let state = JobState::Succeeded;
            (StatusCode::OK, Submitted { job_id: None, workflow_id, build_id, state, artifacts: Some(artifacts) })
        }
        Submission::Joined { job_id, state: job_state } => {
            state.app_metrics.joined();
            let job_id = Some(job_id);
            (StatusCode::ACCEPTED, Submitted { job_id, workflow_id, build_id, state: job_state, artifacts: None })
        }
        Submission::Queued { job_id } => {
            state.wake.notify(Kind::BUILD);
            let (job_id, state) = (Some(job_id), JobState::Queued);
            (StatusCode::ACCEPTED, Submitted { job_id, workflow_id, build_id, state, artifacts: None })
        }
    };
    Ok((status, Json(body)).into_response())
}

/// The artifacts among `artifacts` whose object is missing or no longer
/// hashes to its CID ([`braid_worker::cas::Cas::damaged`]).
async fn damaged(state: &AppState, artifacts: &[Artifact]) -> Result<Vec<ContentId>, Problem> {
    let cas = state.cas.clone();
    let cids: Vec<ContentId> = artifacts.iter().map(|a| a.cid.clone()).collect();
    heavy(state, move || cas.damaged(&cids)).await
}

/// The query of `GET /v1/workflows`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only workflows of this manifest name.
    name: Option<String>,
    /// The `next` of the previous page.
    after: Option<String>,
    /// At most this many (1 to 1000; default 100).
    limit: Option<u32>,
}

/// One page of `GET /v1/workflows`.
#[derive(Serialize, utoipa::ToSchema)]
pub struct WorkflowList {
    workflows: Vec<WorkflowSummary>,
    /// Give it as `after` for the next page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    next: Option<WorkflowId>,
}

/// A workflow in the list: `GET /v1/workflows/{id}` has the rest.
#[derive(Serialize, utoipa::ToSchema)]
pub struct WorkflowSummary {
    id: WorkflowId,
    name: String,
    /// How many builds it has (one per set of targets and toolchain).
    builds: u32,
}

/// The workflows submitted to this service, by id, a page at a time;
/// `name` finds those of one manifest name.
#[utoipa::path(get, path = "/v1/workflows", params(ListQuery),
    responses((status = 200, body = WorkflowList), (status = 400, body = Problem)))]
pub(super) async fn list_workflows(
    State(state): State<Arc<AppState>>,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult {
    let Query(query) =
        query.map_err(|e| Problem::bad_request(format!("{}; the query takes name, after and limit", e.body_text())))?;
    let limit = query.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(Problem::bad_request(format!("limit must be 1 to 1000, not {limit}")));
    }
    let after = query
        .after
        .as_deref()
        .map(WorkflowId::parse)
        .transpose()
        .map_err(|e| Problem::bad_request(format!("after: {e}")))?;
    // One more than the page, to know whether another follows.
    let mut rows = state.store.workflows(query.name.as_deref(), after.as_ref(), limit + 1).await?;
    let next = (rows.len() > limit as usize).then(|| {
        rows.truncate(limit as usize);
        rows.last().map(|r| r.id.clone())
    });
    let workflows = rows.into_iter().map(|r| WorkflowSummary { id: r.id, name: r.name, builds: r.builds }).collect();
    Ok(Json(WorkflowList { workflows, next: next.flatten() }).into_response())
}

/// A workflow: its manifest and every build of it.
#[derive(Serialize, utoipa::ToSchema)]
pub struct WorkflowInfo {
    /// CIDv1 of the manifest's canonical JSON.
    id: WorkflowId,
    name: String,
    #[schema(value_type = Object)]
    manifest: Value,
    /// Oldest first: one per set of targets (and toolchain) it was submitted with.
    builds: Vec<BuildInfo>,
}

/// A workflow, by its id (the CID of its manifest), with its builds.
#[utoipa::path(get, path = "/v1/workflows/{id}", params(("id" = String, Path, description = "workflow id: CIDv1 of the manifest")),
    responses((status = 200, body = WorkflowInfo), (status = 400, body = Problem), (status = 404, body = Problem)))]
pub(super) async fn get_workflow(State(state): State<Arc<AppState>>, Param(id): Param<WorkflowId>) -> ApiResult {
    let rows = state.store.builds_of(&id).await?;
    let first = rows.first().ok_or_else(|| {
        Problem::not_found("no workflow with this id has been submitted; POST /v1/workflows builds one")
    })?;
    Ok(Json(WorkflowInfo {
        id,
        name: first.name.clone(),
        manifest: serde_json::from_str(&first.manifest).unwrap_or_default(),
        builds: rows.into_iter().map(build_info).collect(),
    })
    .into_response())
}
