//! `GET /` and `GET /editor/{file}`: the workflow editor (and the sandboxed
//! frame it runs built workflows in), a page whose
//! assets are compiled into the binary (built from `js/editor/` by
//! `js/scripts/build-editor.mjs`, committed, checked for staleness by
//! `make test-lint`), so the service serves it offline and `cargo install`
//! needs no npm.

use axum::extract::Path;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};

use crate::problem::Problem;

/// The editor's files: name, media type, policy, bytes.
const ASSETS: [(&str, &str, &str, &[u8]); 5] = [
    ("index.html", HTML, CSP, include_bytes!("../../assets/editor/index.html")),
    ("editor.js", JS, CSP, include_bytes!("../../assets/editor/editor.js")),
    ("editor.css", "text/css; charset=utf-8", CSP, include_bytes!("../../assets/editor/editor.css")),
    ("runner.html", HTML, RUNNER_CSP, include_bytes!("../../assets/editor/runner.html")),
    ("runner.js", JS, RUNNER_CSP, include_bytes!("../../assets/editor/runner.js")),
];

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

/// What the page may load and run: its own files and the service's API;
/// the workflow it tries, from a blob (its glue) and compiled Wasm; inline
/// styles, which the canvas library's components use.
const CSP: &str = "default-src 'self'; script-src 'self' blob: 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; \
                   img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
                   frame-ancestors 'none'; form-action 'none'";

/// The frame the editor runs a built workflow in: sandboxed whatever embeds
/// or opens it (an opaque origin: no access to the editor's storage or the
/// service as the user), fetching nothing; its own script, the package's
/// modules from blobs and Wasm compilation only; no worker (whose source
/// would fall back to `script-src`) and no frame (`default-src`), where
/// WebRTC, which the runner removes from its own globals, could be found.
const RUNNER_CSP: &str = "sandbox allow-scripts; default-src 'none'; script-src 'self' blob: 'wasm-unsafe-eval'; \
                          worker-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'; \
                          frame-ancestors 'self'";

fn asset(name: &str) -> Option<Response> {
    let (_, media_type, csp, bytes) = ASSETS.iter().find(|(n, ..)| *n == name)?;
    let mut response = (*bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(csp));
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
