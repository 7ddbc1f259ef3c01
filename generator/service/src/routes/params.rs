//! The service's ids ([`crate::ids`]) as a route's one path parameter: a
//! malformed id is a 400 problem that says what a well-formed one looks
//! like, before any handler code runs.

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;

use crate::ids::{BuildId, ContentId, JobId, OperationName, WorkflowId};
use crate::problem::Problem;

macro_rules! path_param {
    ($($name:ident),*) => {$(
        impl<S: Send + Sync> FromRequestParts<S> for $name {
            type Rejection = Problem;

            async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Problem> {
                let Path(raw) = Path::<String>::from_request_parts(parts, state)
                    .await
                    .map_err(|e| Problem::bad_request(e.body_text()))?;
                Self::parse(&raw).map_err(|e| Problem::bad_request(e.to_string()))
            }
        }
    )*};
}

path_param!(WorkflowId, BuildId, ContentId, JobId, OperationName);
