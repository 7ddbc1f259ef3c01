//! The Cargo registry (sparse protocol), read-only: `GET
//! /cargo/index/config.json`, the index file of a crate
//! (`/cargo/index/wf/_c/wf_cid`: one JSON line per version) and `GET
//! /cargo/crates/{name}/{version}/download` (the `.crate`, verified against
//! its content id). Crates come from builds: the workflow's crate and the
//! crates it vendors ([`braid::package::cargo`]).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap};
use axum::response::IntoResponse;
use axum::Json;
use braid::package::cargo::index_path;
use braid_store::Ecosystem;

use super::artifacts::verified;
use super::ApiResult;
use crate::problem::Problem;
use crate::AppState;

/// The registry's configuration: where crates are downloaded from.
pub(super) async fn config(State(state): State<Arc<AppState>>, headers: HeaderMap) -> ApiResult {
    let base = super::hosts::base_url(&state.http, &headers)?;
    let config = Json(serde_json::json!({ "dl": format!("{base}/cargo/crates"), "auth-required": false }));
    Ok(super::hosts::for_host(&state.http, config.into_response()))
}

/// A crate's index file: every version, one JSON line each.
pub(super) async fn index_file(State(state): State<Arc<AppState>>, Path(path): Path<String>) -> ApiResult {
    let name = path.rsplit('/').next().unwrap_or_default().to_string();
    // Only the path Cargo would ask for this name: `wf/_c/wf_cid`.
    if index_path(&name).as_deref() != Some(path.as_str()) {
        return Err(Problem::not_found("no crate at this index path"));
    }
    let versions = state.store.package_versions(Ecosystem::Cargo, &name).await?;
    if versions.is_empty() {
        return Err(Problem::not_found("no crate of this name in this registry"));
    }
    let mut body = String::new();
    for p in versions {
        body.push_str(&p.entry);
        body.push('\n');
    }
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response())
}

/// A `.crate`.
pub(super) async fn download(
    State(state): State<Arc<AppState>>,
    Path((name, version)): Path<(String, String)>,
) -> ApiResult {
    let package = state.store.package(Ecosystem::Cargo, &name, &version).await?;
    let package = package.ok_or_else(|| Problem::not_found(format!("no crate {name} {version} in this registry")))?;
    let bytes = verified(&state, &package.cid).await?;
    let disposition = format!("attachment; filename=\"{}-{}.crate\"", package.name, package.version);
    Ok(([(header::CONTENT_TYPE, "application/gzip".to_string()), (header::CONTENT_DISPOSITION, disposition)], bytes)
        .into_response())
}
