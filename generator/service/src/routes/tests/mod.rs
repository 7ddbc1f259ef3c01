//! The API in process: requests through the router with tower's `oneshot`,
//! no socket, no worker. The 4xx/auth/problem matrix, validation and
//! generation, submissions and their dedup (a build's end is recorded as
//! a worker would), the OpenAPI document and the metrics' label set. What
//! needs a socket, real builds or npm is in `js/test/service.test.mjs`.
//!
//! One module per area: [`api`] (reads, keys, problems, validation and
//! generation), [`builds`] (submissions, dedup, listings), [`deployments`]
//! (names, owners, history), [`limits`]
//! (errors, metrics, load shedding) and [`registries`] (Cargo and npm).

mod api;
mod builds;
mod deployments;
mod limits;
mod registries;

use std::path::PathBuf;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, Method, Request, StatusCode};
use axum::routing::get;
use axum::Router;
use braid::diagnostic::Diagnostic;
use braid_store::ids::{BuildId, JobId};
use braid_store::Artifact;
use http_body_util::BodyExt as _;
use serde_json::{json, Value};
use tower::ServiceExt as _;

use super::heavy::heavy;
use super::{app, health, layers, workflows};
use crate::{AppState, Config};

const KEY: &str = "k";
const MANIFEST: &str = r#"{"name":"t","version":"0.1.0","segments":[{"inputs":[-1],"sequence":[{"operation":"op_multihash"},{"operation":"op_cid"}]}]}"#;

/// A service on a fresh data directory, removed when dropped.
struct Service {
    app: Router,
    state: Arc<AppState>,
    dir: PathBuf,
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// An answer, read whole.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

impl Service {
    async fn new() -> Self {
        Self::with(|_| {}).await
    }

    async fn with(configure: impl FnOnce(&mut Config)) -> Self {
        let dir = std::env::temp_dir().join(format!("braid-api-{}", uuid::Uuid::new_v4().simple()));
        let mut config = Config::for_tests(dir.clone());
        configure(&mut config);
        let state = crate::open(config).await.unwrap();
        Self { app: app(state.clone()), state, dir }
    }

    async fn send(&self, request: Request<Body>) -> Answer {
        let response = self.app.clone().oneshot(request).await.unwrap();
        let (parts, body) = response.into_parts();
        Answer { status: parts.status, headers: parts.headers, body: body.collect().await.unwrap().to_bytes() }
    }

    async fn get(&self, uri: &str) -> Answer {
        self.send(Request::get(uri).body(Body::empty()).unwrap()).await
    }

    /// POSTs `body` as JSON with the API key; `headers` are added or replace those.
    async fn post(&self, uri: &str, body: impl Into<Body>, headers: &[(&str, &str)]) -> Answer {
        let mut request = Request::post(uri)
            .header(header::CONTENT_TYPE, "application/json")
            .header("x-api-key", KEY)
            .body(body.into())
            .unwrap();
        for (name, value) in headers {
            let name = header::HeaderName::from_bytes(name.as_bytes()).unwrap();
            request.headers_mut().insert(name, value.parse().unwrap());
        }
        self.send(request).await
    }

    async fn post_json(&self, uri: &str, body: &Value) -> Answer {
        self.post(uri, body.to_string(), &[]).await
    }

    /// Ends the oldest queued job as a worker would after a build that
    /// produced `files` (name, bytes): stored in the artifact store and
    /// recorded with a report.
    async fn finish_build(&self, files: &[(&str, &[u8])]) -> (JobId, Vec<Artifact>) {
        let job = self.state.store.claim_build().await.unwrap().expect("a queued job");
        let artifacts: Vec<Artifact> = files
            .iter()
            .map(|(name, bytes)| Artifact {
                name: name.to_string(),
                cid: self.state.cas.put(bytes).unwrap(),
                size: bytes.len() as u64,
                media_type: "application/gzip".into(),
            })
            .collect();
        let report = serde_json::from_value(json!({
            "workflow": "t", "id": "x", "crate_name": "wf_t", "targets": job.targets,
            "timings_ms": {"generate": 3}, "sizes_bytes": {"native.rlib": 10}, "artifacts": {}
        }))
        .unwrap();
        self.state.store.succeed(&job.job_id, &job.build_id, &report, &artifacts, &[]).await.unwrap();
        (job.job_id, artifacts)
    }
}

/// An example manifest of `workflows/`.
fn manifest(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../workflows").join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn assert_problem(answer: &Answer, status: StatusCode, what: &str) -> Value {
    assert_eq!(answer.status, status, "{what}: {}", answer.text());
    assert_eq!(answer.headers[header::CONTENT_TYPE], "application/problem+json", "{what}");
    let problem = answer.json();
    assert_eq!(problem["status"], status.as_u16(), "{what}");
    assert!(problem["detail"].as_str().unwrap().len() > 10, "{what}: {problem}");
    problem
}
