//! `GET /` and `GET /editor/{file}`: the workflow editor, a page whose
//! assets are compiled into the binary (built from `js/editor/` by
//! `js/scripts/build-editor.mjs`, committed, checked for staleness by
//! `make test-lint`), so the service serves it offline and `cargo install`
//! needs no npm.

use axum::extract::Path;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};

use crate::problem::Problem;

/// The editor's files: name, media type, bytes.
const ASSETS: [(&str, &str, &[u8]); 3] = [
    ("index.html", "text/html; charset=utf-8", include_bytes!("../../assets/editor/index.html")),
    ("editor.js", "text/javascript; charset=utf-8", include_bytes!("../../assets/editor/editor.js")),
    ("editor.css", "text/css; charset=utf-8", include_bytes!("../../assets/editor/editor.css")),
];

/// What the page may load and run: its own files and the service's API;
/// the workflow it tries, from a blob (its glue) and compiled Wasm; inline
/// styles, which the canvas library's components use.
const CSP: &str = "default-src 'self'; script-src 'self' blob: 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; \
                   img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
                   frame-ancestors 'none'; form-action 'none'";

fn asset(name: &str) -> Option<Response> {
    let (_, media_type, bytes) = ASSETS.iter().find(|(n, _, _)| *n == name)?;
    let mut response = (*bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // The page names its assets without a version: revalidate each time.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Some(response)
}

/// The editor's page.
pub(super) async fn page() -> Response {
    asset("index.html").expect("the page is among the assets")
}

/// One of the editor's files.
/// Looked up by exact name in a fixed table: nothing reaches the file system.
pub(super) async fn file(Path(name): Path<String>) -> Result<Response, Problem> {
    asset(&name).ok_or_else(|| Problem::not_found("the editor has no such file"))
}
