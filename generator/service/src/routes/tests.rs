//! The API in process: requests through the router with tower's `oneshot`,
//! no socket, no worker. The 4xx/auth/problem matrix, validation and
//! generation, submissions and their dedup (a build's end is recorded as
//! a worker would), the OpenAPI document and the metrics' label set. What
//! needs a socket, real builds or npm is in `js/test/service.test.mjs`.

use std::path::PathBuf;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, Method, Request, StatusCode};
use axum::routing::get;
use axum::Router;
use braid::diagnostic::Diagnostic;
use http_body_util::BodyExt as _;
use serde_json::{json, Value};
use tower::ServiceExt as _;

use super::heavy::heavy;
use super::{app, health, layers, workflows};
use crate::ids::{BuildId, JobId};
use crate::store::Artifact;
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
    fn new() -> Self {
        Self::with(|_| {})
    }

    fn with(configure: impl FnOnce(&mut Config)) -> Self {
        let dir = std::env::temp_dir().join(format!("braid-api-{}", uuid::Uuid::new_v4().simple()));
        let mut config = Config::for_tests(dir.clone());
        configure(&mut config);
        let state = crate::open(config).unwrap();
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
    fn finish_build(&self, files: &[(&str, &[u8])]) -> (JobId, Vec<Artifact>) {
        let job = self.state.store.claim().unwrap().expect("a queued job");
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
        self.state.store.succeed(&job.job_id, &job.build_id, &report, &artifacts, &[]).unwrap();
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

/// Was JS 'health, OpenAPI and operations'.
#[tokio::test]
async fn health_openapi_and_operations() {
    let s = Service::new();
    assert_eq!(s.get("/healthz").await.json(), json!({ "status": "ok" }));
    let doc = s.get("/v1/openapi.json").await.json();
    for path in super::ROUTES.iter().filter(|r| r.starts_with("/v1/") && **r != "/v1/openapi.json") {
        assert!(doc["paths"][path].is_object(), "OpenAPI documents {path}");
    }
    assert!(doc["components"]["schemas"]["JobState"].is_object(), "{}", doc["components"]["schemas"]);
    let ops = s.get("/v1/operations").await.json();
    assert!(ops
        .as_array()
        .unwrap()
        .iter()
        .any(|o| o["name"] == "op_multihash" && o["version_id"].as_str().unwrap().starts_with("bafkr4i")));
    let one = s.get("/v1/operations/op_cid").await.json();
    assert_eq!(one["versions"][0]["manifest"]["output"], "Cid");
}

/// Was JS 'validate and generate'.
#[tokio::test]
async fn validate_and_generate() {
    let s = Service::new();
    let ok = s.post_json("/v1/validate", &manifest("salted_cid")).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.text());
    let ok = ok.json();
    assert_eq!(ok["valid"], true);
    let workflow = braid::manifest::validate(&manifest("salted_cid").to_string(), &s.state.registry()).unwrap();
    assert_eq!(ok["id"], workflow.id, "the workflow id is the manifest's CID");
    let bad = s.post_json("/v1/validate", &json!({ "name": "x", "version": "1", "segments": [] })).await;
    let problem = assert_problem(&bad, StatusCode::UNPROCESSABLE_ENTITY, "invalid");
    let mut pointers: Vec<&str> =
        problem["diagnostics"].as_array().unwrap().iter().map(|d| d["pointer"].as_str().unwrap()).collect();
    pointers.sort();
    assert_eq!(pointers, ["/segments", "/version"]);
    let generated = s.post_json("/v1/generate", &manifest("cidv1_from_bytes")).await;
    assert_eq!(generated.status, StatusCode::OK, "{}", generated.text());
    assert_eq!(generated.headers[header::CONTENT_TYPE], "application/gzip");
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(&generated.body[..]));
    let files: Vec<String> =
        archive.entries().unwrap().map(|e| e.unwrap().path().unwrap().to_string_lossy().into_owned()).collect();
    for f in ["wf_cidv1_from_bytes/Cargo.toml", "wf_cidv1_from_bytes/Cargo.lock", "wf_cidv1_from_bytes/src/lib.rs"] {
        assert!(files.iter().any(|x| x == f), "{f} in {files:?}");
    }
    let op_cid =
        files.iter().any(|x| x.starts_with("wf_cidv1_from_bytes/vendor/op_cid-") && x.ends_with("/src/lib.rs"));
    assert!(op_cid, "op_cid's source in {files:?}");
}

