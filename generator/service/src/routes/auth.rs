//! API keys: writes need a key of `--api-key` in `x-api-key` (401 without
//! one, 403 with a wrong one); reads need none. [`Writer`] is the
//! extractor a write handler takes first, so nothing else runs unless the
//! key is good. Publishing operations takes a key of `--publisher-key`
//! instead ([`Publisher`]). Reads need none, but what code nobody vetted
//! controls (a job's log and error: a build script prints them) is shown
//! only to callers with a key of either kind ([`Reader`]).

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::StatusCode;

use crate::problem::Problem;
use crate::AppState;

/// The request carries a valid API key.
pub(super) struct Writer;

/// Whether `key` is one of the service's API keys (`--api-key`).
pub(super) fn is_api_key(state: &AppState, key: &str) -> bool {
    state.http.api_keys.iter().any(|k| constant_time_eq(k.as_bytes(), key.as_bytes()))
}

impl FromRequestParts<Arc<AppState>> for Writer {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<AppState>) -> Result<Self, Problem> {
        match parts.headers.get("x-api-key").map(|v| v.to_str().unwrap_or("")) {
            None => {
                Err(Problem::new(StatusCode::UNAUTHORIZED, "this endpoint needs an API key in the x-api-key header"))
            }
            Some(key) if is_api_key(state, key) => Ok(Writer),
            Some(_) => Err(Problem::new(StatusCode::FORBIDDEN, "the x-api-key is not valid for this service")),
        }
    }
}

/// The request carries a valid publisher key (`--publisher-key`): keys for
/// builds do not publish operations, nor publisher keys build. `owner` is
/// who the key publishes as: operation names belong to owners.
pub(super) struct Publisher {
    pub owner: String,
}

/// A `--publisher-key` value as (owner, key): `OWNER=KEY` names its owner
/// (a lowercase name: letters, digits, `-`, `_`, `.`); a bare key is its
/// own owner, `key-` and 16 hex digits of its SHA-256 (the key itself is
/// never stored).
pub fn publisher_owner(raw: &str) -> (String, &str) {
    if let Some((owner, key)) = raw.split_once('=') {
        let named = !owner.is_empty()
            && owner.len() <= 64
            && owner.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b));
        if named && !key.is_empty() {
            return (owner.to_string(), key);
        }
    }
    let digest = <sha2::Sha256 as sha2::Digest>::digest(raw.as_bytes());
    (format!("key-{}", digest.iter().take(8).map(|b| format!("{b:02x}")).collect::<String>()), raw)
}

impl FromRequestParts<Arc<AppState>> for Publisher {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<AppState>) -> Result<Self, Problem> {
        let keys = &state.http.publisher_keys;
        match parts.headers.get("x-api-key").map(|v| v.to_str().unwrap_or("")) {
            _ if keys.is_empty() => Err(Problem::new(
                StatusCode::FORBIDDEN,
                "publishing operations is off on this service (it was started without --publisher-key)",
            )),
            None => {
                Err(Problem::new(StatusCode::UNAUTHORIZED, "publishing needs a publisher key in the x-api-key header"))
            }
            Some(key) => keys
                .iter()
                .map(|raw| publisher_owner(raw))
                .find(|(_, k)| constant_time_eq(k.as_bytes(), key.as_bytes()))
                .map(|(owner, _)| Publisher { owner })
                .ok_or_else(|| {
                    Problem::new(StatusCode::FORBIDDEN, "the x-api-key is not a publisher key of this service")
                }),
        }
    }
}

/// Whether a read carries a valid key of either kind: a wrong or missing
/// key is not refused, it only sees less.
pub(super) struct Reader {
    pub keyed: bool,
}

impl FromRequestParts<Arc<AppState>> for Reader {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<AppState>) -> Result<Self, Self::Rejection> {
        let key = parts.headers.get("x-api-key").map(|v| v.as_bytes()).unwrap_or_default();
        let config = &state.http;
        let keyed = !key.is_empty()
            && (config.api_keys.iter().any(|k| constant_time_eq(k.as_bytes(), key))
                || config.publisher_keys.iter().any(|raw| constant_time_eq(publisher_owner(raw).1.as_bytes(), key)));
        Ok(Reader { keyed })
    }
}

/// What an anonymous reader sees of a job's log and error: that they are
/// withheld, and how to see them.
pub(super) fn withhold(log_tail: &mut String, error: &mut Option<String>) {
    const WHY: &str = "the log and error of a build are shown to callers with a key: send it in x-api-key";
    if !log_tail.is_empty() {
        *log_tail = format!("({WHY})");
    }
    if error.is_some() {
        *error = Some(format!("the job failed ({WHY})"));
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
