//! Submissions, their dedup and the listings of workflows and builds.

use super::*;

/// Was JS 'the same manifest again is answered from the earlier build'
/// (the build's end recorded as a worker would). Also: a workflow id is
/// the manifest's CID, a build id names one build of it.
#[tokio::test]
async fn the_same_manifest_again_is_answered_from_the_earlier_build() {
    let s = Service::new().await;
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

    let (job_id, artifacts) = s.finish_build(&[("crate.tar.gz", b"the crate")]).await;
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
    let s = Service::new().await;
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
    let (_, artifacts) = s.finish_build(&[("pkg-node.tgz", b"a package")]).await;
    let answer = s.get(&format!("/v1/artifacts/{}", artifacts[0].cid)).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.headers[header::CONTENT_DISPOSITION], "attachment; filename=\"pkg-node.tgz\"");
}

/// A submission's manifest is validated once and its crate rendered once
/// (counted, by the metrics of that work, not timed): its size, its key,
/// its canonical text and its operations all come from that one pass.
#[tokio::test]
async fn a_submission_validates_and_renders_once() {
    let s = Service::new().await;
    let counts = || async {
        let text = s.get("/metrics").await.text();
        let count = |name: &str| {
            let line =
                text.lines().find(|l| l.starts_with(&format!("{name}_total "))).unwrap_or_else(|| panic!("{text}"));
            line.rsplit(' ').next().unwrap().parse::<u64>().unwrap()
        };
        (count("braid_manifests_validated"), count("braid_crates_rendered"))
    };
    assert_eq!(counts().await, (0, 0));
    let body = json!({ "manifest": manifest("dual_cid_of_text"), "targets": ["native", "node"] });
    let first = s.post_json("/v1/workflows", &body).await;
    assert_eq!(first.status, StatusCode::ACCEPTED, "{}", first.text());
    assert_eq!(counts().await, (1, 1));
    // Joining the build under way is a request of its own: once each again.
    assert_eq!(s.post_json("/v1/workflows", &body).await.status, StatusCode::ACCEPTED);
    assert_eq!(counts().await, (2, 2));
    // Refused by validation: nothing rendered.
    let bad = json!({ "manifest": { "name": "x", "version": "0.1.0", "segments": [] } });
    assert_eq!(s.post_json("/v1/workflows", &bad).await.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(counts().await, (3, 2));
    // The job keeps what the submission resolved, for the build to use.
    let claimed = s.state.store.claim_build().await.unwrap().expect("a queued job");
    assert_eq!(claimed.third_party, Some(vec![]), "dual_cid_of_text uses only Braid's own operations");
    // Every crate's version, as its build id names them: the build resolves to these.
    let resolved = braid::manifest::validate(&manifest("dual_cid_of_text").to_string(), &braid::Registry::builtin());
    let versions = resolved.unwrap().crate_versions();
    assert!(versions.contains_key("op_cid"), "{versions:?}");
    assert_eq!(claimed.operations, Some(versions));
    assert_eq!(counts().await, (3, 2));
}