/// Was JS 'writes need a valid key; reads do not'. The key is checked
/// before the body is read.
#[tokio::test]
async fn writes_need_a_valid_key_reads_do_not() {
    let s = Service::new();
    let body = json!({ "manifest": manifest("cidv1_from_bytes") }).to_string();
    let request = |body: &str, key: Option<&str>| {
        let mut r = Request::post("/v1/workflows").header(header::CONTENT_TYPE, "application/json");
        if let Some(key) = key {
            r = r.header("x-api-key", key);
        }
        r.body(Body::from(body.to_string())).unwrap()
    };
    let none = s.send(request(&body, None)).await;
    let problem = assert_problem(&none, StatusCode::UNAUTHORIZED, "no key");
    assert!(problem["detail"].as_str().unwrap().contains("x-api-key"), "{problem}");
    assert_problem(&s.send(request(&body, Some("nope"))).await, StatusCode::FORBIDDEN, "wrong key");
    assert_problem(&s.send(request(&body, Some(""))).await, StatusCode::FORBIDDEN, "empty key");
    assert_problem(&s.send(request("not json", None)).await, StatusCode::UNAUTHORIZED, "no key, bad body");
    assert_eq!(s.get("/v1/operations").await.status, StatusCode::OK);
    assert_eq!(
        s.get("/v1/workflows/bafkr4iaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa").await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(s.state.store.job_counts().unwrap(), vec![], "nothing was queued");
}

/// Was JS 'bad input gets a 4xx problem document, never a 5xx'. Malformed
/// ids are 400 before any lookup; in process, `%2e%2e` reaches the server
/// as sent (fetch made it `/v1/`, which is here too).
#[tokio::test]
async fn bad_input_gets_a_4xx_problem_document_never_a_5xx() {
    let s = Service::new();
    let big = json!({ "manifest": { "name": "x", "description": "y".repeat(3 << 20) } }).to_string();
    let absent = format!("bafkr4i{}", "a".repeat(52));
    let salted = manifest("salted_cid");
    let segment_ref = json!({ "name": "x", "version": "0.1.0", "segments": [{ "inputs": [5], "sequence": [] }] });
    let bad_config = json!({ "name": "a", "version": "0.1.0",
        "segments": [{ "inputs": [-1], "sequence": [{ "operation": "op_cid", "config": { "base": "x" } }] }] });
    type Post<'a> = (&'a str, String, Vec<(&'a str, &'a str)>, StatusCode);
    let posts: Vec<Post> = vec![
        ("/v1/validate", "not json".into(), vec![], StatusCode::BAD_REQUEST),
        ("/v1/validate", r#"{"a":"#.into(), vec![], StatusCode::BAD_REQUEST),
        ("/v1/validate", salted.to_string(), vec![("content-type", "text/plain")], StatusCode::UNSUPPORTED_MEDIA_TYPE),
        ("/v1/validate", big.clone(), vec![], StatusCode::PAYLOAD_TOO_LARGE),
        ("/v1/validate", big.clone(), vec![("content-length", "3145800")], StatusCode::PAYLOAD_TOO_LARGE),
        ("/v1/workflows", big.clone(), vec![], StatusCode::PAYLOAD_TOO_LARGE),
        ("/v1/workflows", json!({ "manifest": salted, "extra": 1 }).to_string(), vec![], StatusCode::BAD_REQUEST),
        (
            "/v1/workflows",
            json!({ "manifest": salted, "targets": ["riscv"] }).to_string(),
            vec![],
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            "/v1/workflows",
            json!({ "manifest": manifest("cid_of_file"), "targets": ["node"] }).to_string(),
            vec![],
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            "/v1/workflows",
            json!({ "manifest": salted, "targets": [] }).to_string(),
            vec![],
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        ("/v1/workflows", json!({ "manifest": segment_ref }).to_string(), vec![], StatusCode::UNPROCESSABLE_ENTITY),
        ("/v1/workflows", "[]".into(), vec![], StatusCode::BAD_REQUEST),
        ("/v1/generate", json!({ "name": "1bad" }).to_string(), vec![], StatusCode::UNPROCESSABLE_ENTITY),
        ("/v1/validate", bad_config.to_string(), vec![], StatusCode::UNPROCESSABLE_ENTITY),
    ];
    for (uri, body, headers, status) in &posts {
        let answer = s.post(uri, body.clone(), headers).await;
        assert_problem(&answer, *status, &format!("POST {uri} {}", &body[..body.len().min(80)]));
    }
    let no_type = Request::post("/v1/validate").header("x-api-key", KEY).body(Body::from("{}")).unwrap();
    assert_problem(&s.send(no_type).await, StatusCode::UNSUPPORTED_MEDIA_TYPE, "no content type");
    let gets = [
        ("/v1/jobs/0123456789abcdef0123456789abcdef".to_string(), StatusCode::NOT_FOUND),
        ("/v1/jobs/not-a-job".into(), StatusCode::BAD_REQUEST),
        ("/v1/jobs/..%2F..%2Fetc%2Fpasswd".into(), StatusCode::BAD_REQUEST),
        (format!("/v1/workflows/{absent}"), StatusCode::NOT_FOUND),
        ("/v1/workflows/..%2f..%2fbraid.sqlite".into(), StatusCode::BAD_REQUEST),
        (format!("/v1/builds/{absent}"), StatusCode::NOT_FOUND),
        ("/v1/builds/..%2f..%2fbraid.sqlite".into(), StatusCode::BAD_REQUEST),
        ("/v1/artifacts/..%2F..%2Fbraid.sqlite".into(), StatusCode::BAD_REQUEST),
        ("/v1/artifacts/%2e%2e".into(), StatusCode::BAD_REQUEST),
        ("/v1/".into(), StatusCode::NOT_FOUND),
        ("/v1/artifacts/%252e%252e%252fbraid.sqlite".into(), StatusCode::BAD_REQUEST),
        (format!("/v1/artifacts/{absent}"), StatusCode::NOT_FOUND),
        (format!("/v1/artifacts/{}", absent.to_uppercase()), StatusCode::BAD_REQUEST),
        ("/v1/operations/..%2Fop_cid".into(), StatusCode::BAD_REQUEST),
        ("/v1/operations/op_nope".into(), StatusCode::NOT_FOUND),
        ("/v1/nope".into(), StatusCode::NOT_FOUND),
    ];
    for (uri, status) in &gets {
        assert_problem(&s.get(uri).await, *status, &format!("GET {uri}"));
    }
    let delete = s.send(Request::delete("/v1/operations").body(Body::empty()).unwrap()).await;
    assert_problem(&delete, StatusCode::METHOD_NOT_ALLOWED, "DELETE /v1/operations");
    assert_eq!(s.get("/healthz").await.status, StatusCode::OK, "still serving");
    assert_eq!(s.state.store.job_counts().unwrap(), vec![], "nothing was queued");
}

/// Was JS 'every kind of invalid manifest is a 422 with diagnostics, from
/// validate and from workflows'.
#[tokio::test]
async fn every_kind_of_invalid_manifest_is_a_422_with_diagnostics() {
    let s = Service::new();
    let seg = |inputs: Value, ops: Vec<Value>| json!({ "inputs": inputs, "sequence": ops });
    let op = |name: &str| json!({ "operation": name });
    let cid = seg(json!([-1]), vec![op("op_multihash"), op("op_cid")]);
    let m = |segments: Vec<Value>, extra: Value| {
        let mut m = json!({ "name": "bad", "version": "0.1.0", "segments": segments });
        for (k, v) in extra.as_object().unwrap() {
            m[k] = v.clone();
        }
        m
    };
    let chain: Vec<Value> = (0..129)
        .map(
            |i| if i == 0 { seg(json!([-1]), vec![op("op_utf8")]) } else { seg(json!([i - 1]), vec![op("op_concat")]) },
        )
        .collect();
    let invalid = [
        (m(vec![cid.clone()], json!({ "name": "1abc" })), "/name"),
        (m(vec![cid.clone()], json!({ "name": "nul\u{0}" })), "/name"),
        (m(vec![cid.clone()], json!({ "name": "self\"; drop" })), "/name"),
        (m(vec![cid.clone()], json!({ "version": "1" })), "/version"),
        (m(vec![cid.clone()], json!({ "description": "a\u{0}b" })), "/description"),
        (m(vec![seg(json!([1]), vec![op("op_utf8")]), cid.clone()], json!({})), "/segments/0/inputs/0"),
        (m(vec![seg(json!([-5]), vec![op("op_utf8")])], json!({})), "/segments/0/inputs/0"),
        (m(vec![seg(json!([1e30]), vec![op("op_utf8")])], json!({})), "/segments/0/inputs/0"),
        (m(vec![seg(json!([-1, -1]), vec![op("op_multihash")])], json!({})), "/segments/0/inputs"),
        (m(vec![seg(json!([-1]), vec![op("op_cid"), op("op_multihash")])], json!({})), "/segments/0/sequence/1"),
        (m(vec![seg(json!([-1]), vec![op("op_nope")])], json!({})), "/segments/0/sequence/0/operation"),
        (
            m(vec![seg(json!([-1]), vec![json!({ "operation": "op_cid", "version": "^9" })])], json!({})),
            "/segments/0/sequence/0/version",
        ),
        (
            m(vec![seg(json!([-1]), vec![json!({ "operation": "op_cid", "config": { "base": "base2" } })])], json!({})),
            "/segments/0/sequence/0/config/base",
        ),
        (
            m(vec![seg(json!([-1]), vec![json!({ "operation": "op_cid", "config": { "nope": "x" } })])], json!({})),
            "/segments/0/sequence/0/config/nope",
        ),
        (m(vec![cid.clone(), cid.clone()], json!({})), "/segments/0"),
        (m(vec![], json!({})), "/segments"),
        (m(chain, json!({})), "/segments"),
        (m(vec![cid.clone()], json!({ "surprise": true })), "/surprise"),
    ];
    for (manifest, pointer) in &invalid {
        for (uri, body) in [("/v1/validate", manifest.clone()), ("/v1/workflows", json!({ "manifest": manifest }))] {
            let problem = assert_problem(&s.post_json(uri, &body).await, StatusCode::UNPROCESSABLE_ENTITY, uri);
            assert!(
                problem["diagnostics"].as_array().unwrap().iter().any(|d| d["pointer"] == *pointer),
                "{uri}: {pointer} in {}",
                problem["diagnostics"]
            );
        }
    }
}

/// Was JS '/v1/workflows checks the manifest as sent: its size, line and column'.
#[tokio::test]
async fn publishing_checks_the_manifest_as_sent() {
    let s = Service::new();
    // One line: the diagnostic's column points into this very body.
    let text = r#"{"manifest":{"name":"x","version":"0.1.0","segments":[{"inputs":[-1],"sequence":[{"operation":"op_nope"}]}]}}"#;
    let problem =
        assert_problem(&s.post("/v1/workflows", text, &[]).await, StatusCode::UNPROCESSABLE_ENTITY, "op_nope");
    let d = problem["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["pointer"] == "/segments/0/sequence/0/operation")
        .cloned()
        .unwrap();
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(1), Some(text.find("\"op_nope\"").unwrap() as u64 + 1))
    );
    // A large manifest, compact as sent: /v1/validate and /v1/workflows agree.
    // (Pretty-printed, as the service used to, it is over the 1 MiB limit.)
    let pair =
        [json!({ "operation": "op_utf8", "version": "^0.1" }), json!({ "operation": "op_encode", "version": "^0.1" })];
    let segment =
        |i: i64| json!({ "inputs": [i - 1], "sequence": (0..64).flat_map(|_| pair.clone()).collect::<Vec<_>>() });
    let big = json!({ "name": "big", "version": "0.1.0", "segments": (0..100).map(segment).collect::<Vec<_>>() });
    let compact = big.to_string();
    assert!(compact.len() > 300_000 && compact.len() < 1 << 20);
    assert!(serde_json::to_string_pretty(&big).unwrap().len() > 1 << 20);
    let validated = s.post("/v1/validate", compact.clone(), &[]).await;
    let submitted = s.post("/v1/workflows", format!(r#"{{"manifest":{compact},"targets":["riscv"]}}"#), &[]).await;
    let answer = assert_problem(&submitted, StatusCode::UNPROCESSABLE_ENTITY, "big");
    if validated.status == StatusCode::OK {
        assert!(
            answer["detail"]
                .as_str()
                .unwrap()
                .contains("unknown target `riscv`; expected native, nostd, node, web, bundler or component"),
            "{answer}"
        );
    } else {
        let pairs = |p: &Value| -> Vec<(Value, Value)> {
            p["diagnostics"].as_array().unwrap().iter().map(|d| (d["pointer"].clone(), d["message"].clone())).collect()
        };
        assert_eq!(pairs(&answer), pairs(&validated.json()));
    }
}

/// Was JS 'a generated crate over --max-crate-bytes is refused with a
/// problem, by generate and by publish'.
#[tokio::test]
async fn a_crate_over_max_crate_bytes_is_refused_by_generate_and_publish() {
    let s = Service::with(|c| c.max_crate_bytes = 50_000);
    let m = manifest("cidv1_from_bytes");
    for (uri, body) in [("/v1/generate", m.clone()), ("/v1/workflows", json!({ "manifest": m }))] {
        let problem = assert_problem(&s.post_json(uri, &body).await, StatusCode::UNPROCESSABLE_ENTITY, uri);
        let detail = problem["detail"].as_str().unwrap();
        assert!(detail.contains("bytes; this service generates at most 50000 (--max-crate-bytes)"), "{detail}");
    }
    assert_eq!(s.state.store.job_counts().unwrap(), vec![], "nothing was queued");
}

/// Was JS 'the same manifest again is answered from the earlier build'
/// (the build's end recorded as a worker would). Also: a workflow id is
/// the manifest's CID, a build id names one build of it.
#[tokio::test]
async fn the_same_manifest_again_is_answered_from_the_earlier_build() {
    let s = Service::new();
    let m = manifest("cidv1_from_bytes");
    let workflow_id = s.post_json("/v1/validate", &m).await.json()["id"].clone();
    let first = s.post_json("/v1/workflows", &json!({ "manifest": m })).await;
    assert_eq!(first.status, StatusCode::ACCEPTED, "{}", first.text());
    let first = first.json();
    assert_eq!((&first["state"], &first["workflow_id"]), (&json!("queued"), &workflow_id));
    let build_id = first["build_id"].as_str().unwrap().to_string();
    assert!(BuildId::parse(&build_id).is_ok() && json!(build_id) != workflow_id, "{first}");
    // While queued, the same submission joins the job.
    let joined = s.post_json("/v1/workflows", &json!({ "manifest": m })).await;
    assert_eq!(joined.status, StatusCode::ACCEPTED);
    assert_eq!((&joined.json()["job_id"], &joined.json()["build_id"]), (&first["job_id"], &first["build_id"]));
    let job = s.get(&format!("/v1/jobs/{}", first["job_id"].as_str().unwrap())).await.json();
    assert_eq!(
        (&job["state"], &job["workflow_id"], &job["build_id"]),
        (&json!("queued"), &workflow_id, &first["build_id"])
    );

    let (job_id, artifacts) = s.finish_build(&[("crate.tar.gz", b"the crate")]);
    assert_eq!(json!(job_id), first["job_id"]);
    // Key order and white space do not matter: the manifest is canonicalized.
    let reordered: serde_json::Map<String, Value> =
        m.as_object().unwrap().iter().rev().map(|(k, v)| (k.clone(), v.clone())).collect();
    let text = format!("{{ \"manifest\": {} }}", serde_json::to_string_pretty(&reordered).unwrap());
    let again = s.post("/v1/workflows", text, &[]).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.text());
    let again = again.json();
    assert_eq!(
        (&again["build_id"], &again["workflow_id"], &again["state"]),
        (&first["build_id"], &workflow_id, &json!("succeeded"))
    );
    assert_eq!(again["artifacts"], json!(artifacts));
    assert!(again.get("job_id").is_none(), "{again}");
    let build = s.get(&format!("/v1/builds/{build_id}")).await.json();
    assert_eq!(
        (&build["state"], &build["workflow_id"], &build["artifacts"]),
        (&json!("succeeded"), &workflow_id, &json!(artifacts))
    );
    assert_eq!((&build["timings_ms"]["generate"], &build["sizes_bytes"]["native.rlib"]), (&json!(3), &json!(10)));
    // Other targets are another build of the same workflow.
    let native = s.post_json("/v1/workflows", &json!({ "manifest": m, "targets": ["native"] })).await.json();
    assert_eq!(native["workflow_id"], workflow_id);
    assert_ne!(native["build_id"], first["build_id"]);
    let workflow = s.get(&format!("/v1/workflows/{}", workflow_id.as_str().unwrap())).await.json();
    assert_eq!((&workflow["id"], &workflow["name"]), (&workflow_id, &json!("cidv1_from_bytes")));
    // Builds are listed by creation time (in seconds), then id: these two
    // may share a second, so compare them in id order.
    let mut builds: Vec<(&Value, &Value)> =
        workflow["builds"].as_array().unwrap().iter().map(|b| (&b["id"], &b["state"])).collect();
    builds.sort_by_key(|(id, _)| id.as_str().unwrap().to_string());
    let mut expected = [(&first["build_id"], &json!("succeeded")), (&native["build_id"], &json!("building"))];
    expected.sort_by_key(|(id, _)| id.as_str().unwrap().to_string());
    assert_eq!(builds, expected);
    assert_eq!(workflow["manifest"]["name"], "cidv1_from_bytes");
}

#[tokio::test]
async fn workflows_are_listed_by_id_a_page_at_a_time_and_artifacts_come_named() {
    let s = Service::new();
    assert_eq!(s.get("/v1/workflows").await.json(), json!({ "workflows": [] }));
    let mut ids = Vec::new();
    for name in ["cidv1_from_bytes", "salted_cid", "dual_cid_of_text"] {
        let submitted = s.post_json("/v1/workflows", &json!({ "manifest": manifest(name) })).await.json();
        ids.push((submitted["workflow_id"].as_str().unwrap().to_string(), name));
    }
    // A second build of one workflow counts as a build, not a workflow.
    s.post_json("/v1/workflows", &json!({ "manifest": manifest("salted_cid"), "targets": ["native"] })).await;
    ids.sort();
    let all = s.get("/v1/workflows").await;
    assert_eq!(all.status, StatusCode::OK);
    let listed: Vec<(String, String, u64)> = all.json()["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["id"].as_str().unwrap().into(), w["name"].as_str().unwrap().into(), w["builds"].as_u64().unwrap()))
        .collect();
    let expected: Vec<(String, String, u64)> = ids
        .iter()
        .map(|(id, name)| (id.clone(), name.to_string(), if *name == "salted_cid" { 2 } else { 1 }))
        .collect();
    assert_eq!(listed, expected);
    assert!(all.json().get("next").is_none());
    // Pages of one, then by name.
    let first = s.get("/v1/workflows?limit=2").await.json();
    assert_eq!(first["workflows"].as_array().unwrap().len(), 2);
    assert_eq!(first["next"], json!(ids[1].0));
    let rest = s.get(&format!("/v1/workflows?limit=2&after={}", ids[1].0)).await.json();
    assert_eq!(rest["workflows"][0]["id"], json!(ids[2].0));
    assert!(rest.get("next").is_none(), "{rest}");
    let named = s.get("/v1/workflows?name=salted_cid").await.json();
    assert_eq!(named["workflows"].as_array().unwrap().len(), 1);
    assert_eq!(named["workflows"][0]["name"], "salted_cid");
    assert_problem(&s.get("/v1/workflows?limit=0").await, StatusCode::BAD_REQUEST, "limit 0");
    assert_problem(&s.get("/v1/workflows?limit=many").await, StatusCode::BAD_REQUEST, "limit not a number");
    assert_problem(&s.get("/v1/workflows?after=../x").await, StatusCode::BAD_REQUEST, "after not an id");
    // An artifact downloads under the name its build gave it.
    let (_, artifacts) = s.finish_build(&[("pkg-node.tgz", b"a package")]);
    let answer = s.get(&format!("/v1/artifacts/{}", artifacts[0].cid)).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.headers[header::CONTENT_DISPOSITION], "attachment; filename=\"pkg-node.tgz\"");
}

/// Was JS 'a 500 shows no server path'.
#[tokio::test]
async fn a_500_shows_no_server_path() {
    let s = Service::new();
    let queued =
        s.post_json("/v1/workflows", &json!({ "manifest": manifest("cidv1_from_bytes"), "targets": ["native"] })).await;
    assert_eq!(queued.status, StatusCode::ACCEPTED);
    let (_, artifacts) = s.finish_build(&[("crate.tar.gz", b"crate bytes")]);
    let cid = &artifacts[0].cid;
    let file = s.dir.join("artifacts").join(cid.as_str());
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap(); // unreadable as a file: the server fails to read it
    let answer = s.get(&format!("/v1/artifacts/{cid}")).await;
    let problem = assert_problem(&answer, StatusCode::INTERNAL_SERVER_ERROR, "unreadable artifact");
    let detail = problem["detail"].as_str().unwrap();
    let reference = detail.rsplit(' ').next().unwrap();
    assert!(reference.len() == 12 && reference.bytes().all(|b| b.is_ascii_hexdigit()), "{detail}");
    let body = answer.text();
    let home = std::env::var("HOME").unwrap_or_default();
    for path in [s.dir.to_string_lossy().into_owned(), env!("CARGO_MANIFEST_DIR").to_string(), home] {
        assert!(path.len() < 2 || !body.contains(&path), "a 500 shows {path}: {body}");
    }
    assert!(!body.contains("/tmp"), "{body}");
}

/// Was JS 'metrics are Prometheus text'.
#[tokio::test]
async fn metrics_are_prometheus_text() {
    let s = Service::new();
    assert_eq!(s.get("/healthz").await.status, StatusCode::OK);
    let metrics = s.get("/metrics").await;
    assert_eq!(metrics.headers[header::CONTENT_TYPE], "text/plain; version=0.0.4");
    let text = metrics.text();
    for m in [
        "braid_http_requests_total{method=\"GET\",route=\"/healthz\",status=\"200\"} 1",
        "braid_jobs{state=\"queued\"} 0",
        "braid_jobs{state=\"succeeded\"} 0",
        "braid_build_duration_seconds_count 0",
        "braid_cache_hits_total 0",
    ] {
        assert!(text.contains(m), "{m} in\n{text}");
    }
}

/// Was JS '/metrics labels come from a closed set: distinct long methods
/// add nothing'.
#[tokio::test]
async fn metric_labels_come_from_a_closed_set() {
    let s = Service::new();
    let call = |method: &str, uri: &str| {
        Request::builder().method(Method::from_bytes(method.as_bytes()).unwrap()).uri(uri).body(Body::empty()).unwrap()
    };
    s.send(call("XMETHOD", "/v1/operations")).await; // the one series this may add
    let series = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("braid_http_requests_total{"))
            .map(|l| l.rsplit_once(' ').unwrap().0.to_string())
            .collect()
    };
    let before = series(&s.get("/metrics").await.text());
    for i in 0..40 {
        let method = format!("X{}{i}", "M".repeat(2000));
        let status = s.send(call(&method, if i % 2 == 1 { "/v1/operations" } else { "/v1/nope" })).await.status;
        assert!(status == StatusCode::METHOD_NOT_ALLOWED || status == StatusCode::NOT_FOUND, "{status}");
    }
    let after = s.get("/metrics").await.text();
    assert!(!after.contains("MMMM"), "a method name became a label");
    let added: Vec<String> = series(&after).into_iter().filter(|l| !before.contains(l)).collect();
    assert!(added.len() <= 2, "new series: {added:?}");
    assert!(
        after.contains("braid_http_requests_total{method=\"other\",route=\"/v1/operations\",status=\"405\"}"),
        "{after}"
    );
}

