//! The npm registry, read-only: `GET /npm/{name}` (the package document:
//! every version's `package.json` with `dist.tarball` and `dist.integrity`,
//! and `dist-tags.latest`, the highest release) and `GET
//! /npm/{name}/-/{file}.tgz` (the tarball, verified against its content
//! id). A scoped name comes as one path segment (`@org%2fwf_name`), as npm
//! sends it. Packages come from builds with the node and web targets
//! ([`braid::package::npm`]).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap};
use axum::response::IntoResponse;
use axum::Json;
use braid_store::{Ecosystem, Package};
use serde_json::{json, Map, Value};

use super::artifacts::verified;
use super::ApiResult;
use crate::problem::Problem;
use crate::AppState;

async fn versions(state: &Arc<AppState>, name: &str) -> Result<Vec<Package>, Problem> {
    let versions = state.store.package_versions(Ecosystem::Npm, name).await?;
    if versions.is_empty() {
        return Err(Problem::not_found(format!("no package {name} in this registry")));
    }
    Ok(versions)
}

/// The tarball's file name: `wf_name-1.0.0.tgz` (no scope).
fn tarball_name(name: &str, version: &str) -> String {
    format!("{}-{version}.tgz", name.rsplit('/').next().unwrap_or(name))
}

/// The package document.
pub(super) async fn document(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> ApiResult {
    let base = super::hosts::base_url(&state.http, &headers)?;
    let versions = versions(&state, &name).await?;
    let mut by_version = Map::new();
    let mut latest: Option<semver::Version> = None;
    // The name as one path segment: `@org/wf` -> `@org%2fwf`.
    let segment = name.replace('/', "%2f");
    for p in &versions {
        let mut doc: Value = serde_json::from_str(&p.entry).map_err(Problem::internal)?;
        let tarball = format!("{base}/npm/{segment}/-/{}", tarball_name(&p.name, &p.version));
        doc["dist"] = json!({ "tarball": tarball, "integrity": p.digest });
        by_version.insert(p.version.clone(), doc);
        if let Ok(v) = semver::Version::parse(&p.version) {
            let newer = latest.as_ref().is_none_or(|l| (v.pre.is_empty(), &v) > (l.pre.is_empty(), l));
            if newer {
                latest = Some(v);
            }
        }
    }
    let latest = latest.map(|v| v.to_string()).unwrap_or_else(|| versions[versions.len() - 1].version.clone());
    let document = Json(json!({ "name": name, "dist-tags": { "latest": latest }, "versions": by_version }));
    Ok(super::hosts::for_host(&state.http, document.into_response()))
}

/// A version's tarball.
pub(super) async fn tarball(
    State(state): State<Arc<AppState>>,
    Path((name, file)): Path<(String, String)>,
) -> ApiResult {
    let versions = versions(&state, &name).await?;
    let package = versions
        .into_iter()
        .find(|p| tarball_name(&p.name, &p.version) == file)
        .ok_or_else(|| Problem::not_found(format!("no tarball {file} of {name} in this registry")))?;
    let bytes = verified(&state, &package.cid).await?;
    Ok(([(header::CONTENT_TYPE, "application/octet-stream")], bytes).into_response())
}
