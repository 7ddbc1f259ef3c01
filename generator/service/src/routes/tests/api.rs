//! Reads, API keys, problem documents, validation and generation.

use braid_store::Kind;

use super::*;

/// Was JS 'health, OpenAPI and operations'.
#[tokio::test]
async fn health_openapi_and_operations() {
    let s = Service::new().await;
    assert_eq!(s.get("/healthz").await.json(), json!({ "status": "ok" }));
    let doc = s.get("/v1/openapi.json").await.json();
    for path in crate::routes::ROUTES.iter().filter(|r| r.starts_with("/v1/") && **r != "/v1/openapi.json") {
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

/// The editor's page and files, from the binary, with a policy that lets
/// it run only its own code and the Wasm it builds; nothing else is served.
#[tokio::test]
async fn the_editor_is_served_from_the_binary() {
    let s = Service::new().await;
    for (uri, media_type) in [
        ("/", "text/html; charset=utf-8"),
        ("/editor", "text/html; charset=utf-8"),
        ("/editor/editor.js", "text/javascript; charset=utf-8"),
        ("/editor/editor.css", "text/css; charset=utf-8"),
        ("/editor/runner.html", "text/html; charset=utf-8"),
        ("/editor/runner.js", "text/javascript; charset=utf-8"),
    ] {
        let page = s.get(uri).await;
        assert_eq!(page.status, StatusCode::OK, "{uri}");
        assert_eq!(page.headers[header::CONTENT_TYPE], media_type, "{uri}");
        let csp = page.headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(csp.contains("default-src 'self'") || csp.contains("default-src 'none'"), "{csp}");
    }
    assert!(s.get("/").await.text().contains("/editor/editor.js"));
    // The frame that runs built packages is sandboxed by its own policy, whoever opens it, and fetches nothing.
    let runner = s.get("/editor/runner.html").await;
    let csp = runner.headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(
        csp.starts_with("sandbox allow-scripts;")
            && csp.contains("connect-src 'none'")
            && csp.contains("worker-src 'none'"),
        "{csp}"
    );
    for uri in ["/editor/../Cargo.toml", "/editor/index.htm", "/editor/%2e%2e%2fsrc%2flib.rs"] {
        assert_eq!(s.get(uri).await.status, StatusCode::NOT_FOUND, "{uri}");
    }
}

/// Was JS 'validate and generate'.
#[tokio::test]
async fn validate_and_generate() {
    let s = Service::new().await;
    let ok = s.post_json("/v1/validate", &manifest("salted_cid")).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.text());
    let ok = ok.json();
    assert_eq!(ok["valid"], true);
    let workflow = braid::manifest::validate(&manifest("salted_cid").to_string(), &s.state.registry()).unwrap();
    assert_eq!(ok["id"], workflow.id, "the workflow id is the manifest's CID");
    assert_eq!(ok["signature"], "text: String, bytes: Bytes -> Cid");
    assert_eq!(ok["inputs"], json!([{ "name": "text", "type": "String" }, { "name": "bytes", "type": "Bytes" }]));
    assert_eq!(ok["output"], "Cid");
    let unnamed = s.post_json("/v1/validate", &manifest("cidv1_from_bytes")).await.json();
    assert_eq!(unnamed["inputs"], json!([{ "type": "Bytes" }]));
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
    let s = Service::new().await;
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
    assert_eq!(s.state.store.job_counts(Kind::BUILD).await.unwrap(), vec![], "nothing was queued");
}

/// Was JS 'bad input gets a 4xx problem document, never a 5xx'. Malformed
/// ids are 400 before any lookup; in process, `%2e%2e` reaches the server
/// as sent (fetch made it `/v1/`, which is here too).
#[tokio::test]
async fn bad_input_gets_a_4xx_problem_document_never_a_5xx() {
    let s = Service::new().await;
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
    assert_eq!(s.state.store.job_counts(Kind::BUILD).await.unwrap(), vec![], "nothing was queued");
}

/// Was JS 'every kind of invalid manifest is a 422 with diagnostics, from
/// validate and from workflows'.
#[tokio::test]
async fn every_kind_of_invalid_manifest_is_a_422_with_diagnostics() {
    let s = Service::new().await;
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
    let s = Service::new().await;
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
    let s = Service::with(|c| c.http.max_crate_bytes = 50_000).await;
    let m = manifest("cidv1_from_bytes");
    for (uri, body) in [("/v1/generate", m.clone()), ("/v1/workflows", json!({ "manifest": m }))] {
        let problem = assert_problem(&s.post_json(uri, &body).await, StatusCode::UNPROCESSABLE_ENTITY, uri);
        let detail = problem["detail"].as_str().unwrap();
        assert!(detail.contains("bytes; this service generates at most 50000 (--max-crate-bytes)"), "{detail}");
    }
    assert_eq!(s.state.store.job_counts(Kind::BUILD).await.unwrap(), vec![], "nothing was queued");
}
