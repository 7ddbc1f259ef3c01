//! What every route gets: one `Host` (two are a 400, and an absolute-form
//! target's authority is the host, as RFC 9112 says), problem answers for
//! unknown paths and methods,
//! the request body read whole within its size and time limits (and, on
//! the routes whose bodies may be larger than `--max-body`, only once the
//! key in the headers is good), the
//! request metrics (labels from closed sets), and a 500 problem for a
//! handler that panics (the `braid` binary unwinds, so the service goes on).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use http_body_util::BodyExt as _;

use super::ROUTES;
use crate::problem::Problem;
use crate::AppState;

/// `routes` with every shared layer, and the state.
pub(super) fn harden(routes: Router<Arc<AppState>>, state: Arc<AppState>) -> Router {
    routes
        .fallback(|| async { Problem::not_found("no such endpoint; GET /v1/openapi.json describes the API") })
        .method_not_allowed_fallback(|| async {
            Problem::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "this endpoint does not take that method; see /v1/openapi.json",
            )
        })
        .layer(DefaultBodyLimit::max(
            state.http.max_body.max(state.http.max_upload).max(state.executor.config().limits.input_bytes),
        ))
        .layer(middleware::from_fn_with_state(state.clone(), read_body))
        .layer(middleware::from_fn_with_state(state.clone(), count))
        .layer(middleware::from_fn(one_host))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(|_| {
            Problem::internal("a handler panicked").into_response()
        }))
        .with_state(state)
}

/// Refuses a request with more than one `Host` (RFC 9112, 3.2: a 400);
/// takes an absolute-form target's authority as the host, whatever `Host`
/// says (RFC 9112, 3.2.2), so that what the registries write in their URLs
/// is the host the client asked for.
async fn one_host(mut request: Request, next: Next) -> Response {
    if request.headers().get_all(header::HOST).iter().count() > 1 {
        return Problem::bad_request("the request has more than one Host header; send one").into_response();
    }
    let authority = request.uri().authority().map(|a| a.as_str().to_string());
    if let Some(authority) = authority {
        match header::HeaderValue::from_str(&authority) {
            Ok(value) => {
                request.headers_mut().insert(header::HOST, value);
            }
            Err(_) => return Problem::bad_request("the request target's host is not a valid Host").into_response(),
        }
    }
    next.run(request).await
}

/// Counts the request by method, route template and status (closed sets).
async fn count(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .and_then(|m| ROUTES.iter().find(|r| **r == m.as_str()))
        .copied()
        .unwrap_or("unmatched");
    let response = next.run(request).await;
    state.app_metrics.request(method.as_str(), route, response.status().as_u16());
    response
}

pub(super) fn too_large(limit: usize) -> Problem {
    Problem::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the request body is too large; the limit here is {limit} bytes"),
    )
}

/// Who may send a body larger than `--max-body`.
enum Gate {
    /// Anyone: the body is at most `--max-body`, or a run's input under
    /// `--public-run`.
    Open,
    /// A caller with an API key (runs, unless `--public-run`).
    Writer,
    /// A caller with a publisher key (operation uploads).
    Publisher,
}

/// The largest body of a request, and who may send it: operation uploads
/// (`.tar.gz`) and runs' inputs (`--input-limit`) have their own limits,
/// behind their keys; the rest `--max-body`.
fn body_limit(state: &AppState, parts: &axum::http::request::Parts) -> (usize, Gate) {
    let route = parts.extensions.get::<MatchedPath>().map(MatchedPath::as_str);
    let run = state.executor.config();
    match route {
        Some(route) if parts.method == axum::http::Method::POST && route == super::ROUTES[1] => {
            (state.http.max_upload, Gate::Publisher)
        }
        Some(route) if super::RUNS.contains(&route) => {
            (run.limits.input_bytes, if run.public { Gate::Open } else { Gate::Writer })
        }
        _ => (state.http.max_body, Gate::Open),
    }
}

/// The key `gate` asks for, from the headers alone: a request without it
/// is answered before a byte of its body is read.
async fn admit(state: &Arc<AppState>, gate: Gate, parts: &mut axum::http::request::Parts) -> Result<(), Problem> {
    use axum::extract::FromRequestParts as _;
    match gate {
        Gate::Open => Ok(()),
        Gate::Writer => super::auth::Writer::from_request_parts(parts, state).await.map(drop),
        Gate::Publisher => super::auth::Publisher::from_request_parts(parts, state).await.map(drop),
    }
}

/// Reads the whole request body within `--body-timeout` (408 after it) and
/// at most `--max-body` bytes (413), so a client that sends slowly holds a
/// connection for a bounded time and handlers never wait on the network.
async fn read_body(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let (limit, gate) = body_limit(&state, &parts);
    if let Err(refused) = admit(&state, gate, &mut parts).await {
        return refused.into_response();
    }
    let declared = parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large(limit).into_response();
    }
    let read = http_body_util::Limited::new(body, limit).collect();
    let bytes = match tokio::time::timeout(state.http.body_timeout, read).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => return too_large(limit).into_response(),
        Ok(Err(e)) => return Problem::bad_request(format!("the request body could not be read: {e}")).into_response(),
        Err(_) => {
            let mut response = Problem::new(
                StatusCode::REQUEST_TIMEOUT,
                format!("the request body took longer than {} s to arrive", state.http.body_timeout.as_secs()),
            )
            .into_response();
            response.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
            return response;
        }
    };
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}