/// While heavy requests hold every slot (blocked on blocking threads),
/// another is refused at once with 503 + Retry-After, and health and
/// reads still answer: the async threads are free.
#[tokio::test(flavor = "current_thread")]
async fn heavy_requests_are_capped_and_leave_the_async_threads_free() {
    let s = Service::new();
    let (release_running, running) = std::sync::mpsc::channel::<()>();
    let (release_queued, queued) = std::sync::mpsc::channel::<()>();
    let state = s.state.clone();
    let first = tokio::spawn(async move { heavy(&state, move || running.recv().is_ok()).await });
    let state = s.state.clone();
    let second = tokio::spawn(async move { heavy(&state, move || queued.recv().is_ok()).await });
    while s.state.checks.admitted.available_permits() > 0 {
        tokio::task::yield_now().await;
    }
    let busy = s.post("/v1/validate", MANIFEST, &[]).await;
    let problem = assert_problem(&busy, StatusCode::SERVICE_UNAVAILABLE, "busy");
    assert_eq!(busy.headers[header::RETRY_AFTER], "1");
    assert!(problem["detail"].as_str().unwrap().contains("busy"), "{problem}");
    assert_eq!(s.get("/healthz").await.status, StatusCode::OK);
    assert_eq!(s.get("/v1/operations").await.status, StatusCode::OK);
    release_running.send(()).unwrap();
    release_queued.send(()).unwrap();
    assert!(first.await.unwrap().unwrap() && second.await.unwrap().unwrap());
    assert_eq!(s.post("/v1/validate", MANIFEST, &[]).await.status, StatusCode::OK);
}

