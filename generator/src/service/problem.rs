//! Errors of the HTTP API as `application/problem+json` (RFC 9457): a status,
//! a short title and a `detail` that says what to fix; validation failures
//! also carry the diagnostics.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::diagnostic::Diagnostic;

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Problem {
    /// Always `about:blank`: the status and title say what kind of problem.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub title: String,
    pub status: u16,
    /// What went wrong and what to do about it.
    pub detail: String,
    /// For invalid manifests: every diagnostic, with its JSON pointer.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub diagnostics: Option<Vec<Diagnostic>>,
}

impl Problem {
    pub fn new(status: StatusCode, detail: impl Into<String>) -> Self {
        Self {
            kind: "about:blank",
            title: status.canonical_reason().unwrap_or("Error").to_string(),
            status: status.as_u16(),
            detail: detail.into(),
            diagnostics: None,
        }
    }

    pub fn bad_request(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, detail)
    }

    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, detail)
    }

    pub fn internal(detail: impl std::fmt::Display) -> Self {
        tracing::error!("internal error: {detail}");
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, format!("the server failed: {detail}"))
    }

    pub fn invalid_manifest(diagnostics: Vec<Diagnostic>) -> Self {
        let first = diagnostics.first().map(|d| format!("{}: {}", d.pointer, d.message)).unwrap_or_default();
        let mut p = Self::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("the manifest has {} problem(s); first: {first}", diagnostics.len()),
        );
        p.diagnostics = Some(diagnostics);
        p
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&self).unwrap_or_default();
        (status, [(header::CONTENT_TYPE, "application/problem+json")], body).into_response()
    }
}
