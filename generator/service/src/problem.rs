//! Errors of the HTTP API as `application/problem+json` (RFC 9457): a status,
//! a short title and a `detail` that says what to fix; validation failures
//! also carry the diagnostics. A 500 says nothing of the server's insides
//! (no paths, no error chain): the detail goes to the server's log under a
//! reference the body gives. A 503 carries `Retry-After` when waiting helps.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use braid::diagnostic::Diagnostic;
use serde::Serialize;

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
    /// Seconds, for the `Retry-After` header.
    #[serde(skip)]
    pub retry_after: Option<u64>,
}

impl Problem {
    pub fn new(status: StatusCode, detail: impl Into<String>) -> Self {
        Self {
            kind: "about:blank",
            title: status.canonical_reason().unwrap_or("Error").to_string(),
            status: status.as_u16(),
            detail: detail.into(),
            diagnostics: None,
            retry_after: None,
        }
    }

    pub fn bad_request(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, detail)
    }

    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, detail)
    }

    /// A failure of the server: the detail is logged, not sent.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        let reference = uuid::Uuid::new_v4().simple().to_string()[..12].to_string();
        tracing::error!(reference, "internal error: {detail}");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the server failed; its log has the details under reference {reference}"),
        )
    }

    /// 503: the service cannot take this now; `retry_after` seconds when
    /// waiting helps.
    pub fn unavailable(detail: impl Into<String>, retry_after: Option<u64>) -> Self {
        let mut p = Self::new(StatusCode::SERVICE_UNAVAILABLE, detail);
        p.retry_after = retry_after;
        p
    }

    /// A store error as the client should see it (also `?` on one): a
    /// database that was deleted or a full disk is a 503, anything else a 500.
    pub fn from_store(e: braid_store::StoreError) -> Self {
        if e.is_disk_full() {
            tracing::error!("database: {e}");
            return Self::unavailable("the server's disk is full; try again later", Some(30));
        }
        match e {
            braid_store::StoreError::Gone(_) => Self::unavailable(
                format!("{e}; the service answers reads but takes no writes until an operator restarts it"),
                None,
            ),
            e => Self::internal(e),
        }
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
        let mut response = (status, [(header::CONTENT_TYPE, "application/problem+json")], body).into_response();
        if let Some(seconds) = self.retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, seconds.into());
        }
        response
    }
}

impl From<braid_store::StoreError> for Problem {
    fn from(e: braid_store::StoreError) -> Self {
        Problem::from_store(e)
    }
}