/// A handler that panics gets a 500 problem, and the next request is
/// served (with `panic = "abort"` the process died instead).
#[tokio::test(flavor = "current_thread")]
async fn a_panicking_handler_is_a_500_and_the_service_goes_on() {
    let mut s = Service::new();
    let routes: Router<Arc<AppState>> = Router::new()
        .route("/boom", get(|| async { panic!("a bug") as &'static str }))
        .route("/healthz", get(health::healthz));
    s.app = layers::harden(routes, s.state.clone());
    let answer = s.get("/boom").await;
    let problem = assert_problem(&answer, StatusCode::INTERNAL_SERVER_ERROR, "panic");
    assert!(!problem["detail"].as_str().unwrap().contains("a bug"));
    assert_eq!(s.get("/healthz").await.status, StatusCode::OK);
}

/// Bodies that are not UTF-8 were a bare 400 here and a silent U+FFFD
/// in the CLI; both now give the diagnostic at the bad byte.
#[tokio::test(flavor = "current_thread")]
async fn bodies_that_are_not_utf8_get_a_diagnostic_at_the_byte() {
    let s = Service::new();
    let mut body = MANIFEST.as_bytes().to_vec();
    let at = MANIFEST.find("\"t\"").unwrap() + 1;
    body[at] = 0xff;
    for uri in ["/v1/validate", "/v1/generate"] {
        let problem = assert_problem(&s.post(uri, body.clone(), &[]).await, StatusCode::UNPROCESSABLE_ENTITY, uri);
        let d = &problem["diagnostics"][0];
        assert!(d["message"].as_str().unwrap().contains(&format!("invalid byte at offset {at}")), "{problem}");
        assert_eq!(d["column"], at + 1, "{problem}");
    }
}

#[test]
fn diagnostics_point_into_the_body_as_sent() {
    let body = "{\"targets\": null,\n  \"manifest\": {\"name\": 1}}";
    let offset = body.find("{\"name").unwrap();
    let mut d = vec![Diagnostic::new("/name", "x"), Diagnostic::new("/", "y")];
    (d[0].line, d[0].column) = (Some(1), Some(10));
    (d[1].line, d[1].column) = (Some(2), Some(3));
    workflows::relocate(&mut d, body, offset);
    assert_eq!((d[0].line, d[0].column), (Some(2), Some(24)));
    assert_eq!(&body.lines().nth(1).unwrap()[23..24], "1");
    assert_eq!((d[1].line, d[1].column), (Some(3), Some(3)));
}

/// What a worker records for a build of `cidv1_from_bytes`: the `.crate`s
/// of a really generated crate, and an npm package (scoped) whose tarball
/// is `tgz`.
fn finish_build_with_packages(s: &Service, tgz: &[u8]) -> Vec<crate::store::Package> {
    use crate::store::{Ecosystem, Package};
    let job = s.state.store.claim().unwrap().expect("a queued job");
    let workflow = braid::manifest::validate(&job.manifest, &s.state.registry()).unwrap();
    let dir = s.dir.join("generated");
    braid::project::write(&workflow, &braid::codegen::Generator::new(), &dir).unwrap();
    let mut packages = Vec::new();
    for c in braid::cargo_package::packages(&dir).unwrap() {
        packages.push(crate::registries::store_cargo_package(&s.state, c).unwrap().1);
    }
    packages.push(Package {
        ecosystem: Ecosystem::Npm,
        name: "@org/wf_cidv1_from_bytes".into(),
        version: "0.1.0".into(),
        cid: s.state.cas.put(tgz).unwrap(),
        entry: json!({"name": "@org/wf_cidv1_from_bytes", "version": "0.1.0"}).to_string(),
        digest: crate::pack::integrity(tgz),
    });
    let report = serde_json::from_value(json!({
        "workflow": "cidv1_from_bytes", "id": "x", "crate_name": "wf_cidv1_from_bytes", "targets": job.targets,
        "timings_ms": {}, "sizes_bytes": {}, "artifacts": {}
    }))
    .unwrap();
    s.state.store.succeed(&job.job_id, &job.build_id, &report, &[], &packages).unwrap();
    packages
}

#[tokio::test]
async fn the_registries_serve_a_builds_packages_verified() {
    let s = Service::new();
    let submitted =
        s.post_json("/v1/workflows", &json!({"manifest": manifest("cidv1_from_bytes"), "targets": ["native"]})).await;
    assert_eq!(submitted.status, StatusCode::ACCEPTED, "{}", submitted.text());
    let packages = finish_build_with_packages(&s, b"a tarball");
    let with_host =
        |uri: &str| Request::get(uri).header(header::HOST, "registry.test:8080").body(Body::empty()).unwrap();

    let config = s.send(with_host("/cargo/index/config.json")).await;
    assert_eq!(config.json()["dl"], "http://registry.test:8080/cargo/crates");
    // Its URLs come from Host: a cache in front must not hand them to another host.
    assert_eq!(
        (&config.headers[header::VARY], &config.headers[header::CACHE_CONTROL]),
        (&"host".parse().unwrap(), &"no-cache".parse().unwrap())
    );
    let no_host = s.get("/cargo/index/config.json").await;
    assert_problem(&no_host, StatusCode::BAD_REQUEST, "no Host");
    // Two Host headers: 400 (RFC 9112); an absolute-form target's authority wins over Host.
    let two = Request::get("/cargo/index/config.json")
        .header(header::HOST, "registry.test:8080")
        .header(header::HOST, "evil.test")
        .body(Body::empty())
        .unwrap();
    assert_problem(&s.send(two).await, StatusCode::BAD_REQUEST, "two Host headers");
    let absolute = Request::get("http://asked.test:9000/cargo/index/config.json")
        .header(header::HOST, "evil.test")
        .body(Body::empty())
        .unwrap();
    assert_eq!(s.send(absolute).await.json()["dl"], "http://asked.test:9000/cargo/crates");

    let support = packages.iter().find(|p| p.name == "braid-support").unwrap();
    let index = s.get("/cargo/index/br/ai/braid-support").await;
    assert_eq!(index.status, StatusCode::OK);
    assert_eq!(index.text(), format!("{}\n", support.entry));
    for wrong in ["/cargo/index/xx/yy/braid-support", "/cargo/index/br/ai/braid-nothing", "/cargo/index/..%2f..%2fetc"]
    {
        assert_problem(&s.get(wrong).await, StatusCode::NOT_FOUND, wrong);
    }
    let download = s.get("/cargo/crates/braid-support/0.1.0/download").await;
    assert_eq!(download.status, StatusCode::OK);
    assert_eq!(s.state.cas.get(&support.cid).unwrap().unwrap(), download.body.to_vec());

    // npm: a scoped name is one path segment, as npm sends it.
    let doc = s.send(with_host("/npm/@org%2fwf_cidv1_from_bytes")).await;
    assert_eq!(doc.status, StatusCode::OK, "{}", doc.text());
    let doc = doc.json();
    assert_eq!(doc["dist-tags"]["latest"], "0.1.0");
    let dist = &doc["versions"]["0.1.0"]["dist"];
    assert_eq!(dist["integrity"], crate::pack::integrity(b"a tarball"));
    let tarball = dist["tarball"].as_str().unwrap();
    assert_eq!(tarball, "http://registry.test:8080/npm/@org%2fwf_cidv1_from_bytes/-/wf_cidv1_from_bytes-0.1.0.tgz");
    let got = s.get(tarball.trim_start_matches("http://registry.test:8080")).await;
    assert_eq!(got.body.as_ref(), b"a tarball");

    // A damaged .crate is never served; it is forgotten, index line and all.
    std::fs::write(s.dir.join("artifacts").join(support.cid.as_str()), b"damaged").unwrap();
    let damaged = s.get("/cargo/crates/braid-support/0.1.0/download").await;
    assert!(assert_problem(&damaged, StatusCode::NOT_FOUND, "damaged")["detail"].as_str().unwrap().contains("damaged"));
    assert_problem(&s.get("/cargo/index/br/ai/braid-support").await, StatusCode::NOT_FOUND, "forgotten");
}

#[tokio::test]
async fn a_published_version_is_never_replaced() {
    let s = Service::new();
    s.post_json("/v1/workflows", &json!({"manifest": manifest("cidv1_from_bytes"), "targets": ["native"]})).await;
    finish_build_with_packages(&s, b"first");
    s.post_json("/v1/workflows", &json!({"manifest": manifest("cidv1_from_bytes"), "targets": ["native", "node"]}))
        .await;
    // Same crates (same bytes: kept), another npm tarball for 0.1.0: not taken.
    finish_build_with_packages(&s, b"second");
    let doc = s
        .send(Request::get("/npm/@org%2fwf_cidv1_from_bytes").header(header::HOST, "h").body(Body::empty()).unwrap())
        .await
        .json();
    assert_eq!(doc["versions"]["0.1.0"]["dist"]["integrity"], crate::pack::integrity(b"first"));
    let lines = s.get("/cargo/index/wf/_c/wf_cidv1_from_bytes").await.text();
    assert_eq!(lines.lines().count(), 1);
}

#[tokio::test]
async fn every_registered_operation_is_in_the_cargo_registry() {
    let s = Service::new();
    crate::registries::add_operations(&s.state);
    let registry = s.state.registry();
    for name in registry.names().into_iter().chain(["braid-support", "braid-macros", "braid-schema"]) {
        let path = braid::cargo_package::index_path(name).unwrap();
        let index = s.get(&format!("/cargo/index/{path}")).await;
        assert_eq!(index.status, StatusCode::OK, "{name}: {}", index.text());
        let line: Value = serde_json::from_str(index.text().lines().next().unwrap()).unwrap();
        assert_eq!(line["name"], name);
    }
    // A build then brings the same crates, byte for byte: they agree, and
    // its workflow crate is added with them.
    s.post_json("/v1/workflows", &json!({"manifest": manifest("cidv1_from_bytes"), "targets": ["native"]})).await;
    finish_build_with_packages(&s, b"tgz");
    let workflow = s.get("/cargo/index/wf/_c/wf_cidv1_from_bytes").await;
    assert_eq!(workflow.status, StatusCode::OK, "{}", workflow.text());
    assert_eq!(s.get("/cargo/index/op/_m/op_multihash").await.text().lines().count(), 1);
    // Adding them again changes nothing.
    let before = s.get("/cargo/index/br/ai/braid-support").await.text();
    crate::registries::add_operations(&s.state);
    assert_eq!(s.get("/cargo/index/br/ai/braid-support").await.text(), before);
}

/// An operation published through another process of the deployment:
/// listed in the database, its upload in the store. This one takes it in
/// at its next request; an upload not in the store yet is taken at a later
/// one; a version that clashes with one registered here is left out.
#[tokio::test]
async fn operations_published_elsewhere_are_taken_in_from_the_store() {
    let s = Service::new();
    let builtin = s.state.registry().get("op_cid").unwrap().clone();
    let current = builtin.version().to_string();
    // op_cid's sources as `version`, `comment` added to its code: what
    // another API would have kept.
    let upload = |version: &str, comment: &str| {
        let mut files = builtin.files().unwrap().into_owned();
        let toml = files.get_mut("Cargo.toml").unwrap();
        let package = toml.find("[package]").unwrap();
        let (head, tail) = toml.split_at(package);
        *toml = head.to_string()
            + &tail.replacen(&format!("version = \"{current}\""), &format!("version = \"{version}\""), 1);
        files.get_mut("src/lib.rs").unwrap().push_str(comment);
        files.remove("manifest.json"); // (derived again from the code)
        crate::pack::tar_gz_entries(files.iter().map(|(r, t)| (r.as_str(), t.as_bytes())), "op_cid").unwrap()
    };
    // Listed in the database as registered by another process; its version id.
    let listed = |version: &str, bytes: &[u8]| {
        let prepared = crate::published::unpack(bytes, &s.dir.join("tmp").join(version)).unwrap();
        assert_eq!(prepared.manifest.version, version);
        let op = crate::store::PublishedOperation {
            name: "op_cid".into(),
            version: version.into(),
            version_id: prepared.version_id.clone(),
            source: braid::content_id(bytes).parse().unwrap(),
        };
        assert_eq!(s.state.store.register_operation(&op).unwrap(), None);
        prepared.version_id
    };
    async fn versions(s: &Service) -> Vec<String> {
        let doc = s.get("/v1/operations/op_cid").await.json();
        doc["versions"].as_array().unwrap().iter().map(|v| v["version"].as_str().unwrap().to_string()).collect()
    }

    let kept = upload("9.0.0", "");
    let id = listed("9.0.0", &kept);
    s.state.cas.put(&kept).unwrap();
    let late = upload("9.1.0", "");
    listed("9.1.0", &late);
    let clash = upload(&current, "// other sources\n");
    listed(&current, &clash);
    s.state.cas.put(&clash).unwrap();
    assert_eq!(
        versions(&s).await,
        ["9.0.0", &current],
        "9.1.0's upload is not in the store yet; the clash is left out"
    );
    s.state.cas.put(&late).unwrap();
    assert_eq!(versions(&s).await, ["9.0.0", &current], "a failed fetch waits before the next try");
    // That wait over:
    for failed in s.state.published.lock().unwrap().values_mut().flatten() {
        *failed = failed.checked_sub(std::time::Duration::from_secs(60)).unwrap();
    }
    assert_eq!(versions(&s).await, ["9.1.0", "9.0.0", &current]);
    assert_eq!(s.state.registry().get("op_cid").unwrap().origin, braid::registry::Origin::Published);
    // In the registry on disk too: what `braid build` reads.
    assert!(braid::registry::Registry::open(&s.dir).unwrap().by_version_id(&id).is_some());
}
