//! A route's one path parameter, an id of [`braid_store::ids`]
//! ([`Param`]): a malformed id is a 400 problem that says what a
//! well-formed one looks like, before any handler code runs.

use std::str::FromStr;

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use braid_store::ids::IdError;

use crate::problem::Problem;

/// The path parameter, parsed as the id `T` (`Param<WorkflowId>`). A
/// wrapper, since the ids are braid-store's, which knows nothing of HTTP.
pub(super) struct Param<T>(pub T);

impl<S: Send + Sync, T: FromStr<Err = IdError>> FromRequestParts<S> for Param<T> {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Problem> {
        let Path(raw) =
            Path::<String>::from_request_parts(parts, state).await.map_err(|e| Problem::bad_request(e.body_text()))?;
        raw.parse().map(Param).map_err(|e: T::Err| Problem::bad_request(e.to_string()))
    }
}
