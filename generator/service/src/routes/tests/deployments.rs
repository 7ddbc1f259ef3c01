//! Deployments through the API: made, moved and rolled back by the key
//! that owns them, never by another key or none; names checked; removed
//! with their history. (Runs through a deployment, on real builds, are in
//! `js/test/run.test.mjs`.)

use super::*;

const OTHER: &str = "other-key";
/// A workflow id no build here has (`dual_cid_of_text`'s, never submitted).
const UNKNOWN: &str = "bafkr4ifwtlawznfulfd4ezoocxwbstwfyd67stip4yffu4zjpfmctusm2u";

impl Service {
    /// A workflow built with the component target, recorded as a worker
    /// would (the component's bytes are not a component: nothing runs
    /// here); its workflow and build ids.
    async fn built_component(&self, targets: &[&str]) -> (String, String) {
        let body = json!({ "manifest": manifest("cidv1_from_bytes"), "targets": targets });
        let submitted = self.post_json("/v1/workflows", &body).await.json();
        self.finish_build(&[("wf_cidv1_from_bytes.component.wasm", b"(a component)")]).await;
        let id = |key: &str| submitted[key].as_str().unwrap().to_string();
        (id("workflow_id"), id("build_id"))
    }

    async fn put(&self, name: &str, body: &Value, key: Option<&str>) -> Answer {
        let mut request =
            Request::put(format!("/v1/deployments/{name}")).header(header::CONTENT_TYPE, "application/json");
        if let Some(key) = key {
            request = request.header("x-api-key", key);
        }
        self.send(request.body(Body::from(body.to_string())).unwrap()).await
    }

    async fn delete(&self, name: &str, key: &str) -> Answer {
        self.send(
            Request::delete(format!("/v1/deployments/{name}")).header("x-api-key", key).body(Body::empty()).unwrap(),
        )
        .await
    }
}

