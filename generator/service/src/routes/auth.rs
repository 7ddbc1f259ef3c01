//! API keys: writes need a key of `--api-key` in `x-api-key` (401 without
//! one, 403 with a wrong one); reads need none. [`Writer`] is the
//! extractor a write handler takes first, so nothing else runs unless the
//! key is good. Publishing operations takes a key of `--publisher-key`
//! instead ([`Publisher`]).

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::StatusCode;

use crate::problem::Problem;
use crate::AppState;

/// The request carries a valid API key.
pub(super) struct Writer;

impl FromRequestParts<Arc<AppState>> for Writer {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<AppState>) -> Result<Self, Problem> {
        match parts.headers.get("x-api-key").map(|v| v.to_str().unwrap_or("")) {
            None => {
                Err(Problem::new(StatusCode::UNAUTHORIZED, "this endpoint needs an API key in the x-api-key header"))
            }
            Some(key) if state.config.api_keys.iter().any(|k| constant_time_eq(k.as_bytes(), key.as_bytes())) => {
                Ok(Writer)
            }
            Some(_) => Err(Problem::new(StatusCode::FORBIDDEN, "the x-api-key is not valid for this service")),
        }
    }
}

/// The request carries a valid publisher key (`--publisher-key`): keys for
/// builds do not publish operations, nor publisher keys build.
pub(super) struct Publisher;

impl FromRequestParts<Arc<AppState>> for Publisher {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<AppState>) -> Result<Self, Problem> {
        let keys = &state.config.publisher_keys;
        match parts.headers.get("x-api-key").map(|v| v.to_str().unwrap_or("")) {
            _ if keys.is_empty() => Err(Problem::new(
                StatusCode::FORBIDDEN,
                "publishing operations is off on this service (it was started without --publisher-key)",
            )),
            None => {
                Err(Problem::new(StatusCode::UNAUTHORIZED, "publishing needs a publisher key in the x-api-key header"))
            }
            Some(key) if keys.iter().any(|k| constant_time_eq(k.as_bytes(), key.as_bytes())) => Ok(Publisher),
            Some(_) => Err(Problem::new(StatusCode::FORBIDDEN, "the x-api-key is not a publisher key of this service")),
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
