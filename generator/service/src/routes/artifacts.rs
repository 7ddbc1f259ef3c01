//! `GET /v1/artifacts/{cid}`: an artifact's bytes, verified against their
//! content id (the `ETag`) on every read, before a 304 too, as an
//! attachment named as its build named it (`Content-Disposition`); one found
//! damaged or missing is removed and forgotten (404), so that its build
//! runs again on the next submission. The registries read through
//! [`verified`] too.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use braid_store::ids::ContentId;

use super::heavy::heavy;
use super::params::Param;
use super::ApiResult;
use crate::problem::Problem;
use crate::AppState;

/// An artifact's bytes, verified against its content id (the `ETag`).
#[utoipa::path(get, path = "/v1/artifacts/{cid}", params(("cid" = String, Path)),
    responses((status = 200, body = Vec<u8>), (status = 304, description = "If-None-Match: the bytes were verified and are unchanged"),
        (status = 400, body = Problem), (status = 404, body = Problem), (status = 503, body = Problem)))]
pub(super) async fn get_artifact(
    State(state): State<Arc<AppState>>,
    Param(cid): Param<ContentId>,
    headers: HeaderMap,
) -> ApiResult {
    let etag = format!("\"{cid}\"");
    let found = state.store.artifact(&cid).await?;
    let (media_type, name) = found.ok_or_else(|| Problem::not_found("no artifact with this id"))?;
    // Verified before a 304 too: a client must not keep a CID whose bytes
    // the server no longer has.
    let bytes = verified(&state, &cid).await?;
    if headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) == Some(etag.as_str()) {
        return Ok((StatusCode::NOT_MODIFIED, [(header::ETAG, etag)]).into_response());
    }
    // Saved under the name its build gave it; artifact names are Braid's
    // own (`pkg-node.tgz`, `<crate>.wasm`), never a user's string.
    let file = name
        .filter(|n| n.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)))
        .unwrap_or_else(|| cid.to_string());
    let disposition = format!("attachment; filename=\"{file}\"");
    Ok(([(header::CONTENT_TYPE, media_type), (header::ETAG, etag), (header::CONTENT_DISPOSITION, disposition)], bytes)
        .into_response())
}

/// An artifact's bytes, checked against their content id. One found
/// damaged or missing is removed and forgotten (with the packages and
/// builds that name it): a 404 that says to submit its workflow again.
pub(super) async fn verified(state: &Arc<AppState>, cid: &ContentId) -> Result<Vec<u8>, Problem> {
    let cas = state.cas.clone();
    let c = cid.clone();
    match heavy(state, move || cas.get(&c)).await? {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) | Err(braid_worker::cas::CasError::Corrupt(_)) => {
            tracing::error!("artifact {cid} is damaged or missing in the store: removed; its builds run again");
            let (cas, c) = (state.cas.clone(), cid.clone());
            let _ = tokio::task::spawn_blocking(move || cas.remove(&c)).await;
            state.store.forget_artifacts(std::slice::from_ref(cid)).await?;
            state.builds.tell();
            Err(Problem::not_found(
                "this artifact was damaged on the server and has been removed; submit its workflow again to rebuild it",
            ))
        }
        Err(e) => Err(Problem::internal(e)),
    }
}