#[tokio::test]
async fn a_deployment_is_made_moved_and_rolled_back_by_its_key_only() {
    let s = Service::with(|c| c.http.api_keys.push(OTHER.into())).await;
    let (workflow, first) = s.built_component(&["component"]).await;
    let (_, second) = s.built_component(&["component", "native"]).await;
    assert_ne!(first, second);

    let made = s.put("Cid", &json!({ "workflow_id": workflow }), Some(KEY)).await;
    assert_eq!(made.status, StatusCode::OK, "{}", made.text());
    let made = made.json();
    assert_eq!(
        (&made["name"], &made["version"], &made["run"]),
        (&json!("Cid"), &json!(1), &json!("/v1/deployments/Cid/run"))
    );
    assert_eq!(made["build_id"], json!(second), "a workflow's newest build with a component");
    let owner = made["owner"].as_str().unwrap().to_string();
    assert!(owner.starts_with("key-") && owner.len() == 20, "{owner}: a fingerprint of the key, never the key");

    // Another key, or none, moves nothing; names compare in lower case.
    assert_problem(
        &s.put("cid", &json!({ "build_id": first }), Some(OTHER)).await,
        StatusCode::FORBIDDEN,
        "another key",
    );
    assert_problem(&s.put("CID", &json!({ "build_id": first }), None).await, StatusCode::UNAUTHORIZED, "no key");
    assert_problem(&s.delete("cid", OTHER).await, StatusCode::FORBIDDEN, "another key's delete");
    assert_eq!(s.get("/v1/deployments/cid").await.json()["build_id"], json!(second));

    // Moved to a build, then back: each a version, the newest first.
    let moved = s.put("cid", &json!({ "build_id": first }), Some(KEY)).await.json();
    assert_eq!((&moved["version"], &moved["build_id"]), (&json!(2), &json!(first)));
    let back = s.put("cid", &json!({ "workflow_id": workflow }), Some(KEY)).await.json();
    assert_eq!((&back["version"], &back["build_id"]), (&json!(3), &json!(second)));
    let shown = s.get("/v1/deployments/CID").await.json();
    let history: Vec<(&Value, &Value)> =
        shown["history"].as_array().unwrap().iter().map(|v| (&v["version"], &v["build_id"])).collect();
    assert_eq!(history, [(&json!(3), &json!(second)), (&json!(2), &json!(first)), (&json!(1), &json!(second))]);
    assert_eq!(s.get("/v1/deployments").await.json()["deployments"][0]["name"], json!("Cid"));

    // What cannot be deployed, and why.
    for (name, body, status, detail) in [
        ("-cid", json!({ "workflow_id": workflow }), StatusCode::UNPROCESSABLE_ENTITY, "cannot name a deployment"),
        ("x".repeat(64).as_str(), json!({ "workflow_id": workflow }), StatusCode::UNPROCESSABLE_ENTITY, "1 to 63"),
        ("new", json!({ "workflow_id": workflow, "build_id": first }), StatusCode::BAD_REQUEST, "exactly one"),
        ("new", json!({}), StatusCode::BAD_REQUEST, "exactly one"),
        ("new", json!({ "workflow": workflow }), StatusCode::BAD_REQUEST, "unknown field"),
        ("new", json!({ "workflow_id": UNKNOWN }), StatusCode::NOT_FOUND, "no build with a component"),
        ("new", json!({ "build_id": UNKNOWN }), StatusCode::NOT_FOUND, "no build"),
    ] {
        let problem = assert_problem(&s.put(name, &body, Some(KEY)).await, status, name);
        assert!(problem["detail"].as_str().unwrap().contains(detail), "{name} {body}: {problem}");
    }

    // Budgets of its own, at most the service's; kept across moves until
    // replaced; `{}` clears them.
    let limited =
        s.put("cid", &json!({ "build_id": first, "limits": { "time_ms": 50, "output_mib": 1 } }), Some(KEY)).await;
    assert_eq!(limited.json()["limits"], json!({ "time_ms": 50, "output_mib": 1 }), "{}", limited.text());
    let kept = s.put("cid", &json!({ "build_id": second }), Some(KEY)).await.json();
    assert_eq!(kept["limits"], json!({ "time_ms": 50, "output_mib": 1 }));
    let over = s.put("cid", &json!({ "build_id": second, "limits": { "memory_mib": 4096 } }), Some(KEY)).await;
    let over = assert_problem(&over, StatusCode::UNPROCESSABLE_ENTITY, "over the service's memory");
    assert!(
        over["detail"]
            .as_str()
            .unwrap()
            .contains("limits.memory_mib is 4096, over this service's 256 (--memory-limit)"),
        "{over}"
    );
    let slots = s.state.executor.config().slots;
    let concurrent = s.put("cid", &json!({ "build_id": second, "limits": { "concurrent": slots } }), Some(KEY)).await;
    assert_eq!(concurrent.json()["limits"], json!({ "concurrent": slots }), "{}", concurrent.text());
    let over = s.put("cid", &json!({ "build_id": second, "limits": { "concurrent": slots + 1 } }), Some(KEY)).await;
    let over = assert_problem(&over, StatusCode::UNPROCESSABLE_ENTITY, "more runs at once than the service's slots");
    let expected = format!("limits.concurrent is {}, over this service's {slots} (--run-slots)", slots + 1);
    assert!(over["detail"].as_str().unwrap().contains(&expected), "{over}");
    let zero = s.put("cid", &json!({ "build_id": second, "limits": { "time_ms": 0 } }), Some(KEY)).await;
    assert_problem(&zero, StatusCode::UNPROCESSABLE_ENTITY, "a zero limit");
    let cleared = s.put("cid", &json!({ "build_id": second, "limits": {} }), Some(KEY)).await.json();
    assert_eq!(cleared["limits"], json!({}));

    // Runs need the key before their body is read; an unknown name is a 404.
    let keyless = s.send(Request::post("/v1/deployments/cid/run").body(Body::from("x")).unwrap()).await;
    assert_eq!(keyless.status, StatusCode::UNAUTHORIZED);
    let unknown = s.post("/v1/deployments/nope/run", "[]", &[]).await;
    assert!(assert_problem(&unknown, StatusCode::NOT_FOUND, "unknown")["detail"]
        .as_str()
        .unwrap()
        .contains("no deployment is named `nope`"));

    // Removed with its history: the name is free again.
    assert_eq!(s.delete("cid", KEY).await.status, StatusCode::NO_CONTENT);
    assert_problem(&s.get("/v1/deployments/cid").await, StatusCode::NOT_FOUND, "removed");
    assert_problem(&s.delete("cid", KEY).await, StatusCode::NOT_FOUND, "removed twice");
    let again = s.put("cid", &json!({ "build_id": first }), Some(OTHER)).await.json();
    assert_eq!((&again["version"], &again["history"].as_array().unwrap().len()), (&json!(1), &1));
}
