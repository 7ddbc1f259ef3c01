//! Server errors, metrics, load shedding, panics and bytes that are not UTF-8.

use super::*;

/// Was JS 'a 500 shows no server path'.
#[tokio::test]
async fn a_500_shows_no_server_path() {
    let s = Service::new().await;
    let queued =
        s.post_json("/v1/workflows", &json!({ "manifest": manifest("cidv1_from_bytes"), "targets": ["native"] })).await;
    assert_eq!(queued.status, StatusCode::ACCEPTED);
    let (_, artifacts) = s.finish_build(&[("crate.tar.gz", b"crate bytes")]).await;
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
    let s = Service::new().await;
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
    let s = Service::new().await;
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
    let s = Service::new().await;
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
    let mut s = Service::new().await;
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
    let s = Service::new().await;
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

/// The routes whose bodies may be larger than `--max-body` (runs up to
/// `--input-limit`, operation uploads up to `--max-upload`) answer a
/// request without its key, or with another kind's or a wrong one, from
/// its headers: not a byte of the body is read (here, a body that never
/// ends and says when it is polled), so a keyless client cannot make the
/// server hold megabytes.
#[tokio::test]
async fn big_bodies_are_not_read_before_their_key_is_checked() {
    let s = Service::new().await;
    let build = "/v1/builds/bafkr4ihkr6fqyz2rhwvsd6nlo5vmkz7gvczecqmyfoiym3ka7tpvlhfyga/run";
    let workflow = "/v1/workflows/bafkr4ihkr6fqyz2rhwvsd6nlo5vmkz7gvczecqmyfoiym3ka7tpvlhfyga/run";
    let cases = [
        (build, None, StatusCode::UNAUTHORIZED),
        (build, Some("wrong"), StatusCode::FORBIDDEN),
        (build, Some("p"), StatusCode::FORBIDDEN),
        (workflow, None, StatusCode::UNAUTHORIZED),
        (workflow, Some("wrong"), StatusCode::FORBIDDEN),
        ("/v1/operations", None, StatusCode::UNAUTHORIZED),
        ("/v1/operations", Some(KEY), StatusCode::FORBIDDEN),
    ];
    for (uri, key, status) in cases {
        let polled = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = polled.clone();
        let endless = futures_util::stream::poll_fn(move |_| {
            seen.store(true, std::sync::atomic::Ordering::SeqCst);
            std::task::Poll::<Option<Result<Bytes, std::io::Error>>>::Pending
        });
        let mut request = Request::post(uri).header(header::CONTENT_TYPE, "application/octet-stream");
        if let Some(key) = key {
            request = request.header("x-api-key", key);
        }
        let answer = s.send(request.body(Body::from_stream(endless)).unwrap()).await;
        assert_eq!(answer.status, status, "{uri} with {key:?}: {}", answer.text());
        assert!(!polled.load(std::sync::atomic::Ordering::SeqCst), "{uri} with {key:?}: the body was read first");
    }
    // With the key, the body is read (and the run is then a 404: no such build).
    let answer = s.post(build, "x", &[("content-type", "application/octet-stream")]).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND, "{}", answer.text());
}
